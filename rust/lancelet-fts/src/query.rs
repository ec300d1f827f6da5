//! Full-text queries: pylance's query objects (`lance.query`) as one tree, and its JSON form.
//!
//! The JSON form is an object with one key naming the kind (`match`, `phrase`, `boost`,
//! `multi_match`, `boolean`) whose value holds that kind's fields under pylance's names,
//! for example `{"match": {"column": "text", "terms": "brown fox", "operator": "And"}}`.

use serde_json::Value;

use crate::error::{Error, Result};

/// How the terms of a match combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Operator {
    /// A row matches when it holds any term (scores add up).
    #[default]
    Or,
    /// A row matches only when it holds every term.
    And,
}

/// How a clause of a boolean query counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occur {
    /// Rows must match the clause; its score adds.
    Must,
    /// Rows may match the clause; its score adds when they do.
    Should,
    /// Rows matching the clause are excluded.
    MustNot,
}

/// A full-text query.
#[derive(Debug, Clone, PartialEq)]
pub enum FtsQuery {
    /// The analyzed terms of `terms`, matched against one column (every FTS-indexed column
    /// when `column` is `None`).
    Match {
        /// The column, or every indexed one.
        column: Option<String>,
        /// The query text.
        terms: String,
        /// Scores are multiplied by this.
        boost: f32,
        /// Edits allowed per term; `None` is pylance's "auto" (0 up to 2 characters, 1 up to 5,
        /// else 2).
        fuzziness: Option<u32>,
        /// At most this many index terms per fuzzy query term.
        max_expansions: usize,
        /// OR or AND.
        operator: Operator,
        /// Leading characters a fuzzy match must share exactly.
        prefix_length: u32,
    },
    /// The terms in order, at most `slop` positions apart in all (needs positions).
    Phrase {
        /// The column, or every indexed one.
        column: Option<String>,
        /// The phrase.
        terms: String,
        /// Extra positions allowed between the terms.
        slop: u32,
    },
    /// Rows of `positive`; those also matching `negative` have their score multiplied by
    /// `negative_boost`.
    Boost {
        /// The query that selects rows.
        positive: Box<FtsQuery>,
        /// The query that demotes rows.
        negative: Box<FtsQuery>,
        /// The factor for demoted rows.
        negative_boost: f32,
    },
    /// One match per column (each times its boost); a row scores its best column.
    MultiMatch {
        /// The query text.
        query: String,
        /// The columns.
        columns: Vec<String>,
        /// A boost per column (1.0 each when `None`).
        boosts: Option<Vec<f32>>,
        /// OR or AND within each column.
        operator: Operator,
    },
    /// Clauses combined by [`Occur`].
    Boolean(Vec<(Occur, FtsQuery)>),
}

impl FtsQuery {
    /// A plain OR match of `text` over every indexed column (`full_text_query="..."`).
    pub fn text(text: impl Into<String>) -> Self {
        Self::Match {
            column: None,
            terms: text.into(),
            boost: 1.0,
            fuzziness: Some(0),
            max_expansions: 50,
            operator: Operator::Or,
            prefix_length: 0,
        }
    }

    /// Parses the JSON form.
    pub fn from_json(v: &Value) -> Result<Self> {
        let (kind, body) = match v.as_object() {
            Some(o) if o.len() == 1 => o.iter().next().map(|(k, v)| (k.as_str(), v)).unwrap_or(("", v)),
            _ => return Err(bad("a query is an object with one key naming its kind")),
        };
        let body_obj = body
            .as_object()
            .ok_or_else(|| bad(&format!("the body of a {kind} query must be an object")))?;
        let s = |k: &str| body_obj.get(k).and_then(Value::as_str).map(str::to_string);
        let f = |k: &str, d: f32| body_obj.get(k).and_then(Value::as_f64).map_or(d, |x| x as f32);
        let u = |k: &str| body_obj.get(k).and_then(Value::as_u64);
        let op = |k: &str| -> Result<Operator> {
            match body_obj.get(k).and_then(Value::as_str) {
                None => Ok(Operator::Or),
                Some(o) if o.eq_ignore_ascii_case("or") => Ok(Operator::Or),
                Some(o) if o.eq_ignore_ascii_case("and") => Ok(Operator::And),
                Some(o) => Err(bad(&format!("unknown operator {o:?}; expected AND or OR"))),
            }
        };
        match kind {
            "match" => Ok(Self::Match {
                column: s("column"),
                terms: s("terms").ok_or_else(|| bad("a match query needs terms"))?,
                boost: f("boost", 1.0),
                fuzziness: match body_obj.get("fuzziness") {
                    Some(Value::Null) => None,
                    Some(v) => Some(
                        v.as_u64()
                            .ok_or_else(|| bad("fuzziness must be a non-negative integer"))?
                            as u32,
                    ),
                    None => Some(0),
                },
                max_expansions: u("max_expansions").unwrap_or(50) as usize,
                operator: op("operator")?,
                prefix_length: u("prefix_length").unwrap_or(0) as u32,
            }),
            "phrase" => Ok(Self::Phrase {
                column: s("column"),
                terms: s("terms").ok_or_else(|| bad("a phrase query needs terms"))?,
                slop: u("slop").unwrap_or(0) as u32,
            }),
            "boost" => Ok(Self::Boost {
                positive: Box::new(Self::from_json(
                    body_obj
                        .get("positive")
                        .ok_or_else(|| bad("a boost query needs positive"))?,
                )?),
                negative: Box::new(Self::from_json(
                    body_obj
                        .get("negative")
                        .ok_or_else(|| bad("a boost query needs negative"))?,
                )?),
                negative_boost: f("negative_boost", 0.5),
            }),
            "multi_match" => {
                let columns: Vec<String> = body_obj
                    .get("columns")
                    .and_then(Value::as_array)
                    .ok_or_else(|| bad("a multi_match query needs columns"))?
                    .iter()
                    .map(|c| {
                        c.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| bad("columns must be strings"))
                    })
                    .collect::<Result<_>>()?;
                let boosts = match body_obj.get("boosts") {
                    None | Some(Value::Null) => None,
                    Some(Value::Array(b)) => Some(
                        b.iter()
                            .map(|x| {
                                x.as_f64()
                                    .map(|x| x as f32)
                                    .ok_or_else(|| bad("boosts must be numbers"))
                            })
                            .collect::<Result<Vec<_>>>()?,
                    ),
                    Some(_) => return Err(bad("boosts must be a list of numbers")),
                };
                if let Some(b) = &boosts {
                    if b.len() != columns.len() {
                        return Err(bad(&format!("{} boosts for {} columns", b.len(), columns.len())));
                    }
                }
                if columns.is_empty() {
                    return Err(bad("a multi_match query needs at least one column"));
                }
                Ok(Self::MultiMatch {
                    query: s("query").ok_or_else(|| bad("a multi_match query needs query"))?,
                    columns,
                    boosts,
                    operator: op("operator")?,
                })
            }
            "boolean" => {
                let mut clauses = Vec::new();
                for (key, occur) in [
                    ("must", Occur::Must),
                    ("should", Occur::Should),
                    ("must_not", Occur::MustNot),
                ] {
                    if let Some(list) = body_obj.get(key) {
                        let list = list
                            .as_array()
                            .ok_or_else(|| bad(&format!("boolean {key} must be a list of queries")))?;
                        for q in list {
                            clauses.push((occur, Self::from_json(q)?));
                        }
                    }
                }
                Ok(Self::Boolean(clauses))
            }
            other => Err(bad(&format!(
                "unknown full-text query kind {other:?}; expected match, phrase, boost, multi_match or boolean"
            ))),
        }
    }

    /// The columns the query names (`None` for a match over every indexed column).
    pub fn columns(&self) -> Vec<Option<String>> {
        match self {
            Self::Match { column, .. } | Self::Phrase { column, .. } => vec![column.clone()],
            Self::Boost { positive, negative, .. } => {
                let mut c = positive.columns();
                c.extend(negative.columns());
                c
            }
            Self::MultiMatch { columns, .. } => columns.iter().cloned().map(Some).collect(),
            Self::Boolean(clauses) => clauses.iter().flat_map(|(_, q)| q.columns()).collect(),
        }
    }
}

fn bad(msg: &str) -> Error {
    Error::InvalidArgument(format!("full-text query: {msg}"))
}

/// pylance's automatic fuzziness for a term of `chars` characters.
pub fn auto_fuzziness(chars: usize) -> u32 {
    match chars {
        0..=2 => 0,
        3..=5 => 1,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_forms_parse_with_pylance_defaults() {
        let q = FtsQuery::from_json(&serde_json::json!({"match": {"column": "t", "terms": "a b"}}))
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(
            q,
            FtsQuery::Match {
                column: Some("t".into()),
                terms: "a b".into(),
                boost: 1.0,
                fuzziness: Some(0),
                max_expansions: 50,
                operator: Operator::Or,
                prefix_length: 0
            }
        );
        let b = serde_json::json!({"boolean": {"must": [{"phrase": {"terms": "x y", "slop": 1}}],
                                               "must_not": [{"match": {"terms": "z", "fuzziness": null}}]}});
        match FtsQuery::from_json(&b) {
            Ok(FtsQuery::Boolean(c)) => {
                assert_eq!(c.len(), 2);
                assert_eq!(c[0].0, Occur::Must);
                assert!(matches!(&c[1].1, FtsQuery::Match { fuzziness: None, .. }));
            }
            other => unreachable!("{other:?}"),
        }
    }

    #[test]
    fn malformed_queries_are_typed_errors() {
        for bad in [
            serde_json::json!("text"),
            serde_json::json!({"match": {}}),
            serde_json::json!({"nope": {}}),
            serde_json::json!({"match": {"terms": "a", "operator": "XOR"}}),
            serde_json::json!({"multi_match": {"query": "a", "columns": ["x"], "boosts": [1.0, 2.0]}}),
        ] {
            assert!(
                matches!(FtsQuery::from_json(&bad), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
