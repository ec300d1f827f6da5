//! Tokenizer for the expression grammar.

use crate::ast::{is_ident_continue, is_ident_start};
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// An unquoted word, as written (keywords are recognized by the parser).
    Word(String),
    /// A `` `backquoted` `` identifier.
    Quoted(String),
    /// A `'single'` or `"double"` quoted string.
    Str(String),
    /// `X'hex'`.
    Hex(Vec<u8>),
    /// A numeric literal, as written.
    Number(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    DoubleColon,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Concat,
    Eof,
}

impl Tok {
    /// How the token is named in "expected X, found Y" messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Tok::Word(w) => {
                if crate::ast::is_reserved(w) {
                    format!("keyword {}", w.to_ascii_uppercase())
                } else {
                    format!("identifier {w}")
                }
            }
            Tok::Quoted(w) => format!("identifier `{w}`"),
            Tok::Str(s) => format!("string '{s}'"),
            Tok::Hex(_) => "binary literal".to_string(),
            Tok::Number(n) => format!("number {n}"),
            Tok::LParen => "'('".to_string(),
            Tok::RParen => "')'".to_string(),
            Tok::LBracket => "'['".to_string(),
            Tok::RBracket => "']'".to_string(),
            Tok::Comma => "','".to_string(),
            Tok::Dot => "'.'".to_string(),
            Tok::DoubleColon => "'::'".to_string(),
            Tok::Eq => "'='".to_string(),
            Tok::NotEq => "'!='".to_string(),
            Tok::Lt => "'<'".to_string(),
            Tok::LtEq => "'<='".to_string(),
            Tok::Gt => "'>'".to_string(),
            Tok::GtEq => "'>='".to_string(),
            Tok::Plus => "'+'".to_string(),
            Tok::Minus => "'-'".to_string(),
            Tok::Star => "'*'".to_string(),
            Tok::Slash => "'/'".to_string(),
            Tok::Percent => "'%'".to_string(),
            Tok::Concat => "'||'".to_string(),
            Tok::Eof => "end of input".to_string(),
        }
    }
}

/// A token and the character offset where it starts.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub pos: usize,
}

pub(crate) fn parse_error(message: impl Into<String>, position: usize) -> Error {
    Error::Parse {
        message: message.into(),
        position,
    }
}

pub(crate) fn tokenize(sql: &str) -> Result<Vec<Token>> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let peek = chars.get(i + 1).copied();
        let tok = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '-' if peek == Some('-') => {
                // `-- comment` to end of line
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if peek == Some('*') => {
                i += 2;
                loop {
                    if i + 1 >= chars.len() {
                        return Err(parse_error("unterminated /* comment", start));
                    }
                    if chars[i] == '*' && chars[i + 1] == '/' {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            '(' => single(&mut i, Tok::LParen),
            ')' => single(&mut i, Tok::RParen),
            '[' => single(&mut i, Tok::LBracket),
            ']' => single(&mut i, Tok::RBracket),
            ',' => single(&mut i, Tok::Comma),
            '+' => single(&mut i, Tok::Plus),
            '-' => single(&mut i, Tok::Minus),
            '*' => single(&mut i, Tok::Star),
            '/' => single(&mut i, Tok::Slash),
            '%' => single(&mut i, Tok::Percent),
            ':' if peek == Some(':') => double(&mut i, Tok::DoubleColon),
            '|' if peek == Some('|') => double(&mut i, Tok::Concat),
            '=' if peek == Some('=') => double(&mut i, Tok::Eq),
            '=' => single(&mut i, Tok::Eq),
            '!' if peek == Some('=') => double(&mut i, Tok::NotEq),
            '<' if peek == Some('>') => double(&mut i, Tok::NotEq),
            '<' if peek == Some('=') => double(&mut i, Tok::LtEq),
            '<' => single(&mut i, Tok::Lt),
            '>' if peek == Some('=') => double(&mut i, Tok::GtEq),
            '>' => single(&mut i, Tok::Gt),
            '.' if peek.is_some_and(|p| p.is_ascii_digit()) && !follows_operand(&out) => {
                Tok::Number(lex_number(&chars, &mut i)?)
            }
            '.' => single(&mut i, Tok::Dot),
            '0'..='9' => Tok::Number(lex_number(&chars, &mut i)?),
            '\'' | '"' => Tok::Str(lex_quoted(&chars, &mut i, c, "string literal")?),
            '`' => Tok::Quoted(lex_quoted(&chars, &mut i, '`', "quoted identifier")?),
            'x' | 'X' if peek == Some('\'') => {
                i += 1;
                let text = lex_quoted(&chars, &mut i, '\'', "binary literal")?;
                Tok::Hex(decode_hex(&text, start)?)
            }
            c if is_ident_start(c) => {
                while i < chars.len() && is_ident_continue(chars[i]) {
                    i += 1;
                }
                Tok::Word(chars[start..i].iter().collect())
            }
            other => {
                return Err(parse_error(format!("unexpected character '{other}'"), start));
            }
        };
        out.push(Token { tok, pos: start });
    }
    out.push(Token {
        tok: Tok::Eof,
        pos: chars.len(),
    });
    Ok(out)
}

fn single(i: &mut usize, tok: Tok) -> Tok {
    *i += 1;
    tok
}

fn double(i: &mut usize, tok: Tok) -> Tok {
    *i += 2;
    tok
}

/// `true` when the previous token ends an operand, so a following `.` is a field access.
fn follows_operand(out: &[Token]) -> bool {
    matches!(
        out.last().map(|t| &t.tok),
        Some(Tok::Word(_) | Tok::Quoted(_) | Tok::RParen | Tok::RBracket)
    )
}

fn lex_number(chars: &[char], i: &mut usize) -> Result<String> {
    let start = *i;
    while *i < chars.len() && chars[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i < chars.len() && chars[*i] == '.' {
        *i += 1;
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
    }
    if *i < chars.len() && (chars[*i] == 'e' || chars[*i] == 'E') {
        let mut j = *i + 1;
        if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
            j += 1;
        }
        if j < chars.len() && chars[j].is_ascii_digit() {
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
            *i = j;
        }
    }
    if *i < chars.len() && is_ident_continue(chars[*i]) {
        return Err(parse_error(
            format!(
                "invalid number '{}': a number cannot be followed directly by a letter",
                chars[start..=*i].iter().collect::<String>()
            ),
            start,
        ));
    }
    Ok(chars[start..*i].iter().collect())
}

/// Reads a `quote`-delimited token starting at `chars[*i] == quote`; a doubled quote inside is
/// one literal quote.
fn lex_quoted(chars: &[char], i: &mut usize, quote: char, what: &str) -> Result<String> {
    let start = *i;
    *i += 1;
    let mut s = String::new();
    loop {
        match chars.get(*i) {
            None => {
                return Err(parse_error(
                    format!("unterminated {what}: missing closing {quote} for the one opened here"),
                    start,
                ));
            }
            Some(&c) if c == quote => {
                if chars.get(*i + 1) == Some(&quote) {
                    s.push(quote);
                    *i += 2;
                } else {
                    *i += 1;
                    return Ok(s);
                }
            }
            Some(&c) => {
                s.push(c);
                *i += 1;
            }
        }
    }
}

fn decode_hex(text: &str, pos: usize) -> Result<Vec<u8>> {
    let digits: Vec<u32> = text
        .chars()
        .map(|c| c.to_digit(16))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            parse_error(
                format!("invalid binary literal X'{text}': only hex digits are allowed"),
                pos,
            )
        })?;
    if !digits.len().is_multiple_of(2) {
        return Err(parse_error(
            format!("invalid binary literal X'{text}': odd number of hex digits"),
            pos,
        ));
    }
    Ok(digits.chunks(2).map(|p| (p[0] * 16 + p[1]) as u8).collect())
}
