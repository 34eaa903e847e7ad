//! The judge: what part of a result a delivery kept, and how it reached the model.

use super::*;
use crate::lab::found::kept;
use serde_json::json;

/// `judge` of a delivery of one text, with no files in the run's HOME.
fn judged(result: &Value, text: impl Into<String>) -> ProbeOutcome {
    let d = Delivered::of_text(text);
    judge(
        "t",
        result,
        Some(&d),
        Path::new("/x"),
        &[],
        Tokenizer::Cl100k,
    )
}

#[test]
fn a_file_the_note_names_in_home_is_gone_not_missing() {
    let note = "Output too large to read at once (20.0 KB). Saved to: /tmp/lab-1/home/tmp/17-copilot-tool-output-3c.txt\nConsider using tools like grep";
    let f = named_file(note, "/tmp/lab-1/home").unwrap();
    assert_eq!(
        (f.path.as_str(), f.gone, f.whole),
        ("tmp/17-copilot-tool-output-3c.txt", true, false)
    );
    // a path outside the run's HOME, or none, names no file of the run
    assert_eq!(named_file(note, "/tmp/lab-2/home"), None);
    assert_eq!(named_file("[output truncated]", "/tmp/lab-1/home"), None);
}

#[test]
fn text_blocks_around_an_image_placeholder_are_whole() {
    let result = json!({"content": [
        {"type": "text", "text": "Here's the image you requested:"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "text", "text": "The image above is the MCP logo."}
    ]});
    let delivered = "Here's the image you requested:\n[Image: source: $HOME/x.png]\nThe image above is the MCP logo.";
    assert!(blocks_in_order(&result, delivered));
    // out of order, or one missing: not whole
    assert!(!blocks_in_order(
        &result,
        "The image above is the MCP logo. Here's the image you requested:"
    ));
    assert!(!blocks_in_order(&result, "Here's the image you requested:"));
}

#[test]
fn kept_finds_the_head_and_the_tail_a_client_left() {
    let original: String = (0..1000).map(|i| format!("line {i}\n")).collect();
    let cut = format!(
        "{}\n...[cut]...\n{}",
        &original[..300],
        &original[original.len() - 200..]
    );
    assert_eq!(kept(&original, &cut), (300, 200));
    assert_eq!(kept(&original, &original), (original.len(), 0));
    assert_eq!(
        kept(&original, "line 0\nline 1"),
        (0, 0),
        "under 64 chars is chance"
    );
    let wide = "漢字".repeat(100);
    assert_eq!(kept(&wide, &format!("x{}y", &wide[..240])), (80, 0));
}

#[test]
fn a_delivery_is_judged_whole_cut_error_or_marker_only() {
    let original = "a".repeat(5000) + &"b".repeat(5000);
    let result = json!({"content": [{"type": "text", "text": original}]});
    let home = Path::new("/nonexistent");
    let judge_ = |d: &Delivered| judge("t", &result, Some(d), home, &[], Tokenizer::Cl100k);
    let whole = judge_(&Delivered::of_text(format!("<w>\n{original}\n</w>")));
    assert_eq!(
        (whole.delivery, whole.sent),
        (Delivery::Whole, Sent::Content)
    );
    assert_eq!(whole.added, "<w>\n[kept]\n</w>");
    let cut = judge_(&Delivered::of_text(format!(
        "{}…9000 chars truncated…{}",
        &original[..500],
        &original[9500..]
    )));
    assert_eq!(
        (cut.delivery, cut.head_chars, cut.tail_chars),
        (Delivery::Cut, 500, 500)
    );
    assert_eq!(cut.added, "[kept]…9000 chars truncated…[kept]");
    let error = judge_(&Delivered::of_text(
        "Error: result exceeds maximum allowed tokens",
    ));
    assert_eq!(error.delivery, Delivery::Error);
    let marker = judge_(&Delivered::of_text("...10000 bytes truncated..."));
    assert_eq!(marker.delivery, Delivery::MarkerOnly);
    let none = judge("t", &result, None, home, &[], Tokenizer::Cl100k);
    assert_eq!(
        (none.delivery, none.delivered),
        (Delivery::NotDelivered, None)
    );
    assert_eq!(none.raw.chars, 10_000);
}

#[test]
fn structured_content_is_recognised_when_a_client_rewrites_its_numbers() {
    let result = json!({"content": [{"type": "text", "text": "{\n  \"t\": 20.0,\n  \"city\": \"Paris\"\n}"}],
        "structuredContent": {"t": 20.0, "city": "Paris"}});
    let o = judged(
        &result,
        "Wall time: 0.01 seconds\nOutput:\n{\"city\":\"Paris\",\"t\":20}",
    );
    assert_eq!(
        (o.delivery, o.sent),
        (Delivery::Whole, Sent::StructuredContent)
    );
}

#[test]
fn structured_content_sent_in_place_of_its_pretty_text_is_not_a_cut_of_that_text() {
    // Claude Code sends structuredContent (compact) in place of the text, which is the same
    // data pretty-printed: the compact text matches most of it, but nothing was cut
    let data: serde_json::Map<String, Value> = (0..60)
        .map(|i| (format!("field_{i}"), json!(format!("value number {i}"))))
        .collect();
    let data = Value::Object(data);
    let result = json!({"content": [{"type": "text", "text": serde_json::to_string_pretty(&data).unwrap()}],
        "structuredContent": data});
    let o = judged(&result, data.to_string());
    assert_eq!(
        (o.delivery, o.sent),
        (Delivery::Whole, Sent::StructuredContent)
    );
}

#[test]
fn the_file_holding_the_result_is_found_whole_or_escaped() {
    let home = tempfile::tempdir().unwrap();
    let original = "line\n".repeat(1000);
    std::fs::write(home.path().join("out.txt"), &original).unwrap();
    std::fs::write(
        home.path().join("out.json"),
        serde_json::to_string(&original).unwrap(),
    )
    .unwrap();
    std::fs::write(home.path().join("small"), "x").unwrap();
    let files = vec![("out.json".into(), 0u64), ("small".into(), 1)];
    let mut files = files;
    files[0].1 = std::fs::metadata(home.path().join("out.json"))
        .unwrap()
        .len();
    let note = "Output saved to $HOME/out.json";
    let f = saved_file(&original, home.path(), &files, note).unwrap();
    assert_eq!((f.path.as_str(), f.whole), ("out.json", true));
    assert!(saved_file(&original, home.path(), &files[1..], note).is_none());
    // the same file the delivered text does not name is the client's own record (a
    // transcript), not a file its model is pointed at
    assert!(saved_file(&original, home.path(), &files, "whole, no note").is_none());
}

#[test]
fn a_transcript_holding_a_whole_result_is_not_a_saved_file() {
    // Claude Code writes every tool result into its session transcript in HOME
    let home = tempfile::tempdir().unwrap();
    let original = "row of the result\n".repeat(200);
    let result = json!({"content": [{"type": "text", "text": original}]});
    let dir = home.path().join(".claude/projects/-tmp-x");
    std::fs::create_dir_all(&dir).unwrap();
    let transcript = dir.join("5f1c.jsonl");
    std::fs::write(
        &transcript,
        serde_json::to_string(&json!({"toolUseResult": original})).unwrap(),
    )
    .unwrap();
    let files = vec![(
        std::path::PathBuf::from(".claude/projects/-tmp-x/5f1c.jsonl"),
        std::fs::metadata(&transcript).unwrap().len(),
    )];
    let o = judge(
        "t",
        &result,
        Some(&Delivered::of_text(original.clone())),
        home.path(),
        &files,
        Tokenizer::Cl100k,
    );
    assert_eq!((o.delivery, o.file), (Delivery::Whole, None));
}

#[test]
fn a_path_in_brackets_ends_at_the_bracket() {
    // Claude Code names a saved image as `[Image: source: PATH]`
    let f = named_file(
        "[Image: source: /tmp/lab/home/.claude/image-cache/1.png]",
        "/tmp/lab/home",
    )
    .unwrap();
    assert_eq!(f.path, ".claude/image-cache/1.png");
}

#[test]
fn an_image_delivered_agrees_with_a_profile_of_pixels_and_a_dropped_one_does_not() {
    let result = crate::lab::shapes::result(crate::lab::shapes::Shape::Image, 1_000_000);
    let home = Path::new("/nonexistent");
    let modelled = |d: Delivered| {
        let mut o = judge("t", &result, Some(&d), home, &[], Tokenizer::Cl100k);
        o.modelled = crate::lab::compare::modelled("claude-code", &result, &o, Tokenizer::Cl100k);
        o
    };
    // Claude Code sends the image and the path it saved it to (measured, 2.1.332)
    let note = "[Image: source: $HOME/.claude/projects/-tmp-lab/3f2b/tool-results/mcp-shapes-blob-17-ab.png]";
    let shown = modelled(Delivered {
        texts: vec![note.into()],
        images: 1,
        ..Delivered::default()
    });
    assert_eq!(shown.delivery, Delivery::Whole);
    assert!(shown.image_tokens > 200, "{}", shown.image_tokens);
    assert!(shown.modelled.unwrap().agrees);
    // the image without the note its profile says it writes: a changed client, said
    let bare = modelled(Delivered {
        images: 1,
        ..Delivered::default()
    });
    let m = bare.modelled.unwrap();
    assert!(
        m.tokens.abs_diff(bare.image_tokens) <= 100,
        "within the tolerance"
    );
    assert!(!m.agrees);
    // a placeholder in its place (Qwen Code) or nothing (opencode): not delivered, and the
    // profile that counts the pixels is contradicted
    for text in ["[image data omitted]", ""] {
        let dropped = modelled(Delivered::of_text(text));
        assert_eq!(dropped.delivery, Delivery::MarkerOnly, "{text:?}");
        assert_eq!(dropped.image_tokens, 0);
        assert!(!dropped.modelled.unwrap().agrees, "{text:?}");
    }
}

#[test]
fn a_blob_replaced_by_a_placeholder_is_marker_only_and_one_sent_as_text_is_whole() {
    let result = crate::lab::shapes::result(crate::lab::shapes::Shape::Blob, 4_000);
    let blob = result["content"][0]["resource"]["blob"]
        .as_str()
        .unwrap()
        .to_string();
    let o = judged(
        &result,
        "[Binary content (application/octet-stream), 3000 bytes]",
    );
    assert_eq!(
        (o.delivery, o.blobs, o.raw.chars),
        (Delivery::MarkerOnly, 1, 4_000)
    );
    let o = judged(&result, blob);
    assert_eq!(o.delivery, Delivery::Whole);
}

#[test]
fn an_image_pasted_as_text_and_cut_is_a_cut_not_a_marker() {
    // Cline sends the result's JSON, an image's base64 in it, and cuts it to 4,000 + 4,000
    let result = crate::lab::shapes::result(crate::lab::shapes::Shape::Image, 40_000);
    let data = result["content"][0]["data"].as_str().unwrap();
    let json = result.to_string();
    let cut = format!(
        "{}\n\n...[truncated {} chars]...\n\n{}",
        &json[..4000],
        json.len() - 8000,
        &json[json.len() - 4000..]
    );
    let o = judged(&result, cut);
    assert_eq!((o.delivery, o.images_delivered), (Delivery::Cut, 0));
    assert!(o.head_chars > 3_900 && o.tail_chars > 3_900, "{o:?}");
    assert!(data.len() > 30_000);
}
