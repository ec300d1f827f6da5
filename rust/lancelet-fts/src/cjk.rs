//! `base_tokenizer="cjk"`: Chinese, Japanese and Korean without a language model.
//!
//! Text is split as `simple` splits it (on anything not a letter or digit). Inside a piece,
//! each run of CJK characters (Han, Hiragana, Katakana, Hangul) becomes its overlapping
//! character bigrams (`东京大学` -> `东京`, `京大`, `大学`; a lone character is its own
//! token), and every other run is one token. A query is split the same way, so a phrase
//! query over the bigrams finds the word: the usual dictionary-free approach to CJK search.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// The tokenizer (stateless).
#[derive(Clone, Copy, Debug, Default)]
pub struct CjkBigramTokenizer;

/// Whether `c` is written without spaces between words (and so is split into bigrams).
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

/// The tokens of one text, computed up front.
pub struct CjkStream {
    tokens: Vec<Token>,
    next: usize,
}

impl TokenStream for CjkStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next.saturating_sub(1).min(self.tokens.len().saturating_sub(1))]
    }

    fn token_mut(&mut self) -> &mut Token {
        let i = self.next.saturating_sub(1).min(self.tokens.len().saturating_sub(1));
        &mut self.tokens[i]
    }
}

impl Tokenizer for CjkBigramTokenizer {
    type TokenStream<'a> = CjkStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CjkStream {
        let mut tokens = vec![Token::default()];
        tokens.clear();
        let mut push = |from: usize, to: usize, tokens: &mut Vec<Token>| {
            let position = tokens.len();
            tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position,
                text: text[from..to].to_string(),
                position_length: 1,
            });
        };
        // (byte offset, char) of the current CJK run, and the start of a non-CJK word.
        let mut run: Vec<(usize, char)> = Vec::new();
        let mut word: Option<usize> = None;
        let flush_run = |run: &mut Vec<(usize, char)>,
                         tokens: &mut Vec<Token>,
                         push: &mut dyn FnMut(usize, usize, &mut Vec<Token>)| {
            match run.len() {
                0 => {}
                1 => push(run[0].0, run[0].0 + run[0].1.len_utf8(), tokens),
                _ => {
                    for w in run.windows(2) {
                        push(w[0].0, w[1].0 + w[1].1.len_utf8(), tokens);
                    }
                }
            }
            run.clear();
        };
        for (i, c) in text.char_indices() {
            if is_cjk(c) {
                if let Some(start) = word.take() {
                    push(start, i, &mut tokens);
                }
                run.push((i, c));
            } else if c.is_alphanumeric() {
                flush_run(&mut run, &mut tokens, &mut push);
                word.get_or_insert(i);
            } else {
                flush_run(&mut run, &mut tokens, &mut push);
                if let Some(start) = word.take() {
                    push(start, i, &mut tokens);
                }
            }
        }
        flush_run(&mut run, &mut tokens, &mut push);
        if let Some(start) = word.take() {
            push(start, text.len(), &mut tokens);
        }
        CjkStream { tokens, next: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<(String, usize)> {
        let mut t = CjkBigramTokenizer;
        let mut s = t.token_stream(text);
        let mut out = Vec::new();
        while s.advance() {
            out.push((s.token().text.clone(), s.token().position));
        }
        out
    }

    #[test]
    fn han_runs_become_bigrams_and_other_words_stay_whole() {
        let t: Vec<_> = tokens("东京大学 in Tokyo, 2024年")
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(t, ["东京", "京大", "大学", "in", "Tokyo", "2024", "年"]);
    }

    #[test]
    fn positions_count_up_and_a_lone_character_is_a_token() {
        assert_eq!(
            tokens("猫 한국어"),
            [("猫".into(), 0), ("한국".into(), 1), ("국어".into(), 2)]
        );
        assert!(tokens(" ,. ").is_empty());
    }
}
