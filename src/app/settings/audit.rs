//! `audit`'s settings: the price, the baseline, the servers found (or the embedded demo), the
//! servers' session options, the tokenizers, the engine, the clients whose views are reported,
//! the recorder and, with `--gate`, the thresholds; each file's and server's error said on
//! stderr as they are found.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mcp_budget::budget::Engine;
use mcp_budget::config::{Defaults, ServerSpec, Sources};
use mcp_budget::ground::tokens::{Tokenizer, TokenizerSet};
use mcp_budget::judge::assess::pricing;
use mcp_budget::judge::gate::{load_report, Thresholds};
use mcp_budget::measure::facts::{PriceInfo, Report};
use mcp_budget::output::report::untrusted_notice;
use mcp_budget::output::telemetry::OtlpConfig;
use mcp_budget::run::audit::AuditOptions;
use mcp_budget::wire::capture::{Recorder, ReplayDefaults};
use mcp_budget::wire::upstream::{load_ca_file, SessionOptions};

use crate::app::cli::AuditArgs;
use crate::app::exit::Failure;
use crate::app::printer::warn;

/// Everything `audit` runs with, resolved before a server is started.
pub struct Plan {
    pub price: PriceInfo,
    /// `--baseline`: the report and how to name it, read before anything is written (a baseline
    /// that is this run's own audit.json in --out would otherwise be replaced by the fresh
    /// report and compared with itself).
    pub baseline: Option<(Report, String)>,
    /// The servers to audit, and the files and servers that could not be read.
    pub sources: Sources,
    pub settings: Audit,
}

impl Plan {
    /// Resolve `audit`'s flags: a bad price, baseline or setting is an error; no server to
    /// audit is [`Failure::Reported`] (said on stderr; no table is printed and the last report
    /// stays as it was).
    pub fn resolve(args: &AuditArgs) -> anyhow::Result<Plan> {
        let price = pricing::choose(Some(&args.model), args.price.as_deref())?;
        let baseline = match &args.baseline {
            Some(p) => Some((load_report(p)?, p.display().to_string())),
            None => None,
        };
        let sources = servers(args)?;
        let settings = Audit::resolve(args, &sources)?;
        Ok(Plan {
            price,
            baseline,
            sources,
            settings,
        })
    }
}

/// The servers `audit` measures: those of the files given, else of the client configs found,
/// else the embedded demo (said on stderr); `--server` picks among them. Each file and server
/// that could not be read, and each untrusted one, is said on stderr.
fn servers(args: &AuditArgs) -> anyhow::Result<Sources> {
    let mut files = args.files.clone();
    files.extend(args.configs.iter().cloned());
    let mut sources = super::sources(&files, &args.trust)?;
    let found_none = sources.servers.servers.is_empty() && sources.untrusted.is_empty();
    if files.is_empty() && found_none && sources.file_errors.is_empty() {
        warn("no MCP client config found; auditing the embedded demo server (probes/demo.toml)");
        let demo = super::demo()?;
        sources.servers.merge(demo.servers);
        sources.probe_files.extend(demo.probe_file);
    }
    for e in &sources.file_errors {
        warn(&format!("error: {e}"));
    }
    for e in &sources.servers.errors {
        warn(&format!("error: skipped {e}"));
    }
    if let Err(e) = sources.select(&args.servers) {
        warn(&format!("error: {e}"));
        return Err(Failure::Reported.into());
    }
    for s in &sources.untrusted {
        warn(&untrusted_notice(s));
    }
    // nothing to measure (every file broken, or none defines a server) is a config error
    if sources.servers.servers.is_empty() {
        // the demo is not audited in their place: a report of something else would read as
        // if the servers found had been measured
        if !sources.untrusted.is_empty() {
            warn("error: nothing audited: no server found is trusted (see above)");
        } else if sources.file_errors.is_empty() && sources.servers.errors.is_empty() {
            warn(&format!("error: {}", nothing_to_audit(&files)));
        }
        return Err(Failure::Reported.into());
    }
    Ok(sources)
}

/// The message for a run with no server to audit.
fn nothing_to_audit(files: &[std::path::PathBuf]) -> String {
    if files.is_empty() {
        return "no server to audit: the client configs found define none".into();
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    format!("no server to audit: {} define(s) none", names.join(", "))
}

/// What `audit` runs with, resolved from its flags and the probe files it loaded.
pub struct Audit {
    pub options: AuditOptions,
    /// `measured` in `--client`: the lab runs the installed clients after the audit.
    #[cfg(feature = "lab")]
    pub measured: bool,
    /// `--otlp`: where the audit's numbers are exported (the standard OTLP variables).
    pub otlp: Option<OtlpConfig>,
    /// `Some` with `--gate`: the probe files' `[gate]` tables, then the flags.
    pub thresholds: Option<Thresholds>,
}

impl Audit {
    pub fn resolve(args: &AuditArgs, sources: &Sources) -> anyhow::Result<Audit> {
        let options = audit_options(args, sources)?;
        let thresholds = if args.gate {
            Some(super::thresholds(
                super::probe_thresholds(&sources.probe_files)?,
                &args.thresholds,
            )?)
        } else {
            None
        };
        let otlp = if args.otlp {
            OtlpConfig::from_env(true, &super::env_var)?
        } else {
            None
        };
        #[cfg(not(feature = "lab"))]
        if args.clients.measured {
            return Err(super::without_lab());
        }
        Ok(Audit {
            options,
            otlp,
            #[cfg(feature = "lab")]
            measured: args.clients.measured,
            thresholds,
        })
    }
}

fn audit_options(args: &AuditArgs, sources: &Sources) -> anyhow::Result<AuditOptions> {
    let defaults = sources
        .probe_files
        .first()
        .map(|p| p.defaults.clone())
        .unwrap_or_default();
    let Defaults {
        tokenizer,
        timeout_secs,
        concurrency,
        budget,
    } = defaults;
    let tokenizers = match (&args.tokenizer, tokenizer) {
        (Some(given), _) => given.0.clone(),
        (None, Some(list)) => Tokenizer::parse_list(&list.join(","))
            .with_context(|| format!("in {}", probe_path(sources)))?,
        (None, None) => vec![Tokenizer::Cl100k],
    };
    let tokenizers = TokenizerSet::new(tokenizers);
    // never inside OUT: spilled originals can hold what a server echoed (secrets included),
    // and report folders get committed and uploaded
    let engine = super::engine(
        &args.engine,
        &sources.probe_files,
        budget,
        tokenizers.primary(),
        super::default_spill_dir(),
    )?;
    let recorder = recorder(
        args.record.as_deref(),
        &tokenizers,
        &engine,
        &sources.servers.servers,
    )?;
    Ok(AuditOptions {
        clients: args.clients.profiles.clone(),
        tokenizers,
        timeout: Duration::from_secs(args.timeout.or(timeout_secs).unwrap_or(60)),
        concurrency: args.concurrency.or(concurrency).unwrap_or(8),
        auto_probe: args.auto_probe,
        shared_min_tools: args.shared_min_tools as usize,
        session: SessionOptions {
            max_response_bytes: args.max_response_bytes,
            record: args.record.is_some(),
            protocol: args.protocol,
            server_env: super::server_env(&args.trust),
            extra_roots: match &args.ca_cert {
                Some(path) => load_ca_file(path).map_err(|e| anyhow::anyhow!("--ca-cert: {e}"))?,
                None => Vec::new(),
            },
            auth: super::auth_dir(),
            ..SessionOptions::default()
        },
        engine: Some(Arc::new(engine)),
        recorder,
    })
}

/// The recorder for `audit --record DIR`: every transcript is cleaned of every server's secrets,
/// and its `probes.toml` runs this executable with the run's tokenizers and budget.
fn recorder(
    dir: Option<&Path>,
    tokenizers: &TokenizerSet,
    engine: &Engine,
    specs: &[ServerSpec],
) -> anyhow::Result<Option<Arc<Recorder>>> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    let defaults = ReplayDefaults {
        tokenizer: tokenizers
            .all()
            .iter()
            .map(|t| t.name().to_string())
            .collect(),
        budget: Some(engine.policy().budget()),
    };
    let mut recorder = Recorder::create(dir, defaults).context("--record")?;
    recorder.redact_secrets_of(specs);
    Ok(Some(Arc::new(recorder)))
}

/// The probe file whose `[defaults]` apply, for a message.
fn probe_path(sources: &Sources) -> String {
    sources
        .probe_files
        .first()
        .map_or("the probe file".into(), |p| p.path.display().to_string())
}
