//! The findings of the 2026-07-28 era: caching hints on tools/list, and the era's rules kept.

use super::{by_id, finding};
use crate::ground::units::thousands;
use crate::measure::facts::{EraConformance, Finding};

/// The era's findings for a server measured in it (none for one of the handshake era).
pub(super) fn era_findings(c: Option<&EraConformance>) -> Vec<Finding> {
    let Some(c) = c else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let pages = c.tools_list_ttl_ms.len();
    let (no_ttl, no_scope) = (c.pages_without_ttl(), c.pages_without_scope());
    if !no_ttl.is_empty() || !no_scope.is_empty() {
        let mut said = Vec::new();
        if !no_ttl.is_empty() {
            let zero = c.tools_list_ttl_ms.contains(&Some(0));
            said.push(format!(
                "{} on {}",
                if zero { "ttlMs 0 or none" } else { "no ttlMs" },
                which(&no_ttl, pages)
            ));
        }
        if !no_scope.is_empty() {
            said.push(format!("no cacheScope on {}", which(&no_scope, pages)));
        }
        out.push(finding(by_id("list-cache-hints"), None, said.join("; ")));
    }
    let mut broken = Vec::new();
    if !c.without_result_type.is_empty() {
        broken.push(format!(
            "no resultType on {}",
            listed(&c.without_result_type)
        ));
    }
    if let Some(v) = &c.unknown_version {
        // the request asked in a version no server speaks is `server/discover`
        let asked = format!("`server/discover` asked in {}", v.asked);
        match (v.code, v.lists_supported) {
            (Some(-32022), true) => {}
            (Some(-32022), false) => {
                broken.push(format!("{asked} got -32022 without data.supported"))
            }
            (Some(code), _) => broken.push(format!("{asked} got error {code}, not -32022")),
            (None, _) => broken.push(format!(
                "{asked} was answered as if the version were spoken"
            )),
        }
    }
    if !broken.is_empty() {
        out.push(finding(by_id("era-rules-broken"), None, broken.join("; ")));
    }
    out
}

/// "page 2 of 3", "pages 2, 3 of 4", "all 3 pages", "the page".
fn which(pages: &[usize], of: usize) -> String {
    match (pages, of) {
        (_, 1) => "the page".into(),
        (p, n) if p.len() == n => format!("all {} pages", thousands(n)),
        (p, n) => format!(
            "{} {} of {}",
            if p.len() == 1 { "page" } else { "pages" },
            p.iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            thousands(n)
        ),
    }
}

/// The first three, and how many more.
fn listed(items: &[String]) -> String {
    let mut s = items.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > 3 {
        s.push_str(&format!(" and {} more", thousands(items.len() - 3)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::facts::VersionRefusal;

    fn rules(c: &EraConformance) -> Vec<(String, String)> {
        era_findings(Some(c))
            .into_iter()
            .map(|f| (f.rule, f.message))
            .collect()
    }

    #[test]
    fn a_server_that_keeps_the_rules_has_no_finding() {
        let c = EraConformance {
            tools_list_ttl_ms: vec![Some(60_000), Some(60_000)],
            tools_list_cache_scope: vec![Some("public".into()), Some("private".into())],
            without_result_type: vec![],
            unknown_version: Some(VersionRefusal {
                asked: "2099-01-01".into(),
                code: Some(-32022),
                lists_supported: true,
            }),
        };
        assert!(rules(&c).is_empty());
        assert!(era_findings(None).is_empty());
    }

    /// Issue 37: the message named the version asked in, not the request the server got wrong.
    #[test]
    fn a_wrong_answer_to_an_unknown_version_names_the_request() {
        let refused = |code: Option<i64>, lists_supported: bool| EraConformance {
            tools_list_ttl_ms: vec![Some(60_000)],
            tools_list_cache_scope: vec![Some("public".into())],
            without_result_type: vec![],
            unknown_version: Some(VersionRefusal {
                asked: "2099-01-01".into(),
                code,
                lists_supported,
            }),
        };
        let said = |c: &EraConformance| rules(c).into_iter().map(|(_, m)| m).collect::<Vec<_>>();
        assert_eq!(
            said(&refused(None, false)),
            ["`server/discover` asked in 2099-01-01 was answered as if the version were spoken"]
        );
        assert_eq!(
            said(&refused(Some(-32022), false)),
            ["`server/discover` asked in 2099-01-01 got -32022 without data.supported"]
        );
    }

    #[test]
    fn each_broken_rule_is_named() {
        let c = EraConformance {
            tools_list_ttl_ms: vec![Some(60_000), Some(0), None],
            tools_list_cache_scope: vec![Some("public".into()), None, None],
            without_result_type: (1..=5).map(|i| format!("tools/list page {i}")).collect(),
            unknown_version: Some(VersionRefusal {
                asked: "2099-01-01".into(),
                code: Some(-32602),
                lists_supported: false,
            }),
        };
        assert_eq!(
            rules(&c),
            [
                (
                    "list-cache-hints".to_string(),
                    "ttlMs 0 or none on pages 2, 3 of 3; no cacheScope on pages 2, 3 of 3".to_string()
                ),
                (
                    "era-rules-broken".to_string(),
                    "no resultType on tools/list page 1, tools/list page 2, tools/list page 3 and 2 more; `server/discover` asked in 2099-01-01 got error -32602, not -32022".to_string()
                ),
            ]
        );
    }
}
