//! What a tool result costs: per content block, structuredContent (and whether it repeats a text
//! block), images at their pixel cost, blobs by bytes only.

use base64::Engine as _;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{compact_json, MeasureError};
use crate::report::{BlockCost, RawCost, RawTotals};
use crate::tokens::{claude_image_tokens, image_dimensions, Counts, TokenizerSet};

#[derive(Deserialize)]
struct ToolResult<'a> {
    #[serde(borrow, default)]
    content: Vec<&'a RawValue>,
    #[serde(borrow, rename = "structuredContent")]
    structured: Option<&'a RawValue>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

/// Bytes, characters and lines of a text (what client limits measure).
pub fn text_stats(text: &str) -> (usize, usize, usize) {
    let lines = if text.is_empty() {
        0
    } else {
        text.lines().count()
    };
    (text.len(), text.chars().count(), lines)
}

fn add_text_stats(cost: &mut RawCost, text: &str) {
    let (bytes, chars, lines) = text_stats(text);
    cost.text_bytes += bytes;
    cost.text_chars += chars;
    cost.text_lines += lines;
}

/// Whether a result says it is partial: a truncation marker or a cursor / next-page field near
/// its start or end (where servers put them; the middle of a large result is not read).
pub fn has_continuation(raw: &str) -> bool {
    static MARKER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"(?i)truncat|next_?cursor|"cursor"|has_?more|next_?page|page_?token|continuation|more results|\boffset\b"#,
        )
        .expect("static regex")
    });
    const EDGE: usize = 16 * 1024;
    let floor = |mut i: usize| {
        while !raw.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    if raw.len() <= 2 * EDGE {
        return MARKER.is_match(raw);
    }
    MARKER.is_match(&raw[..floor(EDGE)]) || MARKER.is_match(&raw[floor(raw.len() - EDGE)..])
}

/// Per-tokenizer sums while walking the blocks.
struct Sums {
    model: Counts,
    text: Counts,
}

/// Measure the exact text of a `tools/call` result.
pub fn measure_result(raw: &str, set: &TokenizerSet) -> Result<RawCost, MeasureError> {
    let parsed: ToolResult =
        serde_json::from_str(raw).map_err(|e| MeasureError::new("tools/call result", e))?;
    let wire = set.count(raw);
    let mut sums = Sums {
        model: set.uniform(0),
        text: set.uniform(0),
    };
    let mut cost = RawCost {
        wire_bytes: raw.len(),
        wire_tokens: wire.primary,
        is_error: parsed.is_error == Some(true),
        ..RawCost::default()
    };
    let mut texts: Vec<String> = Vec::new();
    cost.continuation = has_continuation(raw);
    for block in &parsed.content {
        let v: Value =
            serde_json::from_str(block.get()).map_err(|e| MeasureError::new("content block", e))?;
        let b = measure_block(&v, set, &mut sums, &mut cost);
        if let Some(t) = v
            .get("text")
            .and_then(Value::as_str)
            .filter(|_| b.kind == "text")
        {
            texts.push(t.to_string());
        }
        cost.blocks.push(b);
    }
    let structured = match parsed.structured {
        Some(s) if s.get() != "null" => {
            let value: Value = serde_json::from_str(s.get())
                .map_err(|e| MeasureError::new("structuredContent", e))?;
            cost.structured_duplicate = is_duplicate(&value, &texts);
            set.count(s.get())
        }
        _ => set.uniform(0),
    };
    cost.model_tokens = sums.model.primary;
    cost.text_tokens = sums.text.primary;
    cost.structured_tokens = structured.primary;
    cost.by_tokenizer = wire
        .others
        .keys()
        .map(|name| {
            let totals = RawTotals {
                wire_tokens: wire.others[name],
                model_tokens: sums.model.others[name],
                text_tokens: sums.text.others[name],
                structured_tokens: structured.others[name],
            };
            (name.clone(), totals)
        })
        .collect();
    Ok(cost)
}

fn measure_block(v: &Value, set: &TokenizerSet, sums: &mut Sums, cost: &mut RawCost) -> BlockCost {
    let kind = v
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    let mime_type = v.get("mimeType").and_then(Value::as_str).map(String::from);
    let mut b = BlockCost {
        kind: kind.clone(),
        mime_type,
        ..BlockCost::default()
    };
    match kind.as_str() {
        "text" => {
            let text = v.get("text").and_then(Value::as_str).unwrap_or("");
            add_text_stats(cost, text);
            let c = set.count(text);
            (b.bytes, b.tokens) = (text.len(), c.primary);
            sums.model.add(&c);
            sums.text.add(&c);
        }
        "image" | "audio" => {
            let data = v.get("data").and_then(Value::as_str).unwrap_or("");
            b.bytes = data.len();
            cost.base64_as_text_tokens += set.primary().count(data);
            if kind == "image" {
                let decoded = base64::engine::general_purpose::STANDARD
                    .decode(data.trim())
                    .unwrap_or_default();
                if let Some(info) = image_dimensions(&decoded) {
                    let (tokens, _, _) = claude_image_tokens(info.width_px, info.height_px);
                    (b.width_px, b.height_px, b.tokens) =
                        (Some(info.width_px), Some(info.height_px), tokens);
                    cost.image_tokens += tokens;
                    sums.model.add(&set.uniform(tokens));
                }
            }
        }
        "resource" => {
            let r = v.get("resource").cloned().unwrap_or(Value::Null);
            b.mime_type = r.get("mimeType").and_then(Value::as_str).map(String::from);
            if let Some(text) = r.get("text").and_then(Value::as_str) {
                add_text_stats(cost, text);
                let c = set.count(text);
                (b.bytes, b.tokens) = (text.len(), c.primary);
                sums.model.add(&c);
            } else if let Some(blob) = r.get("blob").and_then(Value::as_str) {
                b.bytes = blob.len();
            }
        }
        _ => {
            // resource_link and unknown blocks reach the model as their JSON
            let c = set.count(&compact_json(v));
            (b.bytes, b.tokens) = (compact_json(v).len(), c.primary);
            sums.model.add(&c);
        }
    }
    b
}

/// structuredContent repeats a text block: a text parses to JSON equal to it, or it is an object
/// whose every value is a string equal to a text block's text (`{"content": text}`).
fn is_duplicate(structured: &Value, texts: &[String]) -> bool {
    let parses_equal = texts
        .iter()
        .any(|t| serde_json::from_str::<Value>(t).is_ok_and(|v| &v == structured));
    let value_equal = match structured {
        Value::Object(map) => {
            !map.is_empty()
                && strings_all(map).all(|s| s.is_some_and(|s| texts.iter().any(|t| t == s)))
        }
        _ => false,
    };
    parses_equal || value_equal
}

fn strings_all(map: &Map<String, Value>) -> impl Iterator<Item = Option<&str>> {
    map.values().map(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Tokenizer;

    #[test]
    fn blocks_images_blobs_and_duplicates() {
        let set = TokenizerSet::new(vec![Tokenizer::Cl100k, Tokenizer::O200k]);
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&1000u32.to_be_bytes());
        png.extend_from_slice(&1000u32.to_be_bytes());
        let data = base64::engine::general_purpose::STANDARD.encode(&png);
        let raw = format!(
            r#"{{"content":[{{"type":"text","text":"{{\"a\":1}}"}},{{"type":"image","data":"{data}","mimeType":"image/png"}},{{"type":"resource","resource":{{"uri":"x://b","blob":"AAAA"}}}}],"structuredContent":{{"a":1}}}}"#
        );
        let c = measure_result(&raw, &set).unwrap();
        assert_eq!(c.blocks.len(), 3);
        assert_eq!(c.text_tokens, Tokenizer::Cl100k.count("{\"a\":1}"));
        assert_eq!(c.image_tokens, 1334);
        assert_eq!(
            (c.blocks[1].width_px, c.blocks[1].height_px),
            (Some(1000), Some(1000))
        );
        assert_eq!(c.blocks[2].tokens, 0);
        assert_eq!(c.blocks[2].bytes, 4);
        assert_eq!(c.model_tokens, c.text_tokens + 1334);
        assert!(c.structured_duplicate);
        assert_eq!(c.structured_tokens, Tokenizer::Cl100k.count(r#"{"a":1}"#));
        assert_eq!(
            c.by_tokenizer["o200k_base"].wire_tokens,
            Tokenizer::O200k.count(&raw)
        );
    }

    #[test]
    fn structured_value_equal_to_text_is_duplicate_and_distinct_is_not() {
        let set = TokenizerSet::default();
        let dup = r#"{"content":[{"type":"text","text":"hello"}],"structuredContent":{"content":"hello"}}"#;
        assert!(measure_result(dup, &set).unwrap().structured_duplicate);
        let distinct =
            r#"{"content":[{"type":"text","text":"hello"}],"structuredContent":{"content":"bye"}}"#;
        assert!(!measure_result(distinct, &set).unwrap().structured_duplicate);
        let err = r#"{"content":[{"type":"text","text":"boom"}],"isError":true}"#;
        assert!(measure_result(err, &set).unwrap().is_error);
    }
}
