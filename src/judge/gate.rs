//! The CI gate: thresholds and a baseline diff turned into a verdict (its writers are
//! `output::gate`). Pure: reports in, verdict out; loading a report is the only I/O here.

mod comparable;
mod diff;
mod thresholds;

pub use comparable::{check_comparable, NotComparable};
pub use diff::{diff, Change, Movement, Subject};
pub use thresholds::{FailOn, ThresholdError, Thresholds, ToolLimits};

use std::path::Path;

use serde::Serialize;

use crate::measure::facts::{Report, Status, SCHEMA_VERSION};

/// A threshold a report broke.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Violation {
    /// The threshold's name (`max_tool_tokens`, ...), `fail_on` (a finding of that severity),
    /// or `server_error`.
    pub rule: String,
    pub server: String,
    pub tool: Option<String>,
    pub value: f64,
    pub limit: f64,
    pub message: String,
}

/// The gate's verdict on a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct Verdict {
    pub passed: bool,
    pub violations: Vec<Violation>,
    /// Against the baseline, largest impact first; empty without a baseline.
    pub changes: Vec<Change>,
    /// The baseline's file, when there was one.
    pub baseline: Option<String>,
}

impl Verdict {
    /// Changes that moved (not unchanged).
    pub fn moved(&self) -> impl Iterator<Item = &Change> {
        self.changes
            .iter()
            .filter(|c| c.movement != Movement::Unchanged)
    }
}

/// A report that cannot be used as a gate input.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path} is not an mcp-budget report: {message}")]
    NotAReport { path: String, message: String },
    #[error("{path} has schema_version {found}, newer than this mcp-budget reads ({SCHEMA_VERSION}): upgrade mcp-budget")]
    Newer { path: String, found: u64 },
}

/// Load an audit.json, checking its `schema_version` first so an incompatible file gets a clear
/// message instead of a missing-field error.
pub fn load_report(path: &Path) -> Result<Report, LoadError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| LoadError::Read {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    let not = |message: String| LoadError::NotAReport {
        path: shown.clone(),
        message,
    };
    let value: serde_json::Value = serde_json::from_str(crate::ground::text::strip_bom(&text))
        .map_err(|e| not(format!("not JSON ({e})")))?;
    let version = value
        .get("schema_version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| not("no `schema_version` field".into()))?;
    if version > u64::from(SCHEMA_VERSION) {
        return Err(LoadError::Newer {
            path: shown,
            found: version,
        });
    }
    // version 1 is the first; older schemas would be upgraded here
    serde_json::from_value(value).map_err(|e| not(e.to_string()))
}

fn violation(
    rule: &str,
    server: &str,
    tool: Option<&str>,
    value: f64,
    limit: f64,
    message: String,
) -> Violation {
    Violation {
        rule: rule.into(),
        server: server.into(),
        tool: tool.map(String::from),
        value,
        limit,
        message,
    }
}

/// A token or count threshold: a violation when `value` is over `max`. `says` words the value
/// (given with thousands separators); the message adds the maximum.
fn over(
    rule: &str,
    server: &str,
    tool: Option<&str>,
    value: usize,
    max: Option<usize>,
    says: impl FnOnce(String) -> String,
) -> Option<Violation> {
    use crate::ground::units::thousands as th;
    let max = max.filter(|m| value > *m)?;
    let message = format!("{} (max {})", says(th(value)), th(max));
    Some(violation(
        rule,
        server,
        tool,
        value as f64,
        max as f64,
        message,
    ))
}

/// Judge `current` against `thresholds` and, when given, its `baseline`.
pub fn evaluate(current: &Report, baseline: Option<(&Report, &str)>, t: &Thresholds) -> Verdict {
    use crate::ground::units::thousands as th;
    let mut v = Vec::new();
    for s in &current.servers {
        if s.status == Status::Error {
            v.push(violation(
                "server_error",
                &s.name,
                None,
                0.0,
                0.0,
                format!(
                    "server `{}` could not be audited: {}",
                    s.name,
                    s.error.as_deref().unwrap_or("failed")
                ),
            ));
            continue;
        }
        let name = s.name.as_str();
        if let Some(level) = t.fail_on {
            for f in s.findings.iter().filter(|f| level.fails(&f.severity)) {
                let at = match &f.tool {
                    Some(tool) => format!("{name}/{tool}"),
                    None => name.to_string(),
                };
                v.push(violation(
                    "fail_on",
                    name,
                    f.tool.as_deref(),
                    0.0,
                    0.0,
                    format!("{} {at}: {} [{}]", f.severity, f.message, f.rule),
                ));
            }
        }
        v.extend(over(
            "max_tools_tokens",
            name,
            None,
            s.tools_list.model_tokens,
            t.max_tools_tokens,
            |n| format!("server `{name}` costs {n} schema tokens per turn"),
        ));
        v.extend(over(
            "max_tool_count",
            name,
            None,
            s.tools_list.tool_count,
            t.max_tool_count,
            |n| format!("server `{name}` offers {n} tools"),
        ));
        for tool in &s.tools {
            let n = tool.name.as_str();
            v.extend(over(
                "max_tool_tokens",
                name,
                Some(n),
                tool.model_tokens,
                t.for_tool(n).max_tool_tokens,
                |k| format!("tool `{n}` costs {k} tokens per turn"),
            ));
        }
        for p in &s.probes {
            let (limits, n) = (t.for_tool(&p.tool), p.tool.as_str());
            if let Some(raw) = &p.raw {
                v.extend(over(
                    "max_raw_tokens",
                    name,
                    Some(n),
                    raw.model_tokens,
                    limits.max_raw_tokens,
                    |k| format!("`{n}` returned {k} tokens"),
                ));
            }
            if let Some(b) = &p.budgeted {
                v.extend(over(
                    "max_budgeted_tokens",
                    name,
                    Some(n),
                    b.tokens,
                    limits.max_budgeted_tokens,
                    |k| format!("`{n}` is {k} tokens after the budget engine"),
                ));
            }
        }
    }
    let changes = baseline.map(|(b, _)| diff(b, current)).unwrap_or_default();
    for c in &changes {
        let limits = match c.subject {
            Subject::Server => t.tools,
            Subject::Tool | Subject::Probe => t.for_tool(&c.name),
        };
        if let (Some(max), Some(pct)) = (limits.max_regression_pct, c.growth_pct()) {
            if pct > max {
                let what = match c.subject {
                    Subject::Server => format!("server `{}`'s schema tax", c.server),
                    Subject::Tool => format!("tool `{}`", c.name),
                    Subject::Probe => format!("the result of `{}`", c.name),
                };
                v.push(violation(
                    "max_regression_pct",
                    &c.server,
                    (c.subject != Subject::Server).then_some(c.name.as_str()),
                    pct,
                    max,
                    match c.from_zero() {
                        true => format!(
                            "{what} grew from 0 to {} tokens (growth from 0 is infinite; max +{max}%)",
                            th(c.after.unwrap_or(0))
                        ),
                        false => format!(
                            "{what} grew {pct:.1}% ({} -> {} tokens; max +{max}%)",
                            th(c.before.unwrap_or(0)),
                            th(c.after.unwrap_or(0))
                        ),
                    },
                ));
            }
        }
    }
    Verdict {
        passed: v.is_empty(),
        violations: v,
        changes,
        baseline: baseline.map(|(_, path)| path.to_string()),
    }
}

/// The one judgement of a report, for `gate` and `audit --gate` alike: a report that cannot be
/// compared with its baseline (it measured nothing, or lost a server the baseline has) is an
/// error, never a pass; else the verdict of [`evaluate`]. `current_name` names the report in
/// the error ("this audit", a file's path).
pub fn judge(
    current: &Report,
    current_name: &str,
    baseline: Option<(&Report, &str)>,
    thresholds: &Thresholds,
) -> Result<Verdict, NotComparable> {
    check_comparable(current, current_name, baseline)?;
    Ok(evaluate(current, baseline, thresholds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(tools: &[(&str, usize)], probe: usize) -> Report {
        diff::tests::report(tools, Some(probe))
    }

    #[test]
    fn each_threshold_fails_alone_and_names_the_tool() {
        let cur = report(&[("a", 100), ("big", 900)], 30_000);
        assert!(evaluate(&cur, None, &Thresholds::default()).passed);
        let t = |f: &dyn Fn(&mut Thresholds)| {
            let mut t = Thresholds::default();
            f(&mut t);
            let v = evaluate(&cur, None, &t);
            assert!(!v.passed);
            v.violations
                .iter()
                .map(|v| (v.rule.clone(), v.tool.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            t(&|t| t.max_tools_tokens = Some(999)),
            vec![("max_tools_tokens".to_string(), None)]
        );
        assert_eq!(
            t(&|t| t.max_tool_count = Some(1)),
            vec![("max_tool_count".to_string(), None)]
        );
        assert_eq!(
            t(&|t| t.tools.max_tool_tokens = Some(500)),
            vec![("max_tool_tokens".to_string(), Some("big".to_string()))]
        );
        assert_eq!(
            t(&|t| t.tools.max_raw_tokens = Some(25_000)),
            vec![("max_raw_tokens".to_string(), Some("a".to_string()))]
        );
    }

    #[test]
    fn a_regression_of_one_tool_names_that_tool() {
        let base = report(&[("a", 100), ("b", 100)], 1000);
        let cur = report(&[("a", 100), ("b", 130)], 1000);
        let mut t = Thresholds::default();
        t.tools.max_regression_pct = Some(10.0);
        let v = evaluate(&cur, Some((&base, "base.json")), &t);
        assert!(!v.passed);
        // the tool grew 30%; the server only 15%: both over 10%
        let named: Vec<(&str, Option<&str>)> = v
            .violations
            .iter()
            .map(|v| (v.rule.as_str(), v.tool.as_deref()))
            .collect();
        assert_eq!(
            named,
            vec![
                ("max_regression_pct", None),
                ("max_regression_pct", Some("b"))
            ]
        );
        assert!(v.violations[1].message.contains("grew 30.0%"));
        // a per-tool override lets `b` grow
        let mut loose = t.clone();
        let m = globset::Glob::new("b").unwrap().compile_matcher();
        loose.overrides.push((
            "b".into(),
            m,
            ToolLimits {
                max_regression_pct: Some(50.0),
                ..ToolLimits::default()
            },
        ));
        loose.tools.max_regression_pct = Some(20.0);
        assert!(evaluate(&cur, Some((&base, "base.json")), &loose).passed);
    }

    #[test]
    fn a_server_grown_from_zero_tokens_is_a_regression() {
        let base = report(&[("a", 0)], 1000);
        let cur = report(&[("a", 5)], 1000);
        let mut t = Thresholds::default();
        t.tools.max_regression_pct = Some(1e9);
        let v = evaluate(&cur, Some((&base, "base.json")), &t);
        let named: Vec<Option<&str>> = v.violations.iter().map(|v| v.tool.as_deref()).collect();
        assert_eq!(named, vec![None, Some("a")]);
        assert!(v.violations[0].value.is_infinite());
        // unchanged at 0 is not growth
        assert!(evaluate(&base, Some((&base, "base.json")), &t).passed);
    }

    #[test]
    fn reports_load_or_are_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("a.json");
        std::fs::write(
            &good,
            serde_json::to_string(&report(&[("a", 1)], 1)).unwrap(),
        )
        .unwrap();
        assert!(load_report(&good).is_ok());
        let newer = dir.path().join("n.json");
        std::fs::write(&newer, r#"{"schema_version": 99}"#).unwrap();
        let e = load_report(&newer).unwrap_err().to_string();
        assert!(
            e.contains("schema_version 99") && e.contains("n.json"),
            "{e}"
        );
        let junk = dir.path().join("j.json");
        std::fs::write(&junk, "{}").unwrap();
        assert!(load_report(&junk)
            .unwrap_err()
            .to_string()
            .contains("not an mcp-budget report"));
        let e = load_report(&dir.path().join("missing.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot read") && e.contains("missing.json"),
            "{e}"
        );
    }
}
