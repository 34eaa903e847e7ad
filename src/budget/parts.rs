//! A tool result taken apart for the engine: prose, JSON, embedded resource text, images and
//! fixed-cost blocks, with the model-view cost of each (what a client sends the model).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::{json, Map, Value};

use super::capped::Capped;
use super::shrink::Caps;
use super::{PrefixCounter, Scan, Size};
use crate::measure::{is_json_text, structured_duplicate, TextView};
use crate::tokens::image_data_cost;

/// One content block (or structuredContent), as the engine sees it.
#[derive(Debug, Clone)]
pub enum Part {
    /// A text block that is not JSON; `scan` caches its counted segments.
    Prose { text: String, scan: Scan },
    /// A text block holding a JSON object or array: `text` as sent, `value` parsed when needed.
    Json { text: String, value: JsonValue },
    /// An embedded resource with text; `block` keeps uri and mimeType.
    Resource {
        block: Value,
        text: String,
        scan: Scan,
    },
    /// An image block, costed by pixels (or, when its data is no known image, as its base64 text).
    Image { block: Value, tokens: usize },
    /// Anything else (resource links, blobs, audio): kept or dropped whole.
    Fixed { block: Value, tokens: usize },
}

/// A JSON text's value, parsed on first use and shared by the copies of a part: a result within
/// its budget is only validated and counted, never built into a tree. A large one that must be
/// shrunk is read once with the shrink's loosest caps instead ([`Capped`]).
#[derive(Debug, Clone, Default)]
pub struct JsonValue {
    value: Arc<OnceLock<Value>>,
    capped: Arc<OnceLock<Option<Capped>>>,
    counted: Arc<Counted>,
}

/// What counting one text has shown, shared by the copies of its part: its exact count, or the
/// largest limit it is known to pass. A pass asks the same of a JSON text up to three times
/// (after stripping, before it, and beside the note), each a count up to the budget.
#[derive(Debug, Default)]
pub struct Counted {
    /// The exact count plus one; 0: not known.
    exact: AtomicUsize,
    /// One more than the largest limit the text is known to pass; 0: none.
    over: AtomicUsize,
}

impl Counted {
    /// `count(limit)` (a count up to `limit`), answered from what is known when it can be.
    fn up_to(&self, limit: usize, count: impl FnOnce(usize) -> Option<usize>) -> Option<usize> {
        if let Some(n) = self.exact.load(Ordering::Relaxed).checked_sub(1) {
            return (n <= limit).then_some(n);
        }
        if limit < self.over.load(Ordering::Relaxed) {
            return None;
        }
        let found = count(limit);
        match found {
            Some(n) => self.exact.store(n.saturating_add(1), Ordering::Relaxed),
            None => {
                self.over
                    .fetch_max(limit.saturating_add(1), Ordering::Relaxed);
            }
        }
        found
    }
}

impl JsonValue {
    /// A value already parsed (or made by a stage).
    pub fn parsed(value: Value) -> Self {
        JsonValue {
            value: Arc::new(OnceLock::from(value)),
            capped: Arc::default(),
            counted: Arc::default(),
        }
    }

    /// Whether the value has been built.
    pub fn is_parsed(&self) -> bool {
        self.value.get().is_some()
    }

    /// The value of `text`, the part's JSON text (validated when the part was made).
    pub fn get(&self, text: &str) -> &Value {
        self.value
            .get_or_init(|| serde_json::from_str(text).unwrap_or(Value::Null))
    }

    /// `text` read for a shrink ladder that starts at `caps` (the first call's caps are kept).
    pub fn capped(&self, text: &str, caps: Caps) -> Option<&Capped> {
        self.capped
            .get_or_init(|| Capped::read(text, caps))
            .as_ref()
    }
}

/// The result, taken apart.
#[derive(Debug, Clone)]
pub struct Work {
    pub parts: Vec<Part>,
    pub structured: Option<Arc<Value>>,
    /// structuredContent repeats a text block.
    pub structured_duplicate: bool,
    /// Other top-level fields (`isError`, `_meta`), kept as they are.
    pub rest: Map<String, Value>,
    /// What counting `structured` has shown, with the value it was shown for (a stage that
    /// replaces structuredContent leaves this behind, and it no longer applies).
    pub structured_counted: Option<(Arc<Value>, Arc<Counted>)>,
}

impl Work {
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
            (Some(s), false) => compact(s).len(),
            _ => 0,
        };
        parts + structured
    }

    /// A copy with every prose text left empty (its scan too), for a pass that replaces them
    /// with what it reads from this work: a large text is not copied only to be dropped.
    pub fn clone_without_prose(&self) -> Work {
        let parts = self
            .parts
            .iter()
            .map(|p| match p {
                Part::Prose { .. } => Part::Prose {
                    text: String::new(),
                    scan: Scan::default(),
                },
                other => other.clone(),
            })
            .collect();
        Work {
            parts,
            structured: self.structured.clone(),
            structured_duplicate: self.structured_duplicate,
            rest: self.rest.clone(),
            structured_counted: self.structured_counted.clone(),
        }
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
        let mut joined = Joined::default();
        if let (Some(n), true) = (note, note_first) {
            joined.push(n);
        }
        for p in &self.parts {
            match p {
                Part::Prose { text, .. }
                | Part::Json { text, .. }
                | Part::Resource { text, .. } => joined.push(text),
                Part::Fixed { block, tokens } if *tokens > 0 => joined.push(&compact(block)),
                Part::Fixed { .. } | Part::Image { .. } => {}
            }
        }
        if let Some(s) = &self.structured {
            joined.push(&compact(s));
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

    pub fn parse(result: &Value, counter: &PrefixCounter) -> Work {
        let empty = Map::new();
        let obj = result.as_object().unwrap_or(&empty);
        // clone only what is kept: the blocks are taken apart by reference
        let rest: Map<String, Value> = obj
            .iter()
            .filter(|(k, _)| *k != "content" && *k != "structuredContent")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let content = obj
            .get("content")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let structured = obj
            .get("structuredContent")
            .filter(|s| !s.is_null())
            .map(|s| Arc::new(s.clone()));
        let parts: Vec<Part> = content.iter().map(|b| part(b, counter)).collect();
        let structured_duplicate = structured.as_ref().is_some_and(|s| duplicates(s, &parts));
        let structured_counted = structured.clone().map(|s| (s, Arc::default()));
        Work {
            parts,
            structured,
            structured_duplicate,
            rest,
            structured_counted,
        }
    }

    /// The cost if it is at most `limit` (exact), else `None`.
    pub fn cost_up_to(&mut self, counter: &PrefixCounter, limit: usize) -> Option<usize> {
        let mut total = 0;
        for p in &mut self.parts {
            total += part_cost(p, counter, limit.checked_sub(total)?)?;
        }
        if let Some(s) = &self.structured {
            let counted = match &self.structured_counted {
                Some((of, counted)) if Arc::ptr_eq(of, s) => Arc::clone(counted),
                _ => {
                    let counted = Arc::<Counted>::default();
                    self.structured_counted = Some((Arc::clone(s), Arc::clone(&counted)));
                    counted
                }
            };
            let room = limit.checked_sub(total)?;
            total += counted.up_to(room, |l| counter.count_up_to(&compact(s), l))?;
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
            out.insert("structuredContent".into(), Value::clone(s));
        }
        for (k, v) in &self.rest {
            out.insert(k.clone(), v.clone());
        }
        Value::Object(out)
    }
}

fn part(b: &Value, counter: &PrefixCounter) -> Part {
    let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" => {
            let text = b
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if is_json_text(&text) {
                return Part::Json {
                    text,
                    value: JsonValue::default(),
                };
            }
            Part::Prose {
                text,
                scan: Scan::default(),
            }
        }
        "resource" if b["resource"]["text"].is_string() => {
            let text = b["resource"]["text"].as_str().unwrap_or("").to_string();
            Part::Resource {
                block: b.clone(),
                text,
                scan: Scan::default(),
            }
        }
        "image" => {
            let data = b.get("data").and_then(Value::as_str).unwrap_or("");
            // pixel cost when it is an image; else what a client pays for the base64 as text
            let tokens = match image_data_cost(data) {
                Some((_, tokens)) => counter.bpe_budget(tokens),
                None => counter.count(data),
            };
            Part::Image {
                block: b.clone(),
                tokens,
            }
        }
        "resource" | "audio" => Part::Fixed {
            block: b.clone(),
            tokens: 0,
        },
        _ => {
            let tokens = counter.count(&compact(b));
            Part::Fixed {
                block: b.clone(),
                tokens,
            }
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
            let mut b = block.clone();
            b["resource"]["text"] = Value::String(text.clone());
            b
        }
        Part::Image { block, .. } | Part::Fixed { block, .. } => block.clone(),
    }
}

/// Compact JSON text.
pub fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("a serde_json::Value always serialises")
}

/// structuredContent repeats the text blocks (the report's `structured_duplicate` rule).
fn duplicates(structured: &Value, parts: &[Part]) -> bool {
    let texts: Vec<TextView> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Prose { text, .. } => Some(TextView { text, json: None }),
            Part::Json { text, value } => Some(TextView {
                text,
                json: Some(value.get(text)),
            }),
            _ => None,
        })
        .collect();
    structured_duplicate(structured, &texts)
}

#[cfg(test)]
mod tests;
