//! The gate's verdict as GitHub Actions workflow commands: `::error` for each broken threshold,
//! `::warning` for each definition or result that grew. (The command appends the Markdown to
//! `$GITHUB_STEP_SUMMARY`.)

use std::fmt::Write as _;

use super::{Movement, Subject, Verdict};
use crate::units::{percent_change, thousands};

/// Warnings for growth at most, largest first.
const MAX_WARNINGS: usize = 20;

/// Escape a message for a workflow command.
fn data(text: &str) -> String {
    let encoded = text
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    crate::text::one_line(&encoded).into_owned()
}

/// Escape a property value (title) for a workflow command.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Render the annotations, one per line.
pub fn render_github(v: &Verdict) -> String {
    let mut out = String::new();
    for x in &v.violations {
        let title = match &x.tool {
            Some(t) => format!("mcp-budget {}: {}/{}", x.rule, x.server, t),
            None => format!("mcp-budget {}: {}", x.rule, x.server),
        };
        let _ = writeln!(
            out,
            "::error title={}::{}",
            property(&title),
            data(&x.message)
        );
    }
    for c in v
        .changes
        .iter()
        .filter(|c| c.movement == Movement::Grown && c.subject != Subject::Server)
        .take(MAX_WARNINGS)
    {
        let what = if c.subject == Subject::Tool {
            "tool definition"
        } else {
            "result"
        };
        let title = format!("mcp-budget: {}/{} grew", c.server, c.name);
        let message = format!(
            "{what} `{}` grew from {} to {} tokens{}",
            c.name,
            thousands(c.before.unwrap_or(0)),
            thousands(c.after.unwrap_or(0)),
            match (c.from_zero(), c.pct) {
                (true, _) => " (new: from 0)".to_string(),
                (false, Some(p)) => format!(" ({})", percent_change(p)),
                (false, None) => String::new(),
            }
        );
        let _ = writeln!(
            out,
            "::warning title={}::{}",
            property(&title),
            data(&message)
        );
    }
    let summary = if v.passed {
        "mcp-budget gate passed".to_string()
    } else {
        format!(
            "mcp-budget gate failed: {} threshold(s) broken",
            v.violations.len()
        )
    };
    let _ = writeln!(out, "::notice title=mcp-budget::{}", data(&summary));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_are_escaped() {
        assert_eq!(data("50% of\nit"), "50%25 of%0Ait");
        assert_eq!(property("a: b, c"), "a%3A b%2C c");
    }
}
