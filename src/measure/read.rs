//! Reading a large tool result into a `serde_json::Value` without holding its big texts twice.
//! serde_json unescapes a string with escapes (every prose text has `\n`) into a scratch buffer
//! that doubles as it grows, then copies it into the value's `String`: a 60 MB text cost 60 MB
//! of string and 64 MB of scratch at once. Here a value's parts are taken apart as raw JSON
//! while they are large, and a large string is unescaped straight into a `String` of its size.
//! The value is the one `serde_json::from_str` gives (tests hold the two together).

use std::fmt;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Values from this many bytes of JSON are taken apart; smaller ones are parsed whole.
const BIG_BYTES: usize = 1 << 20;

/// `serde_json::from_str::<Value>(text)`, with large strings unescaped in place.
pub fn read_json(text: &str) -> serde_json::Result<Value> {
    read_json_with(text, BIG_BYTES)
}

/// [`read_json`] taking apart values from `big` bytes on (small in the tests).
fn read_json_with(text: &str, big: usize) -> serde_json::Result<Value> {
    if text.len() < big {
        return serde_json::from_str(text);
    }
    let raw: &RawValue = serde_json::from_str(text)?;
    value_of(raw, big)
}

fn value_of(raw: &RawValue, big: usize) -> serde_json::Result<Value> {
    let text = raw.get();
    if text.len() < big {
        return serde_json::from_str(text);
    }
    if text.starts_with('"') {
        // checked by serde for form; a lone surrogate fails here as serde's Value fails
        return unescape(text)
            .map(Value::String)
            .ok_or_else(|| serde::de::Error::custom("a string with an invalid escape"));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let v = (&mut de).deserialize_any(Parts { big })?;
    de.end()?;
    Ok(v)
}

/// Takes a large value apart: its members as raw JSON, each read by [`value_of`].
struct Parts {
    big: usize,
}

impl<'de> Visitor<'de> for Parts {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(raw) = seq.next_element::<&RawValue>()? {
            out.push(value_of(raw, self.big).map_err(serde::de::Error::custom)?);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some((key, raw)) = map.next_entry::<String, &RawValue>()? {
            out.insert(
                key,
                value_of(raw, self.big).map_err(serde::de::Error::custom)?,
            );
        }
        Ok(Value::Object(out))
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    super::json_scalar_visits!();
}

/// A JSON string literal (quotes included, already checked by serde) unescaped into a `String`
/// of its size; `None` when it is not one.
pub fn unescape(quoted: &str) -> Option<String> {
    let body = quoted.strip_prefix('"')?.strip_suffix('"')?;
    let bytes = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < bytes.len() {
        let run = memchr::memchr(b'\\', &bytes[i..]).map_or(bytes.len(), |j| i + j);
        out.push_str(&body[i..run]);
        if run == bytes.len() {
            break;
        }
        let (c, used) = escape_at(bytes, run)?;
        out.push(c);
        i = run + used;
    }
    Some(out)
}

/// The character of the escape at `bytes[at]` (a backslash) and the bytes it takes.
fn escape_at(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let c = match *bytes.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let first = hex4(bytes, at + 2)?;
            if (0xD800..0xDC00).contains(&first) {
                // a surrogate pair: `\uD83D\uDE00`
                if bytes.get(at + 6..at + 8)? != b"\\u" {
                    return None;
                }
                let second = hex4(bytes, at + 8)?;
                if !(0xDC00..0xE000).contains(&second) {
                    return None;
                }
                let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                return Some((char::from_u32(code)?, 12));
            }
            return Some((char::from_u32(first)?, 6));
        }
        _ => return None,
    };
    Some((c, 2))
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| Value::Number(n.into())),
            (-1e9f64..1e9)
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            "[a-z\"\\/\n\r\t\u{8}\u{c}\u{0}\u{1f}é東😀 ]{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(5, 80, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec(("[a-c\n]{1,3}", inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// The value serde_json reads, for values taken apart from 16 bytes on, compact and
        /// pretty, with escapes of every kind (serde writes `\u001f`, others written as `\u00e9`).
        #[test]
        fn reads_what_serde_reads(v in json(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
            let want: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(read_json_with(&text, 16).unwrap(), want.clone());
            // every non-ASCII character written as an escape, pairs for those past U+FFFF
            let escaped: String = text.chars().map(|c| if c.is_ascii() { c.to_string() } else {
                let mut units = [0u16; 2];
                c.encode_utf16(&mut units).iter().map(|u| format!("\\u{u:04x}")).collect()
            }).collect();
            prop_assert_eq!(read_json_with(&escaped, 16).unwrap(), want);
        }
    }

    #[test]
    fn fails_where_serde_fails() {
        for bad in [
            r#"["\ud800 lone high surrogate, long enough"]"#,
            r#"["\udc00 lone low surrogate, long enough!"]"#,
            r#"["\ud83d\u0041 high then not a low one...."]"#,
            r#"{"a": "\x no such escape at all here...."}"#,
            r#"{"a": "unterminated string, long enough..."#,
        ] {
            assert!(serde_json::from_str::<Value>(bad).is_err(), "{bad}");
            assert!(read_json_with(bad, 16).is_err(), "{bad}");
        }
        let ok = r#"{"a": ["\ud83d\ude00 \u00e9\n\t\"\\\/ done", 1, {"b": null}]}"#;
        assert_eq!(
            read_json_with(ok, 16).unwrap(),
            serde_json::from_str::<Value>(ok).unwrap()
        );
    }
}
