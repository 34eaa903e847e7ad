//! What one probe's result became in one client: the result as the server sent it (from the
//! tap), what reached the model (from the model's requests), how it got there (whole, cut,
//! turned into an error, nothing but a marker), what part was kept, which of `content` and
//! `structuredContent` was sent, the text the client added, and the file it saved.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::delivered::Delivered;
use super::found::Found;
use crate::config::profiles::Outcome;
use crate::ground::tokens::Tokenizer;

/// What stands for the kept part of the original in a client's added text.
pub const KEPT: &str = "[kept]";

/// Whether the client wrote its note before what it kept (a spill's preview) rather than after
/// (a cap): read from the added text.
pub fn note_first(added: &str) -> bool {
    !added.starts_with(KEPT)
}

/// How much of a text, in every unit a client may count in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[cfg_attr(test, schemars(rename = "Size"))]
pub struct Sizes {
    pub chars: usize,
    pub bytes: usize,
    pub tokens: usize,
    pub lines: usize,
}

impl Sizes {
    /// The size in a unit: `chars`, `bytes`, `tokens`, else lines.
    pub fn in_unit(&self, unit: &str) -> usize {
        match unit {
            "chars" => self.chars,
            "bytes" => self.bytes,
            "tokens" => self.tokens,
            _ => self.lines,
        }
    }

    pub fn of(text: &str, tokenizer: Tokenizer) -> Sizes {
        Sizes {
            chars: text.chars().count(),
            bytes: text.len(),
            tokens: tokenizer.count(text),
            lines: text.lines().count(),
        }
    }
}

/// How the result reached the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// All of it.
    Whole,
    /// A part of it (head, tail or both) with the client's marker.
    Cut,
    /// Nothing of it: an error message instead.
    Error,
    /// Nothing of it: only the client's marker or note.
    MarkerOnly,
    /// The model never got a result for the call (the client did not run it, or failed).
    NotDelivered,
}

/// Which part of a tool result reached the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Sent {
    Content,
    StructuredContent,
    Both,
    Neither,
}

/// A file the client wrote that holds the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct SavedFile {
    /// Relative to the client's private HOME.
    pub path: String,
    pub bytes: u64,
    /// The whole result text is in it.
    pub whole: bool,
    /// The client's note names it, but it was gone when the run ended (Copilot CLI 1.0.102
    /// deletes its saved outputs on exit, after its model was pointed at them).
    #[serde(default)]
    pub gone: bool,
}

/// One probe in one client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ProbeOutcome {
    pub tool: String,
    pub raw: Sizes,
    pub has_structured: bool,
    pub delivered: Option<Sizes>,
    pub delivery: Delivery,
    /// Characters of the original text kept from its start and from its end.
    pub head_chars: usize,
    pub tail_chars: usize,
    pub sent: Sent,
    /// What the client wrote around or instead of the kept text (at most 600 characters).
    pub added: String,
    pub file: Option<SavedFile>,
    pub is_error: bool,
    /// Image blocks in the result, and how many reached the model as images.
    pub images: usize,
    pub images_delivered: usize,
    /// An image's base64 reached the model as text.
    pub image_as_text: bool,
    /// The model's tokens for the images that reached it as images (by their pixels, as the
    /// profiles price them): `delivered` counts text alone, so a measurement compared with a
    /// profile adds these (a dropped image and a delivered one then differ).
    #[serde(default)]
    pub image_tokens: usize,
    /// Blob resources in the result (their base64 is part of `raw`, which the audit does
    /// not count as text).
    #[serde(default)]
    pub blobs: usize,
    /// What the client's profile predicts of the same result.
    pub modelled: Option<Modelled>,
    /// The result is one text block holding a JSON array (what some clients reject).
    #[serde(default)]
    pub json_array: bool,
}

/// What the profile predicts, and whether the measurement agrees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Modelled {
    /// The profile's id.
    pub profile: String,
    /// The client version the profile was measured with, if it was.
    pub profile_version: Option<String>,
    pub tokens: usize,
    pub outcome: Outcome,
    /// The measured outcome, in the profile's terms.
    pub measured_outcome: Outcome,
    /// Same outcome, tokens within tolerance.
    pub agrees: bool,
}

/// The original result's text: its text blocks and embedded resources' texts (a blob
/// resource's base64: a client that sends it sends that text, one that replaces it sends a
/// placeholder), joined as a client joins them.
pub fn content_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| {
            let resource = &b["resource"];
            b["text"]
                .as_str()
                .or(resource["text"].as_str())
                .or(resource["blob"].as_str())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Judge one delivery against the server's result.
pub fn judge(
    tool: &str,
    result: &Value,
    delivered: Option<&Delivered>,
    home: &Path,
    files: &[(std::path::PathBuf, u64)],
    tokenizer: Tokenizer,
) -> ProbeOutcome {
    let original = content_text(result);
    let structured = result.get("structuredContent").filter(|s| !s.is_null());
    let mut outcome = ProbeOutcome {
        tool: tool.into(),
        raw: Sizes::of(&original, tokenizer),
        has_structured: structured.is_some(),
        delivered: None,
        delivery: Delivery::NotDelivered,
        head_chars: 0,
        tail_chars: 0,
        sent: Sent::Neither,
        added: String::new(),
        file: None,
        is_error: false,
        images: 0,
        images_delivered: 0,
        image_as_text: false,
        image_tokens: 0,
        blobs: result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["resource"]["blob"].is_string())
            .count(),
        modelled: None,
        json_array: crate::config::profiles::is_json_array_result(result),
    };
    let image_data: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| b["type"] == "image")
        .filter_map(|b| b["data"].as_str())
        .collect();
    outcome.images = image_data.len();
    let Some(d) = delivered else {
        return outcome;
    };
    let text = d.text();
    outcome.file = saved_file(&original, home, files, &text);
    outcome.delivered = Some(Sizes::of(&text, tokenizer));
    outcome.is_error = d.is_error;
    outcome.images_delivered = d.images;
    outcome.image_as_text = image_data.iter().any(|data| text.contains(data));
    // the images that arrived as images, first ones first, priced by their pixels
    outcome.image_tokens = image_data
        .iter()
        .take(d.images)
        .map(|data| crate::ground::tokens::image_data_cost(data).map_or(0, |(_, t)| t))
        .sum();
    let images_whole = outcome.images_delivered >= outcome.images || outcome.image_as_text;
    // an image pasted as base64 text and cut with the rest (Cline sends the result's JSON):
    // of a result of nothing else, the image's base64 is what is judged kept
    let pasted = image_data
        .iter()
        .find(|data| data.len() >= 64 && text.contains(&data[..64]));
    let original = match pasted {
        Some(data) if original.is_empty() && !outcome.image_as_text => data.to_string(),
        _ => original,
    };
    // structuredContent sent whole in place of a JSON text (Claude Code) is not a compacted
    // cut of that text: look for the text itself only
    let found = match structured.is_some_and(|s| holds_json(&text, s)) {
        true => Found::as_text(&original, &text),
        false => Found::of(&original, &text),
    };
    let (head, tail) = found.kept;
    // text blocks around an image the client shows as a placeholder are whole too
    let content_whole = found.whole || blocks_in_order(result, &text);
    let form = found.form.as_str();
    // structuredContent counts as sent only outside the content's own text (a text block that
    // is the JSON of structuredContent is not a second copy)
    let outside = match content_whole {
        true => text.replacen(form, "", 1),
        false => added(
            form,
            &text,
            found.form_kept.0,
            found.form_kept.1,
            usize::MAX,
        ),
    };
    let has_structured_json = structured.is_some_and(|s| holds_json(&outside, s));
    outcome.sent = match (head > 0 || tail > 0 || content_whole, has_structured_json) {
        (true, true) => Sent::Both,
        (true, false) => Sent::Content,
        (false, true) => Sent::StructuredContent,
        (false, false) => Sent::Neither,
    };
    let chars = outcome.raw.chars;
    outcome.delivery = if content_whole || has_structured_json || (chars == 0 && images_whole) {
        Delivery::Whole
    } else if head > 0 || tail > 0 {
        Delivery::Cut
    } else if d.is_error || looks_like_an_error(&text) {
        Delivery::Error
    } else {
        Delivery::MarkerOnly
    };
    (outcome.head_chars, outcome.tail_chars) = if content_whole {
        (chars, 0)
    } else {
        (head, tail)
    };
    let (form_head, form_tail) = match content_whole {
        true => (form.chars().count(), 0),
        false => found.form_kept,
    };
    outcome.added = added(form, &text, form_head, form_tail, 600);
    // the run's own paths, which differ every run, as placeholders
    if let Some(f) = &outcome.file {
        let path = home.join(&f.path).display().to_string();
        outcome.added = outcome.added.replace(&path, "{file}");
    }
    let home_text = home.display().to_string();
    if outcome.file.is_none() {
        outcome.file = named_file(&outcome.added, &home_text);
    }
    outcome.added = outcome.added.replace(&home_text, "$HOME");
    outcome
}

/// A file in the run's HOME that the client's note names but that no longer exists.
fn named_file(note: &str, home: &str) -> Option<SavedFile> {
    let at = note.find(&format!("{home}/"))?;
    let path = note[at + home.len() + 1..]
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ']' | ')' | '>'))
        .next()?;
    Some(SavedFile {
        path: path.to_string(),
        bytes: 0,
        whole: false,
        gone: true,
    })
}

/// Whether every non-empty text block of a result with more than one block appears in `text`,
/// in order (a client that puts `[Image: ...]` between them delivered them all).
fn blocks_in_order(result: &Value, text: &str) -> bool {
    let blocks: Vec<&str> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str())
        .filter(|t| !t.is_empty())
        .collect();
    let mut rest = text;
    blocks.len() > 1
        && blocks.iter().all(|b| match rest.find(b) {
            Some(at) => {
                rest = &rest[at + b.len()..];
                true
            }
            None => false,
        })
}

/// Whether `text` holds a JSON value equal to `want` (numbers compared as numbers: a client
/// that writes `20.0` as `20` still sent it).
fn holds_json(text: &str, want: &Value) -> bool {
    let want = normal(want);
    text.match_indices(['{', '[']).take(64).any(|(at, _)| {
        serde_json::Deserializer::from_str(&text[at..])
            .into_iter::<Value>()
            .next()
            .and_then(Result::ok)
            .is_some_and(|v| normal(&v) == want)
    })
}

fn normal(v: &Value) -> Value {
    match v {
        Value::Number(n) => n.as_f64().map_or(Value::Null, |f| serde_json::json!(f)),
        Value::Array(a) => Value::Array(a.iter().map(normal).collect()),
        Value::Object(o) => {
            let mut sorted: Vec<_> = o.iter().map(|(k, v)| (k.clone(), normal(v))).collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(sorted.into_iter().collect())
        }
        other => other.clone(),
    }
}

fn looks_like_an_error(text: &str) -> bool {
    let lower = text.to_lowercase();
    ["error", "exceeds", "too large", "failed"]
        .iter()
        .any(|w| lower.contains(w))
}

/// The delivered text without the kept head and tail (each replaced by `[kept]`): what the
/// client wrote itself, at most `max_chars`.
fn added(original: &str, text: &str, head: usize, tail: usize, max_chars: usize) -> String {
    let mut rest = text.to_string();
    let head_text: String = original.chars().take(head).collect();
    let tail_text: String = original
        .chars()
        .skip(original.chars().count() - tail)
        .collect();
    for part in [head_text, tail_text] {
        if !part.is_empty() {
            if let Some(at) = rest.find(&part) {
                rest.replace_range(at..at + part.len(), KEPT);
            }
        }
    }
    let rest = rest.trim();
    match rest.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}…", &rest[..at]),
        None => rest.to_string(),
    }
}

/// The file the client saved the result in for its model: of the files the delivered text
/// names (by file name) of at least half the result's bytes, the closest in size that holds the
/// result's text (or its JSON-escaped form) whole, else the closest that holds its start
/// (`whole` false). A file the model is not told of is no way back to the result: the client's
/// own transcript (`.claude/projects/*.jsonl`, Qwen's chats, opencode's database) holds the
/// result too, and is not a saved file.
fn saved_file(
    original: &str,
    home: &Path,
    files: &[(std::path::PathBuf, u64)],
    delivered: &str,
) -> Option<SavedFile> {
    if original.len() < 1024 {
        return None;
    }
    let named = |p: &std::path::PathBuf| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.len() >= 4 && delivered.contains(n))
    };
    let mut candidates: Vec<&(std::path::PathBuf, u64)> = files
        .iter()
        .filter(|(p, b)| *b as usize >= original.len() / 2 && named(p))
        .collect();
    candidates.sort_by_key(|(p, b)| {
        (
            (*b as i64 - original.len() as i64).unsigned_abs(),
            p.clone(),
        )
    });
    let escaped = serde_json::to_string(original).unwrap_or_default();
    let escaped = escaped.trim_matches('"');
    let head: String = original.chars().take(200).collect();
    let mut partial = None;
    for (path, bytes) in candidates.into_iter().take(16) {
        let Ok(raw) = std::fs::read(home.join(path)) else {
            continue;
        };
        let text = String::from_utf8_lossy(&raw);
        let found = |whole| SavedFile {
            path: path.display().to_string(),
            bytes: *bytes,
            whole,
            gone: false,
        };
        if text.contains(original) || text.contains(escaped) {
            return Some(found(true));
        }
        if partial.is_none() && text.contains(&head) {
            partial = Some(found(false));
        }
    }
    partial
}

#[cfg(test)]
mod tests;
