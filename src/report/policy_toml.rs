//! `audit --suggest-policy FILE`: a policy the proxy applies (`mcp-budget proxy --policy FILE`)
//! that cuts what the definition rules measured and that loses nothing a client validates:
//! lean schemas on, and each long description cut at the sentence end the `long-description`
//! finding names. Its header says the schema tax before and after, as the audit measured it.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::model::Report;
use crate::units::thousands;

/// The schema tax per turn of the audited servers, and with the suggested policy applied.
pub fn suggested_tax(report: &Report) -> (usize, usize) {
    let tools = report.servers.iter().flat_map(|s| &s.tools);
    tools.fold((0, 0), |(now, then), t| {
        (
            now + t.model_tokens,
            then + t.suggested_model_tokens.unwrap_or(t.model_tokens),
        )
    })
}

/// A tool name as a glob that matches only itself (policy rules are globs).
fn literal_glob(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '*' | '?' | '[' | ']' | '{' | '}' | '\\' => format!("[{c}]"),
            c => c.to_string(),
        })
        .collect()
}

/// TOML's basic string.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The policy file's text.
pub fn suggested_policy(report: &Report) -> String {
    let (now, then) = suggested_tax(report);
    let mut cuts: BTreeMap<&str, (usize, Vec<String>)> = BTreeMap::new();
    for s in &report.servers {
        for t in &s.tools {
            let Some(chars) = t.description_cut_chars else {
                continue;
            };
            let saves = t
                .schema_lints
                .iter()
                .find(|l| l.rule == "long-description")
                .map_or(0, |l| l.saves_tokens);
            let entry = cuts.entry(&t.name).or_insert((chars, Vec::new()));
            entry.0 = entry.0.min(chars);
            entry.1.push(format!(
                "{}/{}: {} description tokens, the cut saves {} per turn",
                s.name,
                t.name,
                thousands(t.description_tokens),
                thousands(saves)
            ));
        }
    }
    let servers: Vec<&str> = report.servers.iter().map(|s| s.name.as_str()).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Written by `mcp-budget audit --suggest-policy` from {} server(s): {}.",
        servers.len(),
        servers.join(", ")
    );
    let _ = writeln!(
        out,
        "# Apply it with `mcp-budget proxy --policy THIS_FILE -- <server>`."
    );
    let _ = writeln!(
        out,
        "# Schema tax measured by the audit: {} -> {} tokens per turn with this policy.",
        thousands(now),
        thousands(then)
    );
    let _ = writeln!(out, "\n[policy]");
    let _ = writeln!(
        out,
        "# $schema, $comment, titles that repeat names and null defaults removed; what each schema\n# accepts is unchanged"
    );
    let _ = writeln!(out, "lean_schemas = true");
    for (tool, (chars, why)) in cuts {
        let _ = writeln!(out);
        for w in why {
            let _ = writeln!(out, "# {}", crate::text::one_line(&w));
        }
        let _ = writeln!(out, "[policy.tools.{}]", quoted(&literal_glob(tool)));
        let _ = writeln!(out, "max_description_chars = {chars}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ServerReport, ToolCost};

    #[test]
    fn the_policy_parses_and_names_each_cut() {
        let mut s = ServerReport::new("seq", "stdio", "x", "t");
        s.tools = vec![
            ToolCost {
                name: "think*".into(),
                model_tokens: 900,
                description_tokens: 600,
                suggested_model_tokens: Some(500),
                description_cut_chars: Some(1_200),
                ..ToolCost::default()
            },
            ToolCost {
                name: "plain".into(),
                model_tokens: 100,
                suggested_model_tokens: Some(90),
                ..ToolCost::default()
            },
        ];
        let r = Report::new(vec!["cl100k_base".into()], vec![s]);
        assert_eq!(suggested_tax(&r), (1_000, 590));
        let text = suggested_policy(&r);
        assert!(text.contains("1,000 -> 590 tokens per turn"), "{text}");
        let parsed: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(parsed["policy"]["lean_schemas"].as_bool(), Some(true));
        assert_eq!(
            parsed["policy"]["tools"]["think[*]"]["max_description_chars"].as_integer(),
            Some(1_200)
        );
    }
}
