//! What the 2026-07-28 era adds to a result: `resultType` on every result, and on the cacheable
//! ones (`tools/list` among them) `ttlMs` and `cacheScope` (SEP-2549). Read here from the bytes
//! a server sent; and the one mark the proxy and the demo put on results they build.

use serde_json::Value;

/// The caching hints and the result type of one result, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EraMarks {
    /// The result carries `resultType`.
    pub result_type: bool,
    /// `ttlMs`, when it is a number.
    pub ttl_ms: Option<u64>,
    /// `cacheScope`, when it is a string.
    pub cache_scope: Option<String>,
}

/// The marks of a result's JSON text (all absent when it is not a JSON object).
pub fn era_marks(result: &str) -> EraMarks {
    #[derive(serde::Deserialize)]
    struct Marks {
        #[serde(rename = "resultType")]
        result_type: Option<serde::de::IgnoredAny>,
        #[serde(rename = "ttlMs")]
        ttl_ms: Option<Value>,
        #[serde(rename = "cacheScope")]
        cache_scope: Option<Value>,
    }
    match serde_json::from_str::<Marks>(result) {
        Ok(m) => EraMarks {
            result_type: m.result_type.is_some(),
            ttl_ms: m.ttl_ms.and_then(|v| v.as_u64()),
            cache_scope: m.cache_scope.and_then(|v| v.as_str().map(String::from)),
        },
        Err(_) => EraMarks::default(),
    }
}

/// `result` marked `resultType: "complete"` when it is an object without a `resultType` (what
/// an absent field means). Clients of 2026-07-28 require the field; rmcp takes it off again
/// for a client of an earlier version.
pub fn marked_complete(mut result: Value) -> Value {
    if let Some(map) = result.as_object_mut() {
        if !map.contains_key("resultType") {
            map.insert("resultType".into(), Value::from("complete"));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_read_as_sent() {
        let m = era_marks(
            r#"{"resultType":"complete","tools":[],"ttlMs":60000,"cacheScope":"public"}"#,
        );
        assert_eq!(
            m,
            EraMarks {
                result_type: true,
                ttl_ms: Some(60000),
                cache_scope: Some("public".into())
            }
        );
        let none = era_marks(r#"{"tools":[],"ttlMs":"soon","cacheScope":1}"#);
        assert_eq!(none, EraMarks::default());
        assert_eq!(era_marks("not json"), EraMarks::default());
    }

    #[test]
    fn a_result_is_marked_complete_only_without_a_type() {
        let v = marked_complete(serde_json::json!({"tools": []}));
        assert_eq!(v["resultType"], "complete");
        let v = marked_complete(serde_json::json!({"resultType": "input_required"}));
        assert_eq!(v["resultType"], "input_required");
        assert_eq!(marked_complete(Value::Null), Value::Null);
    }
}
