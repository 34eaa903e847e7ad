//! `mcp-budget lab`: load the servers (or the demo), move onto loopback, run the clients, print
//! the table or the JSON. `lab-tap` is the tap a lab client mounts as its MCP server.

use std::time::Duration;

use mcp_budget::lab::{loopback_only, run_lab, Isolation, LabOptions};

use crate::app::cli::{LabArgs, LabTapArgs, ListFormat};
use crate::app::exit::Failure;
use crate::app::printer::warn;
use crate::app::settings;

pub fn run(args: LabArgs) -> anyhow::Result<()> {
    let settings::Lab {
        exe,
        servers,
        adapters,
        client_bins,
        derive,
        asked,
    } = settings::Lab::resolve(&args)?;
    // before the runtime starts its threads: they and every child inherit the namespace
    let isolation = if args.no_isolation {
        warn("warning: --no-isolation: the clients run on the machine's network (their model URLs are checked to be 127.0.0.1, nothing else is)");
        Isolation::UrlsOnly
    } else {
        loopback_only()?
    };
    let opts = LabOptions {
        adapters,
        client_bins,
        npm_folders: mcp_budget::lab::npm_folders(&args.npm_dirs),
        servers,
        timeout: Duration::from_secs(args.timeout),
        keep: args.keep,
        isolation,
        tokenizer: args.tokenizer,
        exe,
        derive,
        jobs: args.jobs.into(),
    };
    let report = super::runtime()?.block_on(async {
        let signals = super::signals()?;
        tokio::select! {
            r = run_lab(&opts, |step| warn(&format!("lab: {step}"))) => Ok::<_, anyhow::Error>(Some(r)),
            signal = signals => Err(Failure::Signalled(signal).into()),
        }
    })?;
    let Some(report) = report else {
        return Err(Failure::Reported.into());
    };
    crate::app::printer::rendered(args.format == ListFormat::Table, |out| {
        mcp_budget::lab::render(&report, args.format.listing(None), out)
    })?;
    let failed = report.clients.iter().any(|c| {
        c.servers
            .iter()
            .any(|s| s.error.is_some() || !s.probe_errors.is_empty())
    });
    // a client asked for and not found measured nothing: said, and the run fails (exit 2)
    let not_found = report.not_found(&asked);
    for c in &not_found {
        warn(&format!(
            "error: lab: {} (`{}`) was not measured: not found in {}",
            c.name,
            c.id,
            c.looked_in.join(", ")
        ));
    }
    // a client that moved from its profile: said always, a failure under --check
    let drift = report.drift();
    let level = if args.check { "error" } else { "warning" };
    for line in &drift {
        warn(&format!("{level}: lab: {line}"));
    }
    Failure::unless_failed(failed || !not_found.is_empty())?;
    if args.check && !drift.is_empty() {
        return Err(Failure::GateFailed.into());
    }
    Ok(())
}

/// `lab-tap`: relay stdio to the server, writing the transcript.
pub fn tap(args: LabTapArgs) -> anyhow::Result<()> {
    let runtime = super::runtime()?;
    let code = runtime.block_on(mcp_budget::lab::tap::run(
        &args.out,
        args.env_file.as_deref(),
        &args.command,
    ));
    // the read of stdin may still wait for the client: the tap ends without waiting for it
    runtime.shutdown_background();
    Failure::unless_failed(code? != 0)
}

/// `lab-server`: the lab's synthetic-result server on stdio.
pub fn shape_server(args: &crate::app::cli::LabServerArgs) -> anyhow::Result<()> {
    use mcp_budget::lab::shape_server::ServerEra;
    use rmcp::ServiceExt;
    let server = mcp_budget::lab::shape_server::ShapeServer {
        tools: args.tools.into(),
        page_size: args.page_size.into(),
        era: match args.era.as_str() {
            "legacy" => ServerEra::Legacy,
            "unaware" => ServerEra::Unaware,
            _ => ServerEra::Both,
        },
    };
    super::runtime()?.block_on(async {
        let running = server.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        Ok(())
    })
}
