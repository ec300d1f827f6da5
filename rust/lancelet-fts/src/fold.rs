//! ASCII folding as pylance 14 folds: a character keeps the ASCII characters of its
//! compatibility decomposition (NFKD) and loses its combining marks (`é` -> `e`,
//! `½` -> `12`, `Ⅻ` -> `XII`, a no-break space -> a space). Letters with no such
//! decomposition fold by a small table (`ß` -> `ss`, `ø` -> `o`, `þ` -> `th`); a character
//! that would leave nothing behind (`«`, `€`, CJK, Arabic) stays as it is.

use unicode_normalization::char::{decompose_compatible, is_combining_mark};

/// The letters folded by name rather than by decomposition.
fn by_table(c: char) -> Option<&'static str> {
    Some(match c {
        'ß' => "ss",
        'ẞ' => "SS",
        'æ' => "ae",
        'Æ' => "AE",
        'œ' => "oe",
        'Œ' => "OE",
        'ø' => "o",
        'Ø' => "O",
        'ł' => "l",
        'Ł' => "L",
        'đ' | 'ð' => "d",
        'Đ' | 'Ð' => "D",
        'þ' => "th",
        'Þ' => "TH",
        'ħ' => "h",
        'Ħ' => "H",
        'ŧ' => "t",
        'Ŧ' => "T",
        'ŋ' => "n",
        'Ŋ' => "N",
        'ı' => "i",
        'ĸ' => "k",
        'ſ' => "s",
        _ => return None,
    })
}

/// `text` folded into `out` (cleared first).
pub fn fold_into(text: &str, out: &mut String) {
    out.clear();
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else if let Some(s) = by_table(c) {
            out.push_str(s);
        } else {
            let before = out.len();
            decompose_compatible(c, |d| {
                if d.is_ascii() {
                    out.push(d);
                } else if !is_combining_mark(d) {
                    if let Some(s) = by_table(d) {
                        out.push_str(s);
                    }
                }
            });
            if out.len() == before {
                out.push(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(t: &str) -> String {
        let mut s = String::new();
        fold_into(t, &mut s);
        s
    }

    #[test]
    fn accents_go_and_compatibility_forms_spell_out() {
        assert_eq!(fold("Café naïve"), "Cafe naive");
        assert_eq!(fold("straße Ørsted þing"), "strasse Orsted thing");
        assert_eq!(fold("½ Ⅻ ﬁ x\u{a0}x"), "12 XII fi x x");
    }

    #[test]
    fn characters_with_nothing_ascii_in_them_stay() {
        assert_eq!(fold("«东京» مرحبا €"), "«东京» مرحبا €");
    }
}
