//! The schema tax: what each tool definition costs every turn, from the raw tools/list pages.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::lints::{lint_tool, Counted};
use super::{compact_json, MeasureError};
use crate::ground::tokens::{Counts, TokenizerSet};
use crate::measure::facts::{ListCost, ToolCost, ToolsList};

/// The tools of all pages, with totals per tokenizer.
#[derive(Debug, Clone, Default)]
pub struct ToolsMeasure {
    pub list: ToolsList,
    pub tools: Vec<ToolCost>,
    pub wire: Counts,
    pub model: Counts,
}

#[derive(Deserialize)]
struct Page<'a> {
    #[serde(borrow, default)]
    tools: Vec<&'a RawValue>,
}

/// Measure every page of a tools/list (each the exact text of one `result`).
pub fn measure_tools_pages(
    pages: &[&str],
    set: &TokenizerSet,
) -> Result<ToolsMeasure, MeasureError> {
    let mut m = ToolsMeasure {
        wire: set.uniform(0),
        model: set.uniform(0),
        ..ToolsMeasure::default()
    };
    for page in pages {
        let parsed: Page =
            serde_json::from_str(page).map_err(|e| MeasureError::new("tools/list result", e))?;
        m.list.pages += 1;
        m.list.wire_bytes += page.len();
        m.list.largest_page_bytes = m.list.largest_page_bytes.max(page.len());
        m.wire.add(&set.count(page));
        for raw in parsed.tools {
            let (cost, model) = measure_tool(raw.get(), set)?;
            m.model.add(&model);
            m.tools.push(cost);
        }
        if m.list.pages == 1 {
            m.list.first_page_tools = m.tools.len();
        }
        m.list
            .page_tools
            .push(m.tools.len() - m.list.page_tools.iter().sum::<usize>());
    }
    m.list.tool_count = m.tools.len();
    m.list.wire_tokens = m.wire.primary;
    m.list.model_tokens = m.model.primary;
    Ok(m)
}

/// A description's first line, trimmed, at most [`DESCRIPTION_HEAD_CHARS`] characters.
pub fn description_head(d: Option<&Value>) -> String {
    let line = d
        .and_then(Value::as_str)
        .unwrap_or("")
        .split('\n')
        .next()
        .unwrap_or("");
    line.trim().chars().take(DESCRIPTION_HEAD_CHARS).collect()
}

/// How much of a description's first line a tool's cost keeps (`description_head`).
pub const DESCRIPTION_HEAD_CHARS: usize = 200;

/// What the model receives of a tool every turn, as it is counted: `{"name", "description",
/// "input_schema"}` in that order, without `description` when the tool has none, and an empty
/// object schema when it gives none. `audit` and the proxy both count this view.
pub fn model_view(tool: &Map<String, Value>) -> Value {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let mut view = Map::new();
    view.insert("name".into(), json!(name));
    if let Some(d) = tool.get("description") {
        view.insert("description".into(), d.clone());
    }
    let schema = tool
        .get("inputSchema")
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    view.insert("input_schema".into(), schema);
    Value::Object(view)
}

/// One tool definition (its exact text in tools/list): the cost and its model-view counts.
pub fn measure_tool(raw: &str, set: &TokenizerSet) -> Result<(ToolCost, Counts), MeasureError> {
    let tool: Map<String, Value> =
        serde_json::from_str(raw).map_err(|e| MeasureError::new("tool definition", e))?;
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let model = set.count(&compact_json(&model_view(&tool)));
    let count = |v: Option<&Value>| match v {
        None | Some(Value::Null) => 0,
        Some(Value::String(s)) => set.primary().count(s),
        Some(other) => set.primary().count(&compact_json(other)),
    };
    let mut rest = tool.clone();
    for known in [
        "name",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "title",
        "icons",
        "_meta",
    ] {
        rest.shift_remove(known);
    }
    let annotations = tool.get("annotations");
    let description_tokens = count(tool.get("description"));
    let output_schema_tokens = count(tool.get("outputSchema"));
    let counted = Counted {
        model: model.primary,
        description: description_tokens,
        output_schema: output_schema_tokens,
    };
    let lints = lint_tool(&tool, set.primary(), counted);
    let cost = ToolCost {
        name,
        model_tokens: model.primary,
        description_tokens,
        description_head: description_head(tool.get("description")),
        input_schema_tokens: count(tool.get("inputSchema")),
        output_schema_tokens,
        annotations_tokens: count(annotations),
        title_tokens: count(tool.get("title")),
        icons_tokens: count(tool.get("icons")),
        icons_bytes: tool
            .get("icons")
            .map(|i| compact_json(i).len())
            .unwrap_or(0),
        meta_tokens: count(tool.get("_meta")),
        other_tokens: if rest.is_empty() {
            0
        } else {
            count(Some(&Value::Object(rest)))
        },
        wire_bytes: raw.len(),
        wire_tokens: set.primary().count(raw),
        read_only: annotations
            .and_then(|a| a.get("readOnlyHint"))
            .and_then(Value::as_bool)
            == Some(true),
        required_args: tool
            .get("inputSchema")
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map_or(0, Vec::len),
        input_params: tool
            .get("inputSchema")
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default(),
        data_uris: raw.matches("data:image/").count() + raw.matches("data:audio/").count(),
        by_tokenizer: model.others.clone(),
        meta_numbers: tool
            .get("_meta")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_u64()?)))
                    .collect()
            })
            .unwrap_or_default(),
        schema_lints: lints.lints,
        fixed_model_tokens: Some(lints.fixed_tokens),
        suggested_model_tokens: Some(lints.suggested_tokens),
        description_cut_chars: lints.description_cut_chars,
    };
    Ok((cost, model))
}

/// A prompts/list or resources/list: count of `key` items and wire size over all pages.
pub fn measure_list(
    pages: &[&str],
    key: &str,
    set: &TokenizerSet,
) -> Result<ListCost, MeasureError> {
    let mut cost = ListCost::default();
    for page in pages {
        let v: Value = serde_json::from_str(page).map_err(|e| MeasureError::new(key, e))?;
        cost.pages += 1;
        cost.count += v[key].as_array().map_or(0, Vec::len);
        cost.wire_bytes += page.len();
        cost.wire_tokens += set.primary().count(page);
    }
    Ok(cost)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::tokens::Tokenizer;

    #[test]
    fn model_view_keeps_schema_key_order_and_breaks_out_parts() {
        let set = TokenizerSet::new(vec![Tokenizer::Cl100k, Tokenizer::O200k]);
        let raw = r#"{"name":"t","title":"T","description":"Does a thing","inputSchema":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}}},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"forbidden"}}"#;
        let (cost, model) = measure_tool(raw, &set).unwrap();
        let view = r#"{"name":"t","description":"Does a thing","input_schema":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}}}}"#;
        assert_eq!(cost.model_tokens, Tokenizer::Cl100k.count(view));
        assert_eq!(model.others["o200k_base"], Tokenizer::O200k.count(view));
        assert_eq!(
            cost.description_tokens,
            Tokenizer::Cl100k.count("Does a thing")
        );
        assert_eq!(
            cost.other_tokens,
            Tokenizer::Cl100k.count(r#"{"execution":{"taskSupport":"forbidden"}}"#)
        );
        assert!(cost.read_only);
        assert_eq!(cost.wire_bytes, raw.len());
    }

    #[test]
    fn numbers_in_meta_are_kept_for_the_client_rules() {
        let set = TokenizerSet::default();
        let raw = r#"{"name":"fetch","inputSchema":{"type":"object"},"_meta":{"anthropic/maxResultSizeChars":200000,"note":"x","neg":-1}}"#;
        let (t, _) = measure_tool(raw, &set).unwrap();
        assert_eq!(
            t.meta_numbers,
            std::collections::BTreeMap::from([("anthropic/maxResultSizeChars".into(), 200_000)])
        );
    }

    #[test]
    fn pages_add_up() {
        let set = TokenizerSet::default();
        let p1 = r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}"#;
        let p2 = r#"{"tools":[{"name":"b","description":"x","inputSchema":{"type":"object"}}]}"#;
        let m = measure_tools_pages(&[p1, p2], &set).unwrap();
        assert_eq!(m.list.pages, 2);
        assert_eq!(m.list.tool_count, 2);
        assert_eq!(m.list.wire_bytes, p1.len() + p2.len());
        assert_eq!(
            m.list.wire_tokens,
            Tokenizer::Cl100k.count(p1) + Tokenizer::Cl100k.count(p2)
        );
        assert!(measure_tools_pages(&["{not json"], &set).is_err());
    }
}
