//! The server-design checklist: rules run over the measured report, each finding with a rule id,
//! a severity, the tool and a one-line fix. `mcp-budget audit --explain RULE` prints a rule.

use std::sync::LazyLock;

use regex::Regex;

use super::limits::{claude_code_token_limits, client_limits};
use super::model::{Finding, Report, ServerReport, Status};
use crate::units::thousands;

/// A description longer than this many tokens is flagged.
pub const LONG_DESCRIPTION_TOKENS: usize = 500;

/// One rule of the checklist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    pub severity: &'static str,
    pub title: &'static str,
    /// What the rule checks.
    pub checks: &'static str,
    /// Why it matters.
    pub why: &'static str,
    pub fix: &'static str,
}

pub const RULES: &[Rule] = &[
    Rule {
        id: "list-without-limit",
        severity: "warning",
        title: "List-shaped tool without a limit or cursor parameter",
        checks: "A tool whose name says it lists, searches or queries (list_*, search_*, *_query, find_*, get_all_*) has no input parameter named like limit, max_results, per_page, page_size, count, top, cursor, page, offset or page_token.",
        why: "Without a way to ask for less, every call returns everything: one call can exceed a client's result cap (Claude Code refuses results over 25,000 tokens) and the model cannot page.",
        fix: "add a `limit` parameter with a small default and a `cursor` for the next page",
    },
    Rule {
        id: "result-over-cap-unpaginated",
        severity: "error",
        title: "Result over a client cap with no truncation marker or pagination",
        checks: "A probe's result is over Claude Code's 25,000-token cap and its structure shows no pagination: no top-level key such as nextCursor, hasMore, truncated or total in its JSON text or structuredContent, and no truncation or continuation marker as the last line of a text (words inside the payload do not count).",
        why: "The client refuses or silently cuts the result, and the model has no way to ask for the rest.",
        fix: "return a page that fits with a `nextCursor` (or say `truncated` and how to get more)",
    },
    Rule {
        id: "long-description",
        severity: "warning",
        title: "Tool description over 500 tokens",
        checks: "A tool's description is longer than 500 tokens (primary tokenizer).",
        why: "Descriptions are sent on every turn of every conversation that mounts the server: the schema tax.",
        fix: "keep the description to what the tool does and when to use it; move details into parameter descriptions",
    },
    Rule {
        id: "schema-dwarfs-description",
        severity: "info",
        title: "Input schema far larger than the description",
        checks: "A tool's input schema is over 300 tokens and more than 10 times its description.",
        why: "Large schemas (long enums, nested definitions, repeated descriptions) cost every turn, and a model picks tools by their description, which is here the small part.",
        fix: "trim the schema (shorter enums, shared definitions, fewer optional fields) and say what the tool is for",
    },
    Rule {
        id: "data-uri-in-tools-list",
        severity: "warning",
        title: "Inline data: URI (icon or image) inside tools/list",
        checks: "A tool definition contains a data:image/ or data:audio/ URI (base64 inline).",
        why: "Clients that forward the whole definition pay thousands of tokens per turn for an icon.",
        fix: "serve icons by https URL instead of inline base64",
    },
    Rule {
        id: "structured-duplicate",
        severity: "warning",
        title: "structuredContent repeats the text content",
        checks: "A probe result's structuredContent carries the same data as one of its text blocks.",
        why: "Clients that show the model both pay for the same data twice.",
        fix: "keep structuredContent and make the text block a short summary of it",
    },
    Rule {
        id: "unstable-tools-list",
        severity: "warning",
        title: "tools/list differs between two calls",
        checks: "Two tools/list calls in the same session returned different bytes (another order, or changing descriptions).",
        why: "Prompt caching needs the tool definitions byte for byte the same on every turn; a reordered list makes every turn a cache miss.",
        fix: "return the tools in a fixed order with fixed descriptions",
    },
    Rule {
        id: "cursor-ignored",
        severity: "error",
        title: "The server ignores the pagination cursor",
        checks: "tools/list asked with the server's own nextCursor returned the same page again.",
        why: "Clients that follow the cursor loop or see duplicate tools; tools past the first page are unreachable.",
        fix: "honour `cursor` in tools/list, or send no nextCursor",
    },
    Rule {
        id: "too-many-tools",
        severity: "warning",
        title: "More tools than a client mounts",
        checks: "The server alone offers more tools than a client's limit (Cursor about 40, VS Code 128).",
        why: "Clients drop or refuse the tools past their limit, and every tool adds to the schema tax.",
        fix: "split the server by task or let users enable tool groups",
    },
];

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// A rule as `--explain` prints it.
pub fn explain(rule: &Rule) -> String {
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

static LIST_SHAPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(^|[_\-.])(list|search|query|find|browse|get_all|fetch_all)([_\-.]|s?$)|^list|^search")
        .expect("static regex")
});
static LIMIT_PARAM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(limit|max|max_?results|max_?items|max_?count|per_?page|page_?size|count|top|first|n|num_?results|k|top_?k|cursor|page|offset|after|page_?token|next_?token|start_?index)$")
        .expect("static regex")
});

fn finding(rule: &Rule, tool: Option<&str>, message: String) -> Finding {
    Finding {
        rule: rule.id.into(),
        severity: rule.severity.into(),
        tool: tool.map(String::from),
        message,
        fix: rule.fix.into(),
    }
}

fn by_id(id: &str) -> &'static Rule {
    rule(id).expect("every rule used is in RULES")
}

/// The findings of one server.
pub fn check_server(s: &ServerReport) -> Vec<Finding> {
    let mut out = Vec::new();
    if s.status != Status::Ok && s.tools.is_empty() {
        return out;
    }
    for t in &s.tools {
        if LIST_SHAPED.is_match(&t.name) && !t.input_params.iter().any(|p| LIMIT_PARAM.is_match(p))
        {
            out.push(finding(
                by_id("list-without-limit"),
                Some(&t.name),
                format!(
                    "`{}` looks list-shaped but takes no limit or cursor (parameters: {})",
                    t.name,
                    if t.input_params.is_empty() {
                        "none".to_string()
                    } else {
                        t.input_params.join(", ")
                    }
                ),
            ));
        }
        if t.description_tokens > LONG_DESCRIPTION_TOKENS {
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
            out.push(finding(
                by_id("schema-dwarfs-description"),
                Some(&t.name),
                format!(
                    "input schema is {} tokens, description {}",
                    thousands(t.input_schema_tokens),
                    thousands(t.description_tokens)
                ),
            ));
        }
        if t.data_uris > 0 {
            out.push(finding(
                by_id("data-uri-in-tools-list"),
                Some(&t.name),
                format!(
                    "{} inline data: URI(s), {} bytes of icons",
                    t.data_uris,
                    thousands(t.icons_bytes)
                ),
            ));
        }
    }
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
    match (
        s.tools_list.relist_identical,
        s.tools_list.relist_same_order,
    ) {
        (Some(false), Some(false)) => out.push(finding(
            by_id("unstable-tools-list"),
            None,
            "a second tools/list returned the tools in another order".into(),
        )),
        (Some(false), _) => out.push(finding(
            by_id("unstable-tools-list"),
            None,
            "a second tools/list returned the same tools with different bytes".into(),
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
    // errors first, then warnings, then notes; each kind in the order found
    out.sort_by_key(|f| match f.severity.as_str() {
        "error" => 0,
        "warning" => 1,
        _ => 2,
    });
    out
}

/// Fill in every server's findings.
pub fn apply(report: &mut Report) {
    for s in &mut report.servers {
        s.findings = check_server(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ProbeResult, RawCost, ToolCost};

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
