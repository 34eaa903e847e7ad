//! Compatibility findings from measurements: a probe result that a measured client turns into
//! an error, delivers as nothing but its marker, cuts under a marker that misstates the cut, or
//! refuses over its cap with no preview. A row the lab ran here (`--client measured`) is judged
//! on what was measured; otherwise on the profile's prediction, but only for a profile that was
//! measured (`[client.measured]`), whose version and date the finding names.

use super::{by_id, finding};
use crate::facts::ClientResult;
use crate::facts::{Finding, ServerReport};
use crate::profiles::{profile, Break};
use crate::units::thousands;

/// The compatibility findings of one server's probes.
pub(super) fn compat_findings(s: &ServerReport) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &s.probes {
        for c in &p.clients {
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

/// The row's view a finding may rest on, and "Claude Code 2.1.332 (measured here)" or "Gemini
/// CLI 0.61.0 (as measured 2026-12-01)".
fn judged(c: &ClientResult) -> Option<(&crate::profiles::ClientSeen, String)> {
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
    use crate::facts::{ProbeResult, RawCost};
    use crate::profiles::{client_view, select};
    use crate::tokens::Tokenizer;
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
                client: p.id.clone(),
                raw: client_view(p, result, Tokenizer::Cl100k),
                budgeted: None,
                confirmed: true,
                measured: None,
                measured_version: None,
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
}
