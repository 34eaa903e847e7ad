//! `mcp-budget intercept`: the budget engine as a gateway's interceptor. The Docker MCP
//! Gateway (docker/mcp-gateway v0.43.3, `pkg/interceptors/interceptors.go`) runs an
//! `after:exec:<command>` interceptor with `/bin/sh -c` after every `tools/call`, writes the
//! bare `CallToolResult` JSON on its stdin (no JSON-RPC envelope, no tool name; `null` when the
//! call failed), and takes a non-empty stdout as the replacement result (a bare
//! `CallToolResult`); empty stdout keeps the original, and a non-zero exit or stdout that is not
//! a result fails the call. So: a result within the budget prints nothing; one over it prints
//! the budgeted result (its note and spill handle included); what cannot be read is said on
//! stderr (the gateway shows it) and passed through untouched, exit 0: a budget tool must not
//! turn a tool's answer into an error. A bad flag or policy is exit 2, before any input.

use std::io::Read;

use anyhow::Context;
use mcp_budget::budget::{CallInfo, Strategy};
use serde_json::Value;

use crate::app::cli::InterceptArgs;
use crate::app::settings;

pub fn run(args: InterceptArgs) -> anyhow::Result<()> {
    let settings::Intercept { engine } = settings::Intercept::resolve(&args)?;
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("failed to read the tool result on stdin")?;
    let text = input.trim();
    if text.is_empty() || text == "null" {
        return Ok(());
    }
    let result: Value = match mcp_budget::measure::read_json(text) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            crate::app::printer::warn(
                "mcp-budget intercept: the input is not a tool result object; passed through",
            );
            return Ok(());
        }
        Err(e) => {
            crate::app::printer::warn(&format!(
                "mcp-budget intercept: the input is not JSON ({e}); passed through"
            ));
            return Ok(());
        }
    };
    let call = CallInfo {
        server: &args.server,
        tool: &args.tool,
        raw: Some(text),
        output_schema: false,
    };
    let budgeted = engine.run(&call, &result);
    if let Some(e) = &budgeted.spill_error {
        crate::app::printer::warn(&format!(
            "mcp-budget intercept: the full original could not be saved: {e}"
        ));
    }
    if budgeted.strategy == Strategy::PassThrough {
        return Ok(());
    }
    crate::app::printer::print_with(|out| {
        serde_json::to_writer(&mut *out, &budgeted.result)?;
        out.write_all(b"\n")
    })
}
