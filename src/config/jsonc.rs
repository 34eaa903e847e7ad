//! JSON with comments and trailing commas (VS Code's and Cursor's config dialect) to plain JSON.

/// Remove `//` and `/* */` comments and trailing commas outside strings; positions of lines
/// are kept so parse errors still point at the right line.
pub fn strip_jsonc(input: &str) -> String {
    let bytes = input.as_bytes();
    let mut out = String::with_capacity(input.len());
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            let ch_len = utf8_len(c);
            out.push_str(&input[i..(i + ch_len).min(bytes.len())]);
            if c == b'\\' && i + 1 < bytes.len() {
                let next = utf8_len(bytes[i + 1]);
                out.push_str(&input[i + 1..(i + 1 + next).min(bytes.len())]);
                i += 1 + next;
                continue;
            }
            in_string = c != b'"';
            i += ch_len;
            continue;
        }
        match (c, bytes.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                out.push('"');
                i += 1;
            }
            (b'/', Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                i += 2;
            }
            (b',', _) if next_significant(bytes, i + 1).is_some_and(|n| n == b'}' || n == b']') => {
                i += 1;
            }
            _ => {
                let ch_len = utf8_len(c);
                out.push_str(&input[i..(i + ch_len).min(bytes.len())]);
                i += ch_len;
            }
        }
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

fn next_significant(bytes: &[u8], mut i: usize) -> Option<u8> {
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        match (bytes.get(i), bytes.get(i + 1)) {
            (Some(b'/'), Some(b'/')) => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            (Some(b'/'), Some(b'*')) => {
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            (b, _) => return b.copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_comments_and_trailing_commas_but_not_strings() {
        let src = r#"{
  // a comment
  "servers": { /* block
  comment */ "a": {"url": "http://x//y", "args": ["/*not*/", "é",], }, },
}"#;
        let plain = strip_jsonc(src);
        let v: serde_json::Value = serde_json::from_str(&plain).unwrap();
        assert_eq!(v["servers"]["a"]["url"], "http://x//y");
        assert_eq!(v["servers"]["a"]["args"][0], "/*not*/");
        assert_eq!(v["servers"]["a"]["args"][1], "é");
        assert_eq!(plain.lines().count(), src.lines().count());
    }
}
