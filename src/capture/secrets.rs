//! The secrets a recording must not hold, and the redactor that replaces them in raw JSON-RPC
//! lines, where a secret can also appear JSON-escaped.

use serde_json::Value;

use crate::config::{Redactor, ServerSpec};

/// The spec's secrets: its env and header values, and the values its probes took from `${VAR}`.
pub(super) fn secrets(spec: &ServerSpec) -> Vec<String> {
    let mut secrets = spec.transport.secrets();
    for probe in &spec.probes {
        let shown = Value::Object(probe.shown_arguments.clone());
        let actual = Value::Object(probe.arguments.clone());
        expanded_values(&shown, &actual, &mut secrets);
    }
    secrets
}

/// A redactor of `secrets`, each also as it is written inside a JSON string (escaped, and with
/// non-ASCII as `\uXXXX`).
pub(super) fn redactor(secrets: Vec<String>) -> Redactor {
    let mut escaped = Vec::new();
    for s in &secrets {
        let json = serde_json::to_string(s).expect("a string serialises");
        let json = &json[1..json.len() - 1];
        escaped.push(json.to_string());
        escaped.push(ascii_escaped(json));
    }
    let mut r = Redactor::default();
    r.add(secrets);
    r.add(escaped);
    r
}

/// Strings of `actual` that came from expanding `${VAR}` in `shown`: the whole string, and the
/// variable's value alone when the string holds one `${...}`.
fn expanded_values(shown: &Value, actual: &Value, out: &mut Vec<String>) {
    match (shown, actual) {
        (Value::String(s), Value::String(a)) if s.contains("${") && s != a => {
            out.push(a.clone());
            // `${NAME}` ends at the first `}` (see config::expand_vars)
            let start = s.find("${").unwrap_or(0);
            if let Some(len) = s[start..].find('}') {
                let (prefix, suffix) = (&s[..start], &s[start + len + 1..]);
                if !suffix.contains("${") {
                    let value = a.strip_prefix(prefix).and_then(|r| r.strip_suffix(suffix));
                    out.extend(value.map(String::from));
                }
            }
        }
        (Value::Array(s), Value::Array(a)) => {
            for (s, a) in s.iter().zip(a) {
                expanded_values(s, a, out);
            }
        }
        (Value::Object(s), Value::Object(a)) => {
            for (key, s) in s {
                if let Some(a) = a.get(key) {
                    expanded_values(s, a, out);
                }
            }
        }
        _ => {}
    }
}

/// JSON string contents with every non-ASCII character as `\uXXXX` (how Python's `json.dumps`
/// writes them).
fn ascii_escaped(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_values_that_came_from_variables() {
        let shown = serde_json::json!({"a": "id-${USER_ID}.json", "b": ["${X}", "plain"], "c": 5});
        let actual = serde_json::json!({"a": "id-u12345.json", "b": ["x-value", "plain"], "c": 5});
        let mut out = Vec::new();
        expanded_values(&shown, &actual, &mut out);
        assert_eq!(out, ["id-u12345.json", "u12345", "x-value", "x-value"]);
    }

    #[test]
    fn replaces_escaped_forms_inside_json_lines() {
        let r = redactor(vec!["pa\"ss-é".into()]);
        let line = r#"{"a":"pa\"ss-é","b":"pa\"ss-\u00e9"}"#;
        assert_eq!(
            r.redact_counted(line),
            (r#"{"a":"<redacted>","b":"<redacted>"}"#.to_string(), 2)
        );
    }
}
