//! The shared corpus of real tool lists and tool results: every count mcp-budget makes must
//! equal the independent Python tiktoken count in `corpus_expected.rs`.

use mcp_budget::ground::tokens::{Tokenizer, TokenizerSet};
use mcp_budget::measure::{measure_result, measure_tools_pages};

use crate::corpus_expected::{RESPONSES, TOOLSLISTS};
use crate::support::corpus;

fn both() -> TokenizerSet {
    TokenizerSet::new(vec![Tokenizer::Cl100k, Tokenizer::O200k])
}

/// The exact `result` text of a JSON-RPC response line, or a whole bare-result file.
fn result_text(file: &str, text: &str) -> String {
    if !file.ends_with(".jsonl") {
        return text.trim_end().to_string();
    }
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        result: &'a serde_json::value::RawValue,
    }
    let line: Line = serde_json::from_str(text.trim_end()).expect("a JSON-RPC response line");
    line.result.get().to_string()
}

#[test]
fn tool_lists_match_tiktoken() {
    let Some(dir) = corpus() else { return };
    let set = both();
    for e in TOOLSLISTS {
        let text = std::fs::read_to_string(dir.join(e.file)).unwrap();
        let raw = result_text(e.file, &text);
        let m = measure_tools_pages(&[&raw], &set).unwrap();
        let f = e.file;
        assert_eq!(m.list.tool_count, e.tool_count, "{f} tool count");
        assert_eq!(m.list.wire_bytes, e.wire_bytes, "{f} wire bytes");
        assert_eq!(m.wire.primary, e.wire_cl100k, "{f} wire cl100k");
        assert_eq!(m.wire.others["o200k_base"], e.wire_o200k, "{f} wire o200k");
        assert_eq!(m.model.primary, e.model_cl100k, "{f} model cl100k");
        assert_eq!(
            m.model.others["o200k_base"], e.model_o200k,
            "{f} model o200k"
        );
        let desc: usize = m.tools.iter().map(|t| t.description_tokens).sum();
        let schema: usize = m.tools.iter().map(|t| t.input_schema_tokens).sum();
        assert_eq!(desc, e.description_cl100k, "{f} description tokens");
        assert_eq!(schema, e.input_schema_cl100k, "{f} input schema tokens");
        // the breakdowns use the primary tokenizer: count again with o200k first
        let o = measure_tools_pages(&[&raw], &TokenizerSet::new(vec![Tokenizer::O200k])).unwrap();
        let desc: usize = o.tools.iter().map(|t| t.description_tokens).sum();
        let schema: usize = o.tools.iter().map(|t| t.input_schema_tokens).sum();
        assert_eq!(
            (desc, schema),
            (e.description_o200k, e.input_schema_o200k),
            "{f} o200k breakdown"
        );
        let top = m.tools.iter().max_by_key(|t| t.model_tokens).unwrap();
        assert_eq!(
            (top.name.as_str(), top.model_tokens),
            (e.top_tool, e.top_tool_model_cl100k),
            "{f} top tool"
        );
    }
}

#[test]
fn tool_results_match_tiktoken() {
    let Some(dir) = corpus() else { return };
    let set = both();
    for e in RESPONSES {
        let text = std::fs::read_to_string(dir.join(e.file)).unwrap();
        let raw = result_text(e.file, &text);
        let c = measure_result(&raw, &set).unwrap();
        let f = e.file;
        assert_eq!(c.wire_bytes, e.wire_bytes, "{f} wire bytes");
        assert_eq!(c.wire_tokens, e.wire_cl100k, "{f} wire cl100k");
        assert_eq!(
            c.by_tokenizer["o200k_base"].wire_tokens, e.wire_o200k,
            "{f} wire o200k"
        );
        assert_eq!(c.text_tokens, e.text_cl100k, "{f} text cl100k");
        assert_eq!(
            c.by_tokenizer["o200k_base"].text_tokens, e.text_o200k,
            "{f} text o200k"
        );
        assert_eq!(
            c.structured_tokens, e.structured_cl100k,
            "{f} structured cl100k"
        );
        assert_eq!(
            c.by_tokenizer["o200k_base"].structured_tokens, e.structured_o200k,
            "{f} structured o200k"
        );
        assert_eq!(
            c.structured_duplicate, e.structured_duplicate,
            "{f} structured duplicate"
        );
        assert_eq!(
            c.structured_tokens > 0,
            e.has_structured,
            "{f} has structuredContent"
        );
        let kinds: Vec<&str> = c.blocks.iter().map(|b| b.kind.as_str()).collect();
        assert_eq!(kinds, e.block_types, "{f} block types");
    }
}

#[test]
fn corpus_images_are_costed_by_pixels_not_base64() {
    let Some(dir) = corpus() else { return };
    let text = std::fs::read_to_string(dir.join("responses/playwright__screenshot.jsonl")).unwrap();
    let c = measure_result(&result_text(".jsonl", &text), &TokenizerSet::default()).unwrap();
    let image = c
        .blocks
        .iter()
        .find(|b| b.kind == "image")
        .expect("an image block");
    let (w, h) = (image.width_px.unwrap(), image.height_px.unwrap());
    assert!(w > 100 && h > 100, "{w}x{h}");
    assert_eq!(
        c.image_tokens,
        mcp_budget::ground::tokens::claude_image_tokens(w, h).0
    );
    // the naive text count of the base64 is far larger than the pixel cost
    assert!(
        c.base64_as_text_tokens > 10 * c.image_tokens,
        "{} vs {}",
        c.base64_as_text_tokens,
        c.image_tokens
    );
}
