//! `lab`'s settings: this executable (the tap the clients mount), the servers they mount (the
//! files given, the servers on standard input, else the demo), the adapters of the clients run,
//! their binaries, and the shapes `--derive` bisects.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use mcp_budget::lab::{Adapter, LabServer, Shape};

use crate::app::cli::LabArgs;
use crate::app::printer::warn;

/// What `lab` runs with (the network isolation is set up by the command, before its runtime
/// starts any thread).
pub struct Lab {
    pub exe: PathBuf,
    pub servers: Vec<LabServer>,
    pub adapters: Vec<Adapter>,
    pub client_bins: BTreeMap<String, PathBuf>,
    pub derive: Vec<Shape>,
    /// The clients asked for by id (`--client`, else `--client-bin` and `--adapter`): a run
    /// that does not find one of them fails; none asked, a run that finds no client fails.
    pub asked: Vec<String>,
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
        let known = known_adapters(args)?;
        let adapters = chosen(&known, &args.clients)?;
        let client_bins = client_bins(&args.client_bins, &known, &adapters)?;
        let asked = asked(args, &known, &client_bins);
        Ok(Lab {
            servers,
            adapters,
            client_bins,
            derive,
            exe,
            asked,
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
            warn(&mcp_budget::output::report::untrusted_notice(s));
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

/// Every adapter known: the built-in ones, and those given with --adapter (in place of the
/// built-in one with their id).
fn known_adapters(args: &LabArgs) -> anyhow::Result<Vec<Adapter>> {
    let mut all = Adapter::built_in();
    for path in &args.adapters {
        let a = Adapter::load(path)?;
        all.retain(|b| b.id != a.id);
        all.push(a);
    }
    Ok(all)
}

/// The adapters `ids` names (--client, in its order), else all; an unknown id is an error that
/// lists the known ones.
fn chosen(known: &[Adapter], ids: &[String]) -> anyhow::Result<Vec<Adapter>> {
    if ids.is_empty() {
        return Ok(known.to_vec());
    }
    ids.iter()
        .map(|id| {
            known
                .iter()
                .find(|a| &a.id == id)
                .cloned()
                .ok_or_else(|| unknown_client(id, known))
        })
        .collect()
}

fn unknown_client(id: &str, known: &[Adapter]) -> anyhow::Error {
    let ids: Vec<&str> = known.iter().map(|a| a.id.as_str()).collect();
    anyhow::anyhow!("unknown client `{id}` (known: {})", ids.join(", "))
}

/// The clients asked for by id: those --client names, else those --client-bin and --adapter
/// name (the adapters' own ids), each once.
fn asked(args: &LabArgs, known: &[Adapter], bins: &BTreeMap<String, PathBuf>) -> Vec<String> {
    if !args.clients.is_empty() {
        let mut ids = args.clients.clone();
        ids.dedup();
        return ids;
    }
    let given = known.iter().filter(|a| !a.origin.starts_with("built-in:"));
    let mut ids: Vec<String> = bins
        .keys()
        .cloned()
        .chain(given.map(|a| a.id.clone()))
        .collect();
    ids.sort();
    ids.dedup();
    ids
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

/// `--client-bin ID=PATH` per client run; an id no adapter has, or one of a client not run,
/// is an error (its executable would be ignored).
fn client_bins(
    given: &[String],
    known: &[Adapter],
    run: &[Adapter],
) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    given
        .iter()
        .map(|g| {
            let (id, path) = g
                .split_once('=')
                .with_context(|| format!("--client-bin `{g}` is not ID=PATH"))?;
            if !known.iter().any(|a| a.id == id) {
                return Err(unknown_client(id, known).context("--client-bin"));
            }
            if !run.iter().any(|a| a.id == id) {
                let ids: Vec<&str> = run.iter().map(|a| a.id.as_str()).collect();
                anyhow::bail!(
                    "--client-bin `{id}`: not a client this run runs (--client {})",
                    ids.join(",")
                );
            }
            Ok((id.to_string(), PathBuf::from(path)))
        })
        .collect()
}
