//! The judge: what part of a result a delivery kept, and how it reached the model.

use super::*;
use crate::lab::found::kept;
use serde_json::json;

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
    let d = Delivered::of_text("Wall time: 0.01 seconds\nOutput:\n{\"city\":\"Paris\",\"t\":20}");
    let o = judge(
        "t",
        &result,
        Some(&d),
        Path::new("/x"),
        &[],
        Tokenizer::Cl100k,
    );
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
    let f = saved_file(&original, home.path(), &files).unwrap();
    assert_eq!((f.path.as_str(), f.whole), ("out.json", true));
    assert!(saved_file(&original, home.path(), &files[1..]).is_none());
}
