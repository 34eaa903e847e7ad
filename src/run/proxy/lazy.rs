//! Lazy tools (`proxy --lazy-tools`): the client is shown two tools of the proxy's instead of
//! the upstream's definitions. `mcp_budget_find_tools` returns the full definitions of the
//! tools that best match a plain-language query, `mcp_budget_call_tool` calls any of them (its
//! result through the engine as usual). A wrong name or arguments that fail the tool's schema
//! come back as a tool error carrying the definition, so the model can correct itself in one
//! turn. With `--lazy-expose SECS` the tools found are also added to the client's list (a
//! `tools/list_changed` is sent), and taken off again SECS seconds after they were last found
//! or called.

mod call;

mod search;

use std::collections::HashMap;

use serde_json::{json, Value};

use super::reply::{capped, quoted, MAX_ECHO_CHARS};
use crate::measure::edit_distance;
pub use search::{terms, ToolIndex};

pub const FIND_TOOL: &str = "mcp_budget_find_tools";
pub const CALL_TOOL: &str = "mcp_budget_call_tool";
/// How many definitions a find returns unless asked, and at most.
pub const DEFAULT_FIND_LIMIT: usize = 5;
pub const MAX_FIND_LIMIT: usize = 20;

/// The definition of `mcp_budget_find_tools` (`total` is how many tools it searches).
pub fn find_tool_definition(total: usize) -> Value {
    json!({
        "name": FIND_TOOL,
        "description": format!("Find tools by what they do. {total} tools are available but not listed: describe the task in plain words and get the full definitions (name, description, input schema) of the best matches. Then call one with {CALL_TOOL}."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What you want to do, e.g. \"list open pull requests\""},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_FIND_LIMIT, "description": format!("How many tools to return (default {DEFAULT_FIND_LIMIT})")}
            },
            "required": ["query"]
        },
        "annotations": {"readOnlyHint": true}
    })
}

/// The definition of `mcp_budget_call_tool`.
pub fn call_tool_definition() -> Value {
    json!({
        "name": CALL_TOOL,
        "description": format!("Call a tool found with {FIND_TOOL}, by its name, with arguments that match its input schema."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name"},
                "arguments": {"type": "object", "description": "The tool's arguments"}
            },
            "required": ["name"]
        }
    })
}

/// The tools behind the lazy pair: the upstream's, as the client may see them (filtered, shaped
/// by the policy, lean when asked), and their search index.
#[derive(Debug, Default)]
pub struct Catalog {
    tools: Vec<Value>,
    by_name: HashMap<String, usize>,
    index: ToolIndex,
}

impl Catalog {
    pub fn new(tools: Vec<Value>) -> Catalog {
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t["name"].as_str().unwrap_or("").to_string(), i))
            .collect();
        let index = ToolIndex::new(&tools);
        Catalog {
            tools,
            by_name,
            index,
        }
    }

    pub fn tools(&self) -> &[Value] {
        &self.tools
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The best matches for `query`, best first.
    pub fn find(&self, query: &str, limit: usize) -> Vec<&Value> {
        self.index
            .search(query, limit)
            .into_iter()
            .map(|(i, _)| &self.tools[i])
            .collect()
    }

    /// What `mcp_budget_find_tools` answers: the definitions found, and what to do next, with
    /// the names found (for `--lazy-expose`). Only the query's first [`MAX_ECHO_CHARS`]
    /// characters are searched for and quoted back.
    pub fn find_text(&self, full_query: &str, limit: usize) -> (String, Vec<String>) {
        let (query, whole) = capped(full_query);
        let found = self.find(query, limit);
        let names = found
            .iter()
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect();
        let mut body = json!({
            "query": query,
            "tools": found,
            "of": self.tools.len(),
        });
        if !whole {
            body["query_cut"] = json!(format!(
                "the query was searched and is quoted by its first {MAX_ECHO_CHARS} characters"
            ));
        }
        if found.is_empty() {
            let names: Vec<&str> = self
                .tools
                .iter()
                .take(40)
                .filter_map(|t| t["name"].as_str())
                .collect();
            body["note"] = json!(format!(
                "No tool matched. Try other words; some of the tools: {}",
                names.join(", ")
            ));
        } else {
            body["note"] = json!(format!(
                "Call one with {CALL_TOOL} {{\"name\": ..., \"arguments\": {{...}}}}."
            ));
        }
        (serde_json::to_string(&body).unwrap_or_default(), names)
    }

    /// The error a call of an unknown (or hidden) tool gets: the closest tools' definitions.
    /// Only the first [`MAX_ECHO_CHARS`] characters of the name (and of each tool's) are
    /// compared, and quoted back.
    pub fn unknown_text(&self, full_name: &str) -> String {
        let (name, _) = capped(full_name);
        // names a typo away first, then the names that share words with it
        let mut near: Vec<(usize, &Value)> = self
            .tools
            .iter()
            .map(|t| {
                (
                    edit_distance(name, capped(t["name"].as_str().unwrap_or("")).0),
                    t,
                )
            })
            .filter(|(d, _)| *d <= (name.chars().count() / 3).max(2))
            .collect();
        near.sort_by_key(|(d, _)| *d);
        let mut closest: Vec<&Value> = near.into_iter().map(|(_, t)| t).collect();
        for t in self.find(&terms(name).join(" "), 3) {
            if !closest.iter().any(|c| std::ptr::eq(*c, t)) {
                closest.push(t);
            }
        }
        closest.truncate(3);
        serde_json::to_string(&json!({
            "error": format!("no tool named `{}`; the closest by name are below (or search with {FIND_TOOL})", quoted(full_name)),
            "closest": closest,
        }))
        .unwrap_or_default()
    }
}

/// The error a call with arguments that break the schema gets: the errors and the definition.
pub fn bad_arguments_text(tool: &Value, errors: &[String]) -> String {
    serde_json::to_string(&json!({
        "error": format!(
            "the arguments do not match the input schema of `{}`: {}",
            tool["name"].as_str().unwrap_or(""),
            errors.join("; ")
        ),
        "definition": tool,
    }))
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::schema_errors;

    #[test]
    fn bad_arguments_carry_the_definition() {
        let tool = json!({"name": "get_issue", "inputSchema": {"type": "object",
            "properties": {"owner": {"type": "string"}, "number": {"type": "integer"}},
            "required": ["owner", "number"], "additionalProperties": false}});
        let errors = schema_errors(
            tool.get("inputSchema"),
            &json!({"owner": "o", "number": "3", "x": 1}),
        );
        assert_eq!(errors.len(), 2, "{errors:?}");
        let text = bad_arguments_text(&tool, &errors);
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["definition"], tool);
    }

    #[test]
    fn an_unknown_name_gets_the_closest_definitions() {
        let catalog = Catalog::new(vec![
            json!({"name": "get_issue", "description": "Get an issue"}),
            json!({"name": "list_issues", "description": "List issues"}),
            json!({"name": "get_file", "description": "Read a file"}),
        ]);
        let text: Value = serde_json::from_str(&catalog.unknown_text("get_isue")).unwrap();
        let names: Vec<&str> = text["closest"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names[0], "get_issue", "{names:?}");
        assert_eq!(
            catalog.get("get_file").unwrap()["description"],
            "Read a file"
        );
    }
}
