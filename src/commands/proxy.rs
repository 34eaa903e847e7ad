//! `mcp-budget proxy`: an upstream MCP server served on stdio with every result within the
//! budget. stdout carries the protocol: everything else goes to stderr.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mcp_budget::calllog::CallLog;
use mcp_budget::config::{Origin, ServerSpec, TransportSpec, Trust};
use mcp_budget::proxy::{listen, ConnectionLimits, ListenOptions, Proxy, ProxyOptions};
use mcp_budget::tokens::Tokenizer;
use mcp_budget::units::thousands;
use mcp_budget::upstream::SessionOptions;
use rmcp::ServiceExt;

use crate::cli::ProxyArgs;
use crate::exit::ExitStatus;
use crate::settings;

pub fn run(args: ProxyArgs) -> anyhow::Result<ExitStatus> {
    let spec = upstream(&args)?;
    let tokenizer: Tokenizer = args.tokenizer.parse()?;
    let (engine, limits) = settings::for_client(
        settings::flags_engine(&args.engine, tokenizer)?,
        args.client.as_deref(),
    )?;
    let engine = engine.with_reader_tool();
    let log = match &args.log {
        Some(p) => {
            Some(Arc::new(CallLog::open(p).with_context(|| {
                format!("cannot open the call log {}", p.display())
            })?))
        }
        None => None,
    };
    let name = args.name.clone().unwrap_or_else(|| spec.name.clone());
    let opts = ProxyOptions {
        server: name.clone(),
        allow: args.allow.clone(),
        deny: args.deny.clone(),
        engine: Arc::new(engine),
        tokenizer,
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
    };
    let bearer = match &args.bearer_token_env {
        Some(var) => Some(
            std::env::var(var)
                .ok()
                .filter(|t| !t.is_empty())
                .with_context(|| format!("--bearer-token-env: ${var} is not set"))?,
        ),
        None => None,
    };
    // the token guards the proxy; the upstream has no business seeing it
    let session_opts = SessionOptions {
        env_remove: args.bearer_token_env.iter().cloned().collect(),
        server_env: settings::server_env(&args.trust),
        protocol: args.upstream_protocol,
        ..SessionOptions::default()
    };
    let runtime = super::runtime()?;
    let status = runtime.block_on(async {
        let signalled = super::signals()?;
        let serving = serve(&args, &spec, &session_opts, opts, &name, &limits, bearer);
        tokio::pin!(serving);
        let status = tokio::select! {
            done = &mut serving => done,
            status = signalled => Ok(status),
        };
        // the upstream ends with the proxy, however it ends: a signal, its client closing
        // stdin (the end of `serve`), an error
        mcp_budget::upstream::end_all(mcp_budget::upstream::GRACE).await;
        status
    });
    match &status {
        Ok(s) if *s != ExitStatus::Success => {
            // stdin is read on a blocking thread that a signal leaves waiting: the call log's
            // last lines (written on blocking threads too) get half a second, not forever
            runtime.shutdown_timeout(Duration::from_millis(500));
            crate::printer::warn(&format!(
                "mcp-budget proxy: ended by {}: upstream stopped",
                s.signal_name()
            ));
        }
        // every blocking task is done or finishes (stdin is at its end)
        _ => drop(runtime),
    }
    status
}

/// Start the proxy and serve it (on stdio, or on `--listen`) until its client goes.
async fn serve(
    args: &ProxyArgs,
    spec: &ServerSpec,
    session_opts: &SessionOptions,
    opts: ProxyOptions,
    name: &str,
    limits: &str,
    bearer: Option<String>,
) -> anyhow::Result<ExitStatus> {
    let started = tokio::time::timeout(
        Duration::from_secs(args.timeout),
        Proxy::start(spec, session_opts, opts),
    )
    .await;
    let env = &session_opts.server_env;
    let proxy = match started {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => anyhow::bail!("upstream `{name}`: {}", env.explain(spec, e.to_string())),
        Err(_) => anyhow::bail!(
            "upstream `{name}`: {}",
            env.explain(spec, format!("did not start within {}s", args.timeout))
        ),
    };
    crate::printer::warn(&startup_line(name, &proxy.startup, limits));
    if let Some(mut warnings) = proxy.warnings() {
        tokio::spawn(async move {
            while let Some(w) = warnings.recv().await {
                // an upstream's names may carry terminal escapes: printer::warn escapes them
                crate::printer::warn(&format!("mcp-budget proxy: warning: {w}"));
            }
        });
    }
    if let Some(addr) = args.listen {
        let options = ListenOptions {
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
        };
        let (bound, serve) = listen(proxy, options)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        crate::printer::warn(&format!(
            "mcp-budget proxy: listening on http://{bound}/mcp"
        ));
        serve.await;
        return Ok(ExitStatus::Success);
    }
    let running = proxy.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(ExitStatus::Success)
}

/// What the proxy says when it starts: the tools and their schema tax per turn before and
/// after, and what each part of the difference came from.
fn startup_line(name: &str, s: &mcp_budget::proxy::Startup, limits: &str) -> String {
    let mut parts = Vec::new();
    if s.hidden_tokens > 0 {
        parts.push(format!("hidden tools save {}", thousands(s.hidden_tokens)));
    }
    if !s.lean.is_empty() {
        let each: Vec<String> = s
            .lean
            .iter()
            .map(|l| {
                format!(
                    "{} {} (-{})",
                    thousands(l.removed),
                    l.transform.label(),
                    thousands(l.tokens)
                )
            })
            .collect();
        parts.push(format!("lean schemas: {}", each.join(", ")));
    }
    parts.push(format!(
        "mcp_budget_read adds {}",
        thousands(s.read_tool_tokens)
    ));
    let shown = if s.lazy {
        format!(
            "{} of {} tools behind mcp_budget_find_tools and mcp_budget_call_tool",
            s.shown_tools, s.upstream_tools
        )
    } else {
        format!("{} of {} tools shown", s.shown_tools, s.upstream_tools)
    };
    format!(
        "mcp-budget proxy: `{name}`: {shown}; schema {} -> {} tokens per turn ({}); results within {limits}",
        thousands(s.upstream_tokens),
        thousands(s.shown_tokens),
        parts.join("; ")
    )
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
        let name = std::path::Path::new(command)
            .file_stem()
            .map_or("upstream".into(), |s| s.to_string_lossy().to_string());
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
    let mut sources = settings::sources(&args.configs, &args.trust)?;
    if let Some(spec) = sources.untrusted_named(name) {
        anyhow::bail!("{}", mcp_budget::report::untrusted_notice(spec));
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
