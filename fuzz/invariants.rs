//! The budget engine's invariants, checked on one input. Shared by the fuzz target
//! (`fuzz_targets/engine.rs`) and the stable-toolchain tests (`tests/it/engine.rs` includes this
//! file by path), so the fuzz target's logic also runs under `cargo test`.
//!
//! For a result `input` at a budget:
//! - `tokens_after <= budget`, and `engine.cost(output) == tokens_after`;
//! - `pass_through` exactly when `engine.cost(input) <= budget`, and then the output is the input;
//! - a reduced result is a valid tool result ending in the note, keeps `isError` and `_meta`, and
//!   every text block of the input that is a JSON object or array is still JSON in the output
//!   (unless the note says it was kept as it is), and every number in a JSON text it sends is a
//!   number token of the input's texts, as the server wrote it (never serde's `1.5` for `1.50`);
//! - the spill file holds the original bytes exactly: a lone text as it is, else the whole result
//!   exactly as it was sent (here: pretty-printed, so a re-serialisation would not pass);
//! - the same input gives the same output twice (same spill store).

use std::path::Path;

use base64::Engine as _;
use mcp_budget::budget::{
    Budgeted, CallInfo, Engine, Policy, Size, SizeLimits, SpillStore, Strategy, DEFAULT_MAX_BYTES,
    MIN_BUDGET,
};
use mcp_budget::ground::tokens::Tokenizer;
use mcp_budget::ground::units::thousands;
use serde_json::{json, Map, Value};

/// Tool names to run under: plain ones, and those with a built-in GitHub projection.
pub const TOOLS: &[&str] = &[
    "fetch",
    "search_issues",
    "list_issues",
    "list_pull_requests",
    "search_code",
    "get_commit",
    "list_commits",
    "browser_snapshot",
];

/// An engine with the built-in policy at `budget`, spilling into `dir`.
pub fn engine(dir: &Path, budget: usize) -> Engine {
    let mut policy = Policy::builtin();
    policy
        .set_budget(budget)
        .expect("the budget is at least MIN_BUDGET");
    Engine::new(
        policy,
        Tokenizer::Cl100k,
        SpillStore::new(dir, DEFAULT_MAX_BYTES),
    )
}

/// The same, with bounds in bytes, characters and lines beside the budget, and the note first
/// or last.
pub fn engine_sized(dir: &Path, budget: usize, size: SizeLimits, note_first: bool) -> Engine {
    let mut policy = Policy::builtin();
    policy
        .set_budget(budget)
        .expect("the budget is at least MIN_BUDGET");
    policy.tighten_to(None, size);
    policy.set_note_first(note_first);
    Engine::new(
        policy,
        Tokenizer::Cl100k,
        SpillStore::new(dir, DEFAULT_MAX_BYTES),
    )
}

/// The text a result shows a model, measured here on its own: text blocks, embedded resource
/// text, links and unknown blocks as compact JSON, structuredContent as compact JSON.
pub fn model_text_size(result: &Value) -> Size {
    let mut size = Size::default();
    for b in result["content"].as_array().into_iter().flatten() {
        size = size
            + match b["type"].as_str().unwrap_or("") {
                "text" => Size::of(b["text"].as_str().unwrap_or("")),
                "resource" => Size::of(b["resource"]["text"].as_str().unwrap_or("")),
                "image" | "audio" => Size::default(),
                _ => Size::of(&compact(b)),
            };
    }
    match result.get("structuredContent") {
        Some(s) if !s.is_null() => size + Size::of(&compact(s)),
        _ => size,
    }
}

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

/// Run `input` through `engine` as `server`/`tool` and check every invariant; the output, or
/// what broke.
pub fn check(engine: &Engine, server: &str, tool: &str, input: &Value) -> Result<Budgeted, String> {
    // the bytes as a server sent them: pretty-printed, unlike anything the engine serialises
    let raw = serde_json::to_string_pretty(input).expect("a Value serialises");
    let call = CallInfo {
        server,
        tool,
        raw: Some(&raw),
        output_schema: false,
    };
    let before = engine.cost(input);
    let out = engine.run(&call, input);
    let budget = out.budget;
    let strategy = out.strategy.name();
    ensure!(
        budget == engine.policy().for_tool(tool).budget,
        "budget {budget} is not the policy's"
    );
    ensure!(
        out.tokens_after <= budget,
        "tokens_after {} > budget {budget} ({strategy}, input cost {before})",
        out.tokens_after
    );
    let after = engine.cost(&out.result);
    ensure!(
        after == out.tokens_after,
        "cost(output) {after} != tokens_after {} ({strategy}, budget {budget})",
        out.tokens_after
    );
    ensure!(!out.stages.is_empty(), "no stages recorded");
    let size = engine.policy().for_tool(tool).size;
    let size_policy_note_first = engine.policy().for_tool(tool).note_first;
    let sized = |v: &Value| size.is_unbounded() || size.fits(model_text_size(v));
    ensure!(
        sized(&out.result),
        "the output's text {:?} is over the bounds {size:?} ({strategy})",
        model_text_size(&out.result)
    );
    let fits = before <= budget && sized(input);
    ensure!(
        (out.strategy == Strategy::PassThrough) == fits,
        "strategy {strategy} but input cost {before} vs budget {budget}"
    );
    if fits {
        ensure!(
            compact(&out.result) == compact(input),
            "pass_through changed the result"
        );
        ensure!(
            out.tokens_after == before,
            "pass_through tokens_after {} != input cost {before}",
            out.tokens_after
        );
        ensure!(
            out.spill.is_none() && out.note.is_none(),
            "pass_through with a spill or note"
        );
    } else {
        check_reduced(input, &raw, &out, size_policy_note_first)?;
    }
    let again = engine.run(&call, input);
    ensure!(
        compact(&again.result) == compact(&out.result),
        "a second run gave a different result ({strategy} then {})",
        again.strategy.name()
    );
    ensure!(
        (
            again.tokens_after,
            again.strategy,
            &again.spill,
            &again.note
        ) == (out.tokens_after, out.strategy, &out.spill, &out.note),
        "a second run gave different tokens, strategy, spill or note"
    );
    Ok(out)
}

fn check_reduced(input: &Value, raw: &str, out: &Budgeted, note_first: bool) -> Result<(), String> {
    let strategy = out.strategy.name();
    let Some(note) = &out.note else {
        return Err(format!("{strategy} without a note"));
    };
    let Some(content) = out.result.get("content").and_then(Value::as_array) else {
        return Err("the output has no content array".into());
    };
    let note_block = json!({"type": "text", "text": note});
    ensure!(
        content.last() == Some(&note_block) || (note_first && content.first() == Some(&note_block)),
        "the note is not the last block (nor the first, with note_first)"
    );
    for block in content {
        ensure!(
            block.get("type").is_some_and(Value::is_string) || !block.is_object(),
            "an output block without a type: {}",
            cut(&compact(block), 200)
        );
    }
    let input_blocks = input
        .get("content")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    ensure!(
        content.len() <= input_blocks + 1,
        "{} output blocks for {input_blocks} input blocks",
        content.len()
    );
    // top-level fields other than the content are kept
    if let Some(fields) = input.as_object() {
        for (k, v) in fields {
            if k != "content" && k != "structuredContent" {
                ensure!(out.result.get(k) == Some(v), "`{k}` was not kept");
            }
        }
    }
    if out.result.get("structuredContent").is_some() {
        ensure!(
            input.get("structuredContent").is_some_and(|s| !s.is_null()),
            "structuredContent appeared from nowhere"
        );
    }
    // JSON stays JSON: JSON blocks are never dropped, only shrunk or projected (unless the note
    // alone is sent, or there are more of them than an array keeps items: then they are cut as
    // an array's items are, from the end, and the note says how many are left)
    let json_in = json_blocks(input);
    let body: Vec<&Value> = content.iter().filter(|b| **b != note_block).collect();
    let json_out = body.iter().filter(|b| json_text(b).is_some()).count();
    let note_text = note_block["text"].as_str().unwrap_or("");
    let as_items = format!(
        "content: the first {} of {} JSON blocks kept",
        thousands(json_out),
        thousands(json_in)
    );
    ensure!(
        json_out >= json_in
            || body.is_empty()
            || (json_out >= 1 && note_text.contains(&as_items))
            || note_text.contains("kept as it is"),
        "{json_in} JSON text blocks in, {json_out} out ({strategy})"
    );
    // numbers are the server's: each number of a JSON text sent is a token of an input text
    let sent_in: std::collections::HashSet<&str> = texts(input).flat_map(number_tokens).collect();
    for b in body.iter().filter(|b| json_text(b).is_some()) {
        let text = b["text"].as_str().unwrap_or("");
        if let Some(n) = number_tokens(text).find(|n| !sent_in.contains(n)) {
            return Err(format!(
                "the number `{n}` was written, not sent ({strategy})"
            ));
        }
    }
    // a preview never ends inside a number or a string escape (issue 37, 3.1)
    for b in &body {
        let shown = b["text"].as_str().unwrap_or("");
        if shown.is_empty() || json_text(b).is_some() {
            continue;
        }
        for whole in texts(input).filter(|t| t.len() > shown.len() && t.starts_with(shown)) {
            let (head, next) = (shown.as_bytes(), whole.as_bytes()[shown.len()]);
            let digits = head.iter().rev().take_while(|c| c.is_ascii_digit()).count();
            let word = head
                .len()
                .checked_sub(digits + 1)
                .is_some_and(|i| head[i].is_ascii_alphanumeric() || head[i] == b'.');
            let in_number = digits > 0
                && !word
                && (next.is_ascii_digit() || matches!(next, b'.' | b'e' | b'E'));
            let tail: Vec<char> = shown.chars().rev().take(40).collect();
            ensure!(
                !in_number,
                "the preview ends inside a number: …{}",
                tail.iter().rev().collect::<String>()
            );
            let slashes = head.iter().rev().take_while(|&&c| c == b'\\').count();
            ensure!(slashes % 2 == 0, "the preview ends inside an escape");
        }
    }
    match &out.spill {
        Some(h) => {
            let bytes = std::fs::read(&h.path)
                .map_err(|e| format!("spill {} unreadable: {e}", h.path.display()))?;
            let want = expected_spill(input, Some(raw));
            ensure!(
                bytes == want,
                "the spill file ({} bytes) is not the original ({} bytes): got {:?}, want {:?}",
                bytes.len(),
                want.len(),
                cut(&String::from_utf8_lossy(&bytes), 300),
                cut(&String::from_utf8_lossy(&want), 300)
            );
            ensure!(h.bytes == bytes.len(), "spill handle bytes wrong");
            ensure!(note.contains(&h.uri()), "the note does not name the spill");
        }
        None => return Err(format!("{strategy} without a spill: {note}")),
    }
    Ok(())
}

/// What the spill file must hold: the text of a result with a single text (or text resource)
/// block and at most a structuredContent that repeats it losslessly (a JSON text's own value, or
/// an object whose every value is the text); else the whole result: its `raw` bytes as sent
/// when known, else its compact JSON (a null structuredContent is not part of the model's view
/// and is left out).
pub fn expected_spill(input: &Value, raw: Option<&str>) -> Vec<u8> {
    if let Some(text) = lone_text(input) {
        return text.as_bytes().to_vec();
    }
    if let Some(raw) = raw {
        return raw.as_bytes().to_vec();
    }
    let mut v = input.clone();
    if let Some(m) = v.as_object_mut() {
        if m.get("structuredContent").is_some_and(Value::is_null) {
            m.remove("structuredContent");
        }
    }
    compact(&v).into_bytes()
}

fn lone_text(input: &Value) -> Option<&str> {
    let [block] = input.get("content")?.as_array()?.as_slice() else {
        return None;
    };
    let text = match block.get("type")?.as_str()? {
        "text" => block.get("text").and_then(Value::as_str).unwrap_or(""),
        "resource" => block.get("resource")?.get("text")?.as_str()?,
        _ => return None,
    };
    match input.get("structuredContent") {
        None | Some(Value::Null) => Some(text),
        Some(s) if block["type"] == "text" => {
            // the same JSON as a JSON text, or `{"content": text}` (how some SDKs wrap a
            // plain return value): every value of the object is the text
            let same_json = json_text(block).is_some_and(|v| v == *s);
            let wrapped = s
                .as_object()
                .is_some_and(|m| !m.is_empty() && m.values().all(|v| v.as_str() == Some(text)));
            (same_json || wrapped).then_some(text)
        }
        Some(_) => None,
    }
}

/// The texts of a result's text blocks.
fn texts(result: &Value) -> impl Iterator<Item = &str> {
    let content = result.get("content").and_then(Value::as_array);
    content
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
}

/// The number tokens of a JSON text (strings skipped).
fn number_tokens(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let (mut i, mut in_string) = (0, false);
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let b = bytes[i];
            i += 1;
            if in_string {
                match b {
                    b'\\' => i += 1,
                    b'"' => in_string = false,
                    _ => {}
                }
            } else if b == b'"' {
                in_string = true;
            } else if b == b'-' || b.is_ascii_digit() {
                let start = i - 1;
                while i < bytes.len()
                    && matches!(bytes[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                return Some(&text[start..i]);
            }
        }
        None
    })
}

/// Text blocks of a result that are a JSON object or array.
pub fn json_blocks(result: &Value) -> usize {
    result
        .get("content")
        .and_then(Value::as_array)
        .map_or(0, |c| c.iter().filter(|b| json_text(b).is_some()).count())
}

fn json_text(block: &Value) -> Option<Value> {
    if block.get("type")?.as_str()? != "text" {
        return None;
    }
    let text = block.get("text")?.as_str()?;
    let v: Value = serde_json::from_str(text).ok()?;
    (v.is_object() || v.is_array()).then_some(v)
}

pub fn compact(v: &Value) -> String {
    serde_json::to_string(v).expect("a Value serialises")
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// A PNG header (enough for the engine's pixel count) of `w` x `h`, then `junk`, as base64.
pub fn png_base64(w: u32, h: u32, junk: &[u8]) -> String {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&[8, 6, 0, 0, 0]);
    b.extend_from_slice(junk);
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// A budget, a tool and a result made from fuzz bytes: the first byte picks the budget and the
/// tool, the second how the rest becomes a result (one text block, a JSON result as it parses,
/// a JSON text with a structuredContent copy, blocks of every kind, any JSON value at all), and
/// how many times the text is repeated.
pub fn input_from_bytes(data: &[u8]) -> (usize, &'static str, Value) {
    let h0 = data.first().copied().unwrap_or(0) as usize;
    let h1 = data.get(1).copied().unwrap_or(0) as usize;
    let rest = data.get(2..).unwrap_or(&[]);
    let budget = MIN_BUDGET + (h0 % 16) * 120;
    let tool = TOOLS[(h0 / 16) % TOOLS.len()];
    let repeat = 1 << ((h1 / 8) % 5);
    let text = String::from_utf8_lossy(rest).repeat(repeat);
    let parsed = serde_json::from_slice::<Value>(rest).ok();
    let result = match h1 % 8 {
        0 | 1 => json!({"content": [{"type": "text", "text": text}]}),
        2 => match parsed {
            Some(v @ Value::Object(_)) => v,
            Some(v) => {
                json!({"content": [{"type": "text", "text": serde_json::to_string_pretty(&v).unwrap()}]})
            }
            None => json!({"content": [{"type": "text", "text": text}], "isError": true}),
        },
        3 => match parsed {
            Some(v) if v.is_object() => json!({
                "content": [{"type": "text", "text": serde_json::to_string_pretty(&v).unwrap()}],
                "structuredContent": v,
            }),
            _ => {
                json!({"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}})
            }
        },
        4 | 5 => json!({"content": mixed_blocks(rest, repeat)}),
        6 => parsed.unwrap_or(Value::String(text)),
        _ => {
            let blocks = mixed_blocks(rest, repeat);
            let structured = blocks.iter().find_map(json_text);
            let mut m = Map::new();
            m.insert("content".into(), Value::Array(blocks));
            if let Some(s) = structured {
                m.insert("structuredContent".into(), s);
            }
            m.insert("isError".into(), Value::Bool(h1 % 2 == 1));
            Value::Object(m)
        }
    };
    (budget, tool, result)
}

/// Blocks of every kind from bytes split at 0xFF: the first byte of each piece picks the kind.
fn mixed_blocks(bytes: &[u8], repeat: usize) -> Vec<Value> {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    bytes
        .split(|b| *b == 0xff)
        .take(64)
        .map(|piece| {
            let kind = piece.first().copied().unwrap_or(0);
            let body = piece.get(1..).unwrap_or(&[]);
            let text = String::from_utf8_lossy(body).repeat(repeat);
            let n = |i: usize| body.get(i).copied().unwrap_or(1) as u32;
            match kind % 9 {
                0 | 1 => json!({"type": "text", "text": text}),
                2 => {
                    let v = serde_json::from_slice::<Value>(body)
                        .unwrap_or_else(|_| json!({"text": text, "items": text.split(' ').collect::<Vec<_>>()}));
                    json!({"type": "text", "text": compact(&v)})
                }
                3 => json!({"type": "image", "mimeType": "image/png",
                    "data": png_base64(n(0) * n(1) * 8, n(2) * n(3) * 8, body)}),
                4 => json!({"type": "image", "mimeType": "image/jpeg", "data": text}),
                5 => json!({"type": "resource", "resource": {"uri": "file:///x.md", "mimeType": "text/markdown", "text": text}}),
                6 => json!({"type": "resource", "resource": {"uri": "file:///x.bin", "mimeType": "application/octet-stream", "blob": b64(body)}}),
                7 => json!({"type": "resource_link", "uri": format!("https://example.com/{}?utm_source=x", text.escape_default()), "name": "link"}),
                _ => json!({"type": "audio", "mimeType": "audio/wav", "data": b64(body)}),
            }
        })
        .collect()
}

/// The fuzz target's body: build a result from `data`, run it at a small budget spilling into
/// `dir`, and panic with the input if an invariant breaks.
pub fn fuzz_one(data: &[u8], dir: &Path) {
    let (budget, tool, input) = input_from_bytes(data);
    let engine = engine(dir, budget);
    if let Err(e) = check(&engine, "fuzz", tool, &input) {
        panic!(
            "invariant broken at budget {budget}, tool {tool}: {e}\ninput: {}",
            cut(&compact(&input), 2000)
        );
    }
}
