//! `audit --client measured`: after the audit, the lab runs the report's clients that have an
//! adapter on the same servers and probes, in a child `mcp-budget lab` (the lab moves its
//! process onto a loopback-only network, which the audit's own URL servers must not share).
//! The servers go to it as JSON on standard input, so their variables never reach a command
//! line, and what it measured comes back as the lab's JSON.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context;
use mcp_budget::config::ServerSpec;
use mcp_budget::lab::{Adapter, LabReport};
use mcp_budget::measure::facts::Report;

use crate::app::printer::warn;

/// Run the lab for `report`'s clients on `specs` and merge what it measured into `report`.
pub fn measure(report: &mut Report, specs: &[ServerSpec]) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("finding this executable")?;
    let adapters: Vec<String> = Adapter::built_in()
        .into_iter()
        .map(|a| a.id)
        .filter(|id| report.clients.iter().any(|p| &p.id == id))
        .collect();
    anyhow::ensure!(
        !adapters.is_empty(),
        "--client measured: none of the clients chosen has a lab adapter"
    );
    let mut servers = Vec::new();
    for spec in specs {
        match mcp_budget::lab::LabServer::from_spec(spec, &exe) {
            Ok(s) => servers.push(s),
            Err(why) => warn(&format!(
                "warning: `{}` stays modelled in every client: {why}",
                spec.name
            )),
        }
    }
    anyhow::ensure!(
        !servers.is_empty(),
        "--client measured: no server the lab can mount (it mounts stdio servers, the demo and recordings)"
    );
    let lab = run_child(&exe, &adapters, &servers, &report.tokenizers[0])?;
    mcp_budget::lab::merge_into_report(report, &lab);
    for c in &report.measured_clients {
        let how = match &c.version {
            Some(v) => format!("{} {v}: {}", c.name, c.status.replace('_', " ")),
            None => format!("{}: not installed", c.name),
        };
        warn(&format!("measured in the lab: {how}"));
        for e in &c.errors {
            warn(&format!("  {}: {e}", c.client));
        }
    }
    Ok(())
}

fn run_child(
    exe: &Path,
    adapters: &[String],
    servers: &[mcp_budget::lab::LabServer],
    tokenizer: &str,
) -> anyhow::Result<LabReport> {
    let mut child = Command::new(exe)
        .args([
            "lab",
            "--format",
            "json",
            "--servers-on-stdin",
            "--tokenizer",
        ])
        .arg(tokenizer)
        .arg("--client")
        .arg(adapters.join(","))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("--client measured: cannot start the lab")?;
    let json = serde_json::to_vec(servers)?;
    // the lab reads all of it before it starts a client: a write error is the lab gone
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&json)
            .context("--client measured: the lab did not read its servers")?;
    }
    let out = child
        .wait_with_output()
        .context("--client measured: waiting for the lab")?;
    // the lab exits 2 when a run failed, and still says what it measured
    serde_json::from_slice(&out.stdout).with_context(|| {
        format!(
            "--client measured: the lab ended ({}) without a report (see its errors above)",
            out.status
        )
    })
}
