//! `proxy`'s settings: the upstream (`-- COMMAND`, `--upstream-url` or a configured `--server`),
//! the engine tightened to the `--client` list, the options the proxy runs with, how it starts
//! its upstream, and where it listens.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mcp_budget::config::{Origin, ServerSpec, TransportSpec, Trust};
use mcp_budget::ground::calllog::CallLog;
use mcp_budget::run::proxy::{ConnectionLimits, ListenOptions, ProxyOptions};
use mcp_budget::wire::upstream::SessionOptions;

use mcp_budget::output::telemetry::{OtlpConfig, Telemetry};

use crate::app::cli::ProxyArgs;

/// What `proxy` runs with.
pub struct ProxySettings {
    pub spec: ServerSpec,
    pub opts: ProxyOptions,
    /// How the upstream is started (its environment, the era spoken, the bearer token's
    /// variable taken out of its environment).
    pub session: SessionOptions,
    /// How long the upstream has to start and answer `initialize`.
    pub start_timeout: Duration,
    /// The budget in words for the start-up line ("8,000 tokens, 12,000 bytes (Codex CLI)").
    pub limits: String,
    /// `Some` with `--listen`: serve streamable HTTP there instead of stdio.
    pub listen: Option<ListenOptions>,
    /// `--metrics-listen`: where `/metrics` is served on its own, and the bearer token it wants.
    pub metrics_listen: Option<(std::net::SocketAddr, Option<String>)>,
    /// The spans and metrics of every request (kept to flush them at the end).
    pub telemetry: Arc<Telemetry>,
}

impl ProxySettings {
    pub fn resolve(args: &ProxyArgs) -> anyhow::Result<ProxySettings> {
        let bearer = bearer(args)?;
        let spec = upstream(args)?;
        let (engine, limits) =
            super::client_engine(&args.engine, args.tokenizer, args.client.as_ref())?;
        let name = args.name.clone().unwrap_or_else(|| spec.name.clone());
        let telemetry = Arc::new(telemetry(args, &name)?);
        let log = match &args.log {
            Some(p) => {
                Some(Arc::new(CallLog::open(p).with_context(|| {
                    format!("cannot open the call log {}", p.display())
                })?))
            }
            None => None,
        };
        let opts = ProxyOptions {
            server: name,
            allow: args.allow.clone(),
            deny: args.deny.clone(),
            engine: Arc::new(engine.with_reader_tool()),
            tokenizer: args.tokenizer,
            log,
            transport: if args.listen.is_some() {
                "http"
            } else {
                "stdio"
            }
            .into(),
            lazy_tools: args.lazy_tools,
            lazy_expose: args.lazy_expose.map(Duration::from_secs),
            lean_schemas: args.lean_schemas,
            clients: args
                .client
                .as_ref()
                .map(|c| c.profiles.clone())
                .unwrap_or_default(),
            telemetry: telemetry.clone(),
        };
        // the token guards the proxy; the upstream has no business seeing it
        let session = SessionOptions {
            env_remove: args.bearer_token_env.iter().cloned().collect(),
            server_env: super::server_env(&args.trust),
            protocol: args.upstream_protocol,
            protocol_flag: "--upstream-protocol",
            start_timeout: Duration::from_secs(args.timeout),
            auth: super::auth_dir(),
            ..SessionOptions::default()
        };
        Ok(ProxySettings {
            spec,
            opts,
            session,
            start_timeout: Duration::from_secs(args.timeout),
            limits,
            listen: listen(args, bearer.clone()),
            metrics_listen: args.metrics_listen.map(|addr| (addr, bearer)),
            telemetry,
        })
    }
}

/// `--listen ADDR` and what guards it: the bearer token (from `--bearer-token-env`), the hosts
/// allowed, the session and connection limits.
fn listen(args: &ProxyArgs, bearer: Option<String>) -> Option<ListenOptions> {
    let addr = args.listen?;
    Some(ListenOptions {
        addr,
        bearer,
        extra_hosts: args.allow_hosts.clone(),
        session_idle: Duration::from_secs(args.session_idle_secs),
        max_sessions: args.max_sessions,
        limits: ConnectionLimits {
            max_connections: args.max_connections,
            header_timeout: Duration::from_secs(args.header_timeout_secs),
            body_timeout: Duration::from_secs(args.body_timeout_secs),
        },
    })
}

/// The token of `--bearer-token-env VAR`, which guards `--listen` and `--metrics-listen`.
fn bearer(args: &ProxyArgs) -> anyhow::Result<Option<String>> {
    let Some(var) = &args.bearer_token_env else {
        return Ok(None);
    };
    anyhow::ensure!(
        args.listen.is_some() || args.metrics_listen.is_some(),
        "--bearer-token-env guards --listen or --metrics-listen: give one of them"
    );
    let token = std::env::var(var)
        .ok()
        .filter(|t| !t.is_empty())
        .with_context(|| format!("--bearer-token-env: ${var} is not set"))?;
    Ok(Some(token))
}

/// The proxy's telemetry: OTLP when `--otlp` or the standard variables ask for it, Prometheus
/// text when `--listen` or `--metrics-listen` serves it; lost data is said on stderr, once.
fn telemetry(args: &ProxyArgs, server: &str) -> anyhow::Result<Telemetry> {
    let var = |name: &str| std::env::var(name).ok();
    let otlp = OtlpConfig::from_env(args.otlp, &var)?;
    let prometheus = args.listen.is_some() || args.metrics_listen.is_some();
    if otlp.is_none() && !prometheus {
        return Ok(Telemetry::off());
    }
    let say =
        Box::new(|m: String| crate::app::printer::warn(&format!("mcp-budget proxy: warning: {m}")));
    Ok(Telemetry::start(
        server,
        args.tokenizer.name(),
        otlp,
        prometheus,
        &var,
        say,
    )?)
}

/// The headers of `--header Name: value` and of `--header-env Name: VAR` (the variable's value,
/// which never shows: every header value is a secret the redactor knows).
fn headers(args: &ProxyArgs) -> anyhow::Result<BTreeMap<String, String>> {
    let mut headers = BTreeMap::new();
    for h in &args.headers {
        let (k, v) = h.split_once(':').with_context(|| {
            format!(
                "--header `{}` is not `Name: value`",
                h.split(':').next().unwrap_or("")
            )
        })?;
        headers.insert(k.trim().to_string(), v.trim().to_string());
    }
    for h in &args.header_envs {
        let (k, var) = h
            .split_once(':')
            .map(|(k, v)| (k.trim(), v.trim()))
            .filter(|(k, v)| !k.is_empty() && !v.is_empty())
            .with_context(|| format!("--header-env `{h}` is not `Name: VAR`"))?;
        let value = std::env::var(var)
            .ok()
            .filter(|v| !v.is_empty())
            .with_context(|| format!("--header-env `{k}`: ${var} is not set"))?;
        headers.insert(k.to_string(), value);
    }
    if let Some(var) = &args.upstream_bearer_env {
        let token = std::env::var(var)
            .ok()
            .filter(|v| !v.is_empty())
            .with_context(|| format!("--upstream-bearer-env: ${var} is not set"))?;
        headers.insert("Authorization".into(), format!("Bearer {token}"));
    }
    Ok(headers)
}

/// The upstream from `-- COMMAND`, `--upstream-url` or `--server`.
fn upstream(args: &ProxyArgs) -> anyhow::Result<ServerSpec> {
    let origin = |key: &str| Origin {
        file: "<command line>".into(),
        key: key.into(),
        client: "proxy".into(),
    };
    if let Some((command, rest)) = args.command.split_first() {
        // a launcher's package, not the launcher (`npx -y PKG` is PKG)
        let name = mcp_budget::config::launch_name(command, rest);
        return Ok(ServerSpec {
            name,
            origin: origin("--"),
            transport: TransportSpec::Stdio {
                command: command.clone(),
                args: rest.to_vec(),
                env: BTreeMap::new(),
                cwd: None,
            },
            probes: Vec::new(),
            timeout_secs: None,
            trust: Trust::Named,
        });
    }
    if let Some(url) = &args.upstream_url {
        let headers = headers(args)?;
        let transport = if args.sse {
            TransportSpec::Sse {
                url: url.clone(),
                headers,
            }
        } else {
            TransportSpec::Http {
                url: url.clone(),
                headers,
            }
        };
        return Ok(ServerSpec {
            name: "remote".into(),
            origin: origin("--upstream-url"),
            transport,
            probes: Vec::new(),
            timeout_secs: None,
            trust: Trust::Named,
        });
    }
    let Some(name) = &args.server else {
        anyhow::bail!(
            "no upstream: give `-- COMMAND ARGS...`, --upstream-url URL or --server NAME"
        );
    };
    let mut sources = super::sources(&args.configs, &args.trust)?;
    if let Some(spec) = sources.untrusted_named(name) {
        anyhow::bail!("{}", mcp_budget::output::report::untrusted_notice(spec));
    }
    sources
        .servers
        .select(std::slice::from_ref(name))
        .map_err(|e| anyhow::anyhow!(e))?;
    sources
        .servers
        .servers
        .into_iter()
        .next()
        .with_context(|| format!("unknown server `{name}`"))
}
