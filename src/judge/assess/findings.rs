//! The server-design checklist: rules run over the measured report, each finding with a rule id,
//! a severity, the tool and a one-line fix. `mcp-budget audit --explain RULE` prints a rule.

use crate::ground::units::thousands;
use crate::judge::assess::limits::{claude_code_token_limits, client_limits};
use crate::measure::facts::{Finding, Report, SchemaLint, ServerReport, Status, ToolCost};

mod compat;
mod era;
mod list;
mod probes;
mod rules;
mod score;

use crate::measure::{limit_named, list_shaped, unbounded_message, LONG_DESCRIPTION_TOKENS};
pub use rules::{FindingRule, RULES};
pub use score::schema_score;

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static FindingRule> {
    RULES.iter().find(|r| r.id == id)
}

/// A rule as `--explain` prints it.
pub fn explain(rule: &FindingRule) -> String {
    format!(
        "{id} ({severity}): {title}\n\nChecks: {checks}\n\nWhy: {why}\n\nFix: {fix}\n",
        id = rule.id,
        severity = rule.severity,
        title = rule.title,
        checks = rule.checks,
        why = rule.why,
        fix = rule.fix
    )
}

fn finding(rule: &FindingRule, tool: Option<&str>, message: String) -> Finding {
    Finding {
        rule: rule.id.into(),
        severity: rule.severity.into(),
        tool: tool.map(String::from),
        message,
        fix: rule.fix.into(),
        saves_tokens: None,
        saves_wire_tokens: None,
    }
}

/// A finding with what its fix saves, per turn and on the wire.
fn saving(mut f: Finding, tokens: Option<usize>, wire: Option<usize>) -> Finding {
    f.saves_tokens = tokens;
    f.saves_wire_tokens = wire.filter(|&w| w > 0);
    f
}

fn by_id(id: &str) -> &'static FindingRule {
    rule(id).expect("every rule used is in RULES")
}

/// The findings of one server.
pub fn check_server(s: &ServerReport) -> Vec<Finding> {
    let mut out = Vec::new();
    if s.status != Status::Ok && s.tools.is_empty() {
        return out;
    }
    for t in &s.tools {
        out.extend(list_finding(t));
        let measured = t.fixed_model_tokens.is_some();
        if !measured && t.description_tokens > LONG_DESCRIPTION_TOKENS {
            // a report written before the definitions were measured (a baseline)
            out.push(finding(
                by_id("long-description"),
                Some(&t.name),
                format!(
                    "description is {} tokens (over {LONG_DESCRIPTION_TOKENS})",
                    thousands(t.description_tokens)
                ),
            ));
        }
        if t.input_schema_tokens > 300 && t.input_schema_tokens > 10 * t.description_tokens.max(1) {
            let saves = t
                .fixed_model_tokens
                .map(|f| t.model_tokens.saturating_sub(f));
            out.push(saving(
                finding(
                    by_id("schema-dwarfs-description"),
                    Some(&t.name),
                    format!(
                        "input schema is {} tokens, description {}{}",
                        thousands(t.input_schema_tokens),
                        thousands(t.description_tokens),
                        saves.filter(|&s| s > 0).map_or(String::new(), |s| format!(
                            "; the measured fixes save {} tokens per turn",
                            thousands(s)
                        ))
                    ),
                ),
                saves,
                None,
            ));
        }
        if t.data_uris > 0 {
            out.push(saving(
                finding(
                    by_id("data-uri-in-tools-list"),
                    Some(&t.name),
                    format!(
                        "{} inline data: URI(s), {} bytes of icons",
                        t.data_uris,
                        thousands(t.icons_bytes)
                    ),
                ),
                None,
                Some(t.icons_tokens),
            ));
        }
    }
    out.extend(lint_findings(s));
    out.extend(list::shared_findings(s));
    out.extend(list::sdk_limit_findings(s));
    out.extend(probes::probe_findings(s));
    let (_, cap) = claude_code_token_limits();
    for p in &s.probes {
        let Some(raw) = &p.raw else { continue };
        if raw.model_tokens as u64 > cap && !raw.continuation {
            out.push(finding(
                by_id("result-over-cap-unpaginated"),
                Some(&p.tool),
                format!(
                    "result is {} tokens (Claude Code's cap is {}) with no truncation marker or cursor",
                    thousands(raw.model_tokens),
                    thousands(cap as usize)
                ),
            ));
        }
        if raw.structured_duplicate {
            out.push(finding(
                by_id("structured-duplicate"),
                Some(&p.tool),
                format!(
                    "structuredContent ({} tokens) repeats the text blocks",
                    thousands(raw.structured_tokens)
                ),
            ));
        }
    }
    // on a list of several pages, where the second listing first differed
    let at = match (s.tools_list.relist_differs_at_page, s.tools_list.pages) {
        (Some(page), pages) if page > pages => format!(" (it had more pages than {pages})"),
        (Some(page), pages) if pages > 1 => format!(" (from page {page} of {pages})"),
        _ => String::new(),
    };
    match (
        s.tools_list.relist_identical,
        s.tools_list.relist_same_order,
    ) {
        (Some(false), Some(false)) => out.push(finding(
            by_id("unstable-tools-list"),
            None,
            format!("a second tools/list returned the tools in another order{at}"),
        )),
        (Some(false), _) => out.push(finding(
            by_id("unstable-tools-list"),
            None,
            format!("a second tools/list returned the same tools with different bytes{at}"),
        )),
        _ => {}
    }
    if s.tools_list.cursor_ignored {
        out.push(finding(
            by_id("cursor-ignored"),
            None,
            format!(
                "the page after page {} repeated it; pagination stopped there",
                s.tools_list.pages
            ),
        ));
    }
    for l in client_limits()
        .iter()
        .filter(|l| l.applies == "tools" && l.unit == "tools")
    {
        if s.tools_list.tool_count as u64 > l.threshold {
            out.push(finding(
                by_id("too-many-tools"),
                None,
                format!(
                    "{} tools, over {}'s {}",
                    s.tools_list.tool_count, l.client, l.threshold
                ),
            ));
        }
    }
    out.extend(era::era_findings(s.era_conformance.as_ref()));
    if let Some(why) = &s.discover_ended {
        out.push(finding(by_id("ends-on-discover"), None, why.clone()));
    }
    out.extend(compat::compat_findings(s));
    // errors first, then warnings, then notes; each kind in the order found
    out.sort_by_key(|f| match f.severity.as_str() {
        "error" => 0,
        "warning" => 1,
        _ => 2,
    });
    out
}

/// `list-without-limit` on one tool: the verdict `measure` gave on the whole input schema (a limit
/// inside a wrapper object counts, and so does a query in a language with a limit clause); on a
/// report written before the definitions were measured (a baseline), the top-level names.
fn list_finding(t: &ToolCost) -> Option<Finding> {
    let rule = by_id("list-without-limit");
    let message = if t.fixed_model_tokens.is_some() {
        t.schema_lints
            .iter()
            .find(|l| l.rule == rule.id)?
            .message
            .clone()
    } else {
        if !list_shaped(&t.name) || t.input_params.iter().any(|p| limit_named(p)) {
            return None;
        }
        let params: Vec<&str> = t.input_params.iter().map(String::as_str).collect();
        unbounded_message(&t.name, &params, None)
    };
    Some(finding(rule, Some(&t.name), message))
}

/// The definition rules' verdicts: one finding per tool, or, for a rule that hits more than
/// [`PER_TOOL_AT_MOST`] tools, one for the server with the total and the largest savings (each
/// tool's is in the JSON report's `schema_lints`).
fn lint_findings(s: &ServerReport) -> Vec<Finding> {
    let mut by_rule: Vec<(&str, Vec<(&str, &SchemaLint)>)> = Vec::new();
    for t in &s.tools {
        // one finding per tool, with no saving: made by `list_finding`
        for l in t
            .schema_lints
            .iter()
            .filter(|l| l.rule != "list-without-limit")
        {
            match by_rule.iter_mut().find(|(r, _)| *r == l.rule) {
                Some((_, hits)) => hits.push((&t.name, l)),
                None => by_rule.push((&l.rule, vec![(&t.name, l)])),
            }
        }
    }
    let mut out = Vec::new();
    for (id, mut hits) in by_rule {
        let Some(rule) = rule(id) else { continue };
        let wire_only = id == "heavy-output-schema";
        if hits.len() <= PER_TOOL_AT_MOST {
            for (tool, l) in hits {
                out.push(saving(
                    finding(rule, Some(tool), l.message.clone()),
                    (!wire_only).then_some(l.saves_tokens),
                    Some(l.saves_wire_tokens),
                ));
            }
            continue;
        }
        let tokens: usize = hits.iter().map(|(_, l)| l.saves_tokens).sum();
        let wire: usize = hits.iter().map(|(_, l)| l.saves_wire_tokens).sum();
        hits.sort_by_key(|(_, l)| std::cmp::Reverse(l.saves_tokens.max(l.saves_wire_tokens)));
        let largest: Vec<String> = hits
            .iter()
            .take(3)
            .map(|(t, l)| format!("{t} {}", thousands(l.saves_tokens.max(l.saves_wire_tokens))))
            .collect();
        let message = format!(
            "{} tools: the fix saves {} {} in all (largest: {})",
            hits.len(),
            thousands(if wire_only { wire } else { tokens }),
            if wire_only {
                "wire tokens per tools/list"
            } else {
                "tokens per turn"
            },
            largest.join(", ")
        );
        out.push(saving(
            finding(rule, None, message),
            (!wire_only).then_some(tokens),
            Some(wire),
        ));
    }
    out
}

/// A definition rule that hits more tools than this is one finding for the server.
pub const PER_TOOL_AT_MOST: usize = 3;

/// Fill in every server's findings.
pub fn apply(report: &mut Report) {
    for s in &mut report.servers {
        s.findings = check_server(s);
        s.schema_score = schema_score(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::facts::{ProbeResult, RawCost, ToolCost};

    fn tool(name: &str, params: &[&str]) -> ToolCost {
        ToolCost {
            name: name.into(),
            input_params: params.iter().map(|p| p.to_string()).collect(),
            ..ToolCost::default()
        }
    }

    fn rules(s: &ServerReport) -> Vec<(String, Option<String>)> {
        check_server(s)
            .into_iter()
            .map(|f| (f.rule, f.tool))
            .collect()
    }

    #[test]
    fn every_rule_explains_itself() {
        for r in RULES {
            let text = explain(r);
            assert!(text.starts_with(r.id) && text.contains("Why:") && text.contains("Fix:"));
            assert!(["error", "warning", "info"].contains(&r.severity));
        }
        assert!(rule("no-such-rule").is_none());
    }

    #[test]
    fn list_shaped_tools_need_a_limit() {
        let mut s = ServerReport::new("s", "stdio", "x", "t");
        s.tools = vec![
            tool("list_issues", &["repo", "state"]),
            tool("search_code", &["q", "per_page"]),
            tool("listTickets", &["cursor"]),
            tool("get_weather", &["city"]),
            tool("query", &[]),
        ];
        assert_eq!(
            rules(&s),
            vec![
                ("list-without-limit".into(), Some("list_issues".into())),
                ("list-without-limit".into(), Some("query".into())),
            ]
        );
    }

    /// A measured tool's verdict is the one `measure` gave on its whole schema: a limit inside
    /// a wrapper (no lint) is no finding, and each lint is one finding with no saving, never
    /// grouped with other tools'.
    #[test]
    fn a_measured_tools_list_verdict_comes_from_its_schema() {
        let mut s = ServerReport::new("s", "stdio", "x", "t");
        let measured = |name: &str, params: &[&str], flagged: bool| {
            let mut t = tool(name, params);
            t.fixed_model_tokens = Some(0);
            if flagged {
                t.schema_lints = vec![SchemaLint {
                    rule: "list-without-limit".into(),
                    saves_tokens: 0,
                    saves_wire_tokens: 0,
                    message: format!("`{name}` looks list-shaped"),
                }];
            }
            t
        };
        s.tools = vec![measured("list_incidents", &["query_model"], false)];
        s.tools
            .extend((0..5).map(|i| measured(&format!("list_{i}"), &[], true)));
        let f = check_server(&s);
        assert_eq!(f.len(), 5, "{f:?}");
        assert!(f
            .iter()
            .all(|f| f.rule == "list-without-limit" && f.saves_tokens.is_none()));
        assert_eq!(f[0].tool.as_deref(), Some("list_0"));
        assert_eq!(f[0].message, "`list_0` looks list-shaped");
    }

    #[test]
    fn sizes_and_lists_and_results() {
        let mut s = ServerReport::new("s", "stdio", "x", "t");
        let mut long = tool("explain", &[]);
        long.description_tokens = 501;
        let mut schema = tool("configure", &[]);
        (schema.input_schema_tokens, schema.description_tokens) = (900, 20);
        let mut icon = tool("draw", &[]);
        (icon.data_uris, icon.icons_bytes) = (1, 4_000);
        s.tools = vec![long, schema, icon];
        // the tools probed below, listed (a probe of an unlisted one is a finding of its own)
        s.tools
            .extend(["p30000", "p40000", "p100"].map(|n| tool(n, &[])));
        s.tools_list.tool_count = 41;
        s.tools_list.relist_identical = Some(false);
        s.tools_list.relist_same_order = Some(false);
        s.tools_list.cursor_ignored = true;
        let probe = |tokens: usize, continuation: bool, dup: bool| ProbeResult {
            latency_ms: 1.0,
            raw: Some(RawCost {
                model_tokens: tokens,
                continuation,
                structured_duplicate: dup,
                ..RawCost::default()
            }),
            budgeted: None,
            ..ProbeResult::new(&format!("p{tokens}"))
        };
        s.probes = vec![
            probe(30_000, false, true),
            probe(40_000, true, false),
            probe(100, false, false),
        ];
        let got = rules(&s);
        let want: Vec<(String, Option<String>)> = [
            ("result-over-cap-unpaginated", Some("p30000")),
            ("cursor-ignored", None),
            ("long-description", Some("explain")),
            ("data-uri-in-tools-list", Some("draw")),
            ("structured-duplicate", Some("p30000")),
            ("unstable-tools-list", None),
            ("too-many-tools", None),
            ("schema-dwarfs-description", Some("configure")),
        ]
        .into_iter()
        .map(|(r, t)| (r.to_string(), t.map(String::from)))
        .collect();
        assert_eq!(got, want);
        let unstable = check_server(&s)
            .into_iter()
            .find(|f| f.rule == "unstable-tools-list")
            .unwrap();
        assert!(unstable.message.contains("another order"));
    }
}
