//! JSON with comments and trailing commas (VS Code's and Cursor's config dialect), read by
//! dprint's `jsonc-parser`: nothing else beyond JSON is accepted, and an error gives its line
//! and column in the file as written.

use jsonc_parser::ParseOptions;
use serde_json::Value;

/// What VS Code's parser accepts besides JSON: comments and trailing commas, nothing of JSON5.
pub fn dialect() -> ParseOptions {
    ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

/// The value of a JSONC text (without a byte order mark); an error reads like
/// `unterminated object at line 1 column 1`.
pub fn parse_jsonc(text: &str) -> Result<Value, String> {
    jsonc_parser::parse_to_serde_value(text, &dialect()).map_err(|e| {
        let kind = e.kind().to_string();
        let mut chars = kind.chars();
        let first = chars.next().map(|c| c.to_lowercase().to_string());
        format!(
            "{}{} at line {} column {}",
            first.unwrap_or_default(),
            chars.as_str(),
            e.line_display(),
            e.column_display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_comments_and_trailing_commas_but_not_strings() {
        let src = r#"{
  // a comment
  "servers": { /* block
  comment */ "a": {"url": "http://x//y", "args": ["/*not*/", "é",], }, },
}"#;
        let v = parse_jsonc(src).unwrap();
        assert_eq!(v["servers"]["a"]["url"], "http://x//y");
        assert_eq!(v["servers"]["a"]["args"][0], "/*not*/");
        assert_eq!(v["servers"]["a"]["args"][1], "é");
    }

    #[test]
    fn keeps_the_order_of_keys() {
        let v = parse_jsonc(r#"{"z": 1, "a": 2, /* c */ "m": 3}"#).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a", "m"]);
    }

    #[test]
    fn errors_give_line_and_column() {
        let e = parse_jsonc("{\n  // fine\n  \"a\": 1 \"b\": 2\n}").unwrap_err();
        assert_eq!(e, "expected comma at line 3 column 9");
        let e = parse_jsonc("{\"mcpServers\": {").unwrap_err();
        assert!(e.starts_with("unterminated object at line 1 column"), "{e}");
    }

    #[test]
    fn json5_beyond_vs_code_is_refused() {
        for text in [
            "{a: 1}",
            "{'a': 1}",
            "{\"a\": 0x1}",
            "{\"a\": +1}",
            "{\"a\": 1 \"b\": 2}",
        ] {
            assert!(parse_jsonc(text).is_err(), "{text}");
        }
    }
}
