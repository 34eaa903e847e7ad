//! Numbers written as the server wrote them. serde_json (without `arbitrary_precision`, which
//! would change every `Number` in the program) reads a decimal, an exponent, `-0` or an
//! integer past 64 bits as an `f64`, and writes that back in its own form: `1.50` as `1.5`,
//! `1234567890123456789012340` as `1.2345678901234568e+24`. A stage that rewrites a JSON text
//! (shrink, projection, TOON) writes each such number as the text it came from instead: the
//! text's number tokens are scanned once, only when a rewritten value holds an `f64` (an
//! integer serde reads as `u64`/`i64` is written as it was), and each `f64`'s serde form maps
//! to the one token it was read from. When two tokens read as the same `f64`
//! (`9007199254740993.17` and `9007199254740993.18`), or one does not read at all (`1E400`),
//! a rewrite cannot tell them apart and the stage keeps the text as it is.
//!
//! The same read tells a text whose object repeats a key: serde keeps the last value silently,
//! so such a text is never rewritten either.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::map::Entry;
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

/// Why a JSON text cannot be rewritten without changing what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unexact {
    /// serde cannot read it (a number out of range, or no JSON).
    Unreadable,
    /// An object gives this key twice.
    RepeatedKey(String),
    /// Two different number tokens read as the same `f64`.
    SameNumber(String, String),
}

impl Unexact {
    /// The line a note gives.
    pub fn describe(&self) -> String {
        match self {
            Unexact::Unreadable => {
                "a JSON text whose numbers a rewrite cannot hold kept as it is".into()
            }
            Unexact::RepeatedKey(k) => format!(
                "a JSON text giving the key `{k}` twice kept as it is (a rewrite would keep one value)"
            ),
            Unexact::SameNumber(a, b) => format!(
                "a JSON text kept as it is: its numbers `{a}` and `{b}` would both be written as one"
            ),
        }
    }
}

/// The text each `f64` of a JSON text was written as, by its serde form.
#[derive(Debug, Default)]
pub struct Numbers {
    /// serde's form -> the token, for tokens serde writes another way.
    raw: HashMap<String, String>,
    /// serde's forms of tokens written as they are (a token of another text mapping to one of
    /// these is a collision too).
    same: HashSet<String>,
}

impl Numbers {
    /// Scan `text` (valid JSON) for its number tokens.
    pub fn of(text: &str) -> Result<Numbers, Unexact> {
        let mut out = Numbers::default();
        for token in number_tokens(text) {
            if plain_integer(token) {
                continue;
            }
            let n: Number = serde_json::from_str(token).map_err(|_| Unexact::Unreadable)?;
            if !n.is_f64() {
                continue;
            }
            let form = n.to_string();
            if form == token {
                if let Some(other) = out.raw.get(&form) {
                    return Err(Unexact::SameNumber(other.clone(), token.into()));
                }
                out.same.insert(form);
                continue;
            }
            match out.raw.get(&form) {
                Some(other) if other != token => {
                    return Err(Unexact::SameNumber(other.clone(), token.into()))
                }
                Some(_) => {}
                None if out.same.contains(&form) => {
                    return Err(Unexact::SameNumber(form.clone(), token.into()))
                }
                None => {
                    out.raw.insert(form, token.into());
                }
            }
        }
        Ok(out)
    }

    /// The text `n` was read from (its own form for a number no token wrote otherwise).
    pub fn text_of(&self, n: &Number) -> String {
        let form = n.to_string();
        if n.is_f64() {
            if let Some(raw) = self.raw.get(&form) {
                return raw.clone();
            }
        }
        form
    }
}

/// An integer token serde reads as `u64`/`i64` (and so writes back as it is).
fn plain_integer(token: &str) -> bool {
    token.len() < 19 && token != "-0" && token.bytes().all(|b| b.is_ascii_digit() || b == b'-')
}

/// The number tokens of a JSON text, in order (strings skipped).
fn number_tokens(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            match bytes[i] {
                b'"' => i = string_end(bytes, i + 1),
                b'-' | b'0'..=b'9' => {
                    let start = i;
                    while i < bytes.len()
                        && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                    {
                        i += 1;
                    }
                    return Some(&text[start..i]);
                }
                _ => i += 1,
            }
        }
        None
    })
}

/// The index just past the string whose body starts at `at`.
pub(super) fn string_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(j) = memchr::memchr2(b'"', b'\\', &bytes[at..]) {
        if bytes[at + j] == b'\\' {
            at = (at + j + 2).min(bytes.len());
        } else {
            return at + j + 1;
        }
    }
    bytes.len()
}

/// Whether `v` holds a number serde keeps as an `f64` (one a rewrite may write otherwise).
pub fn has_f64(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(items) => items.iter().any(has_f64),
        Value::Object(m) => m.values().any(has_f64),
        _ => false,
    }
}

/// `value` as compact JSON with every number as `numbers` has its text.
pub fn compact_exact(value: &Value, numbers: &Numbers) -> String {
    serde_json::to_string(&Exact { value, numbers }).expect("a serde_json::Value always serialises")
}

struct Exact<'a> {
    value: &'a Value,
    numbers: &'a Numbers,
}

impl Serialize for Exact<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let at = |value| Exact {
            value,
            numbers: self.numbers,
        };
        match self.value {
            Value::Number(n) if n.is_f64() => RawValue::from_string(self.numbers.text_of(n))
                .map_err(serde::ser::Error::custom)?
                .serialize(s),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(&at(i))?;
                }
                seq.end()
            }
            Value::Object(m) => {
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, &at(v))?;
                }
                map.end()
            }
            other => other.serialize(s),
        }
    }
}

/// `serde_json::from_str::<Value>(text)`, failing where an object repeats a key.
pub fn read_value(text: &str) -> Result<Value, Unexact> {
    let mut repeated = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let read = Read {
        repeated: &mut repeated,
    }
    .deserialize(&mut de)
    .and_then(|v| de.end().map(|()| v));
    match (read, repeated) {
        (_, Some(k)) => Err(Unexact::RepeatedKey(k)),
        (Ok(v), None) => Ok(v),
        (Err(_), None) => Err(Unexact::Unreadable),
    }
}

/// A value read as serde's `Value` reads it, noting the first repeated key.
struct Read<'r> {
    repeated: &'r mut Option<String>,
}

impl<'de> DeserializeSeed<'de> for Read<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Read<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    crate::measure::json_scalar_visits!();
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element_seed(Read {
            repeated: &mut *self.repeated,
        })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let v = map.next_value_seed(Read {
                repeated: &mut *self.repeated,
            })?;
            match out.entry(key) {
                Entry::Vacant(e) => {
                    e.insert(v);
                }
                Entry::Occupied(e) => {
                    *self.repeated = Some(e.key().clone());
                    return Err(serde::de::Error::custom("repeated key"));
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests;
