use serde_json::{json, Value};

use super::*;
use crate::ground::tokens::Tokenizer;

const IDS: [&str; 13] = [
    "naive",
    "claude-code",
    "claude-desktop",
    "codex",
    "gemini-cli",
    "opencode",
    "kilo",
    "qwen-code",
    "cline",
    "continue-cli",
    "copilot-cli",
    "vscode",
    "cursor",
];

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}]})
}

fn seen(id: &str, result: &Value) -> ClientSeen {
    client_view(profile(id).unwrap(), result, Tokenizer::Cl100k)
}

#[test]
fn every_client_has_a_profile_with_a_source_and_a_date_for_every_fact() {
    let ids: Vec<&str> = profiles().iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, IDS);
    let date = |d: &str| {
        let parts: Vec<&str> = d.split('-').collect();
        (2..=3).contains(&parts.len())
            && parts[0].len() == 4
            && parts.iter().all(|p| p.parse::<u32>().is_ok())
    };
    for p in profiles() {
        let mut facts = vec![&p.sends.sourced, &p.images.sourced, &p.schema.sourced];
        facts.extend(p.rules.iter().map(|r| &r.sourced));
        for f in facts {
            assert!(date(&f.as_of) && date(&f.checked), "{}: {f:?}", p.id);
            // a source is public and never our own design notes; unconfirmed says why
            assert!(!f.source.contains("DESIGN.md"), "{}: {f:?}", p.id);
            // measured by the lab: the profile says which build was run
            let measured = f.source.starts_with("measured: mcp-budget lab") && p.measured.is_some();
            assert!(
                f.source.contains("https://") || measured || !f.confirmed,
                "{}: a confirmed fact names its address or the lab run: {f:?}",
                p.id
            );
        }
        for r in &p.rules {
            assert!(["result", "tools"].contains(&r.applies.as_str()), "{r:?}");
            assert!(
                ["tokens", "chars", "bytes", "lines", "tools"].contains(&r.unit.as_str()),
                "{r:?}"
            );
            assert!(
                ["warning", "cap", "truncate", "spill", "refuse", "drop"]
                    .contains(&r.effect.as_str()),
                "{r:?}"
            );
            if r.effect == "truncate" {
                assert!(r.head_share.is_some_and(|s| s > 0.0 && s < 1.0), "{r:?}");
            }
        }
    }
    assert!(select("codex,bogus")
        .unwrap_err()
        .to_string()
        .contains("known: naive"));
    let picked: Vec<&str> = select("vscode, codex,codex")
        .unwrap()
        .iter()
        .map(|p| p.id.as_str())
        .collect();
    assert_eq!(picked, ["codex", "vscode"]);
    assert_eq!(select("all").unwrap().len(), IDS.len());
}

/// Each result rule acts exactly past its threshold, in its unit, and the engine is given the
/// same number (`proxy --client`).
#[test]
fn each_rule_acts_past_its_threshold_and_the_engine_gets_the_same_number() {
    // a client that sends the result's JSON counts its wrapper and escapes too (Cline, below)
    for p in profiles().iter().filter(|p| !p.sends.mode.as_json()) {
        let limits = engine_limits(p);
        // a rule on one kind of result is tested on its own (gemini's JSON arrays, below)
        for r in p
            .rules
            .iter()
            .filter(|r| r.applies == "result" && r.when.is_none())
        {
            let n = r.threshold as usize;
            let (at, over) = match r.unit.as_str() {
                // "a" repeated: one byte, one char each; "x\n": one line each
                "bytes" | "chars" => ("a".repeat(n), "a".repeat(n + 1)),
                "lines" => ("x\n".repeat(n), "x\n".repeat(n + 1)),
                // " a" is one cl100k token
                "tokens" => (" a".repeat(n), " a".repeat(n + 1)),
                _ => unreachable!(),
            };
            let applied = match r.unit.as_str() {
                "bytes" => limits.bytes,
                "chars" => limits.chars,
                "lines" => limits.lines,
                _ => limits.tokens,
            };
            // a rule of error results alone: tested on errors, and no limit of the engine's
            let text = |t: &str| match r.only_on_error {
                true => json!({"content": [{"type": "text", "text": t}], "isError": true}),
                false => text(t),
            };
            if r.only_on_error {
                assert_ne!(
                    applied,
                    Some(n),
                    "{}: an error's rule is not the engine's",
                    p.id
                );
            } else if r.effect == "warning" {
                assert_ne!(applied, Some(n), "{}: a warning cuts nothing", p.id);
                continue;
            }
            assert!(
                r.only_on_error || applied.is_some_and(|a| a <= n),
                "{}: {r:?} {limits:?}",
                p.id
            );
            // the rule alone (another may act first at this size in the whole profile)
            let alone = ClientProfile {
                rules: vec![r.clone()],
                ..p.clone()
            };
            let below = client_view(&alone, &text(&at), Tokenizer::Cl100k);
            let above = client_view(&alone, &text(&over), Tokenizer::Cl100k);
            let mine = |s: &ClientSeen| {
                s.rules
                    .iter()
                    .any(|d| d.starts_with(&format!("{} {}", thousands(n), r.unit)))
            };
            assert!(!mine(&below), "{} {}: acted at the threshold", p.id, r.unit);
            assert!(mine(&above), "{} {}: did not act past it", p.id, r.unit);
            assert_ne!(above.outcome, Outcome::Full, "{} {}", p.id, r.unit);
        }
    }
}

/// The base64 of a PNG header saying `w` x `h` (all an image's cost is read from).
fn png_header(w: u32, h: u32) -> String {
    use base64::Engine as _;
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(&w.to_be_bytes());
    png.extend_from_slice(&h.to_be_bytes());
    base64::engine::general_purpose::STANDARD.encode(&png)
}

fn thousands(n: usize) -> String {
    crate::ground::units::thousands(n)
}

#[test]
fn codex_sends_structured_content_alone_and_keeps_6000_bytes_of_each_end() {
    let wall = "Wall time: 0.0100 seconds\nOutput:\n";
    let r = json!({"content": [{"type": "text", "text": "human words"}], "structuredContent": {"a": 1}});
    let s = seen("codex", &r);
    assert_eq!(s.sent, ["structuredContent"]);
    assert_eq!(s.bytes_to_model, wall.len() + r#"{"a":1}"#.len());
    // 30,000 bytes on one line: 6,000 from each end and the marker, after the wall-time line
    let body: String = (0..30_000u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let s = seen("codex", &text(&body));
    assert_eq!(s.outcome, Outcome::Truncated);
    let expect = format!(
        "{wall}{}…7 tokens truncated…{}",
        &body[..6000],
        &body[24_000..]
    );
    assert_eq!(s.bytes_to_model, expect.len());
    assert_eq!(s.tokens_to_model, Tokenizer::Cl100k.count(&expect));
    assert!((s.kept_fraction - 0.4).abs() < 1e-9);
    // 1,000 short lines are under 12,000 bytes: whole (no line limit, as measured)
    let lines: String = (0..1000).map(|i| format!("{i}\n")).collect();
    assert_eq!(seen("codex", &text(&lines)).outcome, Outcome::Full);
}

#[test]
fn gemini_turns_a_json_array_text_into_an_error_and_the_engine_ignores_it() {
    let array = text(r#"[{"id": 1}, {"id": 2}]"#);
    let s = seen("gemini-cli", &array);
    assert_eq!(s.outcome, Outcome::Refused);
    assert_eq!(s.sent, ["content"]);
    // an object, or an array inside more text, is delivered
    assert_eq!(
        seen("gemini-cli", &text(r#"{"items": [1, 2]}"#)).outcome,
        Outcome::Full
    );
    assert_eq!(
        seen("gemini-cli", &text("[1, 2] and more")).outcome,
        Outcome::Full
    );
    // no size limit comes of it for `proxy --client gemini-cli`
    assert_eq!(engine_limits(profile("gemini-cli").unwrap()).bytes, None);
}

#[test]
fn gemini_keeps_20_percent_head_80_percent_tail_of_one_text_and_wraps_it() {
    let body: String = "é".repeat(50_000);
    let s = seen("gemini-cli", &text(&body));
    assert_eq!(s.outcome, Outcome::Truncated);
    let file = profile("gemini-cli").unwrap().file_path.clone().unwrap();
    let message = format!("Output too large. Showing first 8,000 and last 32,000 characters. For full output see: {file}\n");
    let expect = format!(
        "<untrusted_context>\n{}{message}{}\n</untrusted_context>",
        "é".repeat(8000),
        "é".repeat(32_000)
    );
    assert_eq!(s.bytes_to_model, expect.len());
    assert_eq!(s.tokens_to_model, Tokenizer::Cl100k.count(&expect));
    assert!((s.kept_fraction - 0.8).abs() < 1e-9);
    // two text blocks: the rule is for one-text results only
    let two = json!({"content": [{"type": "text", "text": body}, {"type": "text", "text": "x"}]});
    assert_eq!(seen("gemini-cli", &two).outcome, Outcome::Full);
    // structuredContent is never read
    let r = json!({"content": [{"type": "text", "text": "t"}], "structuredContent": {"big": body}});
    let s = seen("gemini-cli", &r);
    assert_eq!(
        (s.sent.as_slice(), s.outcome),
        (&["content".to_string()][..], Outcome::Full)
    );
}

#[test]
fn which_parts_each_client_sends() {
    let png = png_header(100, 100);
    let r = json!({"content": [
        {"type": "text", "text": "{\"a\":1}"},
        {"type": "image", "mimeType": "image/png", "data": png},
    ], "structuredContent": {"a": 1}});
    let image = crate::ground::tokens::image_data_cost(&png).unwrap().1;
    let json_tokens = Tokenizer::Cl100k.count("{\"a\":1}");
    let get = |id: &str| seen(id, &r);
    // both: text, image and structuredContent
    assert_eq!(
        get("naive").tokens_to_model,
        Tokenizer::Cl100k.count("{\"a\":1}\n{\"a\":1}") + image
    );
    // structuredContent in place of the text, the image kept
    let cc = get("claude-code");
    assert_eq!(cc.sent, ["content", "structuredContent"]);
    // and beside the image, the path it saved it to (measured), with the image's extension
    let path = profile("claude-code").unwrap().file_path.clone().unwrap();
    let note = format!(
        "[Image: source: {}.png]",
        path.strip_suffix(".txt").unwrap()
    );
    assert!(cc.text.ends_with(&format!("\n{note}")), "{}", cc.text);
    let note_tokens = Tokenizer::Cl100k.count(&note);
    assert_eq!(cc.tokens_to_model, json_tokens + image + note_tokens);
    assert_eq!(cc.bytes_to_model, "{\"a\":1}".len() + 1 + note.len());
    // the text is structuredContent's JSON: sent once; the image dropped (measured)
    assert_eq!(get("copilot-cli").sent, ["content"]);
    assert_eq!(get("copilot-cli").tokens_to_model, json_tokens);
    // Codex: structuredContent alone, after its wall-time line
    let wall = Tokenizer::Cl100k.count("Wall time: 0.0100 seconds\nOutput:\n");
    assert_eq!(get("codex").tokens_to_model, json_tokens + wall);
    // a client that pastes images as base64 text pays for the text
    let pasting = ClientProfile {
        images: ImagesRule {
            mode: Images::Base64Text,
            ..profile("naive").unwrap().images.clone()
        },
        ..profile("naive").unwrap().clone()
    };
    let only_image = json!({"content": [{"type": "image", "mimeType": "image/png", "data": png}]});
    let pasted = client_view(&pasting, &only_image, Tokenizer::Cl100k);
    assert_eq!(pasted.tokens_to_model, Tokenizer::Cl100k.count(&png));
    assert_eq!(pasted.bytes_to_model, png.len());
    assert_eq!(seen("naive", &only_image).tokens_to_model, image);
}

#[test]
fn refused_and_spilled_results() {
    let big = "a".repeat(1_048_577);
    let s = seen("claude-desktop", &text(&big));
    assert_eq!((s.outcome, s.kept_fraction), (Outcome::Refused, 0.0));
    assert_eq!(
        s.bytes_to_model,
        "Tool result is too large. Maximum size is 1MB.".len()
    );
    let s = seen("vscode", &text(&"b".repeat(9000)));
    assert_eq!(s.outcome, Outcome::SpilledToFile);
    assert_eq!(s.kept_fraction, 0.0);
    let msg = "Large tool result (8.8KB) written to file. Use the read_file tool to access the content at: <vscode file>";
    assert_eq!(s.bytes_to_model, msg.len());
    let s = seen("claude-code", &text(&"c".repeat(60_000)));
    assert_eq!(s.outcome, Outcome::SpilledToFile);
    assert!((s.kept_fraction - 2000.0 / 60_000.0).abs() < 1e-9);
    // 8 KiB exactly: kept
    assert_eq!(
        seen("vscode", &text(&"b".repeat(8192))).outcome,
        Outcome::Full
    );
}

#[test]
fn a_tools_meta_raises_claude_codes_spill_threshold_up_to_its_ceiling() {
    let cc = profile("claude-code").unwrap();
    let count = |t: &str| Tokenizer::Cl100k.count(t);
    let body = text(&"word ".repeat(12_000));
    let meta = |v: u64| {
        std::collections::BTreeMap::from([("anthropic/maxResultSizeChars".to_string(), v)])
    };
    // 60,000 characters: over the default 50,000, under a tool's own 200,000
    assert_eq!(seen("claude-code", &body).outcome, Outcome::SpilledToFile);
    let raised = client_view_counted(cc, &body, &meta(200_000), &count);
    assert_eq!((raised.outcome, raised.kept_fraction), (Outcome::Full, 1.0));
    // the ceiling is 500,000 characters, whatever the tool asks (spaces: few tokens, so the
    // token cap does not act first)
    let huge = text(&" ".repeat(505_000));
    let capped = client_view_counted(cc, &huge, &meta(2_000_000), &count);
    assert_eq!(capped.outcome, Outcome::SpilledToFile);
    assert_eq!(capped.rules, ["500,000 chars (spill)"]);
    // a lower number never lowers the threshold
    let lower = client_view_counted(cc, &text(&"word ".repeat(9_000)), &meta(1_000), &count);
    assert_eq!(lower.outcome, Outcome::Full);
}

#[test]
fn over_the_token_cap_a_result_is_refused_with_its_images_counted() {
    // an image of some 10,000 tokens (data that is no image costs its base64 as text) and a
    // text of 20,000: over Claude Code's 25,000 together, so the model gets the error alone
    let data = "QUJD".repeat(8_000);
    let image_tokens = Tokenizer::Cl100k.count(&data);
    assert!((5_000..20_000).contains(&image_tokens), "{image_tokens}");
    let r = json!({"content": [
        {"type": "text", "text": " a".repeat(20_000)},
        {"type": "image", "mimeType": "image/png", "data": data},
    ]});
    let s = seen("claude-code", &r);
    assert_eq!(s.outcome, Outcome::Refused);
    assert!(s.tokens_to_model < 1_000, "{}", s.tokens_to_model);
    assert!(
        s.rules[0].starts_with("25,000 tokens (refuse"),
        "{:?}",
        s.rules
    );
    // the text alone is under the cap: its 40,000 characters are under the spill too
    let alone = json!({"content": [{"type": "text", "text": " a".repeat(20_000)}]});
    assert_eq!(seen("claude-code", &alone).outcome, Outcome::Full);
    // images over the cap by themselves are not sent: refused
    let big = json!({"content": [{"type": "image", "mimeType": "image/png", "data": "QUJD".repeat(40_000)}]});
    assert_eq!(seen("claude-code", &big).outcome, Outcome::Refused);
}

#[test]
fn copilot_drops_structured_content_only_beside_its_literal_serialization() {
    let data = json!({"city": "Lisbon", "hourly": [{"t": 1}, {"t": 2}]});
    let compact = serde_json::to_string(&data).unwrap();
    let pretty = serde_json::to_string_pretty(&data).unwrap();
    let with = |text: &str| json!({"content": [{"type": "text", "text": text}], "structuredContent": data});
    assert_eq!(seen("copilot-cli", &with(&compact)).sent, ["content"]);
    // measured in 1.0.102: a pretty-printed copy is no literal one, and both go to the model
    let both = seen("copilot-cli", &with(&pretty));
    assert_eq!(both.sent, ["content", "structuredContent"]);
    let t = Tokenizer::Cl100k;
    assert_eq!(both.tokens_to_model, t.count(&pretty) + t.count(&compact));
}

#[test]
fn cline_sends_the_results_json_and_cuts_it_in_the_middle() {
    let body = "alpha \"beta\"\n".repeat(1_000);
    let result =
        json!({"content": [{"type": "text", "text": body}], "structuredContent": {"n": 1}});
    let json = serde_json::to_string(&result).unwrap();
    let s = seen("cline", &result);
    assert_eq!(s.sent, ["content", "structuredContent"]);
    assert_eq!(s.outcome, Outcome::Truncated);
    // 4,000 characters of the JSON from each end (ASCII), the marker with the count between
    let cut = json.len() - 8_000;
    let shown = format!(
        "{}\n\n...[truncated {} chars]...\n\n{}",
        &json[..4_000],
        crate::ground::units::thousands(cut),
        &json[json.len() - 4_000..]
    );
    assert_eq!(s.tokens_to_model, Tokenizer::Cl100k.count(&shown));
    // the engine leaves room for the wrapper and the escapes: a text at its limit, in lines
    // with quotes, is still whole in Cline
    let limit = engine_limits(profile("cline").unwrap()).chars.unwrap();
    assert!(limit < 8_000, "{limit}");
    let line = "say \"hi\"\n";
    let fits = line.repeat(limit / line.chars().count());
    assert_eq!(seen("cline", &text(&fits)).outcome, Outcome::Full);
    // within 8,000 characters of JSON: the JSON whole
    let small = json!({"content": [{"type": "text", "text": "hi"}]});
    let whole = seen("cline", &small);
    assert_eq!(whole.outcome, Outcome::Full);
    assert_eq!(
        whole.tokens_to_model,
        Tokenizer::Cl100k.count(r#"{"content":[{"type":"text","text":"hi"}]}"#)
    );
}

/// `breaks_limit` says what `client_view`'s outcome says, for every profile, on results that
/// sit at and around their limits (lines, one long line, a JSON array, several blocks, an
/// image, structuredContent).
#[test]
fn breaks_limit_agrees_with_the_client_view_everywhere() {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    let mut results = Vec::new();
    for n in [10, 2_000, 9_000, 12_500, 30_000, 60_000, 120_000] {
        let lines: String = (0..n / 20).map(|i| format!("row {i:>6} ok ok\n")).collect();
        results.push(text(&lines));
        results.push(text(&"x".repeat(n)));
        let array: Vec<Value> = (0..n / 12).map(|i| json!({"i": i})).collect();
        results.push(text(&serde_json::to_string(&array).unwrap()));
        results.push(json!({"content": [
            {"type": "text", "text": "a".repeat(n / 2)},
            {"type": "text", "text": "b ".repeat(n / 4)}
        ], "structuredContent": {"n": n}}));
    }
    results.push(json!({"content": [{"type": "image", "data": png, "mimeType": "image/png"}]}));
    let mut disagreements = Vec::new();
    for p in profiles() {
        for r in &results {
            let full = client_view(p, r, Tokenizer::Cl100k).outcome == Outcome::Full;
            if breaks_limit(p, r, Tokenizer::Cl100k) == full {
                disagreements.push(format!(
                    "{}: {}",
                    p.id,
                    &r.to_string()[..80.min(r.to_string().len())]
                ));
            }
        }
    }
    assert!(disagreements.is_empty(), "{disagreements:#?}");
    // and the results do reach every kind of outcome somewhere
    let broken = profiles()
        .iter()
        .flat_map(|p| {
            results
                .iter()
                .map(move |r| breaks_limit(p, r, Tokenizer::Cl100k))
        })
        .filter(|b| *b)
        .count();
    assert!(
        broken > 10 && broken < profiles().len() * results.len(),
        "{broken}"
    );
}

/// Continue CLI (measured 1.5.47): the content array's JSON, without the structuredContent,
/// and nothing at all of a result over the model's context.
#[test]
fn continue_sends_the_content_arrays_json_and_nothing_past_the_models_context() {
    let counter = crate::ground::tokens::Encoding::cl100k();
    let small = json!({
        "content": [{"type": "text", "text": "line one\n\"quoted\""}],
        "structuredContent": {"a": 1},
    });
    let s = seen("continue-cli", &small);
    let sent = r#"[{"type":"text","text":"line one\n\"quoted\""}]"#;
    assert_eq!(s.outcome, Outcome::Full);
    assert_eq!(s.sent, ["content"]);
    assert_eq!(s.tokens_to_model, counter.count(sent));
    assert_eq!(s.bytes_to_model, sent.len());
    // 60,000 tokens reach it whole; 120,000 not at all
    let under = seen("continue-cli", &text(&" word".repeat(60_000)));
    assert_eq!(under.outcome, Outcome::Full);
    let over = seen("continue-cli", &text(&" word".repeat(120_000)));
    assert_eq!((over.outcome, over.tokens_to_model), (Outcome::Refused, 0));
    // the engine behind it keeps the JSON's wrapper out of the limit, not a fifth as for
    // Cline's whole result (no structuredContent beside the text)
    let limits = engine_limits(profile("continue-cli").unwrap());
    assert_eq!(limits.tokens, Some(104_000 - 128));
}

/// The rules measured on the lab server's shapes (issue 39).
mod measured;
