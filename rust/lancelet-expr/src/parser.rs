//! Pratt parser from tokens to [`Expr`].

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, StringArray};
use arrow_cast::{cast_with_options, CastOptions};
use arrow_schema::{DataType, TimeUnit};

use crate::ast::{prec, BinaryOp, Expr, ScalarValue};
use crate::error::Result;
use crate::lexer::{parse_error, tokenize, Tok, Token};

/// Deepest expression tree the parser builds; deeper input is rejected instead of risking a
/// stack overflow in later recursive passes.
const MAX_DEPTH: usize = 256;

/// `AND`/`OR` chains longer than this are built as balanced trees (both operators are
/// associative under three-valued logic), so a generated filter such as
/// `id = 1 OR id = 2 OR ...` with thousands of terms stays shallow.
const BALANCE_CHAINS_LONGER_THAN: usize = 32;

/// Parses one SQL expression (a filter such as `a > 1 AND b IS NULL` or a projection such as
/// `a * 2`).
pub fn parse(sql: &str) -> Result<Expr> {
    let tokens = tokenize(sql)?;
    let mut p = Parser { tokens, i: 0 };
    let (expr, depth) = p.parse_expr(0, 0)?;
    let t = p.peek();
    if t.tok != Tok::Eof {
        return Err(parse_error(
            format!(
                "unexpected {} after a complete expression (missing AND/OR or operator?)",
                t.tok.describe()
            ),
            t.pos,
        ));
    }
    if depth > MAX_DEPTH {
        return Err(too_deep(0));
    }
    Ok(expr)
}

struct Parser {
    tokens: Vec<Token>,
    i: usize,
}

/// An infix or postfix operator recognized after an operand.
enum Infix {
    Binary(BinaryOp),
    /// `IS [NOT] ...`
    Is,
    /// `[NOT] IN | BETWEEN | LIKE | ILIKE`
    Predicate,
    /// `::type`
    Cast,
    /// `[index]` or `['field']`
    Subscript,
    /// `.field` after a subscript or a parenthesized expression
    Field,
}

fn word_is(tok: &Tok, kw: &str) -> bool {
    matches!(tok, Tok::Word(w) if w.eq_ignore_ascii_case(kw))
}

impl Parser {
    fn peek(&self) -> &Token {
        // The token list always ends with Eof and `i` never moves past it.
        &self.tokens[self.i.min(self.tokens.len() - 1)]
    }

    fn advance(&mut self) -> Token {
        let t = self.peek().clone();
        if self.i < self.tokens.len() - 1 {
            self.i += 1;
        }
        t
    }

    fn at_word(&self, kw: &str) -> bool {
        word_is(&self.peek().tok, kw)
    }

    fn eat_word(&mut self, kw: &str) -> bool {
        if self.at_word(kw) {
            self.advance();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: Tok, context: &str) -> Result<Token> {
        let t = self.peek();
        if t.tok == tok {
            Ok(self.advance())
        } else {
            Err(parse_error(
                format!("expected {} {context}, found {}", tok.describe(), t.tok.describe()),
                t.pos,
            ))
        }
    }

    fn expect_word(&mut self, kw: &str, context: &str) -> Result<()> {
        if self.eat_word(kw) {
            Ok(())
        } else {
            let t = self.peek();
            Err(parse_error(
                format!("expected {kw} {context}, found {}", t.tok.describe()),
                t.pos,
            ))
        }
    }

    fn infix(&self) -> Option<(Infix, u8)> {
        let tok = &self.peek().tok;
        let op = |op: BinaryOp| Some((Infix::Binary(op), op.precedence()));
        match tok {
            Tok::Eq => op(BinaryOp::Eq),
            Tok::NotEq => op(BinaryOp::NotEq),
            Tok::Lt => op(BinaryOp::Lt),
            Tok::LtEq => op(BinaryOp::LtEq),
            Tok::Gt => op(BinaryOp::Gt),
            Tok::GtEq => op(BinaryOp::GtEq),
            Tok::Plus => op(BinaryOp::Plus),
            Tok::Minus => op(BinaryOp::Minus),
            Tok::Star => op(BinaryOp::Multiply),
            Tok::Slash => op(BinaryOp::Divide),
            Tok::Percent => op(BinaryOp::Modulo),
            Tok::Concat => op(BinaryOp::StringConcat),
            Tok::DoubleColon => Some((Infix::Cast, prec::CAST)),
            Tok::LBracket => Some((Infix::Subscript, prec::SUBSCRIPT)),
            Tok::Dot => Some((Infix::Field, prec::SUBSCRIPT)),
            Tok::Word(w) => {
                let w = w.to_ascii_lowercase();
                match w.as_str() {
                    "and" => op(BinaryOp::And),
                    "or" => op(BinaryOp::Or),
                    "is" => Some((Infix::Is, prec::IS)),
                    "in" | "between" | "like" | "ilike" | "not" => Some((Infix::Predicate, prec::CMP)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Parses an expression whose operators all bind tighter than `min_prec`. `nesting` counts
    /// the recursion depth of the parser itself. Returns the tree and its depth.
    fn parse_expr(&mut self, min_prec: u8, nesting: usize) -> Result<(Expr, usize)> {
        if nesting > MAX_DEPTH {
            return Err(too_deep(self.peek().pos));
        }
        let (mut left, mut depth) = self.parse_prefix(nesting)?;
        while let Some((infix, p)) = self.infix() {
            if p <= min_prec {
                break;
            }
            let op_tok = self.advance();
            match infix {
                Infix::Binary(op @ (BinaryOp::And | BinaryOp::Or)) => {
                    // Collect the whole chain of this operator, then build it.
                    let mut operands = vec![(left, depth)];
                    operands.push(self.parse_operand(p, nesting, &op_tok)?);
                    while word_is(&self.peek().tok, op.sql()) {
                        let t = self.advance();
                        operands.push(self.parse_operand(p, nesting, &t)?);
                    }
                    (left, depth) = build_chain(op, operands);
                }
                Infix::Binary(op) => {
                    let (right, rd) = self.parse_operand(p, nesting, &op_tok)?;
                    left = Expr::binary(left, op, right);
                    depth = depth.max(rd) + 1;
                }
                Infix::Subscript => {
                    let (index, d) = self.parse_expr(0, nesting + 1)?;
                    self.expect(Tok::RBracket, "to close the '[' subscript")?;
                    left = subscript(left, index);
                    depth = depth.max(d) + 1;
                }
                Infix::Field => {
                    let t = self.advance();
                    let name = match t.tok {
                        Tok::Word(w) | Tok::Quoted(w) => w,
                        other => {
                            return Err(parse_error(
                                format!("expected a field name after '.', found {}", other.describe()),
                                t.pos,
                            ));
                        }
                    };
                    left = Expr::Function {
                        name: "get_field".into(),
                        args: vec![left, Expr::Literal(ScalarValue::Utf8(name))],
                    };
                    depth += 1;
                }
                Infix::Cast => {
                    let to = self.parse_type()?;
                    left = Expr::Cast {
                        expr: Box::new(left),
                        to,
                    };
                    depth += 1;
                }
                Infix::Is => {
                    let negated = self.eat_word("not");
                    let t = self.advance();
                    let inner = Box::new(left);
                    left = match &t.tok {
                        w if word_is(w, "null") => {
                            if negated {
                                Expr::IsNotNull(inner)
                            } else {
                                Expr::IsNull(inner)
                            }
                        }
                        w if word_is(w, "true") => {
                            if negated {
                                Expr::IsNotTrue(inner)
                            } else {
                                Expr::IsTrue(inner)
                            }
                        }
                        w if word_is(w, "false") => {
                            if negated {
                                Expr::IsNotFalse(inner)
                            } else {
                                Expr::IsFalse(inner)
                            }
                        }
                        other => {
                            let after = if negated { "IS NOT" } else { "IS" };
                            return Err(parse_error(
                                format!("expected NULL, TRUE or FALSE after {after}, found {}", other.describe()),
                                t.pos,
                            ));
                        }
                    };
                    depth += 1;
                }
                Infix::Predicate => {
                    let (e, d) = self.parse_predicate(left, depth, &op_tok, nesting)?;
                    left = e;
                    depth = d;
                }
            }
            // Checked on every step, not once at the end: a long left-deep chain such as
            // `1 + 1 + ...` grows here without recursion, and a tree of 10^5 levels
            // overflows the stack when it is merely dropped.
            if depth > MAX_DEPTH {
                return Err(too_deep(op_tok.pos));
            }
        }
        Ok((left, depth))
    }

    /// The right operand of a binary operator with binding power `p`.
    fn parse_operand(&mut self, p: u8, nesting: usize, op: &Token) -> Result<(Expr, usize)> {
        if self.peek().tok == Tok::Eof {
            return Err(parse_error(
                format!("expected an expression after {}, found end of input", op.tok.describe()),
                self.peek().pos,
            ));
        }
        self.parse_expr(p, nesting + 1)
    }

    /// `IN`, `BETWEEN`, `LIKE`, `ILIKE`, optionally preceded by `NOT`; `first` is already consumed.
    fn parse_predicate(&mut self, left: Expr, depth: usize, first: &Token, nesting: usize) -> Result<(Expr, usize)> {
        let negated = word_is(&first.tok, "not");
        let kw = if negated { self.advance() } else { first.clone() };
        let expr = Box::new(left);
        let kw_name = match &kw.tok {
            Tok::Word(w) => w.to_ascii_lowercase(),
            _ => String::new(),
        };
        match kw_name.as_str() {
            "in" => {
                self.expect(Tok::LParen, "after IN")?;
                if self.peek().tok == Tok::RParen {
                    return Err(parse_error(
                        "expected at least one value in the IN list",
                        self.peek().pos,
                    ));
                }
                let (list, ld) = self.parse_list(nesting, "in the IN list")?;
                let d = depth.max(ld);
                Ok((Expr::InList { expr, list, negated }, d + 1))
            }
            "between" => {
                let (low, ld) = self.parse_operand(prec::CMP, nesting, &kw)?;
                self.expect_word("and", "between the BETWEEN bounds")?;
                let (high, hd) = self.parse_operand(prec::CMP, nesting, &kw)?;
                let d = depth.max(ld).max(hd) + 1;
                Ok((
                    Expr::Between {
                        expr,
                        low: Box::new(low),
                        high: Box::new(high),
                        negated,
                    },
                    d,
                ))
            }
            "like" | "ilike" => {
                let (pattern, pd) = self.parse_operand(prec::CMP, nesting, &kw)?;
                let escape = if self.eat_word("escape") {
                    let t = self.advance();
                    match &t.tok {
                        Tok::Str(s) if s.chars().count() == 1 => s.chars().next(),
                        other => {
                            return Err(parse_error(
                                format!(
                                    "expected a one-character string after ESCAPE, found {}",
                                    other.describe()
                                ),
                                t.pos,
                            ));
                        }
                    }
                } else {
                    None
                };
                let case_insensitive = kw_name == "ilike";
                let d = depth.max(pd) + 1;
                Ok((
                    Expr::Like {
                        expr,
                        pattern: Box::new(pattern),
                        negated,
                        case_insensitive,
                        escape,
                    },
                    d,
                ))
            }
            _ => Err(parse_error(
                format!(
                    "expected IN, BETWEEN, LIKE or ILIKE after NOT, found {}",
                    kw.tok.describe()
                ),
                kw.pos,
            )),
        }
    }

    fn parse_prefix(&mut self, nesting: usize) -> Result<(Expr, usize)> {
        let t = self.advance();
        match t.tok {
            Tok::Number(ref n) => Ok((Expr::Literal(parse_number(n, false, t.pos)?), 1)),
            Tok::Str(s) => Ok((Expr::Literal(ScalarValue::Utf8(s)), 1)),
            Tok::Hex(b) => Ok((Expr::Literal(ScalarValue::Binary(b)), 1)),
            Tok::LParen => {
                let (e, d) = self.parse_expr(0, nesting + 1)?;
                let close = self.peek().clone();
                if close.tok != Tok::RParen {
                    return Err(parse_error(
                        format!(
                            "expected ')' to close the '(' at position {}, found {}",
                            t.pos,
                            close.tok.describe()
                        ),
                        close.pos,
                    ));
                }
                self.advance();
                Ok((e, d))
            }
            Tok::Minus => {
                // A minus directly before a number is part of the literal, so `-5` is the
                // value -5 and `-9223372036854775808` fits in i64.
                if let Tok::Number(n) = self.peek().tok.clone() {
                    let pos = self.advance().pos;
                    return Ok((Expr::Literal(parse_number(&n, true, pos)?), 1));
                }
                let (e, d) = self.parse_operand(prec::UNARY, nesting, &t)?;
                Ok((Expr::Negative(Box::new(e)), d + 1))
            }
            Tok::Plus => self.parse_operand(prec::UNARY, nesting, &t),
            Tok::LBracket => self.parse_array(nesting),
            Tok::Quoted(name) => self.parse_column(name, t.pos),
            Tok::Word(ref w) => {
                let lower = w.to_ascii_lowercase();
                match lower.as_str() {
                    "null" => Ok((Expr::Literal(ScalarValue::Null), 1)),
                    "true" => Ok((Expr::Literal(ScalarValue::Boolean(true)), 1)),
                    "false" => Ok((Expr::Literal(ScalarValue::Boolean(false)), 1)),
                    "not" => {
                        let (e, d) = self.parse_operand(prec::NOT, nesting, &t)?;
                        Ok((Expr::Not(Box::new(e)), d + 1))
                    }
                    "cast" | "try_cast" if self.peek().tok == Tok::LParen => {
                        self.advance();
                        let (e, d) = self.parse_expr(0, nesting + 1)?;
                        self.expect_word("as", &format!("in {}(... AS type)", lower.to_ascii_uppercase()))?;
                        let to = self.parse_type()?;
                        self.expect(Tok::RParen, &format!("to close {}(", lower.to_ascii_uppercase()))?;
                        let expr = Box::new(e);
                        let cast = if lower == "cast" {
                            Expr::Cast { expr, to }
                        } else {
                            Expr::TryCast { expr, to }
                        };
                        Ok((cast, d + 1))
                    }
                    "timestamp" | "datetime"
                        if self.peek().tok == Tok::LParen
                            && matches!(self.tokens.get(self.i + 3).map(|t| &t.tok), Some(Tok::Str(_))) =>
                    {
                        // `TIMESTAMP(p) '...'`: the precision picks the unit.
                        self.advance();
                        let pos = self.peek().pos;
                        let p = self.parse_u8("a precision")?;
                        self.expect(Tok::RParen, "after the timestamp precision")?;
                        let unit = precision_unit(p, pos)?;
                        let lit = self.advance();
                        let Tok::Str(text) = lit.tok else {
                            return Err(parse_error("expected a string literal", lit.pos));
                        };
                        Ok((Expr::Literal(parse_timestamp(&text, unit, lit.pos)?), 1))
                    }
                    "current_date" | "current_timestamp" if !matches!(self.peek().tok, Tok::LParen | Tok::Dot) => {
                        // SQL's niladic functions, written without parentheses.
                        Ok((
                            Expr::Function {
                                name: lower.clone(),
                                args: vec![],
                            },
                            1,
                        ))
                    }
                    "date" | "timestamp" | "datetime" if matches!(self.peek().tok, Tok::Str(_)) => {
                        let lit = self.advance();
                        let Tok::Str(text) = lit.tok else {
                            return Err(parse_error("expected a string literal", lit.pos));
                        };
                        let value = if lower == "date" {
                            parse_date(&text, lit.pos)?
                        } else {
                            parse_timestamp(&text, TimeUnit::Microsecond, lit.pos)?
                        };
                        Ok((Expr::Literal(value), 1))
                    }
                    "and" | "or" | "is" | "in" | "between" | "like" | "ilike" | "escape" | "as" => Err(parse_error(
                        format!("expected an expression, found keyword {}", lower.to_ascii_uppercase()),
                        t.pos,
                    )),
                    "array" if self.peek().tok == Tok::LBracket => {
                        self.advance();
                        self.parse_array(nesting)
                    }
                    _ if self.peek().tok == Tok::LParen => self.parse_call(lower, nesting),
                    _ => self.parse_column(w.clone(), t.pos),
                }
            }
            other => Err(parse_error(
                format!("expected an expression, found {}", other.describe()),
                t.pos,
            )),
        }
    }

    fn parse_call(&mut self, name: String, nesting: usize) -> Result<(Expr, usize)> {
        self.advance(); // (
        let (args, depth) = if self.peek().tok == Tok::RParen {
            self.advance();
            (Vec::new(), 0)
        } else {
            self.parse_list(nesting, &format!("in the arguments of {name}()"))?
        };
        Ok((Expr::Function { name, args }, depth + 1))
    }

    /// An array literal `[a, b, ...]` (the `[` consumed): the function `make_array`.
    fn parse_array(&mut self, nesting: usize) -> Result<(Expr, usize)> {
        let (args, depth) = if self.peek().tok == Tok::RBracket {
            self.advance();
            (Vec::new(), 0)
        } else {
            self.parse_items(nesting, Tok::RBracket, "in the array literal")?
        };
        Ok((
            Expr::Function {
                name: "make_array".into(),
                args,
            },
            depth + 1,
        ))
    }

    /// Comma-separated expressions up to and including the closing `)`, with their depth;
    /// `what` says where, for errors.
    fn parse_list(&mut self, nesting: usize, what: &str) -> Result<(Vec<Expr>, usize)> {
        self.parse_items(nesting, Tok::RParen, what)
    }

    /// Comma-separated expressions up to and including `close`.
    fn parse_items(&mut self, nesting: usize, close: Tok, what: &str) -> Result<(Vec<Expr>, usize)> {
        let mut items = Vec::new();
        let mut depth = 0;
        loop {
            let (item, d) = self.parse_expr(0, nesting + 1)?;
            depth = depth.max(d);
            items.push(item);
            let t = self.advance();
            match t.tok {
                Tok::Comma => continue,
                ref t if *t == close => return Ok((items, depth)),
                other => {
                    return Err(parse_error(
                        format!(
                            "expected ',' or {} {what}, found {}",
                            close.describe(),
                            other.describe()
                        ),
                        t.pos,
                    ))
                }
            }
        }
    }

    /// A column path: `a`, `a.b.c`, `` `my col`.b ``.
    fn parse_column(&mut self, first: String, _pos: usize) -> Result<(Expr, usize)> {
        let mut path = vec![first];
        while self.peek().tok == Tok::Dot {
            self.advance();
            let t = self.advance();
            match t.tok {
                Tok::Word(w) | Tok::Quoted(w) => path.push(w),
                other => {
                    return Err(parse_error(
                        format!("expected a field name after '.', found {}", other.describe()),
                        t.pos,
                    ));
                }
            }
        }
        Ok((Expr::Column(path), 1))
    }

    /// A SQL type name after `AS` or `::`.
    fn parse_type(&mut self) -> Result<DataType> {
        let t = self.advance();
        let Tok::Word(w) = &t.tok else {
            return Err(parse_error(
                format!("expected a type name, found {}", t.tok.describe()),
                t.pos,
            ));
        };
        let name = w.to_ascii_lowercase();
        let unsigned = |p: &mut Parser, signed: DataType, unsigned: DataType| {
            if p.eat_word("unsigned") {
                unsigned
            } else {
                signed
            }
        };
        let ty = match name.as_str() {
            "tinyint" => unsigned(self, DataType::Int8, DataType::UInt8),
            "smallint" => unsigned(self, DataType::Int16, DataType::UInt16),
            "int" | "integer" => unsigned(self, DataType::Int32, DataType::UInt32),
            "bigint" => unsigned(self, DataType::Int64, DataType::UInt64),
            "half" | "float16" => DataType::Float16,
            "float" | "real" => DataType::Float32,
            "double" => {
                self.eat_word("precision");
                DataType::Float64
            }
            "string" | "text" => DataType::Utf8,
            "varchar" | "char" => {
                // A length limit is accepted and ignored.
                if self.peek().tok == Tok::LParen {
                    self.advance();
                    self.parse_u8("a length")?;
                    self.expect(Tok::RParen, "after the length")?;
                }
                DataType::Utf8
            }
            "large_string" => DataType::LargeUtf8,
            "string_view" => DataType::Utf8View,
            "binary" | "varbinary" | "bytea" => DataType::Binary,
            "large_binary" => DataType::LargeBinary,
            "binary_view" => DataType::BinaryView,
            "fixed_size_binary" => {
                self.expect(Tok::LParen, "after FIXED_SIZE_BINARY")?;
                let t = self.advance();
                let n = match &t.tok {
                    Tok::Number(n) => n.parse::<i32>().ok().filter(|n| *n >= 0),
                    _ => None,
                }
                .ok_or_else(|| parse_error(format!("expected a byte width, found {}", t.tok.describe()), t.pos))?;
                self.expect(Tok::RParen, "after the byte width")?;
                DataType::FixedSizeBinary(n)
            }
            "date64" => DataType::Date64,
            "boolean" | "bool" => DataType::Boolean,
            // The type of an untyped NULL; the binder casts NULL literals to it.
            "null" => DataType::Null,
            "date" => DataType::Date32,
            "timestamp" | "datetime" => {
                let unit = if self.peek().tok == Tok::LParen {
                    self.advance();
                    let pos = self.peek().pos;
                    let p = self.parse_u8("a precision")?;
                    self.expect(Tok::RParen, "after the timestamp precision")?;
                    precision_unit(p, pos)?
                } else {
                    TimeUnit::Microsecond
                };
                let tz = if self.eat_word("with") {
                    self.expect_word("time", "in TIMESTAMP WITH TIME ZONE")?;
                    self.expect_word("zone", "in TIMESTAMP WITH TIME ZONE")?;
                    let t = self.advance();
                    match t.tok {
                        Tok::Str(tz) => Some(Arc::<str>::from(tz)),
                        other => {
                            return Err(parse_error(
                                format!("expected a time zone string such as 'UTC', found {}", other.describe()),
                                t.pos,
                            ));
                        }
                    }
                } else {
                    None
                };
                DataType::Timestamp(unit, tz)
            }
            "decimal" | "numeric" | "decimal256" => {
                let wide = name == "decimal256";
                self.expect(Tok::LParen, "after DECIMAL (write DECIMAL(precision, scale))")?;
                let pos = self.peek().pos;
                let precision = self.parse_u8("a precision")?;
                let scale = if self.peek().tok == Tok::Comma {
                    self.advance();
                    self.parse_u8("a scale")?
                } else {
                    0
                };
                self.expect(Tok::RParen, "after the DECIMAL scale")?;
                let max = if wide { 76 } else { 38 };
                if precision == 0 || precision > max || scale > precision {
                    return Err(parse_error(
                        format!(
                            "invalid DECIMAL({precision}, {scale}): precision must be 1..={max} and scale <= precision"
                        ),
                        pos,
                    ));
                }
                if wide {
                    DataType::Decimal256(precision, scale as i8)
                } else {
                    DataType::Decimal128(precision, scale as i8)
                }
            }
            _ => {
                return Err(parse_error(
                    format!(
                        "unknown type {w}; expected one of: tinyint, smallint, int, bigint (each optionally \
                         UNSIGNED), float, real, double, string, varchar, text, binary, boolean, date, \
                         timestamp[(0|3|6|9)] [WITH TIME ZONE 'tz'], decimal(p, s)"
                    ),
                    t.pos,
                ));
            }
        };
        Ok(ty)
    }

    fn parse_u8(&mut self, what: &str) -> Result<u8> {
        let t = self.advance();
        match &t.tok {
            Tok::Number(n) => n
                .parse::<u8>()
                .map_err(|_| parse_error(format!("expected {what} between 0 and 255, found {n}"), t.pos)),
            other => Err(parse_error(
                format!("expected {what}, found {}", other.describe()),
                t.pos,
            )),
        }
    }
}

/// `base[index]`: a string index reads a struct field (`get_field`), anything else is a
/// 1-based list element (`array_element`), as in DataFusion.
fn subscript(base: Expr, index: Expr) -> Expr {
    let name = if matches!(index, Expr::Literal(ScalarValue::Utf8(_))) {
        "get_field"
    } else {
        "array_element"
    };
    Expr::Function {
        name: name.into(),
        args: vec![base, index],
    }
}

fn too_deep(pos: usize) -> crate::error::Error {
    parse_error(
        format!("expression is nested too deeply (more than {MAX_DEPTH} levels)"),
        pos,
    )
}

/// Builds `a op b op c ...`: left-deep for short chains (the shape users expect), balanced for
/// long ones.
fn build_chain(op: BinaryOp, operands: Vec<(Expr, usize)>) -> (Expr, usize) {
    if operands.len() <= BALANCE_CHAINS_LONGER_THAN {
        let mut iter = operands.into_iter();
        let Some((mut acc, mut depth)) = iter.next() else {
            return (Expr::Literal(ScalarValue::Null), 1);
        };
        for (e, d) in iter {
            acc = Expr::binary(acc, op, e);
            depth = depth.max(d) + 1;
        }
        (acc, depth)
    } else {
        balanced(op, operands)
    }
}

fn balanced(op: BinaryOp, mut operands: Vec<(Expr, usize)>) -> (Expr, usize) {
    if operands.len() == 1 {
        if let Some(only) = operands.pop() {
            return only;
        }
    }
    let right = operands.split_off(operands.len() / 2);
    let (l, ld) = balanced(op, operands);
    let (r, rd) = balanced(op, right);
    (Expr::binary(l, op, r), ld.max(rd) + 1)
}

fn parse_number(text: &str, negative: bool, pos: usize) -> Result<ScalarValue> {
    let is_float = text.contains(['.', 'e', 'E']);
    if !is_float {
        let signed = if negative { format!("-{text}") } else { text.to_string() };
        if let Ok(v) = signed.parse::<i64>() {
            return Ok(ScalarValue::Int64(v));
        }
        if !negative {
            if let Ok(v) = text.parse::<u64>() {
                return Ok(ScalarValue::UInt64(v));
            }
        }
    }
    // Too large for an integer type, or written as a decimal: a double, as in DataFusion.
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(ScalarValue::Float64(if negative { -v } else { v })),
        _ => Err(parse_error(format!("number {text} is out of range"), pos)),
    }
}

fn cast_string(text: &str, to: &DataType) -> std::result::Result<Arc<dyn Array>, arrow_schema::ArrowError> {
    let arr = StringArray::from(vec![text]);
    cast_with_options(
        &arr,
        to,
        &CastOptions {
            safe: false,
            ..Default::default()
        },
    )
}

fn parse_date(text: &str, pos: usize) -> Result<ScalarValue> {
    let bad = || parse_error(format!("invalid date '{text}': expected 'YYYY-MM-DD'"), pos);
    let arr = cast_string(text.trim(), &DataType::Date32).map_err(|_| bad())?;
    let days = arr
        .as_primitive_opt::<Date32Type>()
        .filter(|a| a.is_valid(0))
        .map(|a| a.value(0));
    days.map(ScalarValue::Date32).ok_or_else(bad)
}

/// The unit of `TIMESTAMP(p)`: 0, 3, 6 and 9 digits are seconds, milli-, micro- and
/// nanoseconds (the precisions Lance accepts).
fn precision_unit(p: u8, pos: usize) -> Result<TimeUnit> {
    match p {
        0 => Ok(TimeUnit::Second),
        3 => Ok(TimeUnit::Millisecond),
        6 => Ok(TimeUnit::Microsecond),
        9 => Ok(TimeUnit::Nanosecond),
        _ => Err(parse_error(
            format!("timestamp precision must be 0, 3, 6 or 9, found {p}"),
            pos,
        )),
    }
}

/// A `TIMESTAMP` literal in `unit`; finer fractional digits are truncated, as in Lance
/// (`TIMESTAMP '... 00:00:00.123456789'` is microseconds, `.123456`).
fn parse_timestamp(text: &str, unit: TimeUnit, pos: usize) -> Result<ScalarValue> {
    let bad = || {
        parse_error(
            format!("invalid timestamp '{text}': expected 'YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM]'"),
            pos,
        )
    };
    let arr = cast_string(text.trim(), &DataType::Timestamp(unit, None)).map_err(|_| bad())?;
    let ticks = match unit {
        TimeUnit::Second => arr
            .as_primitive_opt::<TimestampSecondType>()
            .filter(|a| a.is_valid(0))
            .map(|a| a.value(0)),
        TimeUnit::Millisecond => arr
            .as_primitive_opt::<TimestampMillisecondType>()
            .filter(|a| a.is_valid(0))
            .map(|a| a.value(0)),
        TimeUnit::Microsecond => arr
            .as_primitive_opt::<TimestampMicrosecondType>()
            .filter(|a| a.is_valid(0))
            .map(|a| a.value(0)),
        TimeUnit::Nanosecond => arr
            .as_primitive_opt::<TimestampNanosecondType>()
            .filter(|a| a.is_valid(0))
            .map(|a| a.value(0)),
    };
    ticks.map(|t| ScalarValue::Timestamp(t, unit)).ok_or_else(bad)
}
