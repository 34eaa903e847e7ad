//! The gate's verdict as GitHub Actions workflow commands: `::error` for each broken threshold,
//! `::warning` for each definition or result that grew. (The command appends the Markdown to
//! `$GITHUB_STEP_SUMMARY`.)

use std::fmt::Write as _;

use crate::ground::units::thousands;
use crate::judge::gate::{Movement, Subject, Verdict};

/// Warnings for growth at most, largest first.
const MAX_WARNINGS: usize = 20;

/// Escape a message for a workflow command.
fn data(text: &str) -> String {
    let encoded = text
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    crate::ground::text::one_line(&encoded).into_owned()
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
            if c.from_zero() || c.pct.is_some() {
                format!(" ({})", c.pct_text())
            } else {
                String::new()
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

    #[test]
    fn a_name_cannot_start_a_workflow_command_or_break_an_annotation() {
        let name = "t\n::error::pwned\r\n,title=x:y%0A\u{1b}";
        let v = Verdict {
            passed: false,
            violations: vec![crate::judge::gate::Violation {
                rule: "max_tool_tokens".into(),
                server: "s,1:2".into(),
                tool: Some(name.into()),
                value: 2.0,
                limit: 1.0,
                message: format!("`{name}` is 2 tokens (max 1)"),
            }],
            changes: vec![],
            baseline: None,
        };
        let out = render_github(&v);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert_eq!(
            lines[0],
            "::error title=mcp-budget max_tool_tokens%3A s%2C1%3A2/t%0A%3A%3Aerror%3A%3Apwned%0D%0A%2Ctitle=x%3Ay%250A\\x1b::`t%0A::error::pwned%0D%0A,title=x:y%250A\\x1b` is 2 tokens (max 1)"
        );
    }
}
