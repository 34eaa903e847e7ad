//! `mcp-budget lab`: load the servers (or the demo), move onto loopback, run the clients, print
//! the table or the JSON. `lab-tap` is the tap a lab client mounts as its MCP server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use mcp_budget::lab::{loopback_only, run_lab, Adapter, Isolation, LabOptions, LabServer, Shape};
use mcp_budget::tokens::Tokenizer;

use crate::cli::{LabArgs, LabFormat, LabTapArgs};
use crate::exit::ExitStatus;
use crate::printer::warn;
use crate::settings;

pub fn run(args: LabArgs) -> anyhow::Result<ExitStatus> {
    let exe = std::env::current_exe().context("finding this executable")?;
    let derive = shapes(&args)?;
    let servers = if args.servers_on_stdin {
        serde_json::from_reader(std::io::stdin().lock())
            .context("reading the servers on standard input")?
    } else if derive.is_empty() || !args.files.is_empty() || !args.configs.is_empty() {
        servers(&args, &exe)?
    } else {
        Vec::new()
    };
    let adapters = adapters(&args)?;
    let client_bins = client_bins(&args.client_bins)?;
    let tokenizer: Tokenizer = args.tokenizer.parse()?;
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
        tokenizer,
        exe,
        derive,
    };
    let report = super::runtime()?.block_on(async {
        let signals = super::signals()?;
        tokio::select! {
            r = run_lab(&opts, |step| warn(&format!("lab: {step}"))) => Ok::<_, anyhow::Error>(Some(r)),
            status = signals => Err(anyhow::anyhow!("interrupted ({status:?})")),
        }
    })?;
    let Some(report) = report else {
        return Ok(ExitStatus::Error);
    };
    match args.format {
        LabFormat::Table => crate::printer::print(&mcp_budget::lab::render_table(&report))?,
        LabFormat::Json => crate::printer::print_with(|out| {
            serde_json::to_writer_pretty(&mut *out, &report)?;
            out.write_all(b"\n")
        })?,
    }
    let failed = report.clients.iter().any(|c| {
        c.servers
            .iter()
            .any(|s| s.error.is_some() || !s.probe_errors.is_empty())
    });
    Ok(if failed {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    })
}

/// The servers the clients mount: from the files given or found, else the demo.
fn servers(args: &LabArgs, exe: &Path) -> anyhow::Result<Vec<LabServer>> {
    let mut files = args.files.clone();
    files.extend(args.configs.iter().cloned());
    let specs = if files.is_empty() {
        // the lab measures clients: with no file named, the demo is the server, not whatever
        // the user's own configs hold
        settings::demo()?.servers.servers
    } else {
        let mut sources = settings::sources(&files, &args.trust)?;
        for e in &sources.file_errors {
            warn(&format!("error: {e}"));
        }
        sources.select(&args.servers).map_err(anyhow::Error::msg)?;
        for s in &sources.untrusted {
            warn(&mcp_budget::report::untrusted_notice(s));
        }
        sources.servers.servers
    };
    let mut out = Vec::new();
    for spec in &specs {
        match LabServer::from_spec(spec, exe) {
            Ok(s) => out.push(s),
            Err(why) => warn(&format!("error: skipped server `{}`: {why}", spec.name)),
        }
    }
    anyhow::ensure!(
        !out.is_empty(),
        "no server the lab can mount (it mounts stdio servers, the demo and recordings)"
    );
    Ok(out)
}

/// The built-in adapters, those given with --adapter in place of the one with their id, then
/// the ones --client names (in its order).
fn adapters(args: &LabArgs) -> anyhow::Result<Vec<Adapter>> {
    let mut all = Adapter::built_in();
    for path in &args.adapters {
        let a = Adapter::load(path)?;
        all.retain(|b| b.id != a.id);
        all.push(a);
    }
    if args.clients.is_empty() {
        return Ok(all);
    }
    args.clients
        .iter()
        .map(|id| {
            all.iter().find(|a| &a.id == id).cloned().with_context(|| {
                let known: Vec<&str> = all.iter().map(|a| a.id.as_str()).collect();
                format!("unknown client `{id}` (known: {})", known.join(", "))
            })
        })
        .collect()
}

/// The shapes `--derive` bisects: those `--shape` names, else all.
fn shapes(args: &LabArgs) -> anyhow::Result<Vec<Shape>> {
    if !args.derive {
        return Ok(Vec::new());
    }
    if args.shapes.is_empty() {
        return Ok(Shape::ALL.to_vec());
    }
    args.shapes
        .iter()
        .map(|s| {
            Shape::parse(s).with_context(|| {
                let known: Vec<&str> = Shape::ALL.iter().map(|s| s.name()).collect();
                format!("unknown shape `{s}` (known: {})", known.join(", "))
            })
        })
        .collect()
}

fn client_bins(given: &[String]) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    given
        .iter()
        .map(|g| {
            let (id, path) = g
                .split_once('=')
                .with_context(|| format!("--client-bin `{g}` is not ID=PATH"))?;
            Ok((id.to_string(), PathBuf::from(path)))
        })
        .collect()
}

/// `lab-tap`: relay stdio to the server, writing the transcript.
pub fn tap(args: LabTapArgs) -> anyhow::Result<ExitStatus> {
    let code = super::runtime()?.block_on(mcp_budget::lab::tap::run(
        &args.out,
        args.env_file.as_deref(),
        &args.command,
    ))?;
    Ok(if code == 0 {
        ExitStatus::Success
    } else {
        ExitStatus::Error
    })
}

/// `lab-server`: the lab's synthetic-result server on stdio.
pub fn shape_server() -> anyhow::Result<ExitStatus> {
    use rmcp::ServiceExt;
    super::runtime()?.block_on(async {
        let running = mcp_budget::lab::shape_server::ShapeServer
            .serve(rmcp::transport::stdio())
            .await?;
        running.waiting().await?;
        Ok(ExitStatus::Success)
    })
}
