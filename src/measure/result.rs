//! What a tool result costs: per content block, structuredContent (and whether it repeats a text
//! block), images at their pixel cost (undecodable image data as its base64 text), blobs by
//! bytes only. `model_tokens` is what a client that shows both the content and structuredContent
//! pays; `content_tokens` the content alone. The budget engine counts the same way.

use super::duplicate::json_text;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use super::duplicate::{structured_duplicate, TextView};
use super::pagination::is_paginated;
use super::{compact_json, MeasureError};
use crate::ground::text::{char_count, line_count};
use crate::ground::tokens::{image_data_cost, Counts, TokenizerSet};
use crate::measure::facts::{BlockCost, RawCost, RawTotals};

/// The shape a tool result must have (checked without copying anything).
#[derive(Deserialize)]
struct ToolResult {
    #[serde(default)]
    #[allow(dead_code)]
    content: Vec<IgnoredAny>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

/// Bytes, characters and lines of a text (what client limits measure).
pub fn text_stats(text: &str) -> (usize, usize, usize) {
    (text.len(), char_count(text), line_count(text))
}

fn add_text_stats(cost: &mut RawCost, text: &str) {
    let (bytes, chars, lines) = text_stats(text);
    cost.text_bytes += bytes;
    cost.text_chars += chars;
    cost.text_lines += lines;
}

/// Per-tokenizer sums while walking the blocks.
struct Sums {
    content: Counts,
    text: Counts,
}

/// Measure the exact text of a `tools/call` result.
pub fn measure_result(raw: &str, set: &TokenizerSet) -> Result<RawCost, MeasureError> {
    let value: Value =
        serde_json::from_str(raw).map_err(|e| MeasureError::new("tools/call result", e))?;
    measure_parsed_result(raw, &value, set)
}

/// [`measure_result`] of a result already read: `value` is `raw` parsed. Nothing of it is copied
/// (a 60 MB text is held once, by the caller).
pub fn measure_parsed_result(
    raw: &str,
    value: &Value,
    set: &TokenizerSet,
) -> Result<RawCost, MeasureError> {
    let parsed =
        ToolResult::deserialize(value).map_err(|e| MeasureError::new("tools/call result", e))?;
    let wire = set.count(raw);
    let mut sums = Sums {
        content: set.uniform(0),
        text: set.uniform(0),
    };
    let mut cost = RawCost {
        wire_bytes: raw.len(),
        wire_tokens: wire.primary,
        is_error: parsed.is_error == Some(true),
        ..RawCost::default()
    };
    let mut texts: Vec<&str> = Vec::new();
    for v in value["content"].as_array().into_iter().flatten() {
        let b = measure_block(v, set, &mut sums, &mut cost);
        if let Some(t) = v
            .get("text")
            .and_then(Value::as_str)
            .filter(|_| b.kind == "text")
        {
            texts.push(t);
        }
        cost.blocks.push(b);
    }
    let jsons: Vec<Option<Value>> = texts.iter().map(|t| json_text(t)).collect();
    let views: Vec<TextView> = texts
        .iter()
        .zip(&jsons)
        .map(|(text, json)| TextView {
            text,
            json: json.as_ref(),
        })
        .collect();
    let structured_value = value.get("structuredContent").filter(|s| !s.is_null());
    // counted as a client sends it on (compact JSON, keys in received order), as the engine does
    let structured = match structured_value {
        Some(value) => {
            cost.structured_duplicate = structured_duplicate(value, &views);
            set.count(&compact_json(value))
        }
        None => set.uniform(0),
    };
    cost.continuation = is_paginated(&views, structured_value);
    cost.content_tokens = sums.content.primary;
    cost.model_tokens = sums.content.primary + structured.primary;
    cost.text_tokens = sums.text.primary;
    cost.structured_tokens = structured.primary;
    cost.by_tokenizer = wire
        .others
        .keys()
        .map(|name| {
            let totals = RawTotals {
                wire_tokens: wire.others[name],
                model_tokens: sums.content.others[name] + structured.others[name],
                content_tokens: sums.content.others[name],
                text_tokens: sums.text.others[name],
                structured_tokens: structured.others[name],
            };
            (name.clone(), totals)
        })
        .collect();
    Ok(cost)
}

/// What an `isError` result says: its text blocks (and embedded resource text) joined by line
/// breaks, whole; `(no error text)` when it has none.
pub fn tool_error_text(raw: &str) -> String {
    let value: Value = serde_json::from_str(raw).unwrap_or_default();
    let texts: Vec<&str> = value["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str().or(b["resource"]["text"].as_str()))
        .collect();
    let text = texts.join("\n");
    if text.trim().is_empty() {
        "(no error text)".into()
    } else {
        text
    }
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
            sums.content.add(&c);
            sums.text.add(&c);
        }
        "image" => {
            let data = v.get("data").and_then(Value::as_str).unwrap_or("");
            b.bytes = data.len();
            let paid = match image_data_cost(data) {
                Some((info, tokens)) => {
                    (b.width_px, b.height_px) = (Some(info.width_px), Some(info.height_px));
                    cost.base64_as_text_tokens += set.primary().count(data);
                    set.uniform(tokens)
                }
                // no model sees it as an image: a client pays for the base64 as text
                None => {
                    let as_text = set.count(data);
                    cost.base64_as_text_tokens += as_text.primary;
                    as_text
                }
            };
            b.tokens = paid.primary;
            cost.image_tokens += paid.primary;
            sums.content.add(&paid);
        }
        "audio" => {
            let data = v.get("data").and_then(Value::as_str).unwrap_or("");
            b.bytes = data.len();
            cost.base64_as_text_tokens += set.primary().count(data);
        }
        "resource" => {
            let r = v.get("resource").unwrap_or(&Value::Null);
            b.mime_type = r.get("mimeType").and_then(Value::as_str).map(String::from);
            if let Some(text) = r.get("text").and_then(Value::as_str) {
                add_text_stats(cost, text);
                let c = set.count(text);
                (b.bytes, b.tokens) = (text.len(), c.primary);
                sums.content.add(&c);
            } else if let Some(blob) = r.get("blob").and_then(Value::as_str) {
                b.bytes = blob.len();
            }
        }
        _ => {
            // resource_link and unknown blocks reach the model as their JSON
            let json = compact_json(v);
            let c = set.count(&json);
            (b.bytes, b.tokens) = (json.len(), c.primary);
            sums.content.add(&c);
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::tokens::Tokenizer;
    use base64::Engine as _;

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
        assert_eq!(c.content_tokens, c.text_tokens + 1334);
        assert!(c.structured_duplicate);
        assert_eq!(c.structured_tokens, Tokenizer::Cl100k.count(r#"{"a":1}"#));
        assert_eq!(c.model_tokens, c.content_tokens + c.structured_tokens);
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

    #[test]
    fn structured_content_is_counted_compact_and_in_the_model_view() {
        let set = TokenizerSet::default();
        let raw = r#"{"content":[{"type":"text","text":"12 C"}],"structuredContent": { "temp" : 12,  "unit": "C" }}"#;
        let c = measure_result(raw, &set).unwrap();
        let structured = Tokenizer::Cl100k.count(r#"{"temp":12,"unit":"C"}"#);
        assert_eq!(c.structured_tokens, structured);
        assert_eq!(c.content_tokens, Tokenizer::Cl100k.count("12 C"));
        assert_eq!(c.model_tokens, c.content_tokens + structured);
    }

    #[test]
    fn undecodable_image_data_costs_its_base64_as_text() {
        let set = TokenizerSet::default();
        let garbage = "Zm9v!!".repeat(1000);
        let raw = format!(
            r#"{{"content":[{{"type":"image","mimeType":"image/png","data":"{garbage}"}}]}}"#
        );
        let c = measure_result(&raw, &set).unwrap();
        let as_text = Tokenizer::Cl100k.count(&garbage);
        assert!(as_text > 1000);
        assert_eq!(
            (c.image_tokens, c.model_tokens, c.blocks[0].tokens),
            (as_text, as_text, as_text)
        );
        assert_eq!(c.blocks[0].width_px, None);
    }
}
