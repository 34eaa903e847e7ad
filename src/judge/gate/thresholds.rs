//! Gate thresholds, parsed once into typed values: from a probe file's `[gate]` table, with
//! per-tool overrides by glob, and from flags of the same names (flags win).

use globset::{Glob, GlobMatcher};
use serde::Deserialize;

/// Limits that apply to one tool (and its probes); every field optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolLimits {
    /// Largest schema tax of one tool definition, in tokens.
    pub max_tool_tokens: Option<usize>,
    /// Largest raw result of one probe, in tokens.
    pub max_raw_tokens: Option<usize>,
    /// Largest budgeted result of one probe, in tokens.
    pub max_budgeted_tokens: Option<usize>,
    /// Largest growth against the baseline, in percent.
    pub max_regression_pct: Option<f64>,
}

impl ToolLimits {
    /// `self`, with every field `other` sets taken from `other`.
    fn overlay(mut self, other: &ToolLimits) -> ToolLimits {
        if other.max_tool_tokens.is_some() {
            self.max_tool_tokens = other.max_tool_tokens;
        }
        if other.max_raw_tokens.is_some() {
            self.max_raw_tokens = other.max_raw_tokens;
        }
        if other.max_budgeted_tokens.is_some() {
            self.max_budgeted_tokens = other.max_budgeted_tokens;
        }
        if other.max_regression_pct.is_some() {
            self.max_regression_pct = other.max_regression_pct;
        }
        self
    }
}

/// The least severe finding that fails the gate (`--fail-on`, `fail_on` in `[gate]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Findings of severity `error`.
    Error,
    /// Findings of severity `warning` or `error`.
    Warning,
}

impl FailOn {
    /// Whether a finding of `severity` (`error`, `warning`, `info`) fails the gate.
    pub fn fails(self, severity: &str) -> bool {
        match self {
            FailOn::Error => severity == "error",
            FailOn::Warning => matches!(severity, "error" | "warning"),
        }
    }

    /// The severity as written.
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Error => "error",
            FailOn::Warning => "warning",
        }
    }
}

impl std::str::FromStr for FailOn {
    type Err = String;
    fn from_str(s: &str) -> Result<FailOn, String> {
        match s {
            "error" => Ok(FailOn::Error),
            "warning" => Ok(FailOn::Warning),
            other => Err(format!("`{other}` is not a severity (error or warning)")),
        }
    }
}

/// Every threshold of a gate.
#[derive(Debug, Clone, Default)]
pub struct Thresholds {
    /// Largest schema tax of one server (all its tools), in tokens.
    pub max_tools_tokens: Option<usize>,
    /// Most tools one server may offer.
    pub max_tool_count: Option<usize>,
    /// Findings of this severity or worse fail the gate.
    pub fail_on: Option<FailOn>,
    /// Defaults for every tool.
    pub tools: ToolLimits,
    /// Per-tool overrides, later ones winning: (glob text, matcher, limits).
    pub overrides: Vec<(String, GlobMatcher, ToolLimits)>,
}

/// The `[gate]` table as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GateTable {
    max_tools_tokens: Option<usize>,
    max_tool_count: Option<usize>,
    fail_on: Option<FailOn>,
    #[serde(flatten)]
    tools: ToolLimits,
    #[serde(default)]
    overrides: toml::Table,
}

/// A threshold that cannot be used; the message names it.
#[derive(Debug, thiserror::Error)]
#[error("invalid gate threshold {what}: {message}")]
pub struct ThresholdError {
    pub what: String,
    pub message: String,
}

impl Thresholds {
    /// Parse a `[gate]` table (`gate.overrides."glob"` for per-tool limits). `origin` names the
    /// file in errors.
    pub fn from_toml(table: &toml::Table, origin: &str) -> Result<Thresholds, ThresholdError> {
        let bad = |what: &str, message: String| ThresholdError {
            what: format!("`{what}` in {origin}"),
            message,
        };
        // `flatten` and `deny_unknown_fields` do not mix in serde: check the keys by hand
        const KEYS: [&str; 8] = [
            "max_tools_tokens",
            "max_tool_count",
            "fail_on",
            "max_tool_tokens",
            "max_raw_tokens",
            "max_budgeted_tokens",
            "max_regression_pct",
            "overrides",
        ];
        for k in table.keys() {
            if !KEYS.contains(&k.as_str()) {
                return Err(bad(
                    &format!("gate.{k}"),
                    format!("unknown key (known: {})", KEYS.join(", ")),
                ));
            }
        }
        let gate: GateTable = toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e: toml::de::Error| bad("gate", e.message().to_string()))?;
        let mut t = Thresholds {
            max_tools_tokens: gate.max_tools_tokens,
            max_tool_count: gate.max_tool_count,
            fail_on: gate.fail_on,
            tools: gate.tools,
            overrides: Vec::new(),
        };
        for (glob, v) in &gate.overrides {
            let what = format!("gate.overrides.\"{glob}\"");
            let limits: ToolLimits = v
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| bad(&what, e.message().to_string()))?;
            let matcher = Glob::new(glob)
                .map_err(|e| bad(&what, e.to_string()))?
                .compile_matcher();
            t.overrides.push((glob.clone(), matcher, limits));
        }
        t.check().map_err(|(what, message)| bad(&what, message))?;
        Ok(t)
    }

    /// `self` with every threshold `flags` sets taken from `flags` (flags win over files).
    pub fn overlay(mut self, flags: &Thresholds) -> Thresholds {
        if flags.max_tools_tokens.is_some() {
            self.max_tools_tokens = flags.max_tools_tokens;
        }
        if flags.max_tool_count.is_some() {
            self.max_tool_count = flags.max_tool_count;
        }
        if flags.fail_on.is_some() {
            self.fail_on = flags.fail_on;
        }
        self.tools = self.tools.overlay(&flags.tools);
        self.overrides.extend(flags.overrides.iter().cloned());
        self
    }

    /// Reject values that cannot be meant: a negative or non-finite percentage.
    pub fn check(&self) -> Result<(), (String, String)> {
        let pct = |p: Option<f64>, what: &str| match p {
            Some(p) if !p.is_finite() || p < 0.0 => Err((
                what.to_string(),
                format!("{p} is not a percentage of 0 or more"),
            )),
            _ => Ok(()),
        };
        pct(self.tools.max_regression_pct, "max_regression_pct")?;
        for (glob, _, l) in &self.overrides {
            pct(
                l.max_regression_pct,
                &format!("gate.overrides.\"{glob}\".max_regression_pct"),
            )?;
        }
        Ok(())
    }

    /// The limits for `tool`: the defaults, then every override whose glob matches, in order.
    pub fn for_tool(&self, tool: &str) -> ToolLimits {
        self.overrides
            .iter()
            .filter(|(_, m, _)| m.is_match(tool))
            .fold(self.tools, |acc, (_, _, l)| acc.overlay(l))
    }

    /// Whether any threshold is set at all.
    pub fn is_empty(&self) -> bool {
        self.max_tools_tokens.is_none()
            && self.max_tool_count.is_none()
            && self.fail_on.is_none()
            && self.tools == ToolLimits::default()
            && self.overrides.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Thresholds, ThresholdError> {
        let t: toml::Table = toml::from_str(text).unwrap();
        Thresholds::from_toml(t["gate"].as_table().unwrap(), "t.toml")
    }

    #[test]
    fn parses_defaults_and_overrides_in_order() {
        let t = parse(
            r#"
[gate]
max_tools_tokens = 20000
max_tool_tokens = 1500
max_raw_tokens = 25000
max_regression_pct = 5
[gate.overrides."browser_*"]
max_raw_tokens = 100000
[gate.overrides."browser_snapshot"]
max_regression_pct = 50
"#,
        )
        .unwrap();
        assert_eq!(t.max_tools_tokens, Some(20_000));
        let plain = t.for_tool("search");
        assert_eq!(
            (plain.max_raw_tokens, plain.max_regression_pct),
            (Some(25_000), Some(5.0))
        );
        let snap = t.for_tool("browser_snapshot");
        assert_eq!(
            (
                snap.max_tool_tokens,
                snap.max_raw_tokens,
                snap.max_regression_pct
            ),
            (Some(1500), Some(100_000), Some(50.0))
        );
        assert!(!t.is_empty());
    }

    #[test]
    fn bad_thresholds_name_themselves() {
        let e = parse("[gate]\nmax_tool_tokns = 3\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("gate.max_tool_tokns") && e.contains("t.toml"),
            "{e}"
        );
        let e = parse("[gate]\nmax_raw_tokens = \"lots\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid gate threshold"), "{e}");
        let e = parse("[gate]\nmax_regression_pct = -1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_regression_pct"), "{e}");
        let e = parse("[gate.overrides.\"a[\"]\nmax_raw_tokens = 1\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("gate.overrides.\"a[\""), "{e}");
        let e = parse("[gate.overrides.x]\nmax_raw = 1\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("gate.overrides.\"x\"") && e.contains("max_raw"),
            "{e}"
        );
    }

    #[test]
    fn flags_win_over_files() {
        let file = parse("[gate]\nmax_raw_tokens = 10\nmax_tool_count = 3\n").unwrap();
        let flags = Thresholds {
            tools: ToolLimits {
                max_raw_tokens: Some(99),
                ..ToolLimits::default()
            },
            ..Thresholds::default()
        };
        let t = file.overlay(&flags);
        assert_eq!(
            (t.for_tool("x").max_raw_tokens, t.max_tool_count),
            (Some(99), Some(3))
        );
    }
}
