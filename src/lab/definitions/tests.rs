use super::*;
use crate::lab::model::ScriptReply;
use serde_json::json;

fn request(body: Value) -> Recorded {
    Recorded {
        seq: 1,
        api: None,
        method: "POST".into(),
        path: "/".into(),
        headers: Vec::new(),
        body: body.to_string().into_bytes(),
        reply: ScriptReply::Text,
    }
}

fn server_tools() -> Vec<Value> {
    vec![
        json!({"name": "get_forecast", "title": "Forecast", "description": "d",
               "inputSchema": {"type": "object", "properties": {"city": {"type": "string", "format": "x", "default": "Paris"}}},
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "search", "description": "s",
               "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}),
    ]
}

#[test]
fn plain_definitions_with_a_prefix_an_added_parameter_and_dropped_keys() {
    let wait = json!({"type": "boolean"});
    let body = json!({"tools": [{"functionDeclarations": [
        {"name": "mcp_demo_get_forecast", "description": "d", "parametersJsonSchema":
            {"type": "object", "properties": {"city": {"type": "string"}, "wait_for_previous": wait}}},
        {"name": "mcp_demo_search", "description": "s", "parametersJsonSchema":
            {"type": "object", "properties": {"q": {"type": "string"}, "wait_for_previous": wait}}}]}]});
    let d = measure(
        &server_tools(),
        &[request(json!({"tools": []})), request(body.clone())],
        Tokenizer::Cl100k,
    );
    assert_eq!((d.form, d.defined, d.named), (Form::Whole, 2, 0));
    assert_eq!(d.name_pattern.as_deref(), Some("mcp_demo_{tool}"));
    assert_eq!(d.added_parameters, ["wait_for_previous"]);
    assert_eq!(
        d.dropped,
        [
            "annotations",
            "inputSchema.default",
            "inputSchema.format",
            "title"
        ]
    );
    let defs = body["tools"][0]["functionDeclarations"].as_array().unwrap();
    assert_eq!(
        d.bytes,
        defs.iter().map(|v| v.to_string().len()).sum::<usize>()
    );
    assert_eq!(
        d.tokens,
        defs.iter()
            .map(|v| Tokenizer::Cl100k.count(&v.to_string()))
            .sum::<usize>()
    );
}

#[test]
fn a_namespace_is_counted_whole_and_names_only_are_deferred() {
    let ns = json!({"type": "namespace", "name": "mcp__demo", "description": "i", "tools": [
        {"type": "function", "name": "get_forecast", "strict": false, "parameters": {"type": "object", "properties": {}}},
        {"type": "function", "name": "search", "strict": false, "parameters": {"type": "object", "properties": {}}}]});
    let d = measure(
        &server_tools(),
        &[request(
            json!({"tools": [{"type": "function", "name": "shell", "parameters": {}}, ns.clone()]}),
        )],
        Tokenizer::Cl100k,
    );
    assert_eq!((d.form, d.defined), (Form::Namespace, 2));
    assert_eq!(d.bytes, ns.to_string().len());
    assert!(
        d.added.contains(&"strict".to_string()) && d.added.contains(&"type".to_string()),
        "{:?}",
        d.added
    );
    assert_eq!(d.name_pattern.as_deref(), Some("{tool}"));

    let deferred = json!({"system": "deferred tools: mcp__demo__get_forecast, mcp__demo__search",
        "tools": [{"name": "ToolSearch", "input_schema": {}}]});
    let d = measure(&server_tools(), &[request(deferred)], Tokenizer::Cl100k);
    // what it sends every turn is the line that names them (issue 39: it read 0)
    let line = "deferred tools: mcp__demo__get_forecast, mcp__demo__search";
    assert_eq!(
        (d.form, d.defined, d.named, d.bytes, d.tokens),
        (
            Form::Deferred,
            0,
            2,
            line.len(),
            Tokenizer::Cl100k.count(line)
        )
    );
    // Qwen Code's reminder: a line a tool, its description quoted; the server's instructions
    // that mention a tool in a sentence are not counted
    let qwen = [
        "- \"mcp__demo__get_forecast\": \"Get the weather forecast.\"",
        "- \"mcp__demo__search\": \"Search the code.\"",
    ];
    let reminder = format!(
        "### demo\nPrefer search with a small limit.\n</system-reminder>\n### MCP servers\n#### demo\n{}",
        qwen.join("\n")
    );
    let body = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": reminder}]}],
        "tools": [{"type": "function", "function": {"name": "ToolSearch", "parameters": {}}}]});
    let d = measure(&server_tools(), &[request(body)], Tokenizer::Cl100k);
    assert_eq!(d.form, Form::Deferred);
    assert_eq!(d.bytes, qwen.join("\n").len());
    assert_eq!(d.tokens, Tokenizer::Cl100k.count(&qwen.join("\n")));

    let partial = json!({"tools": [{"name": "demo_search", "parameters": {"type": "object"}}]});
    let d = measure(&server_tools(), &[request(partial)], Tokenizer::Cl100k);
    assert_eq!((d.form, d.defined), (Form::Partial, 1));
    let d = measure(
        &server_tools(),
        &[request(json!({"tools": [{"name": "x", "parameters": {}}]}))],
        Tokenizer::Cl100k,
    );
    assert_eq!(d.form, Form::Hidden);
}

#[test]
fn a_clients_own_tool_of_the_same_name_is_not_the_servers_definition() {
    // Qwen Code 0.24.4: its built-in read_file (file_path, ...) is in `tools`, the server's
    // read_file (path) and search only named in a message, deferred behind tool_search
    let tools = vec![
        json!({"name": "read_file", "description": "r",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}),
        server_tools().remove(1),
    ];
    let body = json!({"messages": [{"role": "user", "content": "mcp__demo__read_file, mcp__demo__search"}],
        "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object",
            "properties": {"file_path": {"type": "string"}, "offset": {"type": "number"}}}}},
            {"type": "function", "function": {"name": "tool_search", "parameters": {"type": "object",
            "properties": {"query": {"type": "string"}}}}}]});
    let d = measure(&tools, &[request(body)], Tokenizer::Cl100k);
    assert_eq!((d.form, d.defined, d.named), (Form::Deferred, 0, 2));
    assert_eq!(d.added_parameters, Vec::<String>::new());
    assert_eq!(d.name_pattern, None);
}
