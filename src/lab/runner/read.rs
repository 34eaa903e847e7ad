//! Reading one client run: what the client listed (the era, the definitions, the pages) and
//! what reached its model of each call of the probe's tool.

use serde_json::Value;

use super::super::adapter::Adapter;
use super::super::compare;
use super::super::definitions;
use super::super::delivered;
use super::super::model::{target_id, ScriptReply};
use super::super::probe::{self, ProbeOutcome};
use super::super::report::LabServerReport;
use super::super::run::RunOutcome;
use super::{failure, LabProbe};
use crate::ground::tokens::Tokenizer;

/// Read what the client listed into the server's report (the era and definitions from the
/// first run that has them); a client that listed nothing is the server's error.
pub(super) fn read_listing(
    report: &mut LabServerReport,
    adapter: &Adapter,
    outcome: &RunOutcome,
    tokenizer: Tokenizer,
) {
    let tools = outcome.transcript.tools();
    if report.era.is_none() {
        report.era = outcome.transcript.era();
    }
    if report.definitions.is_none() && !tools.is_empty() {
        let mut d = definitions::measure(&tools, &outcome.requests, tokenizer);
        if d.form == definitions::Form::Deferred {
            d.modelled_tokens = crate::config::profiles::profile(&adapter.id)
                .map(|p| definitions::modelled_deferred(p, &report.server, &tools, tokenizer));
        }
        report.definitions = Some(d);
        (report.pages_read, report.stopped_before_last_page) = outcome.transcript.pages();
    }
    if tools.is_empty() && report.error.is_none() {
        let why = match outcome.transcript.server_ended() {
            Some(ended) => format!("the client never listed the server's tools: {ended}"),
            None => "the client never listed the server's tools".to_string(),
        };
        // a client that would not fall back from a refused server/discover says why
        let why = match report.era.as_ref().filter(|e| e.fell_back == Some(false)) {
            Some(era) => format!("{why}: it spoke {}", era.describe()),
            None => why,
        };
        report.error = Some(failure(adapter, outcome, &why));
    }
}

/// What reached the model of call `k` of the run's probe `p` (its first call is 0), judged
/// against the server's result; or why it cannot be measured, in one line.
pub(super) fn read_call(
    report: &LabServerReport,
    adapter: &Adapter,
    p: &LabProbe,
    k: usize,
    outcome: &RunOutcome,
    tokenizer: Tokenizer,
) -> Result<ProbeOutcome, String> {
    let Some(result) = outcome.transcript.call_result(&p.tool, &p.arguments, k) else {
        let tools = outcome.transcript.tools();
        let why = if k > 0 && outcome.transcript.called(&p.tool) {
            format!("the client ended before call {} of `{}`", k + 1, p.tool)
        } else if tools.iter().any(|t| t["name"] == p.tool.as_str()) {
            format!("the client never called `{}`", p.tool)
        } else if report.stopped_before_last_page {
            format!(
                "the client read only {} tools/list page(s) ({} tools) and never saw `{}`",
                report.pages_read,
                tools.len(),
                p.tool
            )
        } else {
            format!("the server has no tool `{}`", p.tool)
        };
        return Err(failure(adapter, outcome, &why));
    };
    let delivered = delivered_of(adapter, outcome, &p.tool, k);
    let mut judged: ProbeOutcome = probe::judge(
        &p.tool,
        &result,
        delivered.as_ref(),
        &outcome.home,
        &outcome.files,
        tokenizer,
    );
    judged.modelled = compare::modelled(&adapter.id, &result, &judged, tokenizer);
    Ok(judged)
}

/// The result of the model's call `k` of the probe, from the first request that carries it.
fn delivered_of(
    adapter: &Adapter,
    outcome: &RunOutcome,
    tool: &str,
    k: usize,
) -> Option<delivered::Delivered> {
    let id = target_id(k);
    let call_id = outcome.requests.iter().find_map(|r| match &r.reply {
        ScriptReply::CallTool { call_id, .. } if *call_id == id => Some(call_id.clone()),
        _ => None,
    })?;
    outcome.requests.iter().find_map(|r| {
        let body: Value = serde_json::from_slice(&r.body).ok()?;
        delivered::find(r.api.unwrap_or(adapter.api), &body, &call_id, tool, k)
    })
}
