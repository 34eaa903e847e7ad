//! Reading back what `encode` writes.

use serde_json::{Map, Number, Value};

use crate::budget::shape::toon::{bare_string, INDENT};

/// Why a text is not the TOON [`encode`] writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("TOON line {line}: {message}")]
pub struct DecodeError {
    pub line: usize,
    pub message: String,
}

/// Read back what [`encode`] writes.
pub fn decode(text: &str) -> Result<Value, DecodeError> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let mut at = 0;
    if lines.first().is_some_and(|(_, l)| l.starts_with('[')) {
        let (n, l) = lines[0];
        at = 1;
        let (key, v) = read_array(&lines, &mut at, n, l, 0)?;
        if !key.is_empty() || at != lines.len() {
            return Err(err(n, "a root array is all there is"));
        }
        return Ok(v);
    }
    let v = read_object(&lines, &mut at, 0)?;
    if at != lines.len() {
        return Err(err(lines[at].0, "indented deeper than its parent"));
    }
    Ok(Value::Object(v))
}

fn err(line: usize, message: &str) -> DecodeError {
    DecodeError {
        line: line + 1,
        message: message.into(),
    }
}

fn depth_of(l: &str) -> usize {
    (l.len() - l.trim_start_matches(' ').len()) / INDENT.len()
}

fn read_object(
    lines: &[(usize, &str)],
    at: &mut usize,
    depth: usize,
) -> Result<Map<String, Value>, DecodeError> {
    let mut m = Map::new();
    while let Some(&(n, l)) = lines.get(*at) {
        if depth_of(l) < depth {
            break;
        }
        if depth_of(l) > depth {
            return Err(err(n, "indented deeper than its parent"));
        }
        *at += 1;
        read_field(lines, at, n, &l[depth * INDENT.len()..], depth, &mut m)?;
    }
    Ok(m)
}

/// One `key...` line of an object at `depth` (already consumed), and what it owns below.
fn read_field(
    lines: &[(usize, &str)],
    at: &mut usize,
    n: usize,
    body: &str,
    depth: usize,
    m: &mut Map<String, Value>,
) -> Result<(), DecodeError> {
    let (key, rest) = read_key(body).ok_or_else(|| err(n, "no key"))?;
    if rest.starts_with('[') {
        let (_, v) = read_array(lines, at, n, rest, depth)?;
        m.insert(key, v);
    } else if rest == ":" {
        m.insert(key, Value::Object(read_object(lines, at, depth + 1)?));
    } else if let Some(v) = rest.strip_prefix(": ") {
        m.insert(key, read_primitive(v).ok_or_else(|| err(n, "not a value"))?);
    } else {
        return Err(err(n, "a key is followed by `:`, `: value` or `[n]`"));
    }
    Ok(())
}

/// The items of a list-form array, one step under its header at `depth`.
fn read_list(
    lines: &[(usize, &str)],
    at: &mut usize,
    n_line: usize,
    count: usize,
    depth: usize,
) -> Result<Vec<Value>, DecodeError> {
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        let &(n, l) = lines
            .get(*at)
            .ok_or_else(|| err(n_line, "fewer items than the count"))?;
        if depth_of(l) != depth + 1 {
            return Err(err(n, "an item is indented one step under its header"));
        }
        *at += 1;
        let body = &l[(depth + 1) * INDENT.len()..];
        if body == "-" {
            items.push(Value::Object(Map::new()));
            continue;
        }
        let rest = body
            .strip_prefix("- ")
            .ok_or_else(|| err(n, "an item starts with `- `"))?;
        let is_field = read_key(rest).is_some_and(|(_, after)| after.starts_with([':', '[']));
        if !is_field {
            items.push(read_primitive(rest).ok_or_else(|| err(n, "not a value"))?);
            continue;
        }
        // the first field is on the `- ` line, the rest two steps under the header
        let mut m = Map::new();
        read_field(lines, at, n, rest, depth + 2, &mut m)?;
        m.extend(read_object(lines, at, depth + 2)?);
        items.push(Value::Object(m));
    }
    Ok(items)
}

/// A line's key (bare or quoted) and what follows it.
fn read_key(body: &str) -> Option<(String, &str)> {
    if body.starts_with('"') {
        let end = string_end(body)?;
        let key: String = serde_json::from_str(&body[..end]).ok()?;
        return Some((key, &body[end..]));
    }
    let end = body.find([':', '[']).unwrap_or(body.len());
    (end > 0 || body.starts_with('[')).then(|| (body[..end].to_string(), &body[end..]))
}

/// Where the JSON string at the start of `s` ends (just past its closing quote).
fn string_end(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// `[n]: values` or `[n]{fields}:` with its rows; `rest` starts at `[`.
fn read_array(
    lines: &[(usize, &str)],
    at: &mut usize,
    n_line: usize,
    rest: &str,
    depth: usize,
) -> Result<(String, Value), DecodeError> {
    let close = rest.find(']').ok_or_else(|| err(n_line, "no `]`"))?;
    let count: usize = rest[1..close]
        .parse()
        .map_err(|_| err(n_line, "not a count"))?;
    let after = &rest[close + 1..];
    let listed = lines
        .get(*at)
        .is_some_and(|(_, l)| depth_of(l) == depth + 1 && l.trim_start().starts_with('-'));
    if after == ":" && count > 0 && listed {
        return Ok((
            String::new(),
            Value::Array(read_list(lines, at, n_line, count, depth)?),
        ));
    }
    if let Some(values) = after.strip_prefix(':') {
        let values = values.strip_prefix(' ').unwrap_or(values);
        let items = if values.is_empty() {
            Vec::new()
        } else {
            split_row(values).ok_or_else(|| err(n_line, "bad values"))?
        };
        if items.len() != count {
            return Err(err(n_line, "the count is not the number of values"));
        }
        return Ok((String::new(), Value::Array(items)));
    }
    let fields_end = header_end(after).ok_or_else(|| err(n_line, "no `{fields}:`"))?;
    let fields: Vec<String> =
        split_fields(&after[1..fields_end]).ok_or_else(|| err(n_line, "bad fields"))?;
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        let &(n, l) = lines
            .get(*at)
            .ok_or_else(|| err(n_line, "fewer rows than the count"))?;
        if depth_of(l) != depth + 1 {
            return Err(err(n, "a row is indented one step under its header"));
        }
        *at += 1;
        let values =
            split_row(&l[(depth + 1) * INDENT.len()..]).ok_or_else(|| err(n, "bad row"))?;
        if values.len() != fields.len() {
            return Err(err(n, "a row has as many values as the header has fields"));
        }
        items.push(Value::Object(fields.iter().cloned().zip(values).collect()));
    }
    Ok((String::new(), Value::Array(items)))
}

/// Where `{fields}` closes in `s` (which starts with `{`), past quoted field names.
fn header_end(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'{') {
        return None;
    }
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i += string_end(&s[i..])?,
            b'}' if s[i + 1..] == *":" => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn split_fields(s: &str) -> Option<Vec<String>> {
    split(s)?
        .into_iter()
        .map(|f| {
            if f.starts_with('"') {
                serde_json::from_str(f).ok()
            } else {
                Some(f.to_string())
            }
        })
        .collect()
}

fn split_row(s: &str) -> Option<Vec<Value>> {
    split(s)?.into_iter().map(read_primitive).collect()
}

/// Split at commas outside quoted strings.
fn split(s: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i += string_end(&s[i..])?,
            b',' => {
                out.push(&s[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push(&s[start..]);
    Some(out)
}

fn read_primitive(s: &str) -> Option<Value> {
    match s {
        "null" => return Some(Value::Null),
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    if s.starts_with('"') {
        return serde_json::from_str(s).ok();
    }
    if s.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return serde_json::from_str::<Number>(s).ok().map(Value::Number);
    }
    bare_string(s).then(|| Value::String(s.to_string()))
}
