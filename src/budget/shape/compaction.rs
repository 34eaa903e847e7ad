//! The `compacted` stage: a JSON text written without the whitespace between its tokens. It
//! loses nothing (every string, key and number is copied as the bytes it was), so it comes
//! before any cut: a pretty-printed result that fits once compact is never shrunk.

use crate::budget::shape::exact::string_end;

/// `text` (valid JSON) without whitespace outside its strings; `None` when it has none.
pub fn compact_text(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    // `text[kept..]` is not copied yet: nothing is, until the first whitespace
    let (mut i, mut kept) = (0, 0);
    while let Some(j) = bytes[i..]
        .iter()
        .position(|b| matches!(b, b'"' | b' ' | b'\t' | b'\n' | b'\r'))
    {
        let at = i + j;
        if bytes[at] == b'"' {
            i = string_end(bytes, at + 1);
            continue;
        }
        if out.capacity() == 0 {
            out.reserve(text.len());
        }
        out.push_str(&text[kept..at]);
        (i, kept) = (at + 1, at + 1);
    }
    if out.capacity() == 0 {
        return None;
    }
    out.push_str(&text[kept..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn removes_whitespace_between_tokens_only() {
        let text =
            "{\n  \"a b\": [1.50, -0, 1E400],\n\t\"s\": \"x \\\" y\\\\\" ,\r\n \"n\": null }";
        let out = compact_text(text).unwrap();
        assert_eq!(out, r#"{"a b":[1.50,-0,1E400],"s":"x \" y\\","n":null}"#);
        assert_eq!(compact_text(&out), None);
        // no JSON: never read past the end
        assert_eq!(compact_text("[\"a \\"), None);
        assert_eq!(compact_text("[1, \"a"), Some("[1,\"a".into()));
        let pretty =
            serde_json::to_string_pretty(&serde_json::json!({"k": [1, {"v": "a  b"}]})).unwrap();
        let compact: Value = serde_json::from_str(&compact_text(&pretty).unwrap()).unwrap();
        assert_eq!(compact, serde_json::from_str::<Value>(&pretty).unwrap());
    }
}
