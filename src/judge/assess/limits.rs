//! What MCP clients do with large results and many tools (the rules of `profiles/clients.toml`), and
//! the verdict of each limit on every probe (as sent and after the engine), every server, and all
//! audited servers together.

use std::sync::LazyLock;

use crate::ground::units::thousands;
use crate::measure::facts::{LimitVerdict, ProbeResult, Report, Status};

/// One client limit.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientLimit {
    pub client: String,
    /// `result` (one tool result) or `tools` (the tools a client mounts).
    pub applies: String,
    /// tokens, chars, bytes, lines or tools
    pub unit: String,
    pub threshold: u64,
    /// warning, cap, spill, truncate, refuse or drop
    pub effect: String,
    pub note: String,
    /// The date of the source (a release, a page, a commit): YYYY-MM-DD, or YYYY-MM.
    pub as_of: String,
    /// The day the source was read for this table.
    pub checked: String,
    /// A primary source (docs, changelog, source code, a maintainer) states the rule; `false`:
    /// only user reports or third-party error strings do, and reports say so.
    pub confirmed: bool,
    pub source: String,
    /// The limit holds each text of a result alone (`per_block`), not the result.
    pub per_text: bool,
}

impl ClientLimit {
    /// "25,000 tokens (cap)", or "1,048,576 bytes (refuse, unconfirmed)"
    pub fn describe(&self) -> String {
        let unconfirmed = if self.confirmed { "" } else { ", unconfirmed" };
        let each = if self.per_text { " per text" } else { "" };
        format!(
            "{} {}{each} ({}{unconfirmed})",
            thousands(self.threshold as usize),
            self.unit,
            self.effect
        )
    }
}

static TABLE: LazyLock<Vec<ClientLimit>> = LazyLock::new(|| {
    crate::config::profiles::profiles()
        .iter()
        .flat_map(|p| {
            // a rule on one kind of result (a JSON array) is no size limit
            p.rules
                .iter()
                .filter(|r| r.when.is_none())
                .map(|r| ClientLimit {
                    client: p.name.clone(),
                    applies: r.applies.clone(),
                    unit: r.unit.clone(),
                    threshold: r.threshold,
                    effect: r.effect.clone(),
                    note: r.note.clone(),
                    as_of: r.sourced.as_of.clone(),
                    checked: r.sourced.checked.clone(),
                    confirmed: r.sourced.confirmed,
                    source: r.sourced.source.clone(),
                    per_text: r.per_block,
                })
        })
        .collect()
});

/// Every known client limit.
pub fn client_limits() -> &'static [ClientLimit] {
    &TABLE
}

/// The Claude Code limits charts draw as reference lines: (warning, cap) in tokens. The cap is
/// the token limit past which the model no longer gets the result (a cut or, as measured in
/// 2.1.332, an error in its place).
pub fn claude_code_token_limits() -> (u64, u64) {
    let find = |effects: &[&str]| {
        client_limits()
            .iter()
            .find(|l| {
                l.client == "Claude Code"
                    && l.unit == "tokens"
                    && effects.contains(&l.effect.as_str())
            })
            .map_or(0, |l| l.threshold)
    };
    (find(&["warning"]), find(&["cap", "refuse"]))
}

fn verdict(limit: &ClientLimit, value: u64, budgeted: Option<u64>) -> LimitVerdict {
    LimitVerdict {
        client: limit.client.clone(),
        limit: limit.describe(),
        effect: limit.effect.clone(),
        value,
        exceeded: value > limit.threshold,
        budgeted_value: budgeted,
        budgeted_exceeded: budgeted.map(|b| b > limit.threshold),
    }
}

fn probe_verdicts(p: &ProbeResult) -> Vec<LimitVerdict> {
    let Some(raw) = &p.raw else {
        return Vec::new();
    };
    client_limits()
        .iter()
        .filter(|l| l.applies == "result")
        .filter_map(|l| {
            let b = p.budgeted.as_ref();
            let (value, budgeted) = match l.unit.as_str() {
                "tokens" => (raw.model_tokens, b.map(|b| b.tokens)),
                "chars" => (raw.text_chars, b.map(|b| b.text_chars)),
                "bytes" => (raw.text_bytes, b.map(|b| b.text_bytes)),
                "lines" => (raw.text_lines, b.map(|b| b.text_lines)),
                _ => return None,
            };
            Some(verdict(l, value as u64, budgeted.map(|v| v as u64)))
        })
        .collect()
}

/// Fill in the limits of every probe, every server and of all servers together.
pub fn apply(report: &mut Report) {
    let tool_limits: Vec<&ClientLimit> = client_limits()
        .iter()
        .filter(|l| l.applies == "tools" && l.unit == "tools")
        .collect();
    let mut total_tools = 0;
    for s in &mut report.servers {
        for p in &mut s.probes {
            p.limits = probe_verdicts(p);
        }
        if s.status == Status::Ok {
            total_tools += s.tools_list.tool_count;
            s.limits = tool_limits
                .iter()
                .map(|l| verdict(l, s.tools_list.tool_count as u64, None))
                .collect();
        }
    }
    report.limits = tool_limits
        .iter()
        .map(|l| verdict(l, total_tools as u64, None))
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::facts::{BudgetedCost, ProbeResult, RawCost, ServerReport};

    #[test]
    fn every_client_has_limits_and_says_which_are_unconfirmed() {
        for client in [
            "Claude Code",
            "Codex",
            "Gemini CLI",
            "Copilot CLI",
            "Claude Desktop",
            "Cursor",
            "VS Code",
        ] {
            assert!(
                client_limits().iter().any(|l| l.client == client),
                "{client}"
            );
        }
        // sources and dates are checked on the profiles they come from (clients/tests.rs)
        for l in client_limits() {
            assert_eq!(l.describe().contains("unconfirmed"), !l.confirmed, "{l:?}");
        }
        assert_eq!(claude_code_token_limits(), (10_000, 25_000));
    }

    #[test]
    fn verdicts_for_probes_servers_and_all_servers() {
        let mut s = ServerReport::new("s", "stdio", "x", "t");
        s.tools_list.tool_count = 45;
        s.probes.push(ProbeResult {
            latency_ms: 1.0,
            raw: Some(RawCost {
                model_tokens: 30_000,
                text_chars: 120_000,
                text_bytes: 120_000,
                text_lines: 300,
                ..RawCost::default()
            }),
            budgeted: Some(BudgetedCost {
                budget: 8000,
                tokens: 7_900,
                tokens_before: 30_000,
                strategy: "spilled".into(),
                engine_us: 1,
                spill_path: None,
                note: None,
                spill_error: None,
                text_bytes: 30_000,
                text_chars: 30_000,
                text_lines: 100,
                ..BudgetedCost::default()
            }),
            ..ProbeResult::new("scrape")
        });
        let mut other = ServerReport::new("o", "stdio", "x", "t");
        other.tools_list.tool_count = 90;
        let mut r = Report::new(vec!["cl100k_base".into()], vec![s, other]);
        apply(&mut r);
        let p = &r.servers[0].probes[0].limits;
        let get = |client: &str, unit: &str| {
            p.iter()
                .find(|v| v.client == client && v.limit.contains(unit))
                .unwrap()
                .clone()
        };
        let cap = get("Claude Code", "25,000 tokens");
        assert_eq!(
            (cap.value, cap.exceeded, cap.budgeted_exceeded),
            (30_000, true, Some(false))
        );
        // Codex keeps no line limit (measured): only its 12,000 bytes
        assert!(!p
            .iter()
            .any(|v| v.client == "Codex" && v.limit.contains("lines")));
        let bytes = get("Codex", "bytes");
        assert_eq!(
            (bytes.exceeded, bytes.budgeted_exceeded),
            (true, Some(true))
        );
        // Gemini CLI cuts at 40,000 characters: the raw 120,000 breaks it, the budgeted 30,000 not
        let gemini = get("Gemini CLI", "40,000 chars");
        assert_eq!(
            (gemini.value, gemini.exceeded, gemini.budgeted_exceeded),
            (120_000, true, Some(false))
        );
        // VS Code writes a result over 8 KiB to disk: both do
        let vscode = get("VS Code", "8,192 bytes");
        assert_eq!(
            (vscode.exceeded, vscode.budgeted_exceeded),
            (true, Some(true))
        );
        // a rule with no primary source says so wherever it is shown
        assert!(get("Claude Desktop", "bytes")
            .limit
            .ends_with("(refuse, unconfirmed)"));
        let cursor = |v: &[LimitVerdict]| v.iter().find(|v| v.client == "Cursor").unwrap().clone();
        assert!(cursor(&r.servers[0].limits).exceeded);
        assert_eq!(cursor(&r.limits).value, 135);
        let vscode = r.limits.iter().find(|v| v.client == "VS Code").unwrap();
        assert!(vscode.exceeded, "135 tools together are over VS Code's 128");
        assert!(
            !r.servers[1]
                .limits
                .iter()
                .find(|v| v.client == "VS Code")
                .unwrap()
                .exceeded
        );
    }
}
