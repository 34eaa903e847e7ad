//! `mcp-budget servers`: what discovery (or the files given) finds, whether each server may be
//! started and with which environment, secrets redacted.

use mcp_budget::report::{render_server_list, server_list_json};

use crate::cli::{ListFormat, ServersArgs};
use crate::exit::ExitStatus;

pub fn run(args: ServersArgs) -> anyhow::Result<ExitStatus> {
    let sources = crate::settings::sources(&args.configs, &args.trust)?;
    if args.configs.is_empty() && sources.files.is_empty() && sources.file_errors.is_empty() {
        crate::printer::warn(
            "no MCP client config found in the standard places (see `mcp-budget servers --help`)",
        );
    }
    let env = crate::settings::server_env(&args.trust);
    match args.format {
        ListFormat::Table => crate::printer::print(&render_server_list(&sources, env))?,
        // written as it is serialised: a list of 200,000 servers is never one string
        ListFormat::Json => crate::printer::print_with(|out| {
            serde_json::to_writer_pretty(&mut *out, &server_list_json(&sources, env))?;
            out.write_all(b"\n")
        })?,
    }
    let broken = !sources.file_errors.is_empty() || !sources.servers.errors.is_empty();
    Ok(if broken {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    })
}
