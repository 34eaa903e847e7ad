//! `mcp-budget demo-server`: the embedded demo MCP server on stdio.

use rmcp::ServiceExt;

pub fn run() -> anyhow::Result<()> {
    super::runtime()?.block_on(async {
        let server = mcp_budget::wire::demo::DemoServer::new("demo");
        let running = server.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        Ok(())
    })
}
