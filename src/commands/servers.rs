//! `mcp-budget servers`: what discovery (or the files given) finds, whether each server may be
//! started and with which environment, secrets redacted.

use mcp_budget::report::render_servers;

use crate::cli::{ListFormat, ServersArgs};
use crate::exit::Failure;

pub fn run(args: ServersArgs) -> anyhow::Result<()> {
    let sources = crate::settings::sources(&args.configs, &args.trust)?;
    if args.configs.is_empty() && sources.files.is_empty() && sources.file_errors.is_empty() {
        crate::printer::warn(
            "no MCP client config found in the standard places (see `mcp-budget servers --help`)",
        );
    }
    let env = crate::settings::server_env(&args.trust);
    crate::printer::rendered(args.format == ListFormat::Table, |out| {
        render_servers(&sources, env, args.format.listing(None), out)
    })?;
    let broken = !sources.file_errors.is_empty() || !sources.servers.errors.is_empty();
    Failure::unless_failed(broken)
}
