//! The lab's own MCP server (`mcp-budget lab-server`, rmcp over stdio): `lab_result`, which
//! returns the synthetic result of a shape at a size, for `lab --derive` to bisect on; with
//! `--tools N`, N tools in all (the others numbered stand-ins of realistic size, each
//! answering with its own name), listed `--page-size` to a page, so what a client offers its
//! model of 11, 58 or 158 tools over one or several pages is measured; with `--era`, a server
//! of the handshake era only, so whether a client falls back from `server/discover` is too.

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, DiscoverRequestMethod, DiscoverResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

use super::shapes::{self, Shape};
use crate::wire::demo::from_json;

/// The tool's name.
pub const TOOL: &str = "lab_result";

/// The largest result it makes, in characters.
pub const MAX_CHARS: usize = 4_000_000;

/// The lab's server: `tools` tools in all (at least `lab_result`), `page_size` to a
/// tools/list page (0: one page), speaking the eras `era` names.
#[derive(Debug, Clone)]
pub struct ShapeServer {
    pub tools: usize,
    pub page_size: usize,
    pub era: ServerEra,
}

/// The protocol eras the lab's server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerEra {
    /// 2026-07-28 (`server/discover`) and the `initialize` handshake.
    #[default]
    Both,
    /// The handshake era only: `server/discover` in 2026-07-28 refused with -32022 and the
    /// versions it speaks (a current SDK's server that speaks no newer revision).
    Legacy,
    /// A server from before 2026: `server/discover` is a method it does not know (-32601).
    Unaware,
}

impl Default for ShapeServer {
    fn default() -> Self {
        ShapeServer {
            tools: 1,
            page_size: 0,
            era: ServerEra::Both,
        }
    }
}

/// The name of the stand-in tool `n` (1-based; `lab_result` is tool 0).
pub fn stand_in(n: usize) -> String {
    format!("lab_tool_{n:03}")
}

impl ShapeServer {
    /// Every tool definition, in list order: `lab_result` first.
    pub fn definitions(&self) -> Vec<Value> {
        let names: Vec<&str> = Shape::ALL.iter().map(|s| s.name()).collect();
        let mut tools = vec![json!({
            "name": TOOL,
            "description": "Return a synthetic result of the given shape and size.",
            "inputSchema": {"type": "object", "properties": {
                "shape": {"type": "string", "enum": names},
                "chars": {"type": "integer", "minimum": 1, "maximum": MAX_CHARS}
            }, "required": ["shape", "chars"]}
        })];
        for n in 1..self.tools.max(1) {
            tools.push(json!({
                "name": stand_in(n),
                "description": format!("Stand-in tool {n} of the lab's server: look up one record of collection {n} by its id and return its fields as text. Use it only when the task names collection {n}."),
                "inputSchema": {"type": "object", "properties": {
                    "id": {"type": "string", "description": "The record's id"},
                    "fields": {"type": "array", "items": {"type": "string"}, "description": "Fields to return (all when omitted)"}
                }, "required": ["id"]}
            }));
        }
        tools
    }

    /// The tools/list page asked for with `cursor` (`page-N`, N from 2), and the next cursor.
    pub fn page(&self, cursor: Option<&str>) -> Result<Value, String> {
        let all = self.definitions();
        let size = if self.page_size == 0 {
            all.len()
        } else {
            self.page_size
        };
        let page = match cursor {
            None => 1,
            Some(c) => c
                .strip_prefix("page-")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| *n >= 2 && (n - 1) * size < all.len())
                .ok_or_else(|| format!("unknown cursor `{c}`"))?,
        };
        let from = (page - 1) * size;
        let to = (from + size).min(all.len());
        let mut body = json!({"tools": all[from..to]});
        if to < all.len() {
            body["nextCursor"] = json!(format!("page-{}", page + 1));
        }
        Ok(body)
    }
}

impl ServerHandler for ShapeServer {
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(match self.era {
            ServerEra::Legacy => ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25),
            _ => ProtocolVersion::KNOWN_VERSIONS,
        })
    }

    async fn discover(&self, _: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        if self.era == ServerEra::Unaware {
            return Err(ErrorData::method_not_found::<DiscoverRequestMethod>());
        }
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

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
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let page = self
            .page(cursor)
            .map_err(|m| ErrorData::invalid_params(m, None))?;
        from_json(page)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let bad = |m: String| ErrorData::invalid_params(m, None);
        if request.name != TOOL {
            let n = request
                .name
                .strip_prefix("lab_tool_")
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|n| (1..self.tools).contains(n))
                .ok_or_else(|| bad(format!("unknown tool `{}`", request.name)))?;
            let text = format!("{}: no record", stand_in(n));
            return Ok(from_json::<CallToolResult>(
                json!({"content": [{"type": "text", "text": text}]}),
            )?
            .into());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names(page: &Value) -> Vec<String> {
        page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn a_list_of_158_tools_in_pages_of_50_is_four_pages_with_every_tool_once() {
        let server = ShapeServer {
            tools: 158,
            page_size: 50,
            ..ShapeServer::default()
        };
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let page = server.page(cursor.as_deref()).unwrap();
            pages += 1;
            all.extend(names(&page));
            match page.get("nextCursor") {
                Some(c) => cursor = Some(c.as_str().unwrap().to_string()),
                None => break,
            }
        }
        assert_eq!(pages, 4);
        assert_eq!(all.len(), 158);
        assert_eq!(all[0], TOOL);
        assert_eq!(all[157], "lab_tool_157");
        let unique: std::collections::HashSet<&String> = all.iter().collect();
        assert_eq!(unique.len(), 158);
        assert!(server.page(Some("page-5")).is_err());
        assert!(server.page(Some("bogus")).is_err());
    }

    #[test]
    fn one_page_holds_every_tool_and_no_cursor() {
        let server = ShapeServer {
            tools: 11,
            page_size: 0,
            ..ShapeServer::default()
        };
        let page = server.page(None).unwrap();
        assert_eq!(names(&page).len(), 11);
        assert!(page.get("nextCursor").is_none());
        // the default is lab_result alone
        assert_eq!(names(&ShapeServer::default().page(None).unwrap()), [TOOL]);
    }
}
