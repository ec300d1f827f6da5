//! Choosing a page's value encoding.
//!
//! The smallest applicable encoding wins (ties go to the simpler one). Candidates whose
//! exact size follows from cheap statistics (plain values, inline bit-packing) are
//! sized without being encoded, and a candidate that provably cannot beat the best so
//! far (FSST, whose output is bounded below by the values' lengths) is not tried: only
//! the winner and the candidates that might win are encoded.

use std::hash::Hasher;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::DataType;

use super::*;
use crate::v2_1::fsst::TABLE_BYTES;
use crate::v2_1::hashing::{fast_map, FastHasher, FastMap};

/// Which kind of compression the field metadata asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Hint {
    Auto,
    None,
    Fsst,
    General(CompressionScheme),
}

pub(super) fn hint(opts: &EncodeOptions) -> Result<Hint> {
    match opts.compression.as_deref().map(|s| s.trim().to_ascii_lowercase()) {
        None => Ok(Hint::Auto),
        Some(s) => match s.as_str() {
            "" => Ok(Hint::Auto),
            "none" => Ok(Hint::None),
            "fsst" => Ok(Hint::Fsst),
            "zstd" => Ok(Hint::General(CompressionScheme::CompressionAlgorithmZstd)),
            "lz4" => Ok(Hint::General(CompressionScheme::CompressionAlgorithmLz4)),
            other => Err(Error::Unsupported(format!(
                "compression scheme {other:?} (expected zstd, lz4, fsst or none)"
            ))),
        },
    }
}

/// The plain encoding of a page: Flat, Variable or FixedSizeList{Flat}.
pub(super) fn plain(page: &Page) -> Result<MiniBlockValues> {
    match page {
        Page::Bool { bits, len } => flat_bool(bits, *len),
        Page::Fixed { width, data, len } => flat(*width, data, *len),
        Page::Var { offsets, data, large } => variable(offsets, data, *large),
        Page::Fsl {
            dim,
            inner,
            items,
            validity,
            len,
        } => fixed_size_list((*dim, inner), items, validity.as_deref(), *len),
    }
}

/// Bytes one chunk with buffers of these lengths takes, as
/// [`MiniBlockValues::encoded_size`] counts them (header and padding included).
fn chunk_bytes(lens: &[usize]) -> usize {
    align8(2 + 4 * lens.len()) + lens.iter().map(|l| align8(*l)).sum::<usize>()
}

/// The exact [`MiniBlockValues::encoded_size`] of [`plain`] on a fixed-width or
/// variable-width page, computed without building the chunks.
fn plain_size(page: &Page) -> Result<Option<usize>> {
    Ok(match page {
        Page::Fixed { width, len, .. } => {
            let per = chunk_values(|n| vec![n * width])?;
            let chunks: usize = ranges(*len, per).map(|(a, b)| chunk_bytes(&[(b - a) * width])).sum();
            Some(chunks + flat_enc(*width as u64 * 8).encoded_len())
        }
        Page::Var { offsets, large, .. } => {
            let ow = if *large { 8 } else { 4 };
            let chunks: usize = var_plan(offsets, *large)?
                .into_iter()
                .map(|(a, b)| chunk_bytes(&[var_chunk_size(offsets, a, b, ow)]))
                .sum();
            Some(chunks + var_enc(*large).encoded_len())
        }
        Page::Bool { .. } | Page::Fsl { .. } => None,
    })
}

/// A size no FSST encoding of these values can go below: every value keeps its offset
/// word, a code stands for at most eight bytes, and the symbol table is stored whole.
fn fsst_lower_bound(offsets: &[u64], large: bool) -> usize {
    let ow = if large { 8 } else { 4 };
    let codes: usize = offsets.windows(2).map(|w| ((w[1] - w[0]) as usize).div_ceil(8)).sum();
    (offsets.len() - 1) * ow + codes + TABLE_BYTES
}

/// Pages at least this long have their distinct values estimated before a dictionary
/// is built.
const ESTIMATE_MIN_VALUES: usize = 4096;

/// Values at the start of a page whose distinct count decides whether the estimate runs.
const PREFIX_VALUES: usize = 1024;

/// Whether `values` (`n` of them) surely have more distinct values than a dictionary of
/// the page may hold (half the values). When the first values are mostly distinct, a
/// linear-counting estimate runs over all of them (each value's hash sets one bit of a
/// bitmap four times the limit; the share of bits left clear gives the count within a
/// few percent), and an estimate above 1.25 times the limit rules the dictionary out.
/// That costs one hash per value instead of a hash-table insertion, which pays off on
/// the many pages of unique values; pages of few values go straight to the dictionary.
fn surely_too_many_distinct<'a, I>(values: impl Fn() -> I, n: usize) -> bool
where
    I: Iterator<Item = &'a [u8]>,
{
    let limit = n / 2;
    if n < ESTIMATE_MIN_VALUES {
        return false;
    }
    let mut first: FastMap<&[u8], ()> = fast_map(PREFIX_VALUES);
    for v in values().take(PREFIX_VALUES) {
        first.insert(v, ());
    }
    if first.len() <= PREFIX_VALUES / 2 {
        return false;
    }
    let bits = (4 * limit).next_power_of_two();
    let mut map = vec![0u64; bits / 64];
    for v in values() {
        let mut h = FastHasher::default();
        h.write(v);
        let slot = (h.finish() as usize) & (bits - 1);
        map[slot / 64] |= 1 << (slot % 64);
    }
    let clear: usize = map.iter().map(|w| w.count_zeros() as usize).sum();
    if clear == 0 {
        return true;
    }
    let estimate = bits as f64 * (bits as f64 / clear as f64).ln();
    estimate > 1.25 * limit as f64
}

/// Whether a fixed- or variable-width page surely has too many distinct values for a
/// dictionary (see [`surely_too_many_distinct`]).
fn too_many_distinct(page: &Page) -> bool {
    match page {
        Page::Fixed { width, data, len } => surely_too_many_distinct(|| data.chunks_exact(*width), *len),
        Page::Var { offsets, data, .. } => surely_too_many_distinct(|| var_values(offsets, data), offsets.len() - 1),
        Page::Bool { .. } | Page::Fsl { .. } => false,
    }
}

/// The best candidate so far.
enum Best {
    /// The plain encoding (not built yet).
    Plain,
    /// `InlineBitpacking` of `width`-byte values (not built yet).
    Inline(usize),
    /// A candidate already built.
    Built(MiniBlockValues),
}

/// Tracks the smallest candidate; a candidate replaces the best only when strictly smaller.
struct Choice {
    best: Best,
    size: usize,
}

impl Choice {
    fn offer(&mut self, cand: Best, size: usize) {
        if size < self.size {
            self.best = cand;
            self.size = size;
        }
    }

    fn offer_built(&mut self, cand: MiniBlockValues) {
        let size = cand.encoded_size();
        self.offer(Best::Built(cand), size);
    }

    fn build(self, page: &Page) -> Result<MiniBlockValues> {
        match (self.best, page) {
            (Best::Built(m), _) => Ok(m),
            (Best::Inline(width), Page::Fixed { data, len, .. }) => inline(width, data, *len),
            _ => plain(page),
        }
    }
}

/// Keeps the smaller of `best` and `cand` (ties keep `best`, the simpler one).
fn keep_smaller(best: MiniBlockValues, cand: MiniBlockValues) -> MiniBlockValues {
    if cand.encoded_size() < best.encoded_size() {
        cand
    } else {
        best
    }
}

/// Compresses `values` (an Arrow array of a leaf type, may contain nulls whose slots hold
/// arbitrary data) for mini-block chunks.
///
/// Validity is not stored here (the caller writes it as definition levels): null slots
/// are encoded with whatever payload they hold. Every chunk's value buffers, each with a
/// 4-byte header and padded to 8 bytes, fit [`MAX_CHUNK_BYTES`]; a value too wide for
/// that is an [`Error::Unsupported`] (such pages belong in full-zip). Among the applicable
/// encodings the one with the fewest bytes wins (ties go to the simpler). Field metadata
/// in `opts` can force General compression (`zstd` / `lz4`), FSST (`fsst`) or plain
/// values (`none`).
pub fn compress_mini_block(values: &dyn Array, opts: &EncodeOptions) -> Result<MiniBlockValues> {
    if let DataType::Dictionary(..) = values.data_type() {
        // Kept as the array's own dictionary, as pylance keeps it.
        if let Some(d) = super::dictionary::arrow_dictionary(values, opts.v2_2, opts.dictionary_index_bytes)? {
            return Ok(d);
        }
        let dict = values.as_any_dictionary();
        let plain: ArrayRef = arrow_select::take::take(dict.values().as_ref(), dict.keys(), None)?;
        return compress_mini_block(plain.as_ref(), opts);
    }
    let hint = hint(opts)?;
    let data = values.to_data();
    let page = extract(values, &data)?;
    let len = page.len();
    if len == 0 {
        let nbufs = match &page {
            Page::Fsl { validity: Some(_), .. } => 2,
            _ => 1,
        };
        let mut m = plain(&page)?;
        m.chunks = vec![Chunk {
            num_values: 0,
            buffers: vec![Vec::new(); nbufs],
        }];
        return Ok(m);
    }
    if let Hint::General(scheme) = hint {
        let level = opts.compression_level;
        let base = plain(&page)?;
        let mut best = general(base.clone(), scheme, level)?;
        // Multi-byte fixed values are also tried byte-stream-split (as pylance does).
        if let Page::Fixed {
            width: w @ (2 | 4 | 8), ..
        } = &page
        {
            best = keep_smaller(best, general(byte_stream_split(base, *w), scheme, level)?);
        }
        return Ok(best);
    }
    // An Arrow dictionary column is always a dictionary page: pylance reads it no other way.
    if opts.dictionary_index_bytes.is_some() {
        if let Some(d) = dictionary_with(&page, opts.v2_2, opts.dictionary_index_bytes, false)? {
            return Ok(d);
        }
        return Err(Error::Unsupported(
            "a dictionary column whose distinct values do not fit its key type".into(),
        ));
    }
    let Some(plain_size) = plain_size(&page)? else {
        return plain(&page);
    };
    if hint == Hint::None {
        return plain(&page);
    }
    let mut choice = Choice {
        best: Best::Plain,
        size: plain_size,
    };
    // Counting distinct values is a pass over the page: only pages that will try a
    // dictionary pay for it (an FSST-hinted string page, say, does not).
    let dict_ok = || !opts.no_dictionary && len >= DICT_MIN_VALUES && !too_many_distinct(&page);
    match &page {
        Page::Fixed { width, data, len } => {
            let width = *width;
            if matches!(width, 1 | 2 | 4 | 8) {
                let packed = inline_size(width, data);
                if packed < plain_size {
                    choice.offer(Best::Inline(width), packed + inline_enc(width as u64 * 8).encoded_len());
                }
                // pylance reads RLE of 1-, 2-, 4- and 8-byte values only.
                if count_runs(width, data) * (width + 1) < choice.size {
                    choice.offer_built(rle(width, data, *len)?);
                }
            }
            if opts.v2_2 && dict_ok() {
                if let Some(d) = dictionary(&page, true, opts.dictionary_index_bytes)? {
                    if (d.encoded_size() as f64) < DICT_MAX_RATIO * plain_size as f64 {
                        choice.offer_built(d);
                    }
                }
            }
        }
        Page::Var { offsets, data, large } => {
            if hint == Hint::Fsst {
                return fsst(offsets, data, *large);
            }
            if dict_ok() {
                if let Some(d) = dictionary(&page, opts.v2_2, opts.dictionary_index_bytes)? {
                    if (d.encoded_size() as f64) < DICT_MAX_RATIO * plain_size as f64 {
                        choice.offer_built(d);
                    }
                }
            }
            let max_len = offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0) as usize;
            if data.len() >= FSST_MIN_BYTES
                && max_len >= FSST_MIN_MAX_LEN
                && fsst_lower_bound(offsets, *large) < choice.size
            {
                choice.offer_built(fsst(offsets, data, *large)?);
            }
        }
        Page::Bool { .. } | Page::Fsl { .. } => {}
    }
    choice.build(&page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};

    fn plain_of(values: &dyn Array) -> MiniBlockValues {
        let data = values.to_data();
        plain(&extract(values, &data).unwrap()).unwrap()
    }

    #[test]
    fn plain_size_is_the_built_size() {
        let ints = Int64Array::from_iter_values((0..10_000).map(|i| i * 7919 % 1_000_003));
        let strs: StringArray = (0..5000).map(|i| Some("x".repeat(i % 300))).collect();
        for a in [&ints as &dyn Array, &strs] {
            let data = a.to_data();
            let page = extract(a, &data).unwrap();
            assert_eq!(plain_size(&page).unwrap(), Some(plain_of(a).encoded_size()));
        }
    }

    #[test]
    fn distinct_estimate_only_rules_out_clearly_unique_pages() {
        let n = 20_000usize;
        let bytes = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        let unique = bytes(&(0..n as u64).map(|i| i * 2_654_435_761).collect::<Vec<_>>());
        assert!(surely_too_many_distinct(|| unique.chunks_exact(8), n));
        let sequential = bytes(&(0..n as u64).collect::<Vec<_>>());
        assert!(surely_too_many_distinct(|| sequential.chunks_exact(8), n));
        // Exactly at the limit (half the values distinct), and well below it: kept.
        for d in [n / 2, n / 3, 50] {
            let some = bytes(&(0..n as u64).map(|i| (i % d as u64) * 7919).collect::<Vec<_>>());
            assert!(!surely_too_many_distinct(|| some.chunks_exact(8), n), "{d}");
        }
        // Short pages are never estimated.
        assert!(!surely_too_many_distinct(|| unique[..8 * 100].chunks_exact(8), 100));
    }

    #[test]
    fn fsst_bound_is_below_the_fsst_size() {
        let strs: StringArray = (0..4000)
            .map(|i| Some(format!("the quick brown fox {i} jumps over the lazy dog {}", i * 31)))
            .collect();
        let data = strs.to_data();
        let Page::Var { offsets, data, large } = extract(&strs, &data).unwrap() else {
            unreachable!()
        };
        assert!(fsst_lower_bound(&offsets, large) <= fsst(&offsets, data, large).unwrap().encoded_size());
    }
}
