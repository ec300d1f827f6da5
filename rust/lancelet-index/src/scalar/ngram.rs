//! NGRAM: posting lists of the trigrams of a string column, for `contains(column, text)`.
//!
//! File `ngram_postings.lance`: `tokens` (uint32, nullable but never null) and
//! `posting_list` (binary, field metadata `lance-encoding:compression = none`: a standard
//! RoaringTreemap of row addresses), one row per token, ascending. Token 0 holds the null
//! rows (no trigram can be 0, see [`trigrams`]).
//!
//! Every row containing the query text contains all the query's trigrams, so intersecting
//! their posting lists gives a superset ([`SearchResult::AtMost`]); the caller rechecks
//! (case and accents are folded away here, and trigrams may come from different places).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, BinaryArray, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_file::{FileReader, FileVersion, Projection};
use roaring::{RoaringBitmap, RoaringTreemap};

use super::common::{self, Input};
use super::{cannot_answer, IndexFile, IndexStore, ScalarIndex, ScalarIndexType, ScalarQuery, SearchResult};
use crate::error::{Error, Result};
use crate::rowaddr::{decode_treemap, encode_treemap, RowAddrSet};

const FILE: &str = "ngram_postings.lance";
/// The token whose posting list holds the null rows.
const NULL_TOKEN: u32 = 0;

/// Accented lowercase Latin letters (Latin-1 Supplement and Latin Extended-A) and their
/// ASCII base letter. Only single-letter foldings are listed: a character missing here
/// splits words, which can only widen a query's candidates, never lose a row. (Multi-letter
/// foldings such as `ß` → `ss` would change trigram positions, so they split words too.)
const FOLD: &[(char, char)] = &[
    ('à', 'a'),
    ('á', 'a'),
    ('â', 'a'),
    ('ã', 'a'),
    ('ä', 'a'),
    ('å', 'a'),
    ('ç', 'c'),
    ('è', 'e'),
    ('é', 'e'),
    ('ê', 'e'),
    ('ë', 'e'),
    ('ì', 'i'),
    ('í', 'i'),
    ('î', 'i'),
    ('ï', 'i'),
    ('ñ', 'n'),
    ('ò', 'o'),
    ('ó', 'o'),
    ('ô', 'o'),
    ('õ', 'o'),
    ('ö', 'o'),
    ('ø', 'o'),
    ('ù', 'u'),
    ('ú', 'u'),
    ('û', 'u'),
    ('ü', 'u'),
    ('ý', 'y'),
    ('ÿ', 'y'),
    ('ā', 'a'),
    ('ă', 'a'),
    ('ą', 'a'),
    ('ć', 'c'),
    ('ĉ', 'c'),
    ('ċ', 'c'),
    ('č', 'c'),
    ('ď', 'd'),
    ('đ', 'd'),
    ('ē', 'e'),
    ('ĕ', 'e'),
    ('ė', 'e'),
    ('ę', 'e'),
    ('ě', 'e'),
    ('ĝ', 'g'),
    ('ğ', 'g'),
    ('ġ', 'g'),
    ('ģ', 'g'),
    ('ĥ', 'h'),
    ('ħ', 'h'),
    ('ĩ', 'i'),
    ('ī', 'i'),
    ('ĭ', 'i'),
    ('į', 'i'),
    ('ı', 'i'),
    ('ĵ', 'j'),
    ('ķ', 'k'),
    ('ĺ', 'l'),
    ('ļ', 'l'),
    ('ľ', 'l'),
    ('ŀ', 'l'),
    ('ł', 'l'),
    ('ń', 'n'),
    ('ņ', 'n'),
    ('ň', 'n'),
    ('ŋ', 'n'),
    ('ō', 'o'),
    ('ŏ', 'o'),
    ('ő', 'o'),
    ('ŕ', 'r'),
    ('ŗ', 'r'),
    ('ř', 'r'),
    ('ś', 's'),
    ('ŝ', 's'),
    ('ş', 's'),
    ('š', 's'),
    ('ţ', 't'),
    ('ť', 't'),
    ('ŧ', 't'),
    ('ũ', 'u'),
    ('ū', 'u'),
    ('ŭ', 'u'),
    ('ů', 'u'),
    ('ű', 'u'),
    ('ų', 'u'),
    ('ŵ', 'w'),
    ('ŷ', 'y'),
    ('ź', 'z'),
    ('ż', 'z'),
    ('ž', 'z'),
];

/// The base-37 digit of a character after lowercasing and folding: `0-9` → 1..10,
/// `a-z` → 11..36; `None` for a character that separates words.
fn digit(c: char) -> Option<u32> {
    if c.is_ascii() {
        return ascii_digit(c as u8);
    }
    let mut lower = c.to_lowercase();
    let c = match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => return None,
    };
    let c = if c.is_ascii() {
        c
    } else {
        FOLD.binary_search_by_key(&c, |(from, _)| *from)
            .ok()
            .map(|i| FOLD[i].1)?
    };
    match c {
        '0'..='9' => Some(c as u32 - '0' as u32 + 1),
        'a'..='z' => Some(c as u32 - 'a' as u32 + 11),
        _ => None,
    }
}

/// [`digit`] of an ASCII byte.
fn ascii_digit(b: u8) -> Option<u32> {
    match b.to_ascii_lowercase() {
        c @ b'0'..=b'9' => Some(u32::from(c - b'0') + 1),
        c @ b'a'..=b'z' => Some(u32::from(c - b'a') + 11),
        _ => None,
    }
}

/// The distinct trigram codes of `text`: words are maximal runs of folded ASCII letters
/// and digits, and each window of three characters `c0 c1 c2` of a word gives
/// `c0·37² + c1·37 + c2` (never 0, since every digit is at least 1).
pub fn trigrams(text: &str) -> BTreeSet<u32> {
    let mut out = Vec::new();
    trigrams_into(text, &mut out);
    out.into_iter().collect()
}

/// The trigram codes of `text` appended to `out`, in text order, repeats included.
fn trigrams_into(text: &str, out: &mut Vec<u32>) {
    let mut window: [u32; 3] = [0; 3];
    let mut run = 0usize;
    let digits: Box<dyn Iterator<Item = Option<u32>>> = if text.is_ascii() {
        Box::new(text.bytes().map(ascii_digit))
    } else {
        Box::new(text.chars().map(digit))
    };
    for d in digits {
        match d {
            Some(d) => {
                window = [window[1], window[2], d];
                run += 1;
                if run >= 3 {
                    out.push(window[0] * 37 * 37 + window[1] * 37 + window[2]);
                }
            }
            None => run = 0,
        }
    }
}

fn strings<'a>(values: &'a dyn Array) -> Result<Box<dyn Fn(usize) -> Option<&'a str> + 'a>> {
    Ok(match values.data_type() {
        DataType::Utf8 => {
            let a = values.as_string::<i32>();
            Box::new(move |i| a.is_valid(i).then(|| a.value(i)))
        }
        DataType::LargeUtf8 => {
            let a = values.as_string::<i64>();
            Box::new(move |i| a.is_valid(i).then(|| a.value(i)))
        }
        other => {
            return Err(Error::InvalidArgument(format!(
                "NGRAM needs a string column, not {other}"
            )))
        }
    })
}

pub(crate) fn build(input: Input, version: FileVersion) -> Result<Vec<IndexFile>> {
    let get = strings(input.values.as_ref())?;
    // A fragment at a time (training input comes in address order): each token's offsets
    // are collected in order and made a bitmap in one pass. Inserting address by address
    // costs a search per insert, and appending to a dense bitmap scans it for its maximum.
    let mut bitmaps: BTreeMap<u32, Vec<(u32, RoaringBitmap)>> = BTreeMap::new();
    // Offsets of the current fragment by token code (codes are below 37³), and the codes
    // seen in it.
    let mut offsets: Vec<Vec<u32>> = vec![Vec::new(); 37 * 37 * 37];
    let mut seen: Vec<u32> = Vec::new();
    let mut flush = |fragment: u32, offsets: &mut Vec<Vec<u32>>, seen: &mut Vec<u32>| {
        for token in seen.drain(..) {
            let mut rows = std::mem::take(&mut offsets[token as usize]);
            rows.sort_unstable();
            let bitmap = RoaringBitmap::from_sorted_iter(rows.iter().copied())
                .unwrap_or_else(|_| rows.iter().copied().collect());
            bitmaps.entry(token).or_default().push((fragment, bitmap));
        }
    };
    let mut tokens = Vec::new();
    let mut fragment = None;
    for (i, &addr) in input.addrs.iter().enumerate() {
        let (f, o) = (crate::rowaddr::fragment_of(addr), crate::rowaddr::offset_of(addr));
        if let Some(done) = fragment.filter(|&cur| cur != f) {
            flush(done, &mut offsets, &mut seen);
        }
        fragment = Some(f);
        tokens.clear();
        match get(i) {
            Some(s) => trigrams_into(s, &mut tokens),
            None => tokens.push(NULL_TOKEN),
        }
        tokens.sort_unstable();
        tokens.dedup();
        for &t in &tokens {
            let list = &mut offsets[t as usize];
            if list.is_empty() {
                seen.push(t);
            }
            list.push(o);
        }
    }
    if let Some(f) = fragment {
        flush(f, &mut offsets, &mut seen);
    }
    let postings: BTreeMap<u32, RoaringTreemap> = bitmaps
        .into_iter()
        .map(|(token, mut parts)| {
            // A fragment seen twice (input out of order) is merged, not replaced.
            parts.sort_by_key(|(f, _)| *f);
            let mut merged: Vec<(u32, RoaringBitmap)> = Vec::with_capacity(parts.len());
            for (f, b) in parts {
                match merged.last_mut() {
                    Some((last, m)) if *last == f => *m |= b,
                    _ => merged.push((f, b)),
                }
            }
            (token, RoaringTreemap::from_bitmaps(merged))
        })
        .collect();
    let md = HashMap::from([("lance-encoding:compression".to_string(), "none".to_string())]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("tokens", DataType::UInt32, true),
        Field::new("posting_list", DataType::Binary, false).with_metadata(md),
    ]));
    let lists: Vec<Vec<u8>> = postings.values().map(encode_treemap).collect();
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(UInt32Array::from_iter_values(postings.keys().copied())),
            Arc::new(BinaryArray::from_iter_values(lists.iter())),
        ],
    )?;
    Ok(vec![common::write_lance(FILE, schema, batch, &[], &[], version)?])
}

/// An open NGRAM index.
#[derive(Debug)]
pub struct NGramIndex {
    /// Token → row of its posting list.
    rows: HashMap<u32, u64>,
    reader: Arc<FileReader>,
    postings: Projection,
}

impl NGramIndex {
    /// Opens the index (reads the token column).
    pub async fn open(store: &dyn IndexStore) -> Result<Self> {
        let reader = common::open_file(store, FILE).await?;
        let batch = common::read_columns(&reader, &["tokens"]).await?;
        let tokens = common::column(&batch, "tokens", FILE)?
            .as_primitive_opt::<arrow_array::types::UInt32Type>()
            .ok_or_else(|| Error::corrupt(FILE, "tokens are not uint32"))?;
        let mut rows = HashMap::with_capacity(tokens.len());
        for (row, t) in tokens.iter().enumerate() {
            if let Some(t) = t {
                if rows.insert(t, row as u64).is_some() {
                    return Err(Error::corrupt(FILE, format!("token {t} appears twice")));
                }
            }
        }
        let postings = reader.projection(Some(&["posting_list".to_string()]))?;
        Ok(Self { rows, reader, postings })
    }

    async fn search_impl(&self, query: &ScalarQuery) -> Result<SearchResult> {
        let ScalarQuery::Contains(text) = query else {
            return Err(cannot_answer(ScalarIndexType::NGram, query));
        };
        let tokens = trigrams(text);
        if tokens.is_empty() {
            return Err(cannot_answer(ScalarIndexType::NGram, query));
        }
        let mut positions = Vec::with_capacity(tokens.len());
        for t in &tokens {
            match self.rows.get(t) {
                Some(&row) => positions.push(row),
                // A trigram no row has: nothing can match.
                None => return Ok(SearchResult::AtMost(RowAddrSet::new())),
            }
        }
        let batch = self.reader.take(&self.postings, &positions).await?;
        let col = batch.column(0);
        let col = col
            .as_binary_opt::<i32>()
            .ok_or_else(|| Error::corrupt(FILE, "posting lists are not binary"))?;
        let mut out: Option<RoaringTreemap> = None;
        for i in 0..col.len() {
            if col.is_null(i) {
                return Err(Error::corrupt(FILE, "null posting list"));
            }
            let list = decode_treemap(col.value(i))?;
            out = Some(match out {
                None => list,
                Some(prev) => prev & list,
            });
        }
        Ok(SearchResult::AtMost(RowAddrSet::from_sorted_iter(
            out.unwrap_or_default().iter(),
        )))
    }
}

impl ScalarIndex for NGramIndex {
    fn kind(&self) -> ScalarIndexType {
        ScalarIndexType::NGram
    }

    /// `Contains` whose text has at least one trigram (shorter words say nothing).
    fn can_answer(&self, query: &ScalarQuery) -> bool {
        matches!(query, ScalarQuery::Contains(t) if !trigrams(t).is_empty())
    }

    fn search<'a>(&'a self, query: &'a ScalarQuery) -> BoxFuture<'a, Result<SearchResult>> {
        self.search_impl(query).boxed()
    }

    fn statistics(&self) -> BTreeMap<String, String> {
        BTreeMap::from([("num_ngrams".to_string(), self.rows.len().to_string())])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fold_table_is_sorted_and_ascii() {
        assert!(super::FOLD.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(super::FOLD.iter().all(|(_, to)| to.is_ascii_lowercase()));
    }
}
