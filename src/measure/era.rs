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

/// How many distinct protocol versions a report keeps in `eras` (a server may list any number
/// in `server/discover`: a hostile one lists hundreds of thousands).
pub const MAX_ERAS: usize = 32;

/// How long a version may be to be kept (versions are dates: `2026-07-28`).
const MAX_VERSION_CHARS: usize = 64;

/// The protocol versions a server speaks, for the report: `spoken` (the versions a session
/// with it negotiated, always kept) and the versions it `listed`, each once, newest first, at
/// most [`MAX_ERAS`] (the newest of the listed ones; a listed version over 64 characters is
/// not one). Returns them and how many distinct versions were listed or spoken.
pub fn capped_eras(listed: &[String], spoken: &[String]) -> (Vec<String>, usize) {
    let spoken: std::collections::BTreeSet<&str> = spoken.iter().map(String::as_str).collect();
    let listed: std::collections::BTreeSet<&str> = listed
        .iter()
        .map(String::as_str)
        .filter(|v| v.chars().count() <= MAX_VERSION_CHARS)
        .collect();
    let distinct = listed.union(&spoken).count();
    let room = MAX_ERAS.saturating_sub(spoken.len());
    let mut eras: Vec<String> = listed
        .iter()
        .rev()
        .filter(|v| !spoken.contains(*v))
        .take(room)
        .chain(spoken.iter())
        .map(|v| v.to_string())
        .collect();
    eras.sort_unstable_by(|a, b| b.cmp(a));
    (eras, distinct)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras_are_distinct_newest_first_and_capped_keeping_the_spoken_ones() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let (eras, distinct) = capped_eras(
            &v(&["2025-06-18", "2026-07-28", "2025-06-18", "2026-07-28"]),
            &v(&["2026-07-28", "2025-11-25"]),
        );
        assert_eq!(eras, ["2026-07-28", "2025-11-25", "2025-06-18"]);
        assert_eq!(distinct, 3);
        // 200,000 copies and 100 others: the newest 31 of them and the spoken one
        let mut hostile = vec!["2026-07-28".to_string(); 200_000];
        hostile.extend((0..100).map(|i| format!("9999-01-{i:03}")));
        hostile.push("x".repeat(65));
        let (eras, distinct) = capped_eras(&hostile, &v(&["2000-01-01"]));
        assert_eq!(distinct, 102);
        assert_eq!(eras.len(), MAX_ERAS);
        assert_eq!(eras[0], "9999-01-099");
        assert_eq!(eras[30], "9999-01-069");
        assert_eq!(eras[31], "2000-01-01");
    }

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
