//! The audit of one server: connect, measure the lists, run the probes, all under one timeout.
//! Whatever was measured before a failure stays in the row.

use super::clients::client_rows;
use super::engine_time::{timed_pass, RUNS};
use super::lists::{definitions, list_all};
use super::{AuditObserver, AuditOptions, Phase};
use crate::budget::{CallInfo, Engine};
use crate::config::{redactor_for, Probe, ServerSpec};
use crate::measure::facts::{
    BudgetedCost, ProbeResult, ProbeStatus, ServerReport, ServerTotals, Status, ToolCost,
};
use crate::measure::{
    compact_json, measure_initialize, measure_list, measure_parsed_result, measure_tools_pages,
    model_view, schema_errors, shared_parameters, tool_error_text,
};
use crate::wire::connect::connect_recorded;
use crate::wire::upstream::{Session, Wire};

/// Audit one server; never fails: a failure is the row's `status` and `error`.
pub async fn audit_server(
    spec: &ServerSpec,
    opts: &AuditOptions,
    observer: &dyn AuditObserver,
) -> ServerReport {
    let mut report = empty_report(spec);
    let mut capture = None;
    let timeout = spec
        .timeout_secs
        .map(std::time::Duration::from_secs)
        .unwrap_or(opts.timeout);
    let audit = run(spec, opts, observer, &mut report, &mut capture);
    let outcome = tokio::time::timeout(timeout, audit).await;
    let error = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(_) => Some(format!("timed out after {}s", timeout.as_secs_f64())),
    };
    if let Some(e) = error {
        report.status = Status::Error;
        report.error = Some(opts.session.server_env.explain(spec, e));
    }
    redact(&mut report, spec);
    // recorded after the timeout too: a transcript cut short still shows where it stopped
    if let (Some(recorder), Some(capture)) = (&opts.recorder, capture) {
        let saved = recorder.clone().save(spec.clone(), capture.events()).await;
        report.warnings.extend(saved.err().map(|e| e.to_string()));
    }
    observer.finished(&report);
    report
}

/// The row of a server whose audit panicked: an error that names the bug, secrets redacted.
pub(super) fn crashed(spec: &ServerSpec, why: &str) -> ServerReport {
    let mut report = empty_report(spec);
    report.status = Status::Error;
    report.error = Some(format!(
        "mcp-budget failed while auditing it (a bug in mcp-budget; please report it): {}",
        crate::ground::text::one_line(why)
    ));
    redact(&mut report, spec);
    report
}

fn empty_report(spec: &ServerSpec) -> ServerReport {
    ServerReport::new(
        &spec.name,
        spec.transport.kind(),
        &spec.transport.to_string(),
        &spec.origin.to_string(),
    )
}

async fn run(
    spec: &ServerSpec,
    opts: &AuditOptions,
    observer: &dyn AuditObserver,
    report: &mut ServerReport,
    capture: &mut Option<Wire>,
) -> Result<(), String> {
    let set = &opts.tokenizers;
    observer.phase(&spec.name, Phase::Connecting);
    // the first answer may take as long as the server's whole timeout (a slow starter)
    let session_opts = crate::wire::upstream::SessionOptions {
        start_timeout: spec
            .timeout_secs
            .map(std::time::Duration::from_secs)
            .unwrap_or(opts.timeout),
        ..opts.session.clone()
    };
    // kept before the session opens: `--record` writes a failed negotiation's exchanges too
    let wire = Wire::new(opts.session.record);
    *capture = Some(wire.clone());
    let mut session = connect_recorded(spec, &session_opts, wire)
        .await
        .map_err(|e| e.to_string())?;
    report.discover_ended = session.discover_ended().map(str::to_string);
    let result = async {
        report.initialize_ms = Some(session.init_latency_ms);
        let init = measure_initialize(session.initialize_response().result_text(), set)
            .map_err(|e| e.to_string())?;
        report.protocol_version = session.protocol_version().or(init.protocol_version.clone());
        let eras = super::era::eras(spec, opts, &session, &init).await;
        report.eras = eras.spoken;
        report.warnings.extend(eras.cut);
        report.server_info = init.server_info.clone();
        report.instructions_tokens = init.instructions_tokens.primary;

        observer.phase(&spec.name, Phase::Listing);
        let listed = list_all(&mut session, "tools/list")
            .await
            .map_err(|e| e.to_string())?;
        let texts: Vec<&str> = listed.pages.iter().map(String::as_str).collect();
        let tools = measure_tools_pages(&texts, set).map_err(|e| e.to_string())?;
        report.tools_list = tools.list.clone();
        report.tools_list.handshake_era = eras
            .handshake
            .as_ref()
            .and_then(|h| super::era::handshake_listing(h, &texts, set));
        let defs = definitions(&texts);
        report.shared_parameters = shared_parameters(&defs, set.primary(), opts.shared_min_tools);
        report.tools_list.latency_ms = listed.latency_ms;
        report.tools_list.cursor_ignored = listed.cursor_ignored;
        // a second listing: prompt caching only works when the tools come back byte for byte
        if let Ok(again) = list_all(&mut session, "tools/list").await {
            report.tools_list.relist_identical = Some(again.pages == listed.pages);
            report.tools_list.relist_differs_at_page =
                (0..again.pages.len().max(listed.pages.len()))
                    .find(|&i| again.pages.get(i) != listed.pages.get(i))
                    .map(|i| i + 1);
            let names = |pages: &[String]| -> Vec<String> {
                pages
                    .iter()
                    .flat_map(|p| {
                        let v: serde_json::Value = serde_json::from_str(p).unwrap_or_default();
                        v["tools"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|t| t["name"].as_str().unwrap_or("").to_string())
                            .collect::<Vec<_>>()
                    })
                    .collect()
            };
            report.tools_list.relist_same_order = Some(names(&again.pages) == names(&listed.pages));
        }
        report.tools = tools.tools.clone();
        client_tokenizers(&mut report.tools, &defs, opts);
        suggest_hidden(report, &defs, set.primary());
        report.by_tokenizer = tools
            .wire
            .others
            .keys()
            .map(|name| {
                let totals = ServerTotals {
                    instructions_tokens: init.instructions_tokens.others[name],
                    tools_wire_tokens: tools.wire.others[name],
                    tools_model_tokens: tools.model.others[name],
                };
                (name.clone(), totals)
            })
            .collect();
        if init.has_prompts {
            report.prompts = optional_list(
                &mut session,
                "prompts/list",
                "prompts",
                opts,
                &mut report.warnings,
            )
            .await;
        }
        if init.has_resources {
            report.resources = optional_list(
                &mut session,
                "resources/list",
                "resources",
                opts,
                &mut report.warnings,
            )
            .await;
        }
        let probes = plan_probes(spec, report, opts.auto_probe);
        let mut typed = Vec::new();
        for (done, probe) in probes.iter().enumerate() {
            observer.phase(
                &spec.name,
                Phase::Probing {
                    done,
                    total: probes.len(),
                },
            );
            let tool = report.tools.iter().find(|t| t.name == probe.tool).cloned();
            let (mut row, result_type) =
                run_probe(&mut session, &spec.name, probe, tool, opts).await;
            if let Some(def) = defs.iter().find(|d| d["name"] == probe.tool.as_str()) {
                let args = serde_json::Value::Object(probe.arguments.clone());
                row.argument_errors = schema_errors(def.get("inputSchema"), &args);
            }
            typed.extend(result_type.map(|t| (probe.tool.clone(), t)));
            report.probes.push(row);
        }
        if session.is_modern() {
            let c = super::era::conformance(&session, &listed.pages, &typed).await;
            report.era_conformance = Some(c);
        }
        Ok(())
    }
    .await;
    report.warnings.extend(session.warnings());
    session.close().await;
    result
}

async fn optional_list(
    session: &mut Session,
    method: &str,
    key: &str,
    opts: &AuditOptions,
    warnings: &mut Vec<String>,
) -> Option<crate::measure::facts::ListCost> {
    let measured = match list_all(session, method).await {
        Ok(listed) => {
            let texts: Vec<&str> = listed.pages.iter().map(String::as_str).collect();
            measure_list(&texts, key, &opts.tokenizers).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    };
    measured.map_err(|e| warnings.push(e)).ok()
}

/// The probe file's probes, then (with auto-probe) every read-only tool that needs no arguments.
fn plan_probes(spec: &ServerSpec, report: &ServerReport, auto: bool) -> Vec<Probe> {
    let mut probes = spec.probes.clone();
    if auto {
        for tool in report
            .tools
            .iter()
            .filter(|t| t.read_only && t.required_args == 0)
        {
            if !probes.iter().any(|p| p.tool == tool.name) {
                probes.push(Probe {
                    tool: tool.name.clone(),
                    arguments: Default::default(),
                    shown_arguments: Default::default(),
                    label: None,
                });
            }
        }
    }
    probes
}

async fn run_probe(
    session: &mut Session,
    server: &str,
    probe: &Probe,
    // the tool's definition as listed: its output schema and `_meta` numbers shape the result
    tool: Option<ToolCost>,
    opts: &AuditOptions,
) -> (ProbeResult, Option<bool>) {
    let mut row = ProbeResult {
        arguments: serde_json::Value::Object(probe.shown_arguments.clone()),
        label: probe.label.clone(),
        ..ProbeResult::new(&probe.tool)
    };
    let outcome = match session.call_tool(probe).await {
        Ok(o) => o,
        Err(e) => {
            (row.status, row.error) = (ProbeStatus::Error, Some(e.to_string()));
            return (row, None);
        }
    };
    row.latency_ms = outcome.latency_ms;
    let modern = session.is_modern();
    let set = opts.tokenizers.clone();
    let response = outcome.response;
    let engine = opts.engine.clone();
    let clients = opts.clients.clone();
    let (server, probe_owned) = (server.to_string(), probe.clone());
    // counting and budgeting a large result is CPU work: keep it off the async workers
    let mut result_type = None;
    let measured = tokio::task::spawn_blocking(move || {
        let text = response.result_text();
        // read once: the measure and the engine borrow from it
        let value = crate::measure::read_json(text)
            .map_err(|e| crate::measure::MeasureError::new("tools/call result", e))?;
        let raw = measure_parsed_result(text, &value, &set)?;
        let error = raw.is_error.then(|| tool_error_text(text));
        let call = CallInfo {
            server: &server,
            tool: &probe_owned.tool,
            raw: Some(text),
            output_schema: tool.as_ref().is_some_and(|t| t.output_schema_tokens > 0),
        };
        let budgeted = engine.as_deref().map(|e| replay(e, &call, &value));
        let meta = tool.map(|t| t.meta_numbers).unwrap_or_default();
        let seen = client_rows(
            &clients,
            engine.as_deref(),
            &call,
            &value,
            &meta,
            set.primary(),
        );
        // the 2026-07-28 era puts `resultType` on every result (read off the value parsed once)
        let typed = value.get("resultType").is_some();
        Ok::<_, crate::measure::MeasureError>((raw, error, budgeted, seen, typed))
    })
    .await;
    match measured {
        Ok(Ok((raw, error, budgeted, seen, typed))) => {
            result_type = modern.then_some(typed);
            if raw.is_error {
                row.status = ProbeStatus::ToolError;
                row.error = error;
            }
            row.raw = Some(raw);
            row.budgeted = budgeted;
            row.clients = seen;
        }
        Ok(Err(e)) => (row.status, row.error) = (ProbeStatus::Error, Some(e.to_string())),
        Err(e) => {
            (row.status, row.error) = (ProbeStatus::Error, Some(format!("measuring failed: {e}")))
        }
    }
    (row, result_type)
}

/// Run a raw result through the engine, timing the engine pass alone as `replay` does (the
/// median of three passes; the start-up was paid before the first probe).
fn replay(engine: &Engine, call: &CallInfo, value: &serde_json::Value) -> BudgetedCost {
    let (out, engine_us) = timed_pass(RUNS, || engine.run(call, value));
    let (mut text_bytes, mut text_chars, mut text_lines) = (0, 0, 0);
    for block in out.result["content"].as_array().into_iter().flatten() {
        let text = block["text"]
            .as_str()
            .or_else(|| block["resource"]["text"].as_str());
        if let Some(text) = text {
            let (b, c, l) = crate::measure::text_stats(text);
            (text_bytes, text_chars, text_lines) = (text_bytes + b, text_chars + c, text_lines + l);
        }
    }
    let tokens_before = engine.tokens_before(&out, value);
    BudgetedCost {
        fill: Engine::fill(&out, tokens_before),
        items: out.list.clone(),
        text_bytes,
        text_chars,
        text_lines,
        budget: out.budget,
        tokens: out.tokens_after,
        tokens_before,
        strategy: out.strategy.name().to_string(),
        engine_us,
        spill_path: out.spill.map(|s| s.path.display().to_string()),
        note: out.note,
        spill_error: out.spill_error,
    }
}

/// Remove every secret of the spec from the row's free text.
fn redact(report: &mut ServerReport, spec: &ServerSpec) {
    let r = redactor_for(spec);
    report.error = report.error.as_deref().map(|e| r.redact(e));
    report.discover_ended = report.discover_ended.as_deref().map(|e| r.redact(e));
    for w in &mut report.warnings {
        *w = r.redact(w);
    }
    for p in &mut report.probes {
        p.error = p.error.as_deref().map(|e| r.redact(e));
        for e in &mut p.argument_errors {
            *e = r.redact(e);
        }
        let args = r.redact(&p.arguments.to_string());
        p.arguments = serde_json::from_str(&args).unwrap_or(serde_json::Value::Null);
    }
}

/// Each tool's model view counted in the tokenizers of the clients' models that the audit does
/// not count in (`by_tokenizer`; the tables' columns stay the asked tokenizers'), so each
/// client's schema row is also counted in its model's tokenizer.
fn client_tokenizers(
    tools: &mut [ToolCost],
    defs: &[serde_json::Map<String, serde_json::Value>],
    opts: &AuditOptions,
) {
    let asked: Vec<&str> = opts.tokenizers.all().iter().map(|t| t.name()).collect();
    for profile in &opts.clients {
        let Some(m) = profile
            .model_tokenizer()
            .filter(|m| !asked.contains(&m.name()))
        else {
            continue;
        };
        for (tool, def) in tools.iter_mut().zip(defs) {
            tool.by_tokenizer
                .entry(m.name().to_string())
                .or_insert_with(|| m.count(&compact_json(&model_view(def))));
        }
    }
}

/// The suggested policy hides every shared parameter no tool requires: what each tool that
/// has one costs then (its suggested definition, the parameters taken out), for the tax the
/// suggested policy leaves.
fn suggest_hidden(
    report: &mut ServerReport,
    defs: &[serde_json::Map<String, serde_json::Value>],
    tok: crate::ground::tokens::Tokenizer,
) {
    let mut hidden: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for g in report
        .shared_parameters
        .iter()
        .filter(|g| g.hide_saves_tokens.is_some())
    {
        for t in &g.tools {
            hidden.entry(t.clone()).or_default().push(g.name.clone());
        }
    }
    if hidden.is_empty() {
        return;
    }
    for (cost, def) in report.tools.iter_mut().zip(defs) {
        let name = def.get("name").and_then(serde_json::Value::as_str);
        let Some(names) = name.filter(|n| *n == cost.name).and_then(|n| hidden.get(n)) else {
            continue;
        };
        cost.suggested_model_tokens = Some(crate::measure::suggested_hidden_tokens(
            def,
            cost.description_cut_chars,
            names,
            tok,
        ));
    }
}
