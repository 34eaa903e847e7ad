//! Whether a result's structuredContent repeats what its text blocks already carry. One rule for
//! the report (`structured_duplicate`) and for the budget engine (which drops the copy).

use serde_json::Value;

use super::json_eq::{json_text_holds, json_text_wraps};

/// One text block as the check sees it: its text and, when it has been parsed, its JSON (a
/// JSON text not parsed is compared while it is read: [`json_text_holds`]).
#[derive(Debug, Clone, Copy)]
pub struct TextView<'a> {
    pub text: &'a str,
    pub json: Option<&'a Value>,
}

impl TextView<'_> {
    /// The text's JSON equals `v`.
    fn equals(&self, v: &Value) -> bool {
        match self.json {
            Some(j) => std::ptr::eq(j, v) || j == v,
            None => looks_like_json(self.text) && json_text_holds(self.text, v).is_some(),
        }
    }

    /// The text's JSON is an object of one key whose value equals `v`.
    fn wraps(&self, v: &Value) -> bool {
        match self.json {
            Some(j) => single_value(j) == Some(v),
            None => self.text.trim_start().starts_with('{') && json_text_wraps(self.text, v),
        }
    }
}

/// Whether a text starts like a JSON object or array (after whitespace): the cheap look before
/// a parse, shared by the report and the engine.
pub fn looks_like_json(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('{') || t.starts_with('[')
}

/// A text block's JSON, when it is a JSON object or array: the one rule by which the report and
/// the engine tell a JSON text block from prose.
pub fn json_text(text: &str) -> Option<Value> {
    if looks_like_json(text) {
        serde_json::from_str(text).ok()
    } else {
        None
    }
}

/// Whether [`json_text`] would give a value, checked without building it.
pub fn is_json_text(text: &str) -> bool {
    looks_like_json(text) && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// structuredContent repeats the text blocks when:
/// - a text block parses to JSON equal to it;
/// - it wraps such a JSON under one key (`{"entities": [..]}` beside the array as text, as
///   server-memory sends), or a text block's JSON wraps it under one key;
/// - it is an object whose every value is a string equal to a text block (`{"content": text}`).
///
/// One shared string among other data is not a repeat: dropping it would lose the rest.
pub fn structured_duplicate(structured: &Value, texts: &[TextView]) -> bool {
    // cheapest first, and no deep comparison once one holds
    let all_texts = || {
        structured.as_object().is_some_and(|m| {
            !m.is_empty()
                && m.values().all(|v| {
                    v.as_str()
                        .is_some_and(|s| texts.iter().any(|t| t.text == s))
                })
        })
    };
    texts.iter().any(|t| t.equals(structured))
        || single_value(structured).is_some_and(|inner| texts.iter().any(|t| t.equals(inner)))
        || texts.iter().any(|t| t.wraps(structured))
        || all_texts()
}

/// The value of an object with exactly one key.
fn single_value(v: &Value) -> Option<&Value> {
    match v.as_object() {
        Some(m) if m.len() == 1 => m.values().next(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The answer with the text parsed, checked to be the answer with it read unparsed.
    fn check(structured: Value, text: &str) -> bool {
        let json: Option<Value> = serde_json::from_str(text).ok();
        let view = TextView {
            text,
            json: json.as_ref(),
        };
        let parsed = structured_duplicate(&structured, &[view]);
        let unparsed = structured_duplicate(&structured, &[TextView { text, json: None }]);
        assert_eq!(parsed, unparsed, "{structured} vs {text}");
        parsed
    }

    #[test]
    fn equal_wrapped_and_reverse_wrapped_are_duplicates() {
        let entities = r#"[{"name":"a","entityType":"person","observations":["x"]}]"#;
        let array: Value = serde_json::from_str(entities).unwrap();
        assert!(check(array.clone(), entities));
        assert!(check(json!({ "entities": array.clone() }), entities));
        let wrapped_text = format!(r#"{{"result":{entities}}}"#);
        assert!(check(array.clone(), &wrapped_text));
        assert!(check(json!({"content": "hello"}), "hello"));
    }

    #[test]
    fn partial_or_two_key_wraps_are_not() {
        let entities = r#"[{"name":"a"}]"#;
        let array: Value = serde_json::from_str(entities).unwrap();
        assert!(!check(
            json!({"entities": array.clone(), "extra": 1}),
            entities
        ));
        assert!(!check(json!({"entities": [{"name": "b"}]}), entities));
        assert!(!check(json!({"content": "hello", "n": 1}), "hello"));
        assert!(!check(json!({"content": "bye"}), "hello"));
        assert!(!check(json!({}), "{}x"));
    }
}
