//! The results the proxy makes itself (a find, a read page, an error that carries tool
//! definitions or quotes what the client sent) go through the same engine, budget and client
//! limits as an upstream's, and say what they left out. What a client sent is capped before it
//! is matched or quoted back: a 400 KB tool name must cost neither seconds of CPU nor a result.

use rmcp::model::{CallToolResult, ReadResourceResult};
use rmcp::ErrorData;
use serde_json::{json, Map, Value};

use super::read::{read_within, ReadArgs, ReadError, READ_TOOL};
use super::reply::{from_json, quoted, text_json};
use super::server::Proxy;
use crate::budget::CallInfo;

impl Proxy {
    /// A result the proxy made for its tool `tool`, run through the engine under that tool's
    /// policy (the budget and the client's limits), as an upstream's result would be: what
    /// does not fit is cut, said in a note and kept in the spill store.
    pub(super) async fn own(&self, tool: &str, result: Value) -> Result<CallToolResult, ErrorData> {
        let (engine, server, name) = (
            self.shared.opts.engine.clone(),
            self.shared.opts.server.clone(),
            tool.to_string(),
        );
        let budgeted = tokio::task::spawn_blocking(move || {
            let call = CallInfo {
                server: &server,
                tool: &name,
                raw: None,
                output_schema: false,
            };
            engine.run(&call, &result)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the budget engine failed: {e}"), None))?;
        if let Some(e) = &budgeted.spill_error {
            self.shared.warn(format!(
                "`{}`/{tool}: the full text of the proxy's own {} result could not be saved: {e}",
                self.shared.opts.server,
                budgeted.strategy.name()
            ));
        }
        from_json(budgeted.result)
    }

    /// `mcp_budget_read`: a page of one of this upstream's spills, or why not.
    pub(super) async fn read_call(
        &self,
        args: Map<String, Value>,
    ) -> Result<CallToolResult, ErrorData> {
        let page = serde_json::from_value::<ReadArgs>(Value::Object(args))
            .map_err(|e| ReadError::Arguments(e.to_string()))
            .and_then(|a| self.read_page(&a));
        let result = match page {
            Ok(text) => text_json(&text, false),
            Err(e) => text_json(&e.to_string(), true),
        };
        self.own(READ_TOOL, result).await
    }

    /// One page of a spill within `mcp_budget_read`'s budget and the client's limits.
    fn read_page(&self, args: &ReadArgs) -> Result<String, ReadError> {
        let policy = self.shared.opts.engine.policy().for_tool(READ_TOOL);
        let tokenizer = self.shared.opts.tokenizer;
        read_within(
            &self.shared.spills,
            args,
            policy.budget,
            policy.size,
            tokenizer,
        )
        .map_err(|e| match e {
            ReadError::Unknown(h) => ReadError::Unknown(quoted(&h)),
            other => other,
        })
    }

    /// `resources/read` of a spill: a page, as `mcp_budget_read` serves it (the whole original
    /// of a large spill is what the budget is there to keep out). `?start_line=N&start_char=M`
    /// on the URI reads on from where a page's footer says.
    pub(super) fn read_spill_resource(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        let (handle, query) = uri.split_once('?').unwrap_or((uri, ""));
        let mut args = ReadArgs {
            handle: handle.to_string(),
            start_line: None,
            max_lines: None,
            grep: None,
            start_char: None,
        };
        for (key, value) in query.split('&').filter_map(|kv| kv.split_once('=')) {
            let n = value.parse::<usize>().ok();
            match key {
                "start_line" => args.start_line = n,
                "start_char" => args.start_char = n,
                _ => {}
            }
        }
        let text = self.read_page(&args).map_err(|e| match e {
            ReadError::Unknown(_) => ErrorData::resource_not_found(
                format!("no spill `{}` of this server", quoted(uri)),
                None,
            ),
            other => ErrorData::invalid_params(other.to_string(), None),
        })?;
        from_json(json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]}))
    }
}
