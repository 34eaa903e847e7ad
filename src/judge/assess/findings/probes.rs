//! Findings about the probe file itself: a probe of a tool the server does not list
//! (`probe-unknown-tool`, with the names a typo away and what the server offers) and a probe
//! whose arguments its tool's input schema refuses (`probe-arguments`, with the parameters).

use super::{by_id, finding};
use crate::measure::facts::{Finding, ServerReport, Status};
use crate::measure::near_names;

/// Tool names listed in one finding at most (tools.csv lists them all).
const NAMES_SHOWN: usize = 20;

pub(super) fn probe_findings(s: &ServerReport) -> Vec<Finding> {
    let mut out = Vec::new();
    // a server whose listing failed offers nothing to compare with
    if s.status != Status::Ok {
        return out;
    }
    let names: Vec<&str> = s.tools.iter().map(|t| t.name.as_str()).collect();
    for p in &s.probes {
        let Some(tool) = s.tools.iter().find(|t| t.name == p.tool) else {
            let near = near_names(&p.tool, names.iter().copied());
            let guess = match near.as_slice() {
                [] => String::new(),
                near => format!(" (did you mean `{}`?)", near.join("`, `")),
            };
            out.push(finding(
                by_id("probe-unknown-tool"),
                Some(&p.tool),
                format!(
                    "probe of `{}`: the server lists no such tool{guess}; it offers {}",
                    p.name(),
                    offered(&names)
                ),
            ));
            continue;
        };
        if !p.argument_errors.is_empty() {
            let takes = match tool.input_params.as_slice() {
                [] => "no parameters".to_string(),
                params => format!("parameters {}", params.join(", ")),
            };
            out.push(finding(
                by_id("probe-arguments"),
                Some(&p.tool),
                format!(
                    "probe of `{}`: the arguments do not match the tool's input schema: {} (it takes {takes})",
                    p.name(),
                    p.argument_errors.join("; ")
                ),
            ));
        }
    }
    out
}

/// `N tools: a, b, c` (the first 20, then how many more).
fn offered(names: &[&str]) -> String {
    match names.len() {
        0 => "no tools".to_string(),
        n if n <= NAMES_SHOWN => format!("{n}: {}", names.join(", ")),
        n => format!(
            "{n}: {}, and {} more (tools.csv lists them)",
            names[..NAMES_SHOWN].join(", "),
            n - NAMES_SHOWN
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::facts::{ProbeResult, ToolCost};

    fn server(tools: &[(&str, &[&str])], probes: Vec<ProbeResult>) -> ServerReport {
        let mut s = ServerReport::new("demo", "stdio", "demo", "t.toml");
        s.tools = tools
            .iter()
            .map(|(name, params)| ToolCost {
                name: name.to_string(),
                input_params: params.iter().map(|p| p.to_string()).collect(),
                ..ToolCost::default()
            })
            .collect();
        s.probes = probes;
        s
    }

    #[test]
    fn a_probe_of_an_unlisted_tool_names_the_near_ones_and_what_is_offered() {
        let s = server(
            &[("scrape_as_markdown", &["url"]), ("search_code", &["q"])],
            vec![ProbeResult::new("scrape_as_markdwn")],
        );
        let f = probe_findings(&s);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            (f[0].rule.as_str(), f[0].severity.as_str()),
            ("probe-unknown-tool", "warning")
        );
        assert_eq!(
            f[0].message,
            "probe of `scrape_as_markdwn`: the server lists no such tool (did you mean \
             `scrape_as_markdown`?); it offers 2: scrape_as_markdown, search_code"
        );
    }

    #[test]
    fn arguments_the_schema_refuses_are_a_warning_with_the_parameters() {
        let mut p = ProbeResult::new("search_code");
        p.argument_errors = vec!["(the arguments): \"q\" is a required property".into()];
        let ok = ProbeResult::new("search_code");
        let s = server(&[("search_code", &["q", "page"])], vec![p, ok]);
        let f = probe_findings(&s);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].rule, "probe-arguments");
        assert!(
            f[0].message
                .ends_with("\"q\" is a required property (it takes parameters q, page)"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn many_tools_are_listed_up_to_twenty_and_a_failed_server_has_no_finding() {
        let names: Vec<String> = (0..25).map(|i| format!("tool_{i:02}")).collect();
        let tools: Vec<(&str, &[&str])> = names.iter().map(|n| (n.as_str(), &[][..])).collect();
        let mut s = server(&tools, vec![ProbeResult::new("nothing_like_it")]);
        let f = probe_findings(&s);
        assert!(!f[0].message.contains("(did you mean"), "{}", f[0].message);
        assert!(
            f[0].message
                .ends_with("tool_19, and 5 more (tools.csv lists them)"),
            "{}",
            f[0].message
        );
        s.status = Status::Error;
        assert!(probe_findings(&s).is_empty());
    }
}
