//! Text analysis: pylance's tokenizer parameters and the analyzer they build.
//!
//! The contract is "the same tokens for the same text as pylance 14". The analyzer runs in
//! pylance's order: the base tokenizer ([`crate::split`]), then drop pieces of
//! `max_token_length` bytes or more, lower-case (character by character), stem (Snowball,
//! the revision pylance 14 pins), drop stop words (pylance 14's lists, which keep negations:
//! `not`, `ne`, `pas`, `nicht`, `kein`, ...), fold to ASCII ([`crate::fold`]). Positions
//! are the base tokenizer's, so a dropped token leaves a gap and a phrase never matches
//! across it.
//!
//! Beyond pylance, `base_tokenizer="cjk"` cuts Han, Hiragana, Katakana and Hangul runs into
//! overlapping character bigrams, which finds CJK words without downloading a language model.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::split::Base;

/// The languages of the stemmers and stop-word lists, by pylance's names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs, reason = "each variant is the language it names")]
pub enum Language {
    Arabic,
    Danish,
    Dutch,
    English,
    Finnish,
    French,
    German,
    Greek,
    Hungarian,
    Italian,
    Norwegian,
    Portuguese,
    Romanian,
    Russian,
    Spanish,
    Swedish,
    Tamil,
    Turkish,
}

/// Every language (in the enum's order) with its stemmer and its stop words (observed from pylance 14: every word
/// of NLTK's, stopwords-iso's and Snowball's lists for the language was indexed with it,
/// and the list holds those it dropped).
const LANGUAGES: [(&str, Language, frostem::Algorithm, &str); 18] = [
    (
        "Arabic",
        Language::Arabic,
        frostem::Algorithm::Arabic,
        include_str!("stopwords/arabic.txt"),
    ),
    (
        "Danish",
        Language::Danish,
        frostem::Algorithm::Danish,
        include_str!("stopwords/danish.txt"),
    ),
    (
        "Dutch",
        Language::Dutch,
        frostem::Algorithm::Dutch,
        include_str!("stopwords/dutch.txt"),
    ),
    (
        "English",
        Language::English,
        frostem::Algorithm::English,
        include_str!("stopwords/english.txt"),
    ),
    (
        "Finnish",
        Language::Finnish,
        frostem::Algorithm::Finnish,
        include_str!("stopwords/finnish.txt"),
    ),
    (
        "French",
        Language::French,
        frostem::Algorithm::French,
        include_str!("stopwords/french.txt"),
    ),
    (
        "German",
        Language::German,
        frostem::Algorithm::German,
        include_str!("stopwords/german.txt"),
    ),
    (
        "Greek",
        Language::Greek,
        frostem::Algorithm::Greek,
        include_str!("stopwords/greek.txt"),
    ),
    (
        "Hungarian",
        Language::Hungarian,
        frostem::Algorithm::Hungarian,
        include_str!("stopwords/hungarian.txt"),
    ),
    (
        "Italian",
        Language::Italian,
        frostem::Algorithm::Italian,
        include_str!("stopwords/italian.txt"),
    ),
    (
        "Norwegian",
        Language::Norwegian,
        frostem::Algorithm::Norwegian,
        include_str!("stopwords/norwegian.txt"),
    ),
    (
        "Portuguese",
        Language::Portuguese,
        frostem::Algorithm::Portuguese,
        include_str!("stopwords/portuguese.txt"),
    ),
    (
        "Romanian",
        Language::Romanian,
        frostem::Algorithm::Romanian,
        include_str!("stopwords/romanian.txt"),
    ),
    (
        "Russian",
        Language::Russian,
        frostem::Algorithm::Russian,
        include_str!("stopwords/russian.txt"),
    ),
    (
        "Spanish",
        Language::Spanish,
        frostem::Algorithm::Spanish,
        include_str!("stopwords/spanish.txt"),
    ),
    (
        "Swedish",
        Language::Swedish,
        frostem::Algorithm::Swedish,
        include_str!("stopwords/swedish.txt"),
    ),
    (
        "Tamil",
        Language::Tamil,
        frostem::Algorithm::Tamil,
        include_str!("stopwords/tamil.txt"),
    ),
    (
        "Turkish",
        Language::Turkish,
        frostem::Algorithm::Turkish,
        include_str!("stopwords/turkish.txt"),
    ),
];

impl Language {
    fn entry(self) -> &'static (&'static str, Language, frostem::Algorithm, &'static str) {
        // The table lists the languages in the enum's order (a test checks it).
        &LANGUAGES[self as usize]
    }

    /// pylance's name of the language.
    pub fn name(self) -> &'static str {
        self.entry().0
    }

    /// The language's stop words.
    pub fn stop_words(self) -> impl Iterator<Item = &'static str> {
        self.entry().3.lines()
    }

    fn stemmer(self) -> frostem::Stemmer {
        frostem::Stemmer::new(self.entry().2)
    }
}

/// The base tokenizers lancelet knows.
pub const BASE_TOKENIZERS: [&str; 5] = ["simple", "whitespace", "raw", "ngram", "cjk"];

/// pylance's tokenizer parameters (names and defaults of `create_scalar_index(..., "INVERTED")`).
#[derive(Debug, Clone, PartialEq)]
pub struct TokenizerConfig {
    /// `simple` (split on anything not a letter or digit), `whitespace`, `raw` (the whole
    /// value is one token), `ngram`, or lancelet's `cjk`.
    pub base_tokenizer: String,
    /// The stemmer's and stop-word list's language (`English`, `French`, ...).
    pub language: String,
    /// Tokens of this many bytes or more are dropped (not truncated); `None` keeps all.
    pub max_token_length: Option<usize>,
    /// Lower-case every token.
    pub lower_case: bool,
    /// Reduce tokens to their Snowball stem.
    pub stem: bool,
    /// Drop the language's stop words (or `custom_stop_words`).
    pub remove_stop_words: bool,
    /// The stop words to drop instead of the language's list.
    pub custom_stop_words: Option<Vec<String>>,
    /// Fold accented letters to ASCII (`café` -> `cafe`).
    pub ascii_folding: bool,
    /// `ngram`: the shortest gram, in characters.
    pub min_ngram_length: u32,
    /// `ngram`: the longest gram, in characters.
    pub max_ngram_length: u32,
    /// `ngram`: only grams that start a token.
    pub prefix_only: bool,
    /// Store token positions (needed by phrase queries).
    pub with_position: bool,
    /// `text` (the column holds text) or `json`.
    pub lance_tokenizer: Option<String>,
}

impl Default for TokenizerConfig {
    fn default() -> Self {
        Self {
            base_tokenizer: "simple".into(),
            language: "English".into(),
            max_token_length: Some(40),
            lower_case: true,
            stem: true,
            remove_stop_words: true,
            custom_stop_words: None,
            ascii_folding: true,
            min_ngram_length: 3,
            max_ngram_length: 3,
            prefix_only: false,
            with_position: false,
            lance_tokenizer: None,
        }
    }
}

impl TokenizerConfig {
    /// The stemmer's and stop words' language.
    pub fn language(&self) -> Result<Language> {
        LANGUAGES
            .iter()
            .find(|e| e.0.eq_ignore_ascii_case(self.language.trim_matches('"')))
            .map(|e| e.1)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown language {:?}; expected one of {}",
                    self.language,
                    LANGUAGES.map(|e| e.0).join(", ")
                ))
            })
    }

    /// Checks every parameter and builds the analyzer.
    pub fn build(&self) -> Result<Analyzer> {
        let language = self.language()?;
        if let Some(t) = &self.lance_tokenizer {
            if t != "text" {
                return Err(Error::Unsupported(format!(
                    "lance_tokenizer {t:?} (only \"text\" is supported)"
                )));
            }
        }
        let base = match self.base_tokenizer.as_str() {
            "simple" => Base::Simple,
            "whitespace" => Base::Whitespace,
            "raw" => Base::Raw,
            "cjk" => Base::Cjk,
            "ngram" => {
                let (min, max) = (self.min_ngram_length as usize, self.max_ngram_length as usize);
                if min == 0 || min > max {
                    return Err(Error::InvalidArgument(format!(
                        "ngram lengths must satisfy 0 < min_ngram_length <= max_ngram_length, got {min} and {max}"
                    )));
                }
                Base::Ngram {
                    min,
                    max,
                    prefix_only: self.prefix_only,
                }
            }
            other if other.starts_with("jieba") || other.starts_with("lindera") || other.starts_with("icu") => {
                return Err(Error::Unsupported(format!(
                    "base_tokenizer {other:?} needs a downloaded language model; lancelet's \"cjk\" tokenizer \
                     segments Chinese, Japanese and Korean text without one"
                )))
            }
            other => {
                return Err(Error::InvalidArgument(format!(
                    "unknown base tokenizer {other:?}; expected one of {}",
                    BASE_TOKENIZERS.join(", ")
                )))
            }
        };
        let stop_words = self.remove_stop_words.then(|| {
            Arc::new(match &self.custom_stop_words {
                Some(words) => words.iter().cloned().collect(),
                None => language.stop_words().map(str::to_string).collect::<HashSet<_>>(),
            })
        });
        Ok(Analyzer {
            base,
            max_token_length: self.max_token_length,
            lower_case: self.lower_case,
            stemmer: self.stem.then(|| language.stemmer()),
            stop_words,
            ascii_folding: self.ascii_folding,
            lowered: String::new(),
            folded: String::new(),
        })
    }

    /// The `params` JSON object stored in `metadata.lance` (pylance's keys).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert(
            "lance_tokenizer".into(),
            Value::from(self.lance_tokenizer.clone().unwrap_or_else(|| "text".into())),
        );
        m.insert("base_tokenizer".into(), Value::from(self.base_tokenizer.clone()));
        m.insert("language".into(), Value::from(self.language.clone()));
        m.insert("with_position".into(), Value::from(self.with_position));
        m.insert(
            "max_token_length".into(),
            self.max_token_length.map_or(Value::Null, Value::from),
        );
        m.insert("lower_case".into(), Value::from(self.lower_case));
        m.insert("stem".into(), Value::from(self.stem));
        m.insert("remove_stop_words".into(), Value::from(self.remove_stop_words));
        m.insert(
            "custom_stop_words".into(),
            self.custom_stop_words
                .as_ref()
                .map_or(Value::Null, |w| Value::from(w.clone())),
        );
        m.insert("ascii_folding".into(), Value::from(self.ascii_folding));
        m.insert("min_ngram_length".into(), Value::from(self.min_ngram_length));
        m.insert("max_ngram_length".into(), Value::from(self.max_ngram_length));
        m.insert("prefix_only".into(), Value::from(self.prefix_only));
        m.insert("block_size".into(), Value::from(crate::codec::BLOCK));
        for flag in [
            "split_identifiers",
            "split_on_numerics",
            "preserve_original",
            "index_operators",
        ] {
            m.insert(flag.into(), Value::from(false));
        }
        Value::Object(m)
    }

    /// Reads the `params` JSON of an index (or a user's keywords); missing keys take
    /// pylance's defaults, which for `ngram` are no stemming and no stop words.
    pub fn from_json(v: &Value) -> Result<Self> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::corrupt("metadata.lance", "FTS params are not a JSON object"))?;
        let mut c = Self::default();
        let get = |k: &str| obj.get(k).filter(|v| !v.is_null());
        if let Some(v) = get("base_tokenizer") {
            c.base_tokenizer = json_str(v, "base_tokenizer")?;
            if c.base_tokenizer == "ngram" {
                // pylance's n-gram defaults: grams are neither stemmed nor stop words.
                c.stem = false;
                c.remove_stop_words = false;
            }
        }
        if let Some(v) = get("language") {
            c.language = json_str(v, "language")?;
        }
        c.max_token_length = match obj.get("max_token_length") {
            Some(Value::Null) => None,
            Some(v) => Some(json_u64(v, "max_token_length")? as usize),
            None => c.max_token_length,
        };
        for (key, slot) in [
            ("lower_case", &mut c.lower_case),
            ("stem", &mut c.stem),
            ("remove_stop_words", &mut c.remove_stop_words),
            ("ascii_folding", &mut c.ascii_folding),
            ("prefix_only", &mut c.prefix_only),
            ("with_position", &mut c.with_position),
        ] {
            if let Some(v) = get(key) {
                *slot = v
                    .as_bool()
                    .ok_or_else(|| Error::corrupt("metadata.lance", format!("FTS param {key} is not a boolean")))?;
            }
        }
        if let Some(v) = get("custom_stop_words") {
            let words = v
                .as_array()
                .ok_or_else(|| Error::corrupt("metadata.lance", "FTS param custom_stop_words is not a list"))?;
            c.custom_stop_words = Some(
                words
                    .iter()
                    .map(|w| json_str(w, "custom_stop_words"))
                    .collect::<Result<_>>()?,
            );
        }
        if let Some(v) = get("min_ngram_length") {
            c.min_ngram_length = json_u64(v, "min_ngram_length")? as u32;
        }
        if let Some(v) = get("max_ngram_length") {
            c.max_ngram_length = json_u64(v, "max_ngram_length")? as u32;
        }
        for flag in [
            "split_identifiers",
            "split_on_numerics",
            "preserve_original",
            "index_operators",
        ] {
            if get(flag).and_then(Value::as_bool) == Some(true) {
                return Err(Error::Unsupported(format!("full-text tokenizer option {flag}=true")));
            }
        }
        if let Some(v) = get("lance_tokenizer") {
            c.lance_tokenizer = Some(json_str(v, "lance_tokenizer")?);
        }
        Ok(c)
    }
}

fn json_str(v: &Value, key: &str) -> Result<String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| Error::corrupt("metadata.lance", format!("FTS param {key} is not a string")))
}

fn json_u64(v: &Value, key: &str) -> Result<u64> {
    v.as_u64().ok_or_else(|| {
        Error::corrupt(
            "metadata.lance",
            format!("FTS param {key} is not a non-negative integer"),
        )
    })
}

/// A built analyzer: text in, `(token, position)` out.
#[derive(Clone)]
pub struct Analyzer {
    base: Base,
    max_token_length: Option<usize>,
    lower_case: bool,
    stemmer: Option<frostem::Stemmer>,
    stop_words: Option<Arc<HashSet<String>>>,
    ascii_folding: bool,
    /// Scratch buffers, reused from token to token.
    lowered: String,
    folded: String,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Analyzer {
    /// Calls `each(token, position)` for every token of `text`, in order.
    pub fn for_each(&mut self, text: &str, mut each: impl FnMut(&str, u32)) {
        let Analyzer {
            base,
            max_token_length,
            lower_case,
            stemmer,
            stop_words,
            ascii_folding,
            lowered,
            folded,
        } = self;
        base.split(text, |piece, position| {
            if max_token_length.is_some_and(|n| piece.len() >= n) {
                return;
            }
            let mut token = piece;
            if *lower_case {
                if !piece.is_ascii() {
                    // Character by character, as pylance does (a final sigma stays `σ`).
                    lowered.clear();
                    lowered.extend(piece.chars().flat_map(char::to_lowercase));
                    token = lowered.as_str();
                } else if piece.bytes().any(|b| b.is_ascii_uppercase()) {
                    lowered.clear();
                    lowered.push_str(piece);
                    lowered.make_ascii_lowercase();
                    token = lowered.as_str();
                }
            }
            let stemmed = stemmer.as_ref().map(|s| s.stem(token));
            if let Some(s) = &stemmed {
                token = s;
            }
            if stop_words.as_ref().is_some_and(|w| w.contains(token)) {
                return;
            }
            if *ascii_folding && !token.is_ascii() {
                crate::fold::fold_into(token, folded);
                token = folded.as_str();
            }
            each(token, position);
        });
    }

    /// The tokens of `text`, in order.
    pub fn tokens(&mut self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each(text, |t, _| out.push(t.to_string()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyze(params: Value, text: &str) -> Vec<(String, u32)> {
        let mut a = TokenizerConfig::from_json(&params)
            .and_then(|c| c.build())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut out = Vec::new();
        a.for_each(text, |t, p| out.push((t.to_string(), p)));
        out
    }

    fn tokens(params: Value, text: &str) -> Vec<String> {
        analyze(params, text).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn the_language_table_follows_the_enum() {
        for (i, entry) in LANGUAGES.iter().enumerate() {
            assert_eq!(entry.1 as usize, i, "{}", entry.0);
            assert_eq!(entry.1.name(), entry.0);
            assert!(entry.1.stop_words().all(|w| !w.is_empty() && w.trim() == w));
        }
    }

    #[test]
    fn english_defaults_stem_drop_stop_words_and_fold() {
        // pylance 14's Snowball revision, and its list (which keeps "not").
        assert_eq!(
            tokens(serde_json::json!({}), "The universities are NOT café-owners"),
            ["universiti", "not", "cafe", "owner"]
        );
    }

    #[test]
    fn dropped_tokens_keep_their_positions() {
        let p = serde_json::json!({"max_token_length": 5});
        assert_eq!(
            analyze(p, "fox jumpingly over dogs"),
            [("fox".into(), 0), ("dog".into(), 3)]
        );
    }

    #[test]
    fn lower_casing_is_per_character() {
        let p = serde_json::json!({"stem": false, "ascii_folding": false, "remove_stop_words": false});
        assert_eq!(tokens(p, "ΟΔΟΣ"), ["οδοσ"]);
    }

    #[test]
    fn ngrams_neither_stem_nor_drop_stop_words_unless_asked() {
        let p = serde_json::json!({"base_tokenizer": "ngram", "min_ngram_length": 3, "max_ngram_length": 3});
        assert_eq!(tokens(p, "The"), ["the"]);
        let p = serde_json::json!({"base_tokenizer": "ngram", "remove_stop_words": true});
        assert!(tokens(p, "The").is_empty());
    }

    #[test]
    fn french_stop_words_keep_negations() {
        let p = serde_json::json!({"language": "French", "stem": false});
        assert_eq!(tokens(p, "ce n'est pas le chat"), ["n", "est", "pas", "chat"]);
    }
}
