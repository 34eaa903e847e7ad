//! The lab's own MCP server (`mcp-budget lab-server`, rmcp over stdio): one tool, `lab_result`,
//! that returns the synthetic result of a shape at a size, for `lab --derive` to bisect on.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use super::shapes::{self, Shape};
use crate::demo::from_json;

/// The tool's name.
pub const TOOL: &str = "lab_result";

/// The largest result it makes, in characters.
pub const MAX_CHARS: usize = 4_000_000;

/// The lab's server.
#[derive(Debug, Clone, Default)]
pub struct ShapeServer;

impl ServerHandler for ShapeServer {
    fn get_info(&self) -> ServerConfig {
        let info = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "mcp-budget-lab", "version": env!("CARGO_PKG_VERSION")},
        });
        serde_json::from_value(info).expect("static server info is valid")
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let names: Vec<&str> = Shape::ALL.iter().map(|s| s.name()).collect();
        from_json(json!({"tools": [{
            "name": TOOL,
            "description": "Return a synthetic result of the given shape and size.",
            "inputSchema": {"type": "object", "properties": {
                "shape": {"type": "string", "enum": names},
                "chars": {"type": "integer", "minimum": 1, "maximum": MAX_CHARS}
            }, "required": ["shape", "chars"]}
        }]}))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let bad = |m: String| ErrorData::invalid_params(m, None);
        if request.name != TOOL {
            return Err(bad(format!("unknown tool `{}`", request.name)));
        }
        let shape = args
            .get("shape")
            .and_then(Value::as_str)
            .and_then(Shape::parse)
            .ok_or_else(|| bad("`shape` must be one of the listed shapes".into()))?;
        let chars = args
            .get("chars")
            .and_then(Value::as_u64)
            .filter(|&n| n >= 1 && n as usize <= MAX_CHARS)
            .ok_or_else(|| bad(format!("`chars` must be 1 to {MAX_CHARS}")))?;
        Ok(from_json::<CallToolResult>(shapes::result(shape, chars as usize))?.into())
    }
}
