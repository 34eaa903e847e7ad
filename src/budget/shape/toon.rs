//! TOON (Token-Oriented Object Notation): a JSON value written as indented `key: value` lines,
//! with each array of same-shaped objects as a table: its fields named once in a header, then
//! one row of values per object. For a uniform array of objects that saves the keys, quotes
//! and braces every item repeats in JSON, and loses nothing.
//!
//! The subset written here is the part of TOON that saves on tables: objects, arrays of
//! primitives (`tags[3]: a,b,c`), and tables (`items[2]{id,name}:` then rows). A value with any
//! other array (of mixed items, of arrays, of objects with nested values) is not written at
//! all: the engine then keeps the JSON. [`decode`] reads back what [`encode`] writes, and the
//! engine uses TOON only when the round trip gives the same value.
//!
//! ```text
//! total: 2
//! items[2]{id,name,open}:
//!   1,"Fix the build",true
//!   2,Docs,false
//! ```

use serde_json::{Map, Value};

use crate::budget::shape::exact::{read_value, Numbers};

const INDENT: &str = "  ";

mod decode;

pub use decode::{decode, DecodeError};

/// Texts over this many bytes are not written as TOON for `replay`'s comparison: building their
/// value costs many times their size in memory (a 26 MB list: 700 MB and 9 s), for a column.
pub const TOON_COMPARE_MAX_BYTES: usize = 4 << 20;

/// A tool result with each text block holding JSON that TOON writes (and reads back to the same
/// value) written as TOON; `None` when no block is, or a text is over
/// [`TOON_COMPARE_MAX_BYTES`]. What `replay` compares with the JSON and the fill, whether or not
/// the policy's `toon` is on.
pub fn toon_result(result: &Value) -> Option<Value> {
    let too_big = result.get("content")?.as_array()?.iter().any(|b| {
        b.get("text")
            .and_then(Value::as_str)
            .is_some_and(|t| t.len() > TOON_COMPARE_MAX_BYTES)
    });
    if too_big {
        return None;
    }
    let mut out = result.clone();
    let mut any = false;
    for block in out.get_mut("content")?.as_array_mut()? {
        let Some(text) = block.get("text").and_then(Value::as_str) else {
            continue;
        };
        let trimmed = text.trim_start();
        if !trimmed.starts_with(['{', '[']) {
            continue;
        }
        // a text a rewrite cannot keep exactly (a repeated key, numbers of one f64) stays JSON
        let Ok(value) = read_value(text) else {
            continue;
        };
        let Ok(numbers) = Numbers::of(text) else {
            continue;
        };
        let Some(toon) = encode_exact(&value, &numbers) else {
            continue;
        };
        if decode(&toon).ok() != Some(value) {
            continue;
        }
        block["text"] = Value::String(toon);
        any = true;
    }
    any.then_some(out)
}

/// `value` as TOON, or `None` when it holds no table or something this subset does not write.
pub fn encode(value: &Value) -> Option<String> {
    encode_exact(value, &Numbers::default())
}

/// [`encode`], each number written as `numbers` has its text (the server's, not serde's).
pub fn encode_exact(value: &Value, numbers: &Numbers) -> Option<String> {
    let mut out = String::new();
    let mut w = Writer { tables: 0, numbers };
    match value {
        Value::Array(items) => w.array(&mut out, "", items, 0)?,
        Value::Object(m) => w.object(&mut out, m, 0)?,
        _ => return None,
    }
    (w.tables > 0).then_some(out)
}

/// What writing needs beside the value: the tables written, the numbers' texts.
struct Writer<'n> {
    tables: usize,
    numbers: &'n Numbers,
}

impl Writer<'_> {
    fn object(&mut self, out: &mut String, m: &Map<String, Value>, depth: usize) -> Option<()> {
        for (k, v) in m {
            let key = key_text(k);
            match v {
                Value::Object(inner) => {
                    line(out, depth, &format!("{key}:"));
                    self.object(out, inner, depth + 1)?;
                }
                Value::Array(items) => self.array(out, &key, items, depth)?,
                prim => line(out, depth, &format!("{key}: {}", self.primitive(prim))),
            }
        }
        Some(())
    }

    fn array(&mut self, out: &mut String, key: &str, items: &[Value], depth: usize) -> Option<()> {
        let n = items.len();
        if items.iter().all(is_primitive) {
            let values: Vec<String> = items.iter().map(|v| self.primitive(v)).collect();
            let sep = if n == 0 { "" } else { " " };
            line(out, depth, &format!("{key}[{n}]:{sep}{}", values.join(",")));
            return Some(());
        }
        if uniform(items) {
            self.tables += 1;
        }
        let Some(fields) = table_fields(items) else {
            return self.list(out, key, items, depth);
        };
        let names: Vec<String> = fields.iter().map(|f| key_text(f)).collect();
        line(out, depth, &format!("{key}[{n}]{{{}}}:", names.join(",")));
        for item in items {
            let row: Vec<String> = fields
                .iter()
                .map(|f| self.primitive(&item[f.as_str()]))
                .collect();
            line(out, depth + 1, &row.join(","));
        }
        Some(())
    }

    /// An array in list form: `key[n]:`, then `- ` per item one step in; an object item's first
    /// field on its `- ` line and the others two steps in. Arrays of arrays are not written.
    fn list(&mut self, out: &mut String, key: &str, items: &[Value], depth: usize) -> Option<()> {
        line(out, depth, &format!("{key}[{}]:", items.len()));
        for item in items {
            match item {
                Value::Array(_) => return None,
                Value::Object(m) if m.is_empty() => line(out, depth + 1, "-"),
                Value::Object(m) => {
                    let mut fields = String::new();
                    self.object(&mut fields, m, depth + 2)?;
                    // the first field moves up onto the `- ` line
                    let pad = INDENT.repeat(depth + 2);
                    let first = &fields[pad.len()..];
                    out.push_str(&INDENT.repeat(depth + 1));
                    out.push_str("- ");
                    out.push_str(first);
                }
                prim => line(out, depth + 1, &format!("- {}", self.primitive(prim))),
            }
        }
        Some(())
    }
}

/// An array of at least two objects with the same keys in the same order (what TOON is for).
fn uniform(items: &[Value]) -> bool {
    let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>());
    items.len() >= 2
        && keys(&items[0]).is_some()
        && items.iter().all(|i| keys(i) == keys(&items[0]))
}

/// The fields of a table: every item an object with the same keys in the same order, every
/// value a primitive; at least one field.
fn table_fields(items: &[Value]) -> Option<Vec<String>> {
    let first = items.first()?.as_object()?;
    let fields: Vec<String> = first.keys().cloned().collect();
    if fields.is_empty() {
        return None;
    }
    for item in items {
        let m = item.as_object()?;
        if m.len() != fields.len()
            || !m
                .iter()
                .zip(&fields)
                .all(|((k, v), f)| k == f && is_primitive(v))
        {
            return None;
        }
    }
    Some(fields)
}

fn is_primitive(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

fn line(out: &mut String, depth: usize, text: &str) {
    for _ in 0..depth {
        out.push_str(INDENT);
    }
    out.push_str(text);
    out.push('\n');
}

/// A key bare when it is a plain identifier, else as a JSON string.
fn key_text(k: &str) -> String {
    let plain = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'));
    if plain {
        k.to_string()
    } else {
        quote(k)
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

impl Writer<'_> {
    /// A primitive as a TOON value: a string bare only when it cannot be read as anything else.
    fn primitive(&self, v: &Value) -> String {
        match v {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => self.numbers.text_of(n),
            Value::String(s) if bare_string(s) => s.clone(),
            Value::String(s) => quote(s),
            _ => unreachable!("only primitives are written as values"),
        }
    }
}

pub(super) fn bare_string(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    (first.is_alphabetic() || first == '_')
        && !s.ends_with(' ')
        && !matches!(s, "true" | "false" | "null")
        && s.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, ' ' | '_' | '.' | '-' | '/' | '@' | '+' | '#')
        })
}

#[cfg(test)]
mod tests;
