//! The demo server's protocol side: an rmcp `ServerHandler` over the tools and payloads.

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, GetPromptRequestParams,
    GetPromptResponse, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::payloads;
use super::tools::{tool_definitions, TOOLS_PAGE_SIZE};

const INSTRUCTIONS: &str = "Demo server of mcp-budget. Tools return deterministic payloads shaped like real servers' results: prefer list_tickets with a small limit, and call scrape_as_markdown only when the whole page is needed.";

/// The embedded demo server.
#[derive(Debug, Clone)]
pub struct DemoServer {
    name: String,
}

impl DemoServer {
    pub fn new(name: &str) -> Self {
        DemoServer {
            name: name.to_string(),
        }
    }

    /// The result of one tool call as MCP JSON, or a protocol error message.
    pub fn call(&self, tool: &str, args: &Map<String, Value>) -> Result<Value, String> {
        let s = |k: &str, d: &str| args.get(k).and_then(Value::as_str).unwrap_or(d).to_string();
        let n = |k: &str, d: u64| args.get(k).and_then(Value::as_u64).unwrap_or(d);
        Ok(match tool {
            "scrape_as_markdown" => {
                text_result(&payloads::scrape_markdown(&s("url", "demo://shop")))
            }
            "browser_snapshot" => {
                text_result(&payloads::accessibility_snapshot(&s("url", "demo://shop")))
            }
            "search_code" => {
                let body =
                    payloads::search_code(&s("q", ""), n("per_page", 100).clamp(1, 100) as usize);
                text_result(&body.to_string())
            }
            "list_pull_requests" => {
                let repo = format!("{}/{}", s("owner", "acme"), s("repo", "widgets"));
                let body =
                    payloads::list_pull_requests(&repo, n("per_page", 30).clamp(1, 100) as usize);
                text_result(&body.to_string())
            }
            "read_file" => read_file(&s("path", "src/server.rs")),
            "take_screenshot" => screenshot(n("width", 1280), n("height", 800)),
            "get_forecast" => forecast(&s("city", "Lisbon")),
            "list_tickets" => tickets(&s("cursor", ""), n("limit", 10).clamp(1, 50) as usize),
            "get_time" => {
                let now = json!({"iso": "2026-01-15T09:30:00Z", "timezone": "UTC"});
                json!({"content": [{"type": "text", "text": now.to_string()}], "structuredContent": now})
            }
            "create_ticket" => text_result(&format!(
                "Created ticket T-1001: {}",
                s("title", "untitled")
            )),
            "download_archive" => archive(&s("name", "build")),
            "list_docs" => docs(),
            "run_query" => query(&s("sql", "")),
            other => return Err(format!("unknown tool `{other}`")),
        })
    }
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn read_file(path: &str) -> Value {
    let mime = match path.rsplit('.').next() {
        Some("rs") => "text/x-rust",
        Some("ts") => "text/typescript",
        _ => "text/plain",
    };
    json!({"content": [{"type": "resource", "resource": {
        "uri": format!("file:///workspace/{path}"), "mimeType": mime, "text": payloads::file_text(path)
    }}]})
}

fn screenshot(width: u64, height: u64) -> Value {
    let (w, h) = (width.clamp(16, 4096) as u32, height.clamp(16, 4096) as u32);
    let png = payloads::png_image(w, h, 7);
    let data = base64::engine::general_purpose::STANDARD.encode(png);
    json!({"content": [
        {"type": "text", "text": format!("Screenshot of the current page ({w}x{h})")},
        {"type": "image", "data": data, "mimeType": "image/png"}
    ]})
}

fn forecast(city: &str) -> Value {
    let body = payloads::forecast(city);
    json!({"content": [{"type": "text", "text": serde_json::to_string_pretty(&body).unwrap_or_default()}], "structuredContent": body})
}

fn tickets(cursor: &str, limit: usize) -> Value {
    let offset = cursor
        .strip_prefix("t-")
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (items, next) = payloads::list_page(offset, limit, 137);
    let body = json!({
        "tickets": items, "total_count": 137, "returned": limit.min(137usize.saturating_sub(offset)),
        "next_cursor": next.map(|n| format!("t-{n}"))
    });
    text_result(&body.to_string())
}

fn archive(name: &str) -> Value {
    let bytes: Vec<u8> = payloads::png_image(64, 64, name.len() as u64);
    let blob = base64::engine::general_purpose::STANDARD.encode(bytes.repeat(8));
    json!({"content": [{"type": "resource", "resource": {
        "uri": format!("artifact://{name}.tar.gz"), "mimeType": "application/gzip", "blob": blob
    }}]})
}

fn docs() -> Value {
    let links: Vec<Value> = ["getting-started", "authentication", "rate-limits", "webhooks", "errors"]
        .iter()
        .map(|d| json!({"type": "resource_link", "uri": format!("docs://{d}"), "name": d, "mimeType": "text/markdown"}))
        .collect();
    json!({"content": links})
}

fn query(sql: &str) -> Value {
    if !sql.trim_start().to_ascii_lowercase().starts_with("select") {
        return json!({"content": [{"type": "text", "text": "Error: only SELECT statements are allowed"}], "isError": true});
    }
    text_result("| day | orders |\n|---|---|\n| 2026-01-13 | 412 |\n| 2026-01-14 | 398 |")
}

/// A result read into rmcp's type, marked `resultType: "complete"` (2026-07-28 clients require
/// it; rmcp takes it off for earlier ones).
pub fn from_json<T: DeserializeOwned>(v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(crate::measure::marked_complete(v))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

impl ServerHandler for DemoServer {
    fn get_info(&self) -> ServerConfig {
        let info = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": format!("mcp-budget-{}", self.name), "version": env!("CARGO_PKG_VERSION")},
            "instructions": INSTRUCTIONS
        });
        serde_json::from_value(info).expect("static server info is valid")
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = tool_definitions();
        let page: usize = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) => c
                .strip_prefix("page-")
                .and_then(|n| n.parse().ok())
                .filter(|n| n * TOOLS_PAGE_SIZE < tools.len())
                .ok_or_else(|| ErrorData::invalid_params(format!("invalid cursor `{c}`"), None))?,
        };
        let start = page * TOOLS_PAGE_SIZE;
        let end = (start + TOOLS_PAGE_SIZE).min(tools.len());
        let mut body = json!({"tools": tools[start..end]});
        if end < tools.len() {
            body["nextCursor"] = json!(format!("page-{}", page + 1));
        }
        from_json(body)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let value = self
            .call(&request.name, &args)
            .map_err(|m| ErrorData::invalid_params(m, None))?;
        Ok(from_json::<CallToolResult>(value)?.into())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        from_json(json!({"prompts": [
            {"name": "summarize_page", "description": "Summarize a scraped page in five bullet points", "arguments": [{"name": "url", "required": true}]},
            {"name": "triage_tickets", "description": "Triage the newest support tickets by urgency"}
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let result: rmcp::model::GetPromptResult = from_json(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": format!("Run the {} prompt.", request.name)}}]
        }))?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        from_json(json!({"resources": [
            {"uri": "docs://getting-started", "name": "getting-started", "mimeType": "text/markdown"},
            {"uri": "docs://rate-limits", "name": "rate-limits", "mimeType": "text/markdown"},
            {"uri": "file:///workspace/src/server.rs", "name": "server.rs", "mimeType": "text/x-rust"}
        ]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = match request.uri.strip_prefix("file:///workspace/") {
            Some(path) => payloads::file_text(path),
            None => format!("# {}\n\nDemo documentation page.", request.uri),
        };
        let result: rmcp::model::ReadResourceResult = from_json(json!({
            "contents": [{"uri": request.uri, "text": text}]
        }))?;
        Ok(result.into())
    }
}
