//! Property tests: JSON text through JSONB and back keeps its meaning (checked against
//! serde_json), printing and re-parsing is stable, and no input of any kind panics.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test helpers outside #[test] functions fail loudly"
)]

use lancelet_jsonb::{decode, parse, to_text, Value};
use proptest::prelude::*;
use serde_json::Value as Json;

fn json() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(Json::from),
        any::<u64>().prop_map(Json::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Json::from),
        (-1e6f64..1e6).prop_map(Json::from),
        ".*".prop_map(Json::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Json::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..8).prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

/// The text pylance prints for `v`: compact, keys in byte order (serde_json's map keeps
/// them so), strings escaped as serde_json escapes them, floats as JSONB prints them.
fn expected_text(v: &Json) -> String {
    match v {
        Json::Number(n) if n.is_f64() => {
            let mut out = String::new();
            lancelet_jsonb::write_float(&mut out, n.as_f64().unwrap());
            out
        }
        Json::Array(items) => format!("[{}]", items.iter().map(expected_text).collect::<Vec<_>>().join(",")),
        Json::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}:{}", serde_json::to_string(k).unwrap(), expected_text(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => serde_json::to_string(other).unwrap(),
    }
}

/// Whether a document holds a NaN or an infinity (they print as `null`).
fn has_non_finite(v: Value<'_>) -> bool {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if !n.as_f64().is_finite() => return true,
            Value::Array(c) | Value::Object(c) => stack.extend(c.items()),
            _ => {}
        }
    }
    false
}

/// Touches every value of a document the way the SQL functions do.
fn walk_all(root: Value<'_>) {
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        let _ = v.to_text();
        let again = v.to_jsonb();
        assert_eq!(decode(&again).map(|w| w.to_jsonb()), Some(again.clone()));
        match v {
            Value::Array(c) => {
                assert_eq!(c.items().count(), c.len());
                let _ = v.index(c.len());
                stack.extend(c.items());
            }
            Value::Object(c) => {
                assert_eq!(c.entries().count(), c.len());
                for (k, item) in c.entries() {
                    assert!(v.get(k).is_some());
                    stack.push(item);
                }
            }
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// serde_json text parses, prints compact with sorted keys, and means the same.
    #[test]
    fn text_round_trips_with_serde_json_meaning(v in json()) {
        let text = serde_json::to_string(&v).unwrap();
        let bytes = parse(text.as_bytes()).unwrap();
        let back = to_text(&bytes);
        let reread: Json = serde_json::from_str(&back).unwrap();
        prop_assert_eq!(&reread, &v);
        prop_assert_eq!(back, expected_text(&v));
        // Pretty-printed text is the same document.
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        prop_assert_eq!(parse(pretty.as_bytes()).unwrap(), bytes.clone());
        let root = decode(&bytes).unwrap();
        walk_all(root);
    }

    /// Printing and parsing again gives the same bytes (NaN and infinities aside).
    #[test]
    fn print_then_parse_is_stable(text in r#"[\[\]{}:,"'0-9a-fA-FxX.eE+\- nulrtsINfiy\\]{0,40}"#) {
        if let Ok(bytes) = parse(text.as_bytes()) {
            let root = decode(&bytes).expect("the parser writes valid JSONB");
            if !has_non_finite(root) {
                let printed = to_text(&bytes);
                prop_assert_eq!(parse(printed.as_bytes()).unwrap(), bytes);
            }
        }
    }

    /// Arbitrary bytes never panic, whether read as JSONB or parsed as text.
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let text = to_text(&bytes);
        if let Some(root) = decode(&bytes) {
            prop_assert_eq!(text, root.to_text());
            walk_all(root);
        }
        let _ = parse(&bytes);
    }

    /// Valid documents cut short or with a byte changed never panic.
    #[test]
    fn damaged_documents_never_panic(v in json(), cut in any::<prop::sample::Index>(), flip in any::<(prop::sample::Index, u8)>()) {
        let bytes = parse(serde_json::to_string(&v).unwrap().as_bytes()).unwrap();
        let short = &bytes[..cut.index(bytes.len() + 1)];
        let _ = to_text(short);
        if let Some(root) = decode(short) {
            walk_all(root);
        }
        let mut changed = bytes.clone();
        let at = flip.0.index(changed.len());
        changed[at] ^= flip.1 | 1;
        let _ = to_text(&changed);
        if let Some(root) = decode(&changed) {
            walk_all(root);
        }
    }
}
