//! Text analysis: pylance's tokenizer parameters and the analyzer they build.
//!
//! The contract is "the same tokens for the same text as pylance 14", so the analyzer is
//! assembled from tantivy's (the library pylance's analyzers come from) in pylance's order:
//! base tokenizer, then drop tokens of `max_token_length` bytes or more, lower-case, stem,
//! drop stop words, fold to ASCII. Positions are the base tokenizer's: a dropped token leaves
//! a gap, so a phrase never matches across it.
//!
//! Beyond pylance, `base_tokenizer="cjk"` splits Han, Hiragana, Katakana and Hangul runs
//! into overlapping character bigrams (and other text as `simple` does), which finds CJK
//! words without downloading a language model.

use serde_json::{Map, Value};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, NgramTokenizer, RawTokenizer, RemoveLongFilter, SimpleTokenizer, Stemmer,
    StopWordFilter, TextAnalyzer, TokenStream, WhitespaceTokenizer,
};

use crate::cjk::CjkBigramTokenizer;
use crate::error::{Error, Result};

/// The languages of the stemmer and stop-word lists (tantivy's, by pylance's names).
const LANGUAGES: [(&str, Language); 18] = [
    ("Arabic", Language::Arabic),
    ("Danish", Language::Danish),
    ("Dutch", Language::Dutch),
    ("English", Language::English),
    ("Finnish", Language::Finnish),
    ("French", Language::French),
    ("German", Language::German),
    ("Greek", Language::Greek),
    ("Hungarian", Language::Hungarian),
    ("Italian", Language::Italian),
    ("Norwegian", Language::Norwegian),
    ("Portuguese", Language::Portuguese),
    ("Romanian", Language::Romanian),
    ("Russian", Language::Russian),
    ("Spanish", Language::Spanish),
    ("Swedish", Language::Swedish),
    ("Tamil", Language::Tamil),
    ("Turkish", Language::Turkish),
];

/// The English stop words of pylance 14 (122 words, observed by indexing every word of a
/// 35,000-word vocabulary with it: tantivy's own English list is Lucene's 33 words).
const ENGLISH_STOP_WORDS: [&str; 122] = [
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "should",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "can",
    "will",
    "just",
    "now",
    "re",
];

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
    /// The stemmer language.
    pub fn language(&self) -> Result<Language> {
        LANGUAGES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(self.language.trim_matches('"')))
            .map(|(_, l)| *l)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown language {:?}; expected one of {}",
                    self.language,
                    LANGUAGES.map(|(n, _)| n).join(", ")
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
        let builder = match self.base_tokenizer.as_str() {
            "simple" => TextAnalyzer::builder(SimpleTokenizer::default()).dynamic(),
            "whitespace" => TextAnalyzer::builder(WhitespaceTokenizer::default()).dynamic(),
            "raw" => TextAnalyzer::builder(RawTokenizer::default()).dynamic(),
            "cjk" => TextAnalyzer::builder(CjkBigramTokenizer).dynamic(),
            "ngram" => {
                let (min, max) = (self.min_ngram_length as usize, self.max_ngram_length as usize);
                if min == 0 || min > max {
                    return Err(Error::InvalidArgument(format!(
                        "ngram lengths must satisfy 0 < min_ngram_length <= max_ngram_length, got {min} and {max}"
                    )));
                }
                let ngram = NgramTokenizer::new(min, max, self.prefix_only)
                    .map_err(|e| Error::InvalidArgument(e.to_string()))?;
                TextAnalyzer::builder(ngram).dynamic()
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
        let mut builder = builder;
        if let Some(n) = self.max_token_length {
            builder = builder.filter_dynamic(RemoveLongFilter::limit(n));
        }
        if self.lower_case {
            builder = builder.filter_dynamic(LowerCaser);
        }
        if self.stem {
            builder = builder.filter_dynamic(Stemmer::new(language));
        }
        if self.remove_stop_words {
            let filter = match &self.custom_stop_words {
                Some(words) => StopWordFilter::remove(words.iter().cloned()),
                None if language == Language::English => {
                    StopWordFilter::remove(ENGLISH_STOP_WORDS.iter().map(|w| w.to_string()))
                }
                None => StopWordFilter::new(language).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "there is no stop-word list for {:?}; pass custom_stop_words or remove_stop_words=False",
                        self.language
                    ))
                })?,
            };
            builder = builder.filter_dynamic(filter);
        }
        if self.ascii_folding {
            builder = builder.filter_dynamic(AsciiFoldingFilter);
        }
        Ok(Analyzer { inner: builder.build() })
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

    /// Reads the `params` JSON of an index; missing keys take pylance's defaults.
    pub fn from_json(v: &Value) -> Result<Self> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::corrupt("metadata.lance", "FTS params are not a JSON object"))?;
        let mut c = Self::default();
        let get = |k: &str| obj.get(k).filter(|v| !v.is_null());
        if let Some(v) = get("base_tokenizer") {
            c.base_tokenizer = json_str(v, "base_tokenizer")?;
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
    inner: TextAnalyzer,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Analyzer")
    }
}

impl Analyzer {
    /// Calls `each(token, position)` for every token of `text`, in order.
    pub fn for_each(&mut self, text: &str, mut each: impl FnMut(&str, u32)) {
        let mut stream = self.inner.token_stream(text);
        while stream.advance() {
            let t = stream.token();
            each(&t.text, t.position as u32);
        }
    }

    /// The tokens of `text`, in order.
    pub fn tokens(&mut self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each(text, |t, _| out.push(t.to_string()));
        out
    }
}
