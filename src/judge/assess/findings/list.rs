//! Findings about a server's tool list as a whole: a parameter repeated across its tools (the
//! `shared-parameters` rule, measured in `measure/shared.rs`) and a page larger than an SDK's
//! client reads (`tools-list-over-sdk-limit`, the limits in `profiles/sdk_limits.toml`).

use super::{by_id, finding, saving};
use crate::ground::units::thousands;
use crate::measure::facts::{Finding, ServerReport};

/// A tools/list page over the largest message an SDK's client reads on the server's transport.
pub(super) fn sdk_limit_findings(s: &ServerReport) -> Vec<Finding> {
    let page = s.tools_list.largest_page_bytes;
    let transport = if s.transport == "stdio" {
        "stdio"
    } else {
        "http"
    };
    crate::config::profiles::sdk_limits()
        .iter()
        .filter(|l| l.transport == transport && page > l.bytes)
        .map(|l| {
            finding(
                by_id("tools-list-over-sdk-limit"),
                None,
                format!(
                    "a tools/list page of {} bytes is over the {} bytes {} reads: {} (source: {})",
                    thousands(page),
                    thousands(l.bytes),
                    l.name,
                    l.effect,
                    l.source
                ),
            )
        })
        .collect()
}

/// One finding per parameter repeated across the server's tools, with both fixes' savings.
pub(super) fn shared_findings(s: &ServerReport) -> Vec<Finding> {
    s.shared_parameters
        .iter()
        .map(|g| {
            let some: Vec<&str> = g.tools.iter().take(3).map(String::as_str).collect();
            let more = g.tools.len().saturating_sub(some.len());
            let hide = match g.hide_saves_tokens {
                Some(t) => format!(
                    "hiding it saves {} tokens per turn (the proxy supplies its value)",
                    thousands(t)
                ),
                None => format!("it is required in {} of them, so it cannot be hidden", g.required_in),
            };
            let message = format!(
                "`{}` has the same schema and description in {} tools ({}{}): {hide}; stating it once in the instructions saves {}",
                g.name,
                g.tools.len(),
                some.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() },
                thousands(g.state_once_saves_tokens)
            );
            saving(
                finding(by_id("shared-parameters"), None, message),
                Some(g.best_saving()),
                None,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::facts::SharedParameter;

    #[test]
    fn a_page_over_the_typescript_sdks_stdio_buffer_is_an_error_and_one_under_it_is_not() {
        let mut s = ServerReport::new("big", "stdio", "x", "t");
        s.tools_list.largest_page_bytes = 10 * 1024 * 1024 + 1;
        let f = sdk_limit_findings(&s);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].rule, "tools-list-over-sdk-limit");
        assert!(
            f[0].message.contains("10,485,761 bytes"),
            "{}",
            f[0].message
        );
        assert!(f[0].message.contains("stdio.ts:4"), "{}", f[0].message);
        s.tools_list.largest_page_bytes = 10 * 1024 * 1024;
        assert!(sdk_limit_findings(&s).is_empty());
        // the limit is the stdio transport's: an HTTP server's page is not judged by it
        let mut h = ServerReport::new("big", "http", "x", "t");
        h.tools_list.largest_page_bytes = 20 * 1024 * 1024;
        assert!(sdk_limit_findings(&h).is_empty());
    }

    #[test]
    fn a_shared_parameter_is_one_finding_with_both_savings() {
        let mut s = ServerReport::new("cloud", "stdio", "x", "t");
        s.shared_parameters = vec![SharedParameter {
            name: "tenant".into(),
            schema: "{}".into(),
            tools: (0..7).map(|i| format!("t{i}")).collect(),
            required_in: 0,
            hide_saves_tokens: Some(700),
            state_once_saves_tokens: 650,
        }];
        let f = shared_findings(&s);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].saves_tokens, Some(700));
        assert!(
            f[0].message.contains("in 7 tools (t0, t1, t2 and 4 more)")
                && f[0].message.contains("hiding it saves 700")
                && f[0].message.contains("saves 650"),
            "{}",
            f[0].message
        );
    }
}
