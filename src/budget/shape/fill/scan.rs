//! Byte scans of a JSON text already checked to be JSON: where a value ends, the spans of an
//! array's items and of an object's entries, a value's size written compactly, a compact copy,
//! and where a string may be cut (never inside an escape, a surrogate pair or a character).
//! Nothing is parsed: a span is copied as the text wrote it, so every number and string that
//! is kept is byte for byte the original's.

/// A value's place in the text: `text[start..end]`.
pub type Span = (usize, usize);

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_ws(b[i]) {
        i += 1;
    }
    i
}

/// The end of the string that opens at `i` (just past its closing quote).
pub fn string_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while let Some(k) = memchr::memchr2(b'"', b'\\', &b[j..]) {
        let at = j + k;
        if b[at] == b'\\' {
            j = at + 2;
        } else {
            return at + 1;
        }
    }
    b.len()
}

/// The end of the value that starts at `i` (no white space before it).
pub fn value_end(b: &[u8], i: usize) -> usize {
    match b[i] {
        b'"' => string_end(b, i),
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j);
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return j + 1;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            b.len()
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b']' | b'}') && !is_ws(b[j]) {
                j += 1;
            }
            j
        }
    }
}

/// The items of the array `span`.
pub fn items(b: &[u8], span: Span) -> Vec<Span> {
    items_up_to(b, span, usize::MAX)
}

/// The first `max` items of the array `span`.
pub fn items_up_to(b: &[u8], (start, end): Span, max: usize) -> Vec<Span> {
    let mut out = Vec::new();
    let mut i = skip_ws(b, start + 1);
    while i < end && b[i] != b']' && out.len() < max {
        let e = value_end(b, i);
        out.push((i, e));
        i = skip_ws(b, e);
        if i < end && b[i] == b',' {
            i = skip_ws(b, i + 1);
        }
    }
    out
}

/// The entries of the object `span`: (key with its quotes, value).
pub fn entries(b: &[u8], (start, end): Span) -> Vec<(Span, Span)> {
    let mut out = Vec::new();
    let mut i = skip_ws(b, start + 1);
    while i < end && b[i] == b'"' {
        let ke = string_end(b, i);
        let vs = skip_ws(b, skip_ws(b, ke) + 1);
        let ve = value_end(b, vs);
        out.push(((i, ke), (vs, ve)));
        i = skip_ws(b, ve);
        if i < end && b[i] == b',' {
            i = skip_ws(b, i + 1);
        }
    }
    out
}

/// The length of `span` written compactly, counted until it passes `cap` (then `cap + 1`).
pub fn compact_len(b: &[u8], (start, end): Span, cap: usize) -> usize {
    let mut n = 0;
    let mut i = start;
    while i < end {
        match b[i] {
            b'"' => {
                let e = string_end(b, i);
                n += e - i;
                i = e;
            }
            c => {
                n += usize::from(!is_ws(c));
                i += 1;
            }
        }
        if n > cap {
            return cap + 1;
        }
    }
    n
}

/// `span` written compactly onto `out`: strings and numbers as they are, white space between
/// tokens left out.
pub fn push_compact(text: &str, (start, end): Span, out: &mut String) {
    let b = text.as_bytes();
    let mut i = start;
    let mut from = start;
    while i < end {
        match b[i] {
            b'"' => i = string_end(b, i),
            c if is_ws(c) => {
                out.push_str(&text[from..i]);
                i += 1;
                from = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[from..end]);
}

/// The length of the longest start of the string `span`'s content (quotes left out) within
/// `max` bytes that ends on a boundary: never inside an escape, a surrogate pair or a UTF-8
/// sequence, and before a space or an escaped line break when one is in its last fifth.
pub fn string_cut(text: &str, (start, end): Span, max: usize) -> usize {
    let b = text.as_bytes();
    let content = (start + 1, end.saturating_sub(1).max(start + 1));
    let len = content.1 - content.0;
    if max >= len {
        return len;
    }
    let mut i = 0;
    let mut last_break = None;
    let mut safe = 0;
    while i < len {
        let at = content.0 + i;
        let step = match b[at] {
            b'\\' if b.get(at + 1) == Some(&b'u') => {
                let high = text
                    .get(at + 2..at + 6)
                    .and_then(|h| u16::from_str_radix(h, 16).ok())
                    .is_some_and(|h| (0xD800..0xDC00).contains(&h));
                if high && b.get(at + 6) == Some(&b'\\') {
                    12
                } else {
                    6
                }
            }
            b'\\' => 2,
            c if c < 0x80 => 1,
            c if c >= 0xF0 => 4,
            c if c >= 0xE0 => 3,
            _ => 2,
        };
        if i + step > max {
            break;
        }
        if b[at] == b' ' || (b[at] == b'\\' && matches!(b.get(at + 1), Some(b'n' | b't'))) {
            last_break = Some(i);
        }
        i += step;
        safe = i;
    }
    match last_break {
        Some(at) if at > 0 && at >= safe - safe / 5 => at,
        _ => safe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_compact_copies_keep_every_byte_of_strings_and_numbers() {
        let text = "[ {\"a\" : 1.50, \"b\\\"]\": [ \"x , y\" , -0 ] } ,\n 1E40 , \"\\u00e9\" ]";
        let b = text.as_bytes();
        let top = (0, text.len());
        assert_eq!(value_end(b, 0), text.len());
        let it = items(b, top);
        assert_eq!(it.len(), 3);
        assert_eq!(&text[it[1].0..it[1].1], "1E40");
        let e = entries(b, it[0]);
        assert_eq!(&text[e[1].0 .0..e[1].0 .1], "\"b\\\"]\"");
        assert_eq!(&text[e[1].1 .0..e[1].1 .1], "[ \"x , y\" , -0 ]");
        let mut out = String::new();
        push_compact(text, top, &mut out);
        assert_eq!(
            out,
            "[{\"a\":1.50,\"b\\\"]\":[\"x , y\",-0]},1E40,\"\\u00e9\"]"
        );
        assert_eq!(compact_len(b, top, usize::MAX), out.len());
        assert_eq!(compact_len(b, top, 10), 11);
        let value: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            value,
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
    }

    #[test]
    fn a_string_is_cut_between_words_and_never_inside_an_escape_or_a_character() {
        let s = "\"alpha beta gamma delta\"";
        assert_eq!(string_cut(s, (0, s.len()), 12), 10); // "alpha beta"
        assert_eq!(string_cut(s, (0, s.len()), 14), 14); // a break too far back
        let s = "\"ab\\u00e9cd\"";
        assert_eq!(string_cut(s, (0, s.len()), 5), 2);
        let s = "\"\\ud83d\\ude00x\"";
        assert_eq!(string_cut(s, (0, s.len()), 11), 0);
        assert_eq!(string_cut(s, (0, s.len()), 12), 12);
        let s = "\"東京東京\"";
        assert_eq!(string_cut(s, (0, s.len()), 7), 6);
        let s = "\"short\"";
        assert_eq!(string_cut(s, (0, s.len()), 99), 5);
    }
}
