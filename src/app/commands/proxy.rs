//! `mcp-budget proxy`: an upstream MCP server served on stdio with every result within the
//! budget. stdout carries the protocol: everything else goes to stderr.

use std::time::Duration;

use anyhow::Context;
use mcp_budget::ground::units::thousands;
use mcp_budget::run::proxy::{listen, Proxy};
use rmcp::ServiceExt;

use crate::app::cli::ProxyArgs;
use crate::app::exit::Failure;
use crate::app::settings;

/// How long what telemetry still holds may take to reach the collector at the end.
const TELEMETRY_FLUSH: Duration = Duration::from_secs(3);

pub fn run(args: ProxyArgs) -> anyhow::Result<()> {
    let settings = settings::ProxySettings::resolve(&args)?;
    let telemetry = settings.telemetry.clone();
    let runtime = super::runtime()?;
    let status = runtime.block_on(async {
        let signalled = super::signals()?;
        let serving = serve(settings);
        tokio::pin!(serving);
        let status = tokio::select! {
            done = &mut serving => done.map(|()| None),
            signal = signalled => Ok(Some(signal)),
        };
        // the upstream ends with the proxy, however it ends: a signal, its client closing
        // stdin (the end of `serve`), an error
        mcp_budget::wire::upstream::end_all(mcp_budget::wire::upstream::GRACE).await;
        status
    });
    match status? {
        Some(signal) => {
            // stdin is read on a blocking thread that a signal leaves waiting: the call log's
            // last lines (written on blocking threads too) get half a second, not forever
            runtime.shutdown_timeout(Duration::from_millis(500));
            telemetry.shutdown(TELEMETRY_FLUSH);
            crate::app::printer::warn(&format!(
                "mcp-budget proxy: ended by {}: upstream stopped",
                signal.name()
            ));
            Err(Failure::Signalled(signal).into())
        }
        // every blocking task is done or finishes (stdin is at its end)
        None => {
            drop(runtime);
            telemetry.shutdown(TELEMETRY_FLUSH);
            Ok(())
        }
    }
}

/// Start the proxy and serve it (on stdio, or on `--listen`) until its client goes.
async fn serve(s: settings::ProxySettings) -> anyhow::Result<()> {
    let (spec, name) = (&s.spec, &s.opts.server.clone());
    let started =
        tokio::time::timeout(s.start_timeout, Proxy::start(spec, &s.session, s.opts)).await;
    let env = &s.session.server_env;
    let proxy = match started {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => anyhow::bail!("upstream `{name}`: {}", env.explain(spec, e.to_string())),
        Err(_) => anyhow::bail!(
            "upstream `{name}`: {}",
            env.explain(
                spec,
                format!("did not start within {}s", s.start_timeout.as_secs())
            )
        ),
    };
    crate::app::printer::warn(&startup_line(name, &proxy.startup, &s.limits));
    if let Some(otlp) = s.telemetry.describe() {
        crate::app::printer::warn(&format!("mcp-budget proxy: telemetry: {otlp}"));
    }
    if let Some((addr, bearer)) = s.metrics_listen.clone() {
        let (bound, serving) =
            mcp_budget::run::proxy::listen_metrics(addr, bearer, s.telemetry.clone())
                .await
                .with_context(|| format!("--metrics-listen: cannot listen on {addr}"))?;
        crate::app::printer::warn(&format!(
            "mcp-budget proxy: metrics at http://{bound}/metrics"
        ));
        tokio::spawn(serving);
    }
    if let Some(mut warnings) = proxy.warnings() {
        tokio::spawn(async move {
            while let Some(w) = warnings.recv().await {
                // an upstream's names may carry terminal escapes: printer::warn escapes them
                crate::app::printer::warn(&format!("mcp-budget proxy: warning: {w}"));
            }
        });
    }
    if let Some(options) = s.listen {
        let addr = options.addr;
        let (bound, serve) = listen(proxy, options)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        crate::app::printer::warn(&format!(
            "mcp-budget proxy: listening on http://{bound}/mcp (metrics at http://{bound}/metrics)"
        ));
        serve.await;
        return Ok(());
    }
    let running = proxy.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

/// What the proxy says when it starts: the tools and their schema tax per turn before and
/// after, and what each part of the difference came from.
fn startup_line(name: &str, s: &mcp_budget::run::proxy::Startup, limits: &str) -> String {
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
