//! Which parts of a tool result a client sends its model (`[client.sends]`), as the texts it
//! joins and the images it shows.

use std::borrow::Cow;

use serde_json::Value;

use super::{ClientProfile, Images, Resources, Sends};
use crate::ground::tokens::image_data_cost;

/// The sent parts of a result: texts, image tokens, and which parts.
pub(super) struct Visible<'a> {
    pub texts: Vec<Cow<'a, str>>,
    pub image_tokens: usize,
    /// Image blocks the client does not send.
    pub images_dropped: usize,
    pub sent: Vec<String>,
    /// The content is exactly one text block.
    pub single_text: bool,
    /// Texts the client sends in place of a blob (a note, none of the blob).
    pub notes: usize,
    /// Texts the client sends beside the images it sends (`[client.images] note`).
    pub image_notes: Vec<String>,
    /// A per-block rule cut one of the texts (what a `when = "cut"` rule acts on).
    pub cut_per_block: bool,
}

impl Visible<'_> {
    /// The result was nothing but images the client drops: nothing of it reaches the model.
    pub fn only_dropped_images(&self) -> bool {
        self.images_dropped > 0 && self.texts.iter().all(|t| t.is_empty())
    }

    /// The result was nothing but blobs the client sends a note for: the notes reach the
    /// model, nothing of the result.
    pub fn only_notes(&self) -> bool {
        self.notes > 0 && self.notes == self.texts.iter().filter(|t| !t.is_empty()).count()
    }
}

/// Counts the tokens of a text (a tokenizer, or a memo of one shared by several clients).
pub type CountFn<'c> = &'c dyn Fn(&str) -> usize;

pub(super) fn visible<'a>(
    profile: &ClientProfile,
    result: &'a Value,
    count: CountFn,
) -> Visible<'a> {
    let blocks = result["content"].as_array().map_or(&[][..], Vec::as_slice);
    let structured = result.get("structuredContent").filter(|s| !s.is_null());
    let has_structured = structured.is_some();
    if profile.sends.mode.as_json() {
        // one JSON text the client writes: the whole result (Cline:
        // `{"content":[...],"structuredContent":...}`) or its content array (Continue:
        // `[{"type":"text","text":"..."}]`, no structuredContent)
        let whole = profile.sends.mode == Sends::ResultJson;
        let mut sent = vec!["content".to_string()];
        if whole && has_structured {
            sent.push("structuredContent".into());
        }
        // a client that drops images leaves them out of its JSON (Continue: measured)
        let dropped = match profile.images.mode {
            Images::Dropped => blocks.iter().filter(|b| b["type"] == "image").count(),
            _ => 0,
        };
        let text = match (dropped, whole) {
            (0, true) => compact(result),
            (0, false) => compact(&result["content"]),
            _ => {
                let content: Vec<Value> = blocks
                    .iter()
                    .filter(|b| b["type"] != "image")
                    .cloned()
                    .collect();
                match whole {
                    true => {
                        let mut r = result.clone();
                        r["content"] = Value::Array(content);
                        compact(&r)
                    }
                    false => compact(&Value::Array(content)),
                }
            }
        };
        // nothing but dropped images: nothing is sent
        let nothing_left = dropped > 0 && dropped == blocks.len() && !has_structured;
        let texts = match nothing_left {
            true => Vec::new(),
            false => vec![Cow::Owned(text)],
        };
        return Visible {
            texts,
            image_tokens: 0,
            images_dropped: dropped,
            sent,
            single_text: true,
            notes: 0,
            image_notes: Vec::new(),
            cut_per_block: false,
        };
    }
    let (content, text_blocks, structured_sent) = match profile.sends.mode {
        Sends::Both => (true, true, has_structured),
        Sends::Content => (true, true, false),
        Sends::StructuredOnly => (!has_structured, !has_structured, has_structured),
        Sends::StructuredReplacesText => (true, !has_structured, has_structured),
        Sends::ResultJson | Sends::ContentJson => unreachable!("handled above"),
        Sends::BothDedup => {
            // the literal serialization only: a pretty-printed copy is sent twice (measured)
            let literal = structured.map(compact);
            let repeats = blocks
                .iter()
                .any(|b| b["type"] == "text" && b["text"].as_str() == literal.as_deref());
            (true, true, has_structured && !repeats)
        }
    };
    let mut v = Visible {
        texts: Vec::new(),
        image_tokens: 0,
        images_dropped: 0,
        sent: Vec::new(),
        // one text, or one embedded text resource (Gemini CLI cuts its text alike: measured)
        single_text: blocks.len() == 1
            && (blocks[0]["type"] == "text" || blocks[0]["resource"]["text"].is_string()),
        notes: 0,
        image_notes: Vec::new(),
        cut_per_block: false,
    };
    if content {
        for b in blocks {
            match b["type"].as_str().unwrap_or("") {
                "text" if text_blocks => {
                    let t = b["text"].as_str().unwrap_or("");
                    // measured: compacted only without structuredContent (beside it, a
                    // pretty copy is sent as it is)
                    v.texts
                        .push(match profile.sends.compacts_json && !has_structured {
                            true => compacted(t),
                            false => Cow::Borrowed(t),
                        })
                }
                "text" => {}
                "image" => {
                    let data = b["data"].as_str().unwrap_or("");
                    match (profile.images.mode, image_data_cost(data)) {
                        (Images::Pixels, Some((_, tokens))) => v.image_tokens += tokens,
                        // no image a model can see, or a client that pastes it: its text
                        (Images::Pixels, None) => v.image_tokens += count(data),
                        (Images::Base64Text, _) => v.texts.push(Cow::Borrowed(data)),
                        (Images::Dropped, _) => v.images_dropped += 1,
                    }
                    if let (Images::Pixels, Some(note)) =
                        (profile.images.mode, &profile.images.note)
                    {
                        v.image_notes.push(image_note(profile, note, b));
                    }
                }
                "audio" => {}
                "resource" => match profile.resources.as_ref().map(|r| r.mode) {
                    Some(Resources::Json) => v.texts.push(Cow::Owned(compact(b))),
                    Some(Resources::TextAndBlob) => {
                        let r = &b["resource"];
                        if let Some(t) = r["text"].as_str().or(r["blob"].as_str()) {
                            v.texts.push(Cow::Borrowed(t));
                        }
                    }
                    _ => {
                        let r = &b["resource"];
                        if let Some(t) = r["text"].as_str() {
                            v.texts.push(Cow::Borrowed(t));
                        } else if let Some(blob) = r["blob"].as_str() {
                            blob_in_place(profile, r, blob, &mut v);
                        }
                    }
                },
                _ => v.texts.push(Cow::Owned(compact(b))),
            }
        }
        if !blocks.is_empty() && (text_blocks || blocks.iter().any(|b| b["type"] != "text")) {
            v.sent.push("content".into());
        }
    }
    if let (true, Some(s)) = (structured_sent, structured.map(compact)) {
        let at = if profile.sends.structured_first {
            0
        } else {
            v.texts.len()
        };
        v.texts.insert(at, Cow::Owned(s));
        v.sent.push("structuredContent".into());
    }
    v
}

/// The note a client sends beside an image block: `{file}` its saved file (the profile's
/// `file_path` with the image's extension), `{mime}` its type.
fn image_note(profile: &ClientProfile, note: &str, block: &Value) -> String {
    let mime = block["mimeType"].as_str().unwrap_or("image/png");
    let ext = match mime {
        "image/jpeg" => "jpg",
        // `image/svg+xml`: svg
        m => m
            .strip_prefix("image/")
            .and_then(|t| t.split('+').next())
            .unwrap_or("png"),
    };
    let path = profile.file_path.as_deref().unwrap_or("/tmp/image");
    let stem = match path.rsplit_once('.') {
        Some((stem, e)) if !e.contains('/') => stem,
        _ => path,
    };
    note.replace("{file}", &format!("{stem}.{ext}"))
        .replace("{mime}", mime)
}

/// A blob where the client does not send its base64: the note it sends in its place, or an
/// attachment it sends (or drops) as it does an image; without a note, nothing.
fn blob_in_place(profile: &ClientProfile, r: &Value, blob: &str, v: &mut Visible<'_>) {
    let Some(rule) = profile.resources.as_ref() else {
        return;
    };
    let mime = r["mimeType"].as_str().unwrap_or("application/octet-stream");
    if rule.blob_attaches.iter().any(|m| m == mime) {
        if profile.images.mode == Images::Dropped {
            v.images_dropped += 1;
        }
        return;
    }
    if let Some(note) = &rule.blob_note {
        let b = blob.bytes().filter(|c| !c.is_ascii_whitespace()).count();
        let pad = blob
            .trim_end()
            .bytes()
            .rev()
            .take_while(|c| *c == b'=')
            .count()
            .min(2);
        let bytes = (b * 3 / 4).saturating_sub(pad);
        // "2 KB" (opencode: rounded up), "2.9KB" (Claude Code: one decimal)
        let size = match bytes {
            0..1024 => format!("{bytes} B"),
            1024..1_048_576 => format!("{} KB", bytes.div_ceil(1024)),
            _ => format!("{} MB", bytes.div_ceil(1_048_576)),
        };
        let decimal = |unit: f64, name: &str| {
            let n = format!("{:.1}", bytes as f64 / unit);
            format!("{}{name}", n.strip_suffix(".0").unwrap_or(&n))
        };
        let size_1 = match bytes {
            0..1024 => format!("{bytes} bytes"),
            1024..1_048_576 => decimal(1024.0, "KB"),
            _ => decimal(1_048_576.0, "MB"),
        };
        let uri = r["uri"].as_str().unwrap_or("");
        // the server's and the tool's names are not known here: stand-ins of a like length
        let file = profile.file_path.as_deref().unwrap_or("/tmp/file.bin");
        let text = note
            .replace("{uri}", uri)
            .replace("{mime}", mime)
            .replace("{size}", &size)
            .replace("{size_1}", &size_1)
            .replace("{server}", "server")
            .replace("{tool}", "the_tool")
            .replace("{file}", file);
        v.texts.push(Cow::Owned(text));
        v.notes += 1;
    }
}

/// A JSON object or array text written compactly (keys in received order); any other text as
/// it is.
fn compacted(text: &str) -> Cow<'_, str> {
    let start = text.trim_start();
    if !(start.starts_with('{') || start.starts_with('[')) {
        return Cow::Borrowed(text);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Cow::Owned(compact(&v)),
        Err(_) => Cow::Borrowed(text),
    }
}

/// Compact JSON, keys in received order: as clients send JSON on (the audit's `compact_json`).
pub(super) fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("a serde_json::Value always serialises")
}
