//! Rules measured on the lab server's shapes with the real clients (issue 39): images dropped,
//! line caps, errors, embedded resources, bytes and compact JSON.

use serde_json::{json, Value};

use super::*;

#[test]
fn opencode_cuts_at_2000_lines_never_cuts_an_error_and_drops_images() {
    // 2,500 short lines (32,500 bytes): under 50 KiB, over 2,000 lines
    let short: String = (1..=2_500).map(|i| format!("{i:06} alpha\n")).collect();
    let cut = seen("opencode", &text(&short));
    assert_eq!(cut.outcome, Outcome::Truncated);
    assert!(cut.text.starts_with("000001 alpha\n"));
    assert!(
        cut.text
            .contains("002000 alpha\n\n...500 lines truncated..."),
        "{}",
        &cut.text[25_900..26_100]
    );
    assert!(!cut.text.contains("002001 alpha"));
    // the same text as an error reaches the model whole, as does a 60 KiB one
    for body in [short.clone(), "x".repeat(61_440)] {
        let error = json!({"content": [{"type": "text", "text": body}], "isError": true});
        assert_eq!(seen("opencode", &error).outcome, Outcome::Full);
        assert_eq!(seen("opencode", &text(&body)).outcome, Outcome::Truncated);
    }
    // an image: nothing of it; beside a text, the text alone
    let png = json!({"content": [{"type": "image", "mimeType": "image/png", "data": png_header(100, 100)}]});
    let alone = seen("opencode", &png);
    assert_eq!(
        (alone.outcome, alone.tokens_to_model),
        (Outcome::Refused, 0)
    );
    assert_eq!(alone.breaks, Some(Break::ImagesDropped { images: 1 }));
    let mut both = png.clone();
    both["content"]
        .as_array_mut()
        .unwrap()
        .insert(0, json!({"type": "text", "text": "A chart of the week"}));
    let both = seen("opencode", &both);
    assert_eq!(both.outcome, Outcome::Full);
    assert_eq!(
        both.tokens_to_model,
        Tokenizer::Cl100k.count("A chart of the week")
    );
    assert!(seen("claude-code", &png).tokens_to_model > 0);
}

#[test]
fn codex_sends_an_embedded_resource_as_its_json_and_pays_for_a_blob() {
    let blob = "QUJD".repeat(500);
    let r = json!({"content": [{"type": "resource", "resource": {"uri": "lab://d.bin", "mimeType": "application/octet-stream", "blob": blob}}]});
    let wall = "Wall time: 0.0100 seconds\nOutput:\n";
    let codex = seen("codex", &r);
    let json = r["content"][0].to_string();
    assert_eq!(codex.bytes_to_model, wall.len() + json.len());
    assert!(codex.tokens_to_model > 200, "{}", codex.tokens_to_model);
    // a client without the rule sends nothing of a blob
    assert_eq!(seen("naive", &r).tokens_to_model, 0);
    // a text resource: its JSON (escaped) for Codex, its text for the others
    let text = "line one\nline two\n";
    let r = json!({"content": [{"type": "resource", "resource": {"uri": "lab://t.txt", "mimeType": "text/plain", "text": text}}]});
    assert!(seen("codex", &r)
        .text
        .contains(r#""text":"line one\nline two\n""#));
    assert_eq!(seen("naive", &r).bytes_to_model, text.len());
}

#[test]
fn gemini_cuts_an_embedded_resource_as_a_text_and_pays_for_a_blob() {
    let body: String = (0..2_000)
        .map(|i| format!("{i:06} alpha delta gateway journal\n"))
        .collect();
    let r = json!({"content": [{"type": "resource", "resource": {"uri": "lab://t.txt", "mimeType": "text/plain", "text": body}}]});
    let s = seen("gemini-cli", &r);
    assert_eq!(s.outcome, Outcome::Truncated);
    assert!(s
        .text
        .contains("Showing first 8,000 and last 32,000 characters"));
    // a text resource beside a text block is two blocks: not cut (only_single_text)
    let mut two = r.clone();
    two["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "text", "text": "x"}));
    assert_eq!(seen("gemini-cli", &two).outcome, Outcome::Full);
    let blob = "QUJD".repeat(1_000);
    let b = json!({"content": [{"type": "resource", "resource": {"uri": "lab://d.bin", "blob": blob}}]});
    assert!(seen("gemini-cli", &b).text.contains(&blob));
    // opencode sends a note in its place (a type it cannot attach), nothing of the base64
    let noted = seen("opencode", &b);
    assert!(
        noted.text.starts_with(
            "[Binary MCP resource omitted: lab://d.bin (application/octet-stream, 3 KB)"
        ),
        "{}",
        noted.text
    );
    assert!(!noted.text.contains("QUJD"));
}

#[test]
fn copilot_measures_bytes_and_writes_a_json_text_compactly_without_structured_content() {
    // 20,000 CJK characters are 60,000 bytes: over its 20,480 bytes, filed
    let wide: String = "漢".repeat(20_000);
    assert_eq!(
        seen("copilot-cli", &text(&wide)).outcome,
        Outcome::SpilledToFile
    );
    // a pretty JSON array of 30,000 characters is about 17,000 compact: sent whole, compact
    let items: Vec<Value> = (0..300)
        .map(|i| json!({"id": i, "name": format!("item-{i:06}"), "tags": ["alpha", "beta"]}))
        .collect();
    let pretty = serde_json::to_string_pretty(&items).unwrap();
    let compact = serde_json::to_string(&items).unwrap();
    assert!(
        pretty.len() > 20_480 && compact.len() < 20_480,
        "{} {}",
        pretty.len(),
        compact.len()
    );
    let s = seen("copilot-cli", &text(&pretty));
    assert_eq!(s.outcome, Outcome::Full);
    assert_eq!(s.tokens_to_model, Tokenizer::Cl100k.count(&compact));
    // another client sends it as it is, over its own limits
    assert_eq!(seen("naive", &text(&pretty)).bytes_to_model, pretty.len());
}

/// A text of `chars` characters in lines of words beside a structuredContent of its lines (the
/// lab server's `structured` shape, its JSON a little longer than the text).
fn structured(chars: usize) -> Value {
    let line = "000001 harbor kernel network alpha delta gateway journal\n";
    let body: String = line.repeat(chars / line.len() + 1)[..chars].to_string();
    let rows: Vec<&str> = body.lines().collect();
    json!({"content": [{"type": "text", "text": body}], "structuredContent": {"rows": rows}})
}

#[test]
fn qwen_code_cuts_each_text_over_500000_chars_then_budgets_the_result_to_200000() {
    let len = |v: &Value| v.to_string().chars().count();
    // under 28,000 characters with its JSON (the JSON first): whole
    let small = seen("qwen-code", &structured(13_000));
    assert_eq!(small.outcome, Outcome::Full);
    assert!(
        small.text.starts_with("{\"rows\":[\"000001 harbor"),
        "{}",
        &small.text[..40]
    );
    // over 28,000, no text over 500,000: filed with a 2,000-character preview
    let filed = seen("qwen-code", &structured(400_000));
    assert_eq!(filed.outcome, Outcome::SpilledToFile);
    assert!(filed.text.len() < 3_000);
    // its JSON over 500,000 (cut in the tool, not filed again), the text not: 200,000 in all
    let big = structured(490_000);
    assert!(len(&big["structuredContent"]) > 500_000);
    let cut = seen("qwen-code", &big);
    assert_eq!(cut.outcome, Outcome::Truncated);
    assert_eq!(cut.text.chars().count(), 200_000);
    assert!(cut
        .text
        .starts_with("Tool output truncated. Persisted tool-output artifact: "));
    assert!(cut
        .text
        .contains("\n\nTool output was too large and has been truncated."));
    assert!(cut.text.contains("... [CONTENT TRUNCATED] ..."));
    assert!(cut
        .text
        .ends_with(&big["content"][0]["text"].as_str().unwrap()[490_000 - 159_000..]));
    assert!(cut.kept_fraction < 0.25, "{}", cut.kept_fraction);
    assert_eq!(cut.rules[0], "500,000 chars per text (truncate)");
    // both over 500,000: each cut to its header and 1,961 characters, nothing more
    let both = seen("qwen-code", &structured(530_000));
    assert_eq!(both.text.matches("Tool output was too large").count(), 2);
    // measured 3,432 with a file path 21 characters longer than the profile's, twice; its JSON
    // is one line and keeps its head alone
    assert!(
        (both.text.len() as i64 - (3_432 - 2 * 21)).abs() <= 12,
        "{}",
        both.text.len()
    );
    assert!(!both.text.starts_with("Tool output truncated."));
    // a plain text over 500,000: the same cut, one text
    let one = seen("qwen-code", &text(&"x".repeat(600_000)));
    assert_eq!(one.outcome, Outcome::Truncated);
    assert!(one.text.len() < 2_000 + 600, "{}", one.text.len());
    assert!(breaks_limit(
        profile("qwen-code").unwrap(),
        &big,
        Tokenizer::Cl100k
    ));
}

#[test]
fn opencode_and_kilo_send_a_note_in_place_of_a_blob_and_drop_an_attachment() {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let blob = |mime: &str, bytes: usize| {
        json!({"content": [{"type": "resource", "resource": {"uri": "artifact://release.tar.gz",
            "mimeType": mime, "blob": b64.encode(vec![7u8; bytes])}}]})
    };
    for id in ["opencode", "kilo"] {
        let seen_blob = seen(id, &blob("application/gzip", 2_000));
        assert_eq!(
            seen_blob.text,
            "[Binary MCP resource omitted: artifact://release.tar.gz (application/gzip, 2 KB) is not a supported attachment type]"
        );
        // the note alone, nothing of the blob: as the lab reads "nothing but a marker"
        assert_eq!(
            (seen_blob.outcome, seen_blob.kept_fraction),
            (Outcome::Refused, 0.0)
        );
        assert!(
            seen_blob.tokens_to_model > 20,
            "{}",
            seen_blob.tokens_to_model
        );
        // its size as the client writes it: bytes, KB rounded up, MB
        assert!(seen(id, &blob("application/gzip", 1_000))
            .text
            .contains("(application/gzip, 1000 B)"));
        assert!(seen(id, &blob("application/gzip", 1_025))
            .text
            .contains(", 2 KB)"));
        assert!(seen(id, &blob("application/zip", 3 << 20))
            .text
            .contains(", 3 MB)"));
        // a PNG blob goes as an attachment, which these clients drop as they drop images
        let png = seen(id, &blob("image/png", 2_000));
        assert_eq!((png.tokens_to_model, png.outcome), (0, Outcome::Refused));
        assert_eq!(png.breaks, Some(Break::ImagesDropped { images: 1 }));
    }
    // Claude Code's note names the file it saved (one decimal: 2,958 bytes are 2.9KB)
    let claude = seen("claude-code", &blob("application/octet-stream", 2_958));
    assert!(claude.text.starts_with("[Resource from server at artifact://release.tar.gz] Binary content (application/octet-stream, 2.9KB) saved to /"), "{}", claude.text);
    // a client without a note sends nothing of a blob: nothing of the result reaches its model
    let none = seen("copilot-cli", &blob("application/gzip", 2_000));
    assert_eq!(
        (none.text.as_str(), none.outcome, none.tokens_to_model),
        ("", Outcome::Refused, 0)
    );
}

/// Claude Code 2.1.332 writes the path it saved each image to beside it (measured).
#[test]
fn claude_codes_image_note_names_the_saved_file_by_the_images_type() {
    for (mime, ext) in [
        ("image/png", "png"),
        ("image/jpeg", "jpg"),
        ("image/svg+xml", "svg"),
    ] {
        let r =
            json!({"content": [{"type": "image", "mimeType": mime, "data": png_header(10, 10)}]});
        let s = seen("claude-code", &r);
        assert!(
            s.text.starts_with("[Image: source: ") && s.text.ends_with(&format!(".{ext}]")),
            "{mime}: {}",
            s.text
        );
        assert_eq!(s.bytes_to_model, s.text.len());
    }
}
