//! `lab`'s settings: this executable (the tap the clients mount), the servers they mount (the
//! files given, the servers on standard input, else the demo), the adapters of the clients run,
//! their binaries, and the shapes `--derive` bisects.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use mcp_budget::lab::{Adapter, LabServer, Shape};

use crate::cli::LabArgs;
use crate::printer::warn;

/// What `lab` runs with (the network isolation is set up by the command, before its runtime
/// starts any thread).
pub struct Lab {
    pub exe: PathBuf,
    pub servers: Vec<LabServer>,
    pub adapters: Vec<Adapter>,
    pub client_bins: BTreeMap<String, PathBuf>,
    pub derive: Vec<Shape>,
}

impl Lab {
    pub fn resolve(args: &LabArgs) -> anyhow::Result<Lab> {
        let exe = std::env::current_exe().context("finding this executable")?;
        let derive = shapes(args)?;
        let servers = if args.servers_on_stdin {
            serde_json::from_reader(std::io::stdin().lock())
                .context("reading the servers on standard input")?
        } else if derive.is_empty() || !args.files.is_empty() || !args.configs.is_empty() {
            servers(args, &exe)?
        } else {
            Vec::new()
        };
        Ok(Lab {
            servers,
            adapters: adapters(args)?,
            client_bins: client_bins(&args.client_bins)?,
            derive,
            exe,
        })
    }
}

/// The servers the clients mount: from the files given or found, else the demo.
fn servers(args: &LabArgs, exe: &Path) -> anyhow::Result<Vec<LabServer>> {
    let mut files = args.files.clone();
    files.extend(args.configs.iter().cloned());
    let specs = if files.is_empty() {
        // the lab measures clients: with no file named, the demo is the server, not whatever
        // the user's own configs hold
        super::demo()?.servers.servers
    } else {
        let mut sources = super::sources(&files, &args.trust)?;
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
