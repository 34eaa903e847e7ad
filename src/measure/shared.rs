//! The schema tax between tools: a parameter with the same name and the same schema (its
//! description included) in many tools of one server (a tenant, a retry setting, a `url`),
//! paid again in every tool's definition. Each group's saving is measured like the other
//! definition rules': the fix applied to the real definitions and every model view counted
//! again.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::compact_json;
use super::lints::view_tokens;
use crate::ground::tokens::Tokenizer;
use crate::measure::facts::SharedParameter;

/// Tools one parameter must appear in, the same, to be a group (`audit`'s default).
pub const SHARED_PARAMETER_TOOLS: usize = 5;

/// The statement that replaces a parameter in every tool (what `state_once` counts).
pub fn statement(name: &str, schema: &str) -> String {
    format!("Every tool that takes `{name}` takes it as {schema}.")
}

/// A tool's definition without the parameter `name` (its property and its `required` entry).
pub fn without_parameter(tool: &Map<String, Value>, name: &str) -> Map<String, Value> {
    let mut t = tool.clone();
    if let Some(Value::Object(schema)) = t.get_mut("inputSchema") {
        if let Some(Value::Object(props)) = schema.get_mut("properties") {
            props.shift_remove(name);
        }
        if let Some(Value::Array(req)) = schema.get_mut("required") {
            req.retain(|r| r.as_str() != Some(name));
        }
    }
    t
}

/// A required parameter a policy asked to hide: it cannot be (the tool could not be called).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}`: `{param}` is required, so `hide_params` cannot hide it")]
pub struct RequiredHidden {
    pub tool: String,
    pub param: String,
}

/// Take out of `tool`'s input schema every parameter whose name `hidden` matches; the names
/// taken, or the first required one matched (then nothing is taken).
pub fn hide_parameters(
    tool: &mut Value,
    hidden: impl Fn(&str) -> bool,
) -> Result<Vec<String>, RequiredHidden> {
    let name = tool["name"].as_str().unwrap_or("").to_string();
    let Some(props) = tool["inputSchema"]["properties"].as_object() else {
        return Ok(Vec::new());
    };
    let matched: Vec<String> = props.keys().filter(|k| hidden(k)).cloned().collect();
    let required: Vec<&str> = tool["inputSchema"]["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(r) = matched.iter().find(|m| required.contains(&m.as_str())) {
        return Err(RequiredHidden {
            tool: name,
            param: r.clone(),
        });
    }
    if let Some(Value::Object(props)) = tool
        .get_mut("inputSchema")
        .and_then(|s| s.get_mut("properties"))
    {
        for m in &matched {
            props.shift_remove(m);
        }
    }
    Ok(matched)
}

/// The tokens per turn of `tool` as the proxy shows it under the suggested policy: the
/// description cut to `cut` characters, the schema lean, and the `hidden` parameters taken out
/// (the same steps, in the same order, as the proxy's tool list).
pub fn suggested_hidden_tokens(
    tool: &Map<String, Value>,
    cut: Option<usize>,
    hidden: &[String],
    tok: Tokenizer,
) -> usize {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut t = Value::Object(tool.clone());
    if let (Some(max), Some(d)) = (cut, t["description"].as_str()) {
        t["description"] = Value::String(crate::ground::text::shorten(d, max));
    }
    for transform in super::LeanTransform::ALL {
        if let Some(schema) = t.get_mut("inputSchema") {
            super::apply_transform(schema, &name, transform);
        }
    }
    // a group is hidden only where no tool requires it: nothing here is refused
    let _ = hide_parameters(&mut t, |n| hidden.iter().any(|h| h == n));
    match t.as_object() {
        Some(m) => view_tokens(m, tok),
        None => 0,
    }
}

/// The groups of `tools` (one server's definitions) that repeat a parameter, the same, in at
/// least `min_tools` tools, largest saving first.
pub fn shared_parameters(
    tools: &[Map<String, Value>],
    tok: Tokenizer,
    min_tools: usize,
) -> Vec<SharedParameter> {
    // (name, schema) -> the tools (by index) that take it, and how many require it
    let mut groups: BTreeMap<(String, String), (Vec<usize>, usize)> = BTreeMap::new();
    for (i, tool) in tools.iter().enumerate() {
        let schema = tool.get("inputSchema");
        let Some(props) = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let required: Vec<&str> = schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, sub) in props {
            let entry = groups.entry((name.clone(), compact_json(sub))).or_default();
            entry.0.push(i);
            entry.1 += usize::from(required.contains(&name.as_str()));
        }
    }
    let groups: Vec<_> = groups
        .into_iter()
        .filter(|(_, (at, _))| at.len() >= min_tools.max(2))
        .collect();
    // each tool's own count once, however many groups it is in
    let mut before: Vec<Option<usize>> = vec![None; tools.len()];
    for (_, (at, _)) in &groups {
        for &i in at {
            before[i].get_or_insert_with(|| view_tokens(&tools[i], tok));
        }
    }
    let mut out: Vec<SharedParameter> = groups
        .into_iter()
        .map(|((name, schema), (at, required_in))| {
            let removed: usize = at
                .iter()
                .map(|&i| {
                    let before = before[i].unwrap_or_default();
                    let after = view_tokens(&without_parameter(&tools[i], &name), tok);
                    before.saturating_sub(after)
                })
                .sum();
            let said_once = tok.count(&statement(&name, &schema));
            SharedParameter {
                tools: at
                    .iter()
                    .map(|&i| {
                        tools[i]
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string()
                    })
                    .collect(),
                hide_saves_tokens: (required_in == 0).then_some(removed),
                state_once_saves_tokens: removed.saturating_sub(said_once),
                required_in,
                name,
                schema,
            }
        })
        .filter(|g| g.best_saving() > 0)
        .collect();
    out.sort_by(|a, b| {
        b.best_saving()
            .cmp(&a.best_saving())
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, extra: Value, required: &[&str]) -> Map<String, Value> {
        let mut props = json!({
            "tenant": {"type": "string", "description": "The Azure tenant ID or name to use for authentication."},
            "retry-max-retries": {"type": "integer", "description": "Maximum retry attempts for failed operations before giving up."},
        });
        for (k, v) in extra.as_object().unwrap() {
            props[k] = v.clone();
        }
        json!({"name": name, "description": format!("Does {name}."),
               "inputSchema": {"type": "object", "properties": props, "required": required}})
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn a_parameter_the_same_in_enough_tools_is_one_group_with_measured_savings() {
        let tok = Tokenizer::Cl100k;
        let mut tools: Vec<_> = (0..6)
            .map(|i| tool(&format!("t{i}"), json!({"id": {"type": "string"}}), &["id"]))
            .collect();
        // one tool describes `tenant` otherwise: not the same parameter
        tools.push(tool(
            "odd",
            json!({"tenant": {"type": "string", "description": "Another tenant."}}),
            &[],
        ));
        let groups = shared_parameters(&tools, tok, 5);
        let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        let tenant = groups.iter().find(|g| g.name == "tenant").unwrap();
        assert_eq!(tenant.tools.len(), 6);
        assert!(!tenant.tools.contains(&"odd".to_string()));
        // the saving is what removing it from each of the six definitions saves
        let by_hand: usize = tools[..6]
            .iter()
            .map(|t| view_tokens(t, tok) - view_tokens(&without_parameter(t, "tenant"), tok))
            .sum();
        assert_eq!(tenant.hide_saves_tokens, Some(by_hand));
        assert_eq!(
            tenant.state_once_saves_tokens,
            by_hand - tok.count(&statement("tenant", &tenant.schema))
        );
        // a required parameter cannot be hidden, only stated once
        let id = groups.iter().find(|g| g.name == "id").unwrap();
        assert_eq!((id.required_in, id.hide_saves_tokens), (6, None));
        // below the threshold there is no group
        assert!(shared_parameters(&tools, tok, 8).is_empty());
    }
}
