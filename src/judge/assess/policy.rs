//! `audit --suggest-policy FILE`: a policy the proxy applies (`mcp-budget proxy --policy FILE`)
//! that cuts what the definition rules measured: lean schemas on and each long description cut
//! at the sentence end the `long-description` finding names (nothing a client validates
//! changes), and `hide_params` for each parameter the `shared-parameters` rule found optional in
//! enough tools (the server's default, or `fixed_arguments`, supplies it). Its header says the
//! schema tax before and after, as the audit measured it.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::ground::units::thousands;
use crate::measure::facts::Report;

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

/// A suggested policy that would not say what the audit measured: it is never written.
#[derive(Debug, thiserror::Error)]
pub enum PolicyTomlError {
    #[error("the suggested policy does not parse as TOML ({0}): not written")]
    Unparsable(String),
    #[error("the suggested policy parses to something else than the audit suggests: not written")]
    Differs,
    #[error("the suggested policy's rule for tool `{0}` would not match that tool: not written")]
    Glob(String),
}

/// `s` as a one-line TOML basic string (a value or a key): quote and backslash escaped, and as
/// `\\uXXXX` every character TOML forbids in one (U+0000-U+001F, U+007F), tab (which TOML
/// allows) and every other control or format character (C1, bidi controls), so the file
/// shows what it holds.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if crate::ground::text::hidden(c) => {
                let _ = match c as u32 {
                    n @ 0..=0xFFFF => write!(out, "\\u{n:04X}"),
                    n => write!(out, "\\U{n:08X}"),
                };
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What the policy says of one tool: the shortest cut of its description, the parameters it
/// hides (those the `shared-parameters` rule found optional in enough tools), and why.
#[derive(Debug, Default)]
struct ToolRule {
    cut: Option<usize>,
    hide: std::collections::BTreeSet<String>,
    why: Vec<String>,
}

/// The rules by tool name.
type Cuts<'a> = BTreeMap<&'a str, ToolRule>;

fn cuts(report: &Report) -> Cuts<'_> {
    let mut cuts: Cuts<'_> = BTreeMap::new();
    for s in &report.servers {
        for g in &s.shared_parameters {
            let Some(saves) = g.hide_saves_tokens else {
                continue;
            };
            for tool in &g.tools {
                let entry = cuts.entry(tool.as_str()).or_default();
                if entry.hide.insert(g.name.clone()) && tool == &g.tools[0] {
                    entry.why.push(format!(
                        "{}: `{}` hidden in {} tools saves {} per turn; supply its value with fixed_arguments if the server's default will not do",
                        s.name,
                        g.name,
                        g.tools.len(),
                        thousands(saves)
                    ));
                }
            }
        }
        for t in &s.tools {
            let Some(chars) = t.description_cut_chars else {
                continue;
            };
            let saves = t
                .schema_lints
                .iter()
                .find(|l| l.rule == "long-description")
                .map_or(0, |l| l.saves_tokens);
            let entry = cuts.entry(&t.name).or_default();
            entry.cut = Some(entry.cut.map_or(chars, |c| c.min(chars)));
            entry.why.push(format!(
                "{}/{}: {} description tokens, the cut saves {} per turn",
                s.name,
                t.name,
                thousands(t.description_tokens),
                thousands(saves)
            ));
        }
    }
    cuts
}

/// The policy file's text, checked: it parses back to exactly the policy the audit suggests
/// (lean schemas, one `max_description_chars` per cut tool, each glob matching its tool), or it
/// is an error and nothing is written. Every name in a comment is one escaped line.
pub fn suggested_policy(report: &Report) -> Result<String, PolicyTomlError> {
    let cuts = cuts(report);
    let text = policy_text(report, &cuts);
    check(&text, &cuts)?;
    Ok(text)
}

fn policy_text(report: &Report, cuts: &Cuts<'_>) -> String {
    let (now, then) = suggested_tax(report);
    let servers: Vec<String> = report
        .servers
        .iter()
        .map(|s| crate::ground::text::one_line(&s.name).into_owned())
        .collect();
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
    for (tool, rule) in cuts {
        let _ = writeln!(out);
        for w in &rule.why {
            let _ = writeln!(out, "# {}", crate::ground::text::one_line(w));
        }
        let _ = writeln!(out, "[policy.tools.{}]", quoted(&literal_glob(tool)));
        if let Some(chars) = rule.cut {
            let _ = writeln!(out, "max_description_chars = {chars}");
        }
        if !rule.hide.is_empty() {
            let names: Vec<String> = rule.hide.iter().map(|n| quoted(&literal_glob(n))).collect();
            let _ = writeln!(out, "hide_params = [{}]", names.join(", "));
        }
    }
    out
}

/// `text` parsed back must be the intended policy, and each rule's glob must match its tool.
fn check(text: &str, cuts: &Cuts<'_>) -> Result<(), PolicyTomlError> {
    let parsed: toml::Table =
        toml::from_str(text).map_err(|e| PolicyTomlError::Unparsable(e.message().to_string()))?;
    let mut tools = toml::Table::new();
    for (tool, r) in cuts {
        let glob = literal_glob(tool);
        let matches = globset::Glob::new(&glob)
            .map(|g| g.compile_matcher().is_match(tool))
            .unwrap_or(false);
        if !matches {
            return Err(PolicyTomlError::Glob(
                crate::ground::text::one_line(tool).into_owned(),
            ));
        }
        let mut rule = toml::Table::new();
        if let Some(chars) = r.cut {
            rule.insert("max_description_chars".into(), (chars as i64).into());
        }
        if !r.hide.is_empty() {
            let names: Vec<toml::Value> = r.hide.iter().map(|n| literal_glob(n).into()).collect();
            rule.insert("hide_params".into(), names.into());
        }
        tools.insert(glob, rule.into());
    }
    let mut policy = toml::Table::new();
    policy.insert("lean_schemas".into(), true.into());
    if !tools.is_empty() {
        policy.insert("tools".into(), tools.into());
    }
    let mut intended = toml::Table::new();
    intended.insert("policy".into(), policy.into());
    if parsed != intended {
        return Err(PolicyTomlError::Differs);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::facts::{ServerReport, ToolCost};

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
        let text = suggested_policy(&r).unwrap();
        assert!(text.contains("1,000 -> 590 tokens per turn"), "{text}");
        let parsed: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(parsed["policy"]["lean_schemas"].as_bool(), Some(true));
        assert_eq!(
            parsed["policy"]["tools"]["think[*]"]["max_description_chars"].as_integer(),
            Some(1_200)
        );
    }

    #[test]
    fn a_policy_that_says_something_else_is_refused() {
        let mut cuts: Cuts<'_> = BTreeMap::new();
        cuts.insert(
            "a\u{7f}\"b",
            ToolRule {
                cut: Some(10),
                ..ToolRule::default()
            },
        );
        let good = "[policy]\nlean_schemas = true\n[policy.tools.\"a\\u007F\\\"b\"]\nmax_description_chars = 10\n";
        check(good, &cuts).unwrap();
        assert_eq!(
            quoted("a\u{7f}\"b\u{202e}\u{e0001}"),
            "\"a\\u007F\\\"b\\u202E\\U000E0001\""
        );
        let injected = format!("{good}[policy.tools.\"*\"]\ndescription = \"pwned\"\n");
        assert!(matches!(
            check(&injected, &cuts),
            Err(PolicyTomlError::Differs)
        ));
        let broken = "[policy]\nlean_schemas = \"a\u{7f}\"\n";
        assert!(matches!(
            check(broken, &cuts),
            Err(PolicyTomlError::Unparsable(_))
        ));
    }
}
