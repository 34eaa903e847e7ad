//! A report against its baseline: per server (schema tax), per tool (definition tokens) and per
//! probe (raw result tokens): added, removed, grown, shrunk, with deltas, sorted by impact.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::measure::facts::{Report, Status};

/// What was compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Subject {
    /// A server's schema tax (all its tools, tokens per turn).
    Server,
    /// One tool definition.
    Tool,
    /// One probe's raw result.
    Probe,
}

/// How it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Movement {
    Added,
    Removed,
    Grown,
    Shrunk,
    Unchanged,
}

/// One row of the diff.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Change {
    pub subject: Subject,
    pub server: String,
    /// The tool (for tools and probes); the server's name again for servers.
    pub name: String,
    /// A probe's arguments, compact JSON (probes of one tool differ by them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    pub movement: Movement,
    pub before: Option<usize>,
    pub after: Option<usize>,
    pub delta: i64,
    /// Growth in percent of `before` (none when added or removed, or from 0).
    pub pct: Option<f64>,
}

fn change(
    subject: Subject,
    server: &str,
    name: &str,
    arguments: Option<String>,
    before: Option<usize>,
    after: Option<usize>,
) -> Change {
    let (b, a) = (before.unwrap_or(0) as i64, after.unwrap_or(0) as i64);
    let movement = match (before, after) {
        (None, Some(_)) => Movement::Added,
        (Some(_), None) => Movement::Removed,
        _ if a > b => Movement::Grown,
        _ if a < b => Movement::Shrunk,
        _ => Movement::Unchanged,
    };
    let pct = match (before, after) {
        (Some(b), Some(_)) if b > 0 => Some((a - b as i64) as f64 * 100.0 / b as f64),
        _ => None,
    };
    Change {
        subject,
        server: server.to_string(),
        name: name.to_string(),
        arguments,
        movement,
        before,
        after,
        delta: a - b,
        pct,
    }
}

impl Change {
    /// Whether it grew from a baseline of 0 tokens: infinite growth, which any
    /// `max_regression_pct` counts as a regression (`pct` stays none: JSON has no infinity).
    pub fn from_zero(&self) -> bool {
        self.before == Some(0) && self.after.is_some_and(|a| a > 0)
    }

    /// Growth in percent for the threshold: `pct`, or infinity when it grew from 0.
    pub fn growth_pct(&self) -> Option<f64> {
        if self.from_zero() {
            return Some(f64::INFINITY);
        }
        self.pct
    }

    /// The `%` column of every renderer: `+12.3%`, `new (from 0)`, or `-`.
    pub fn pct_text(&self) -> String {
        if self.from_zero() {
            return "new (from 0)".into();
        }
        self.pct
            .map_or("-".into(), crate::ground::units::percent_change)
    }
}

type Key = (Subject, String, String, Option<String>);

/// Every measured number of a report by what it measures.
fn index(report: &Report) -> BTreeMap<Key, usize> {
    let mut m = BTreeMap::new();
    for s in report.servers.iter().filter(|s| s.status == Status::Ok) {
        m.insert(
            (Subject::Server, s.name.clone(), s.name.clone(), None),
            s.tools_list.model_tokens,
        );
        for t in &s.tools {
            m.insert(
                (Subject::Tool, s.name.clone(), t.name.clone(), None),
                t.model_tokens,
            );
        }
        for p in &s.probes {
            if let Some(raw) = &p.raw {
                let args = serde_json::to_string(&p.arguments).unwrap_or_default();
                m.insert(
                    (Subject::Probe, s.name.clone(), p.tool.clone(), Some(args)),
                    raw.model_tokens,
                );
            }
        }
    }
    m
}

/// Compare `current` with `baseline`: one change per server, tool and probe in either, largest
/// absolute delta first (unchanged rows last, by name).
pub fn diff(baseline: &Report, current: &Report) -> Vec<Change> {
    let (old, new) = (index(baseline), index(current));
    let mut keys: Vec<&Key> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out: Vec<Change> = keys
        .into_iter()
        .map(|k| {
            let (subject, server, name, args) = k;
            change(
                *subject,
                server,
                name,
                args.clone(),
                old.get(k).copied(),
                new.get(k).copied(),
            )
        })
        .collect();
    out.sort_by(|a, b| {
        b.delta
            .unsigned_abs()
            .cmp(&a.delta.unsigned_abs())
            .then(a.subject.cmp(&b.subject))
            .then(a.server.cmp(&b.server))
            .then(a.name.cmp(&b.name))
    });
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::measure::facts::{ProbeResult, RawCost, ServerReport, ToolCost};

    pub(crate) fn report(tools: &[(&str, usize)], probe: Option<usize>) -> Report {
        let mut s = ServerReport::new("srv", "stdio", "x", "t");
        s.tools = tools
            .iter()
            .map(|(n, t)| ToolCost {
                name: n.to_string(),
                model_tokens: *t,
                ..ToolCost::default()
            })
            .collect();
        s.tools_list.tool_count = tools.len();
        s.tools_list.model_tokens = tools.iter().map(|t| t.1).sum();
        if let Some(tokens) = probe {
            s.probes.push(ProbeResult {
                arguments: serde_json::json!({"q": 1}),
                latency_ms: 1.0,
                raw: Some(RawCost {
                    model_tokens: tokens,
                    ..RawCost::default()
                }),
                budgeted: None,
                ..ProbeResult::new("a")
            });
        }
        Report::new(vec!["cl100k_base".into()], vec![s])
    }

    #[test]
    fn added_removed_grown_shrunk_by_impact() {
        let base = report(&[("a", 100), ("b", 50), ("gone", 10)], Some(1000));
        let cur = report(&[("a", 150), ("b", 40), ("new", 30)], Some(900));
        let d = diff(&base, &cur);
        let rows: Vec<(Subject, &str, Movement, i64)> = d
            .iter()
            .map(|c| (c.subject, c.name.as_str(), c.movement, c.delta))
            .collect();
        assert_eq!(
            rows,
            vec![
                (Subject::Probe, "a", Movement::Shrunk, -100),
                (Subject::Server, "srv", Movement::Grown, 60),
                (Subject::Tool, "a", Movement::Grown, 50),
                (Subject::Tool, "new", Movement::Added, 30),
                (Subject::Tool, "b", Movement::Shrunk, -10),
                (Subject::Tool, "gone", Movement::Removed, -10),
            ]
        );
        assert_eq!(d[2].pct, Some(50.0));
        assert_eq!(d[3].pct, None);
        assert_eq!(d[0].arguments.as_deref(), Some(r#"{"q":1}"#));
        assert!(diff(&base, &base)
            .iter()
            .all(|c| c.movement == Movement::Unchanged && c.delta == 0));
    }
}
