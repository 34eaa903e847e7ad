//! `mcp-budget schema NAME`: the JSON Schema of a document mcp-budget writes, derived from the
//! types that write it (the same text as `docs/schemas/NAME.schema.json`).

use mcp_budget::schemas::Document;

use crate::app::cli::SchemaArgs;

pub fn run(args: SchemaArgs) -> anyhow::Result<()> {
    let document = Document::from_name(&args.name)
        .ok_or_else(|| anyhow::anyhow!("no schema named `{}`", args.name))?;
    crate::app::printer::print(document.rendered())
}
