//! Base tokenizers: how a text is cut into pieces before the filters see them.
//!
//! Each calls `emit(piece, position)` in text order. Positions count the pieces a
//! tokenizer makes (a piece a later filter drops still uses its position, so a phrase never
//! matches across it); every n-gram has position 0.

/// A base tokenizer (pylance's `base_tokenizer`, plus lancelet's `cjk`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    /// Maximal runs of letters and digits (`char::is_alphanumeric`).
    Simple,
    /// Maximal runs of anything but ASCII whitespace.
    Whitespace,
    /// The whole value, as one piece (the empty string too).
    Raw,
    /// Every run of `min..=max` characters of the whole value (only those starting it when
    /// `prefix_only`).
    Ngram {
        /// The shortest gram, in characters.
        min: usize,
        /// The longest gram, in characters.
        max: usize,
        /// Only the grams that start the value.
        prefix_only: bool,
    },
    /// `Simple`, with runs of CJK characters cut into overlapping bigrams.
    Cjk,
}

impl Base {
    /// Cuts `text` into pieces.
    pub fn split<'t>(self, text: &'t str, mut emit: impl FnMut(&'t str, u32)) {
        match self {
            Base::Simple => runs(text, char::is_alphanumeric, emit),
            Base::Whitespace => runs(text, |c| !c.is_ascii_whitespace(), emit),
            Base::Raw => emit(text, 0),
            Base::Ngram { min, max, prefix_only } => {
                let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
                let chars = bounds.len() - 1;
                let starts = if prefix_only { chars.min(1) } else { chars };
                for start in 0..starts {
                    for len in min..=max.min(chars - start) {
                        emit(&text[bounds[start]..bounds[start + len]], 0);
                    }
                }
            }
            Base::Cjk => cjk(text, emit),
        }
    }
}

/// Maximal runs of characters `keep` accepts, numbered from 0.
fn runs<'t>(text: &'t str, keep: impl Fn(char) -> bool, mut emit: impl FnMut(&'t str, u32)) {
    let mut position = 0;
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (keep(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                emit(&text[s..i], position);
                position += 1;
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        emit(&text[s..], position);
    }
}

/// Whether `c` is written without spaces between words (and so is cut into bigrams).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0x1100..=0x11FF    // Hangul Jamo
        | 0x3130..=0x318F    // Hangul compatibility Jamo
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0x20000..=0x2FA1F  // CJK Extensions B.. and supplements
    )
}

/// `base_tokenizer="cjk"`: Chinese, Japanese and Korean without a language model.
///
/// Text is cut as `Simple` cuts it. Inside a piece, each run of CJK characters (Han,
/// Hiragana, Katakana, Hangul) becomes its overlapping character bigrams (`东京大学` ->
/// `东京`, `京大`, `大学`; a lone character is its own piece) and every other run is one
/// piece. A query is cut the same way, so a phrase query over the bigrams finds the word:
/// the usual dictionary-free approach to CJK search.
fn cjk<'t>(text: &'t str, mut emit: impl FnMut(&'t str, u32)) {
    let mut position = 0;
    let mut push = |from: usize, to: usize| {
        emit(&text[from..to], position);
        position += 1;
    };
    // The current CJK run as (byte offset, char), and the start of a non-CJK word.
    let mut run: Vec<(usize, char)> = Vec::new();
    let mut word: Option<usize> = None;
    let flush = |run: &mut Vec<(usize, char)>, push: &mut dyn FnMut(usize, usize)| {
        match run.as_slice() {
            [] => {}
            [(at, c)] => push(*at, at + c.len_utf8()),
            pairs => {
                for w in pairs.windows(2) {
                    push(w[0].0, w[1].0 + w[1].1.len_utf8());
                }
            }
        }
        run.clear();
    };
    for (i, c) in text.char_indices() {
        if is_cjk(c) {
            if let Some(start) = word.take() {
                push(start, i);
            }
            run.push((i, c));
        } else {
            flush(&mut run, &mut push);
            if c.is_alphanumeric() {
                word.get_or_insert(i);
            } else if let Some(start) = word.take() {
                push(start, i);
            }
        }
    }
    flush(&mut run, &mut push);
    if let Some(start) = word {
        push(start, text.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(base: Base, text: &str) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        base.split(text, |p, at| out.push((p.to_string(), at)));
        out
    }

    fn texts(base: Base, text: &str) -> Vec<String> {
        pieces(base, text).into_iter().map(|(p, _)| p).collect()
    }

    #[test]
    fn simple_cuts_at_anything_not_a_letter_or_digit() {
        assert_eq!(
            pieces(Base::Simple, "x_y, Straße-2024!"),
            [
                ("x".into(), 0),
                ("y".into(), 1),
                ("Straße".into(), 2),
                ("2024".into(), 3)
            ]
        );
        assert!(pieces(Base::Simple, " ,. ").is_empty());
    }

    #[test]
    fn whitespace_cuts_at_ascii_whitespace_only() {
        assert_eq!(texts(Base::Whitespace, " a\u{3000}b\tc-d\n"), ["a\u{3000}b", "c-d"]);
    }

    #[test]
    fn raw_is_one_piece_even_when_empty() {
        assert_eq!(pieces(Base::Raw, ""), [(String::new(), 0)]);
    }

    #[test]
    fn ngrams_run_over_the_whole_value_by_characters() {
        let g = |min, max, prefix_only, t| texts(Base::Ngram { min, max, prefix_only }, t);
        assert_eq!(g(2, 3, false, "héy"), ["hé", "héy", "éy"]);
        assert_eq!(g(1, 3, true, "abcd"), ["a", "ab", "abc"]);
        assert!(g(3, 3, false, "ab").is_empty());
        assert_eq!(g(2, 2, false, "a b"), ["a ", " b"]);
    }

    #[test]
    fn han_runs_become_bigrams_and_other_words_stay_whole() {
        assert_eq!(
            texts(Base::Cjk, "东京大学 in Tokyo, 2024年"),
            ["东京", "京大", "大学", "in", "Tokyo", "2024", "年"]
        );
        assert_eq!(
            pieces(Base::Cjk, "猫 한국어"),
            [("猫".into(), 0), ("한국".into(), 1), ("국어".into(), 2)]
        );
    }
}
