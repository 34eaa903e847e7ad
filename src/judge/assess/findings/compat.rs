//! Compatibility findings from measurements: a probe result that a measured client turns into
//! an error, delivers as nothing but its marker, cuts under a marker that misstates the cut, or
//! refuses over its cap with no preview. A row the lab ran here (`--client measured`) is judged
//! on what was measured; otherwise on the profile's prediction, but only for a profile that was
//! measured (`[client.measured]`), whose version and date the finding names.

use super::{by_id, finding};
use crate::config::profiles::{profile, Break};
use crate::ground::units::thousands;
use crate::measure::facts::ClientResult;
use crate::measure::facts::{Finding, ServerReport};

/// The compatibility findings of one server's probes.
pub(super) fn compat_findings(s: &ServerReport) -> Vec<Finding> {
    let mut out = first_page_findings(s);
    for p in &s.probes {
        // a tool the client never offers its model never reaches the client's cut
        for c in p.clients.iter().filter(|c| !c.unlisted) {
            if let Some((seen, how)) = judged(c) {
                if let Some(b) = &seen.breaks {
                    let raw = p.raw.as_ref().map_or(0, |r| r.model_tokens);
                    out.push(message(b, &how, raw, seen.tokens_to_model, &p.tool));
                }
            }
        }
    }
    out
}

/// One finding per client that reads only the first tools/list page of a server with more,
/// naming the tools its model is never offered (only a measured profile's fact makes one).
fn first_page_findings(s: &ServerReport) -> Vec<Finding> {
    s.clients
        .iter()
        .filter_map(|c| {
            let offered = c.tools_offered?;
            let p = profile(&c.client)?;
            let m = p.measured.as_ref()?;
            let never: Vec<&str> = s.tools[offered..].iter().map(|t| t.name.as_str()).collect();
            let listed = s.tools_list.tool_count;
            let reads = match p.listing.as_ref().and_then(|l| l.max_tools) {
                Some(max) if !p.first_page_only() => {
                    format!("stops reading tools/list pages once it has {max} tools")
                }
                _ => "reads only the first tools/list page".to_string(),
            };
            let text = format!(
                "{} {} (as measured {}) {reads}: {} of this server's {} tools are never offered to its model ({})",
                p.name,
                m.version,
                m.date,
                thousands(listed - offered),
                thousands(listed),
                crate::ground::text::shorten(&never.join(", "), 200)
            );
            Some(finding(by_id("client-first-page-only"), None, text))
        })
        .collect()
}

/// The row's view a finding may rest on, and "Claude Code 2.1.332 (measured here)" or "Gemini
/// CLI 0.61.0 (as measured 2026-12-01)".
fn judged(c: &ClientResult) -> Option<(&crate::config::profiles::ClientSeen, String)> {
    let p = profile(&c.client)?;
    match (&c.measured, &c.measured_version, &p.measured) {
        (Some(seen), Some(v), _) => Some((seen, format!("{} {v} (measured in this run)", p.name))),
        (None, _, Some(m)) => Some((
            &c.raw,
            format!("{} {} (as measured {})", p.name, m.version, m.date),
        )),
        _ => None,
    }
}

fn message(b: &Break, client: &str, raw: usize, shown: usize, tool: &str) -> Finding {
    let (rule, text) = match b {
        Break::JsonArrayError => (
            "client-error-instead-of-result",
            format!("{client} sends its model an error in place of this result: its text is a JSON array ({} tokens never reach the model)", thousands(raw)),
        ),
        Break::ErrorInstead => (
            "client-error-instead-of-result",
            format!("{client} sent its model an error in place of this {}-token result", thousands(raw)),
        ),
        Break::MarkerOnly => (
            "client-marker-only",
            format!("{client} delivers nothing of this {}-token result but its marker ({} tokens): the result is one line over its limit and it cuts at line ends", thousands(raw), thousands(shown)),
        ),
        Break::ImagesDropped { images } => (
            "client-drops-images",
            format!("{client} sends its model none of this result's {} ({} tokens of text are what it gets)", match images { 1 => "image".to_string(), n => format!("{n} images") }, thousands(shown)),
        ),
        Break::MisstatedMarker { stated, cut, unit } => (
            "client-misstated-cut",
            format!("{client} cuts this result with a marker that says {} {unit} were cut; {} were", thousands(*stated), thousands(*cut)),
        ),
        Break::CapNoPreview { cap, unit } if shown == 0 => (
            "client-cap-no-preview",
            format!("{client} sends its model nothing of this {}-token result: over its {}-{} cap, with no preview", thousands(raw), thousands(*cap), unit.trim_end_matches('s')),
        ),
        Break::CapNoPreview { cap, unit } => (
            "client-cap-no-preview",
            format!("{client} sends its model a {}-token error in place of this {}-token result: over its {}-{} cap, with no preview", thousands(shown), thousands(raw), thousands(*cap), unit.trim_end_matches('s')),
        ),
    };
    finding(by_id(rule), Some(tool), text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::profiles::{client_view, select};
    use crate::ground::tokens::Tokenizer;
    use crate::measure::facts::{ProbeResult, RawCost};
    use serde_json::{json, Value};

    /// The findings of one probe of `text` in the clients named.
    fn findings(clients: &str, text: &str) -> Vec<Finding> {
        let result = json!({"content": [{"type": "text", "text": text}]});
        let mut s = ServerReport::new("srv", "stdio", "srv", "test");
        s.probes.push(ProbeResult {
            raw: Some(RawCost {
                model_tokens: Tokenizer::Cl100k.count(text),
                ..RawCost::default()
            }),
            clients: rows(clients, &result),
            ..ProbeResult::new("get")
        });
        compat_findings(&s)
    }

    fn rows(clients: &str, result: &Value) -> Vec<ClientResult> {
        select(clients)
            .unwrap()
            .into_iter()
            .map(|p| ClientResult {
                model_tokenizer: None,
                client: p.id.clone(),
                raw: client_view(p, result, Tokenizer::Cl100k),
                budgeted: None,
                confirmed: true,
                measured: None,
                measured_version: None,
                unlisted: false,
            })
            .collect()
    }

    fn version(id: &str) -> String {
        let m = profile(id).unwrap().measured.as_ref().unwrap();
        format!("{} (as measured {})", m.version, m.date)
    }

    #[test]
    fn a_json_array_is_an_error_in_gemini_cli_and_nowhere_else() {
        let got = findings("gemini-cli,codex,opencode", r#"[{"id": 1}, {"id": 2}]"#);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].rule, "client-error-instead-of-result");
        assert!(got[0]
            .message
            .starts_with(&format!("Gemini CLI {}", version("gemini-cli"))));
        // an object is delivered
        assert!(findings("gemini-cli", r#"{"items": [1, 2]}"#).is_empty());
    }

    #[test]
    fn one_line_over_opencodes_limit_is_its_marker_alone() {
        // opencode keeps the head to the last line end within 51,200 bytes: one line keeps none
        let got = findings("opencode", &"a".repeat(60_000));
        assert_eq!(
            got.iter().map(|f| f.rule.as_str()).collect::<Vec<_>>(),
            ["client-marker-only"]
        );
        // the same bytes in lines keep a head: a cut, not a finding
        assert!(findings("opencode", &"abcdefghi\n".repeat(6_000)).is_empty());
    }

    #[test]
    fn codexs_fixed_marker_misstates_the_tokens_it_cut() {
        let text = "lorem ipsum dolor sit amet ".repeat(1_200);
        // 12,000 bytes kept of it, 6,000 from each end (ASCII: bytes are chars)
        let kept = format!("{}{}", &text[..6_000], &text[text.len() - 6_000..]);
        let t = Tokenizer::Cl100k;
        let cut = t.count(&text) - t.count(&kept);
        let got = findings("codex", &text);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].rule, "client-misstated-cut");
        assert_eq!(
            got[0].message,
            format!(
                "Codex {} cuts this result with a marker that says 7 tokens were cut; {} were",
                version("codex"),
                thousands(cut)
            )
        );
        // under the limit: whole, nothing to say
        assert!(findings("codex", &text[..11_000]).is_empty());
    }

    #[test]
    fn over_claude_codes_token_cap_is_an_error_without_a_preview() {
        let text = "word ".repeat(30_000);
        let got = findings("claude-code", &text);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].rule, "client-cap-no-preview");
        assert!(
            got[0].message.contains(&format!(
                "in place of this {}-token result: over its 25,000-token cap, with no preview",
                thousands(Tokenizer::Cl100k.count(&text))
            )),
            "{}",
            got[0].message
        );
    }

    #[test]
    fn a_profile_that_was_not_measured_makes_no_finding() {
        assert!(profile("vscode").unwrap().measured.is_none());
        assert!(findings("vscode", &"word ".repeat(30_000)).is_empty());
    }

    #[test]
    fn a_client_reading_the_first_page_only_is_told_which_tools_it_never_offers() {
        use crate::measure::facts::{ClientSchema, ToolCost};
        let mut s = ServerReport::new("srv", "stdio", "srv", "test");
        s.tools = (0..7)
            .map(|i| ToolCost {
                name: format!("tool_{i}"),
                ..ToolCost::default()
            })
            .collect();
        s.tools_list.tool_count = 7;
        let row = |id: &str, offered| ClientSchema {
            client: id.into(),
            schema_tokens_per_turn: 0,
            deferred: false,
            tool_limit_exceeded: false,
            usd_per_1k_turns: None,
            confirmed: true,
            tools_offered: offered,
            listing_era: None,
            model_tokenizer: None,
            model_tokens_per_turn: None,
            measured: None,
        };
        s.clients = vec![row("cline", Some(5)), row("codex", None)];
        // a huge result of the last tool, which Cline never offers: no finding on its cut
        let result = json!({"content": [{"type": "text", "text": "x".repeat(200_000)}]});
        let mut probe = ProbeResult::new("tool_6");
        probe.clients = rows("cline", &result);
        probe.clients[0].unlisted = true;
        s.probes.push(probe);
        let got = compat_findings(&s);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].rule, "client-first-page-only");
        assert_eq!(
            got[0].message,
            format!("Cline CLI {} reads only the first tools/list page: 2 of this server's 7 tools are never offered to its model (tool_5, tool_6)", version("cline"))
        );
    }
}
