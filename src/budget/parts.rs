//! A tool result taken apart for the engine: prose, JSON, embedded resource text, images and
//! fixed-cost blocks, with the model-view cost of each (what a client sends the model). The
//! parts borrow from the result: a copy of a part, or of the whole work, copies no text, and a
//! stage that changes a text owns only what it made.

mod json;

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use crate::budget::policy::size::Size;
pub use json::{JsonValue, Structured};
use prefix::{PrefixCounter, Scan};

/// JSON texts from this size on are checked and shrunk in one read with the shrink's loosest
/// caps, never parsed whole first ([`Work::verify_json`]).
pub const READ_SHRUNK_BYTES: usize = 64 * 1024;
use crate::ground::tokens::image_data_cost;
use crate::measure::{
    is_json_text, json_text_holds, looks_like_json, structured_duplicate, Holds, TextView,
};

/// One content block, as the engine sees it.
#[derive(Debug, Clone)]
pub enum Part<'a> {
    /// A text block that is not JSON; `scan` caches its counted segments.
    Prose { text: Cow<'a, str>, scan: Scan },
    /// A text block holding a JSON object or array: `text` as sent, `value` parsed when needed.
    Json {
        text: Cow<'a, str>,
        value: JsonValue<'a>,
    },
    /// An embedded resource with text; `block` keeps uri and mimeType.
    Resource {
        block: &'a Value,
        text: Cow<'a, str>,
        scan: Scan,
    },
    /// An image block, costed by pixels (or, when its data is no known image, as its base64 text).
    Image { block: &'a Value, tokens: usize },
    /// Anything else (resource links, blobs, audio): kept or dropped whole.
    Fixed { block: &'a Value, tokens: usize },
}

/// The result, taken apart.
#[derive(Debug, Clone)]
pub struct Work<'a> {
    pub parts: Vec<Part<'a>>,
    pub structured: Option<Structured<'a>>,
    /// structuredContent repeats a text block.
    pub structured_duplicate: bool,
    /// Other top-level fields (`isError`, `_meta`), kept as they are.
    pub rest: Vec<(&'a str, &'a Value)>,
}

impl<'a> Work<'a> {
    /// Bytes of the result's payload: texts, image and blob data, structuredContent.
    pub fn payload_bytes(&self) -> usize {
        let parts: usize = self
            .parts
            .iter()
            .map(|p| match p {
                Part::Prose { text, .. }
                | Part::Json { text, .. }
                | Part::Resource { text, .. } => text.len(),
                Part::Image { block, .. } | Part::Fixed { block, .. } => block["data"]
                    .as_str()
                    .or(block["resource"]["blob"].as_str())
                    .map_or(0, str::len),
            })
            .sum();
        let structured = match (&self.structured, self.structured_duplicate) {
            (Some(s), false) => compact(s.value()).len(),
            _ => 0,
        };
        parts + structured
    }

    /// Bytes of prose, JSON and resource text.
    pub fn text_bytes(&self) -> usize {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Prose { text, .. }
                | Part::Json { text, .. }
                | Part::Resource { text, .. } => text.len(),
                _ => 0,
            })
            .sum()
    }

    /// The size of the text this work shows a model: texts, links as their JSON and
    /// structuredContent as compact JSON (images and blobs are not text), joined by line breaks
    /// as a client that joins them does.
    pub fn size(&self) -> Size {
        self.size_with(None, false)
    }

    /// [`Self::size`] with `note` as one more text block, last (or first: `note_first`).
    pub fn size_with(&self, note: Option<&str>, note_first: bool) -> Size {
        self.size_as(note, note_first, false)
    }

    /// [`Self::size_with`], an embedded resource measured as its block's compact JSON when
    /// `resources_json` (a client that sends it so and holds that to its limits).
    pub fn size_as(&self, note: Option<&str>, note_first: bool, resources_json: bool) -> Size {
        let mut joined = Joined::default();
        if let (Some(n), true) = (note, note_first) {
            joined.push(n);
        }
        for p in &self.parts {
            match p {
                Part::Resource { .. } if resources_json => joined.push(&compact(&block(p))),
                Part::Prose { text, .. }
                | Part::Json { text, .. }
                | Part::Resource { text, .. } => joined.push(text),
                Part::Fixed { block, tokens } if *tokens > 0 => joined.push(&compact(block)),
                Part::Fixed { .. } | Part::Image { .. } => {}
            }
        }
        if let Some(s) = &self.structured {
            joined.push(&compact(s.value()));
        }
        if let (Some(n), false) = (note, note_first) {
            joined.push(n);
        }
        joined.size()
    }

    /// Take over what `edited` (this work after stripping) has counted, for the bytes the two
    /// texts still share.
    pub fn adopt_scans(&mut self, edited: &Work) {
        for (mine, theirs) in self.parts.iter_mut().zip(&edited.parts) {
            if let (Part::Prose { text, scan }, Part::Prose { text: t2, scan: s2 }) = (mine, theirs)
            {
                *scan = Scan::rebase(t2, s2, text);
            }
        }
    }

    pub fn parse(result: &'a Value, counter: &PrefixCounter) -> Work<'a> {
        let obj = result.as_object();
        let rest = obj
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k != "content" && *k != "structuredContent")
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let content = obj
            .and_then(|o| o.get("content"))
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let structured = obj
            .and_then(|o| o.get("structuredContent"))
            .filter(|s| !s.is_null());
        let parts: Vec<Part> = content
            .iter()
            .map(|b| part(b, counter, structured))
            .collect();
        let structured_duplicate = structured.is_some_and(|s| duplicates(s, &parts));
        Work {
            parts,
            structured: structured.map(Structured::borrowed),
            structured_duplicate,
            rest,
        }
    }

    /// Check the large texts taken for JSON by their look ([`READ_SHRUNK_BYTES`]), read once
    /// without building anything; one that is not JSON becomes prose.
    pub fn verify_json(&mut self) {
        for p in &mut self.parts {
            let Part::Json { text, value } = p else {
                continue;
            };
            if value.checked {
                continue;
            }
            if is_json_text(text) {
                value.checked = true;
            } else {
                *p = Part::Prose {
                    text: text.clone(),
                    scan: Scan::default(),
                };
            }
        }
    }

    /// The cost if it is at most `limit` (exact), else `None`.
    pub fn cost_up_to(&mut self, counter: &PrefixCounter, limit: usize) -> Option<usize> {
        let mut total = 0;
        for p in &mut self.parts {
            total += part_cost(p, counter, limit.checked_sub(total)?)?;
        }
        if let Some(s) = &self.structured {
            let room = limit.checked_sub(total)?;
            total += s.count_up_to(room, |text, l| counter.count_up_to(text, l))?;
        }
        (total <= limit).then_some(total)
    }

    /// The exact cost, however large.
    pub fn cost(&mut self, counter: &PrefixCounter) -> usize {
        self.cost_up_to(counter, usize::MAX).unwrap_or(usize::MAX)
    }

    /// Back to an MCP tool result, with `extra` text blocks appended.
    pub fn to_result(&self, extra: &[String]) -> Value {
        self.result_with(extra, false)
    }

    /// Back to an MCP tool result, with `first` text blocks before the parts.
    pub fn to_result_after(&self, first: &[String]) -> Value {
        self.result_with(first, true)
    }

    fn result_with(&self, notes: &[String], first: bool) -> Value {
        let notes = notes.iter().map(|t| json!({"type": "text", "text": t}));
        let parts = self.parts.iter().map(block);
        let content: Vec<Value> = if first {
            notes.chain(parts).collect()
        } else {
            parts.chain(notes).collect()
        };
        let mut out = Map::new();
        out.insert("content".into(), Value::Array(content));
        if let Some(s) = &self.structured {
            out.insert("structuredContent".into(), s.value().clone());
        }
        for (k, v) in &self.rest {
            out.insert(k.to_string(), (*v).clone());
        }
        Value::Object(out)
    }
}

/// A content block as a part; `structured`, the result's structuredContent, is the value of a
/// JSON text that repeats it (then the text is read once, to compare, and never parsed).
fn part<'a>(b: &'a Value, counter: &PrefixCounter, structured: Option<&'a Value>) -> Part<'a> {
    let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" => {
            let text = b.get("text").and_then(Value::as_str).unwrap_or("");
            if let Some(s) = structured.filter(|_| looks_like_json(text)) {
                if json_text_holds(text, s) == Some(Holds::InOrder) {
                    return Part::Json {
                        text: Cow::Borrowed(text),
                        value: JsonValue::borrowed(s),
                    };
                }
            }
            if text.len() >= READ_SHRUNK_BYTES && looks_like_json(text) {
                // checked by the read that shrinks it, when the engine runs
                return Part::Json {
                    text: Cow::Borrowed(text),
                    value: JsonValue::unchecked(),
                };
            }
            if is_json_text(text) {
                return Part::Json {
                    text: Cow::Borrowed(text),
                    value: JsonValue::checked(),
                };
            }
            Part::Prose {
                text: Cow::Borrowed(text),
                scan: Scan::default(),
            }
        }
        "resource" if b["resource"]["text"].is_string() => Part::Resource {
            block: b,
            text: Cow::Borrowed(b["resource"]["text"].as_str().unwrap_or("")),
            scan: Scan::default(),
        },
        "image" => {
            let data = b.get("data").and_then(Value::as_str).unwrap_or("");
            // pixel cost when it is an image; else what a client pays for the base64 as text
            let tokens = match image_data_cost(data) {
                Some((_, tokens)) => counter.bpe_budget(tokens),
                None => counter.count(data),
            };
            Part::Image { block: b, tokens }
        }
        "resource" | "audio" => Part::Fixed {
            block: b,
            tokens: 0,
        },
        _ => {
            let tokens = counter.count(&compact(b));
            Part::Fixed { block: b, tokens }
        }
    }
}

fn part_cost(p: &mut Part, counter: &PrefixCounter, limit: usize) -> Option<usize> {
    match p {
        Part::Prose { text, scan } | Part::Resource { text, scan, .. } => {
            counter.count_scanned(text, limit, scan)
        }
        Part::Json { text, value } => value.counted.up_to(limit, |l| counter.count_up_to(text, l)),
        Part::Image { tokens, .. } | Part::Fixed { tokens, .. } => {
            (*tokens <= limit).then_some(*tokens)
        }
    }
}

/// The size of texts joined by line breaks, added up one text at a time.
#[derive(Default)]
struct Joined {
    bytes: usize,
    chars: usize,
    breaks: usize,
    texts: usize,
    /// The joined text so far ends in a line break.
    ends_in_break: bool,
}

impl Joined {
    fn push(&mut self, text: &str) {
        if self.texts > 0 {
            self.bytes += 1;
            self.chars += 1;
            self.breaks += 1;
            self.ends_in_break = true;
        }
        let s = Size::of(text);
        self.bytes += s.bytes;
        self.chars += s.chars;
        self.breaks += memchr::memchr_iter(b'\n', text.as_bytes()).count();
        if !text.is_empty() {
            self.ends_in_break = text.ends_with('\n');
        }
        self.texts += 1;
    }

    fn size(&self) -> Size {
        Size {
            bytes: self.bytes,
            chars: self.chars,
            lines: self.breaks + usize::from(self.bytes > 0 && !self.ends_in_break),
        }
    }
}

/// The block a part becomes in the output.
pub fn block(p: &Part) -> Value {
    match p {
        Part::Prose { text, .. } | Part::Json { text, .. } => json!({"type": "text", "text": text}),
        Part::Resource { block, text, .. } => {
            // the block with its text replaced, built without copying the text it had
            let mut b = Map::new();
            for (k, v) in block.as_object().into_iter().flatten() {
                let v = match (k.as_str(), v.as_object()) {
                    ("resource", Some(resource)) => {
                        let mut r = Map::new();
                        for (rk, rv) in resource {
                            let rv = match rk.as_str() {
                                "text" => Value::String(text.to_string()),
                                _ => rv.clone(),
                            };
                            r.insert(rk.clone(), rv);
                        }
                        Value::Object(r)
                    }
                    _ => v.clone(),
                };
                b.insert(k.clone(), v);
            }
            Value::Object(b)
        }
        Part::Image { block, .. } | Part::Fixed { block, .. } => (*block).clone(),
    }
}

/// Compact JSON text.
pub fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("a serde_json::Value always serialises")
}

/// structuredContent repeats the text blocks (the report's `structured_duplicate` rule). A JSON
/// text not yet parsed is compared while it is read.
fn duplicates(structured: &Value, parts: &[Part]) -> bool {
    let texts: Vec<TextView> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Prose { text, .. } => Some(TextView { text, json: None }),
            Part::Json { text, value } => Some(TextView {
                text,
                json: value.is_parsed().then(|| value.get(text)),
            }),
            _ => None,
        })
        .collect();
    structured_duplicate(structured, &texts)
}

pub(super) mod input;
pub(super) mod prefix;
#[cfg(test)]
mod tests;
