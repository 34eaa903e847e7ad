//! Whether a result says it is partial, read from its structure: a pagination key at the top of
//! its JSON (a text block that is a JSON object, or structuredContent), or the server's own
//! marker as the last line of a text. Words inside the payload (a diff that mentions
//! `nextCursor`, a page that says "at offset 0") are data, not pagination.

use std::sync::LazyLock;

use serde_json::Value;

use super::duplicate::TextView;

/// Top-level keys that carry a cursor, a next page or a total, compared lowercase without `_`
/// and `-` (`nextCursor`, `next_cursor`, `has_more`, `totalCount`, ...).
const PAGINATION_KEYS: &[&str] = &[
    "nextcursor",
    "cursor",
    "hasmore",
    "hasnextpage",
    "truncated",
    "istruncated",
    "total",
    "totalcount",
    "totalresults",
    "next",
    "nextpage",
    "nextpagetoken",
    "pagetoken",
    "page",
    "pageinfo",
    "nextoffset",
    "continuationtoken",
];

/// Longest last line still read as a marker (a marker is a short sentence, not a data line).
const MAX_MARKER_CHARS: usize = 400;

/// A last line that says the text was cut or continues: "... truncated", "<truncated>",
/// "Content truncated. Call the fetch tool with a start_index of N to get more content",
/// "Showing 50 of 3,187 results", "Continue at line 981", "... 120 more lines".
static MARKER: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?ix)
        truncat
        | \bstart_index\b
        | \bnext_?cursor\b | \bhas_?more\b | \bnext[ _]page\b | \bpage_?token\b
        | \b(\d[\d,]*\ )?more\ (results|lines|items|entries|rows|records|content|matches)\b
        | \bshowing\ (the\ )?(first\ )?[\d,]+(\s*-\s*[\d,]+)?\ (of|out\ of)\ [\d,]+
        | \bpage\ \d+\ of\ \d+
        | \bcontinu(e|es|ing)\ (at|from|with)\b
        ",
    )
    .expect("static regex")
});

/// Whether the result carries pagination in its structure (see the module docs).
pub fn is_paginated(texts: &[TextView], structured: Option<&Value>) -> bool {
    let keyed = texts
        .iter()
        .filter_map(|t| t.json)
        .chain(structured)
        .any(has_pagination_key);
    // a JSON text says it through its keys; its last line is data
    keyed
        || texts
            .iter()
            .any(|t| t.json.is_none() && ends_with_marker(t.text))
}

/// A top-level pagination key whose value is not `null` or `false` (`"nextCursor": null` and
/// `"hasMore": false` say there is nothing more).
fn has_pagination_key(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.iter().any(|(k, v)| {
            if v.is_null() || *v == Value::Bool(false) {
                return false;
            }
            let k: String = k
                .chars()
                .filter(|c| *c != '_' && *c != '-')
                .flat_map(char::to_lowercase)
                .collect();
            PAGINATION_KEYS.contains(&k.as_str())
        })
    })
}

/// The text's last non-empty line is a short truncation or continuation marker.
fn ends_with_marker(text: &str) -> bool {
    let last = text
        .trim_end()
        .rsplit('\n')
        .next()
        .map(str::trim)
        .unwrap_or("");
    !last.is_empty() && last.chars().count() <= MAX_MARKER_CHARS && MARKER.is_match(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(t: &str) -> bool {
        let json: Option<Value> = serde_json::from_str(t).ok();
        is_paginated(
            &[TextView {
                text: t,
                json: json.as_ref(),
            }],
            None,
        )
    }

    #[test]
    fn top_level_keys_and_trailing_markers_count() {
        assert!(text(r#"{"items":[1,2],"nextCursor":"abc"}"#));
        assert!(text(r#"{"items":[1,2],"has_more":true}"#));
        assert!(!text(
            r#"{"items":[1,2],"has_more":false,"nextCursor":null}"#
        ));
        assert!(text(r#"{"total_count":3187,"items":[]}"#));
        assert!(is_paginated(
            &[],
            Some(&json!({"items": [], "truncated": true}))
        ));
        assert!(text("line\nline\n\n... truncated\n"));
        assert!(text("a\n<truncated>"));
        assert!(text(
            "body\n<error>Content truncated. Call the fetch tool with a start_index of 5000 to get more content.</error>"
        ));
        assert!(text("rows\nShowing 50 of 3,187 results"));
        assert!(text("rows\n... 120 more lines"));
    }

    #[test]
    fn words_inside_the_payload_do_not_count() {
        let diff = "diff --git a/src/list.ts b/src/list.ts\n+  return { items, nextCursor };\n+  // truncated lists have has_more\n context line\n";
        assert!(!text(diff));
        assert!(!text("- generic: page at offset 0\n- link \"Home\""));
        assert!(!text(
            r#"{"items":[{"nextCursor":"x","note":"truncated"}]}"#
        ));
        assert!(!text(r#"[{"nextCursor":"x"}]"#));
        let long_last = format!("{} truncated", "x".repeat(500));
        assert!(!text(&long_last));
    }
}
