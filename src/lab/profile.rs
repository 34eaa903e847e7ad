//! A derive's rules as a profile entry for `clients.toml`: `[client.measured]` with the client's
//! version, model name and the day, and one `[[client.rule]]` per rule the shapes share (its
//! unit, threshold and effect, what it keeps, its marker as the message), each `measured`, and
//! `[client.era]` when its protocol era was derived.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::derive::ShapeRule;
use super::probe::{note_first, Delivery, KEPT};
use super::report::ClientReport;

/// The TOML of a client's measured entry; empty when nothing was derived.
pub fn entry(c: &ClientReport, date: &str) -> String {
    if c.rules.is_empty() && c.era.is_none() {
        return String::new();
    }
    let version = c.version.as_deref().unwrap_or("unknown");
    let source = format!(
        "measured: mcp-budget lab --derive, {} {version} (model name {})",
        c.name, c.model
    );
    let mut out = String::new();
    for (key, shapes) in groups(&c.rules) {
        let r = shapes[0];
        let _ = writeln!(out, "[[client.rule]]\napplies = \"result\"");
        let _ = writeln!(out, "unit = {}\nthreshold = {}", quote(key.1), key.2);
        let _ = writeln!(out, "effect = {}", quote(key.3));
        let (message, head_share) = message(r);
        if let Some(share) = head_share {
            let _ = writeln!(out, "head_share = {share:.2}");
        }
        if key.3 == "spill" {
            let _ = writeln!(out, "preview = {}", r.head);
        }
        if shapes.iter().all(|s| s.shape.name() == "json_array") && others_derived(&c.rules) {
            let _ = writeln!(out, "when = \"json_array\"");
        }
        let _ = writeln!(out, "message = {}", quote(&message));
        let names: Vec<&str> = shapes.iter().map(|s| s.shape.name()).collect();
        let mut note = format!("measured on: {}", names.join(", "));
        if !r.unit_also.is_empty() {
            let _ = write!(
                note,
                "; the unit could also be {}: these shapes read the same in them (derive `wide` to tell chars from bytes)",
                r.unit_also.join(" or ")
            );
        }
        let _ = writeln!(out, "note = {}", quote(&note));
        let _ = writeln!(
            out,
            "as_of = {}\nchecked = {}\nconfirmed = true",
            quote(date),
            quote(date)
        );
        let _ = writeln!(out, "source = {}\n", quote(&source));
    }
    if let Some(era) = &c.era {
        let falls_back = era.opened_with == "initialize" || era.fell_back == Some(true);
        let _ = writeln!(
            out,
            "[client.era]\nopens_with = {}\nversion = {}\nfalls_back = {falls_back}",
            quote(&era.opened_with),
            quote(era.asked.as_deref().unwrap_or(""))
        );
        let _ = writeln!(
            out,
            "source = {}\nas_of = {}\nchecked = {}\nconfirmed = true\n",
            quote(&format!(
                "{source}: on a server from before 2026, {}",
                era.describe()
            )),
            quote(date),
            quote(date)
        );
    }
    let _ = writeln!(
        out,
        "[client.measured]\nversion = {}\nmodel = {}",
        quote(version),
        quote(&c.model)
    );
    let _ = writeln!(
        out,
        "date = {}\nnote = \"mcp-budget lab --derive\"",
        quote(date)
    );
    out
}

/// (stage, unit, threshold, effect) of each rule with a threshold, and the shapes that share it.
type Key<'a> = (u8, &'a str, usize, &'static str);

fn groups(rules: &[ShapeRule]) -> BTreeMap<Key<'_>, Vec<&ShapeRule>> {
    let mut out: BTreeMap<Key<'_>, Vec<&ShapeRule>> = BTreeMap::new();
    for r in rules {
        if let (Some(unit), Some(threshold), Some(effect)) =
            (r.unit.as_deref(), r.threshold, effect(r))
        {
            out.entry((r.stage, unit, threshold, effect))
                .or_default()
                .push(r);
        }
    }
    out
}

/// Whether the derive covered more shapes than the JSON array (so a rule of its own is about
/// JSON arrays, not about size).
fn others_derived(rules: &[ShapeRule]) -> bool {
    rules.iter().any(|r| r.shape.name() != "json_array")
}

/// What the client does past the rule, in the profile's words.
fn effect(r: &ShapeRule) -> Option<&'static str> {
    Some(match r.delivery? {
        Delivery::Error | Delivery::MarkerOnly => "refuse",
        Delivery::Cut if r.tail > 0 => "truncate",
        Delivery::Cut if !note_first(&r.marker) => "cap",
        Delivery::Cut => "spill",
        Delivery::Whole | Delivery::NotDelivered => return None,
    })
}

/// The marker as the rule's message (the text between or around what was kept), and the head's
/// share of what a truncate keeps.
fn message(r: &ShapeRule) -> (String, Option<f64>) {
    let parts: Vec<&str> = r.marker.split(KEPT).collect();
    let message = match parts.as_slice() {
        [only] => only.to_string(),
        [before, after] if !note_first(&r.marker) => format!("{before}{after}"),
        [before, _] => before.to_string(),
        [_, middle, ..] => middle.to_string(),
        [] => String::new(),
    };
    let share = (r.tail > 0).then(|| r.head as f64 / (r.head + r.tail) as f64);
    (placeholders(&message, r), share)
}

/// The marker with what changes from run to run as the profile's placeholders: a path (the
/// run's own folders) as `{file}`, and a number that is the cut's own count as `{removed}`,
/// `{head}`, `{tail}`, `{total}`, `{chars}` or `{lines}` (with or without thousands commas).
/// A number that matches none stays: a fixed amount the client states whatever it cut (Codex's
/// "…7 tokens truncated…") is part of the message.
pub(super) fn placeholders(marker: &str, r: &ShapeRule) -> String {
    let at = r.cut_from.unwrap_or_default();
    let unit = r.unit.as_deref().unwrap_or("chars");
    let removed = at.chars.saturating_sub(r.head + r.tail);
    // what is past the limit, in the rule's unit (opencode's and Kilo's "...11 lines
    // truncated...", "...481 bytes truncated..." count from their cap, not from what they kept)
    let past = r
        .threshold
        .map_or(0, |t| at.in_unit(unit).saturating_sub(t));
    let named: [(usize, &str); 7] = [
        (removed, "{removed}"),
        (past, "{removed}"),
        (r.head, "{head}"),
        (r.tail, "{tail}"),
        (at.in_unit(unit), "{total}"),
        (at.chars, "{chars}"),
        (at.lines, "{lines}"),
    ];
    let mut out = String::with_capacity(marker.len());
    let mut rest = marker;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit() || c == '/' || c == '$') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let path_start = rest.starts_with('/') || rest.starts_with("$HOME/");
        if path_start {
            let end = rest
                .find(|c: char| {
                    c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ']' | ')' | '>')
                })
                .unwrap_or(rest.len());
            let path = &rest[..end];
            // a path of at least two folders; a lone `/` or `a/b` in prose stays
            if path.matches('/').count() >= 2 {
                out.push_str("{file}");
            } else {
                out.push_str(path);
            }
            rest = &rest[end.max(1)..];
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == ','))
            .unwrap_or(rest.len());
        let token = rest[..end].trim_end_matches(',');
        let value: Option<usize> = token.replace(',', "").parse().ok();
        match named.iter().find(|(n, _)| Some(*n) == value && *n > 0) {
            Some((_, name)) => out.push_str(name),
            None => out.push_str(token),
        }
        rest = &rest[token.len().max(1).min(rest.len())..];
    }
    out.push_str(rest);
    out
}

fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::probe::Sizes;
    use crate::lab::shapes::Shape;

    fn rule(
        shape: Shape,
        stage: u8,
        unit: &'static str,
        threshold: usize,
        delivery: Delivery,
        (head, tail): (usize, usize),
        marker: &str,
    ) -> ShapeRule {
        let size = Sizes {
            chars: 1,
            bytes: 1,
            tokens: 1,
            lines: 1,
        };
        ShapeRule {
            shape,
            stage,
            unit: Some(unit.to_string()),
            unit_also: Vec::new(),
            threshold: Some(threshold),
            whole_up_to: Some(size),
            cut_from: Some(size),
            delivery: Some(delivery),
            head,
            tail,
            file: false,
            marker: marker.into(),
            sent: None,
            runs: 1,
        }
    }

    #[test]
    fn a_markers_counts_and_paths_become_the_profiles_placeholders() {
        let mut r = rule(
            Shape::Lines,
            1,
            "chars",
            8_000,
            Delivery::Cut,
            (3_950, 3_981),
            "",
        );
        r.cut_from = Some(Sizes {
            chars: 8_050,
            bytes: 8_050,
            tokens: 1_900,
            lines: 120,
        });
        // Cline: the count cut; Gemini: head and tail with commas and a file of the run
        assert_eq!(
            placeholders("\n\n...[truncated 119 chars]...\n\n", &r),
            "\n\n...[truncated {removed} chars]...\n\n"
        );
        assert_eq!(
            placeholders("Showing first 3,950 and last 3,981 characters. For full output see: /tmp/lab-7/home/.gemini/tmp/out.txt\n", &r),
            "Showing first {head} and last {tail} characters. For full output see: {file}\n"
        );
        assert_eq!(
            placeholders(
                "Saved to $HOME/tmp/17-copilot-tool-output.txt (8,050 chars, 120 lines)",
                &r
            ),
            "Saved to {file} ({total} chars, {lines} lines)"
        );
        // what is past the limit in the rule's unit: 120 lines over a cap of 100
        let mut lines = r.clone();
        lines.unit = Some("lines".into());
        lines.threshold = Some(100);
        assert_eq!(
            placeholders("\n...20 lines truncated...\n", &lines),
            "\n...{removed} lines truncated...\n"
        );
        // a fixed amount stays (Codex states 7 tokens whatever it cut), as does prose
        assert_eq!(
            placeholders("…7 tokens truncated… and/or 2026", &r),
            "…7 tokens truncated… and/or 2026"
        );
    }

    #[test]
    fn shapes_that_share_a_rule_make_one_entry_that_clients_toml_reads() {
        let c = ClientReport {
            id: "x".into(),
            name: "X".into(),
            version: Some("1.2.3".into()),
            status: crate::lab::ClientStatus::Measured,
            api: crate::lab::model::Api::Gemini,
            model: "m".into(),
            adapter: "a".into(),
            binary: None,
            looked_in: vec![],
            servers: vec![],
            rules: vec![
                rule(
                    Shape::Lines,
                    1,
                    "chars",
                    40_000,
                    Delivery::Cut,
                    (8_000, 32_000),
                    "Output too large.\n[kept]\n...\n[kept]",
                ),
                rule(
                    Shape::Wide,
                    1,
                    "chars",
                    40_000,
                    Delivery::Cut,
                    (8_000, 32_000),
                    "Output too large.\n[kept]\n...\n[kept]",
                ),
                rule(
                    Shape::JsonArray,
                    1,
                    "bytes",
                    66,
                    Delivery::Error,
                    (0, 0),
                    "{\"error\": \"expected record\"}",
                ),
            ],
            derive_errors: vec![],
            derive_kept: vec![],
            era: Some(crate::lab::ClientEra {
                opened_with: "server/discover".into(),
                asked: Some("2026-07-28".into()),
                discover_refused: Some(-32601),
                fell_back: Some(true),
                settled: Some("2025-11-25".into()),
            }),
            profile: String::new(),
        };
        let text = entry(&c, "2026-12-01");
        let v: toml::Value = toml::from_str(&text).unwrap();
        let rules = v["client"]["rule"].as_array().unwrap();
        assert_eq!(rules.len(), 2, "{text}");
        let cut = rules
            .iter()
            .find(|r| r["effect"].as_str() == Some("truncate"))
            .unwrap();
        assert_eq!(cut["threshold"].as_integer(), Some(40_000));
        assert_eq!(cut["head_share"].as_float(), Some(0.2));
        assert_eq!(cut["message"].as_str(), Some("\n...\n"));
        assert_eq!(cut["note"].as_str(), Some("measured on: lines, wide"));
        let refuse = rules
            .iter()
            .find(|r| r["effect"].as_str() == Some("refuse"))
            .unwrap();
        assert_eq!(refuse["when"].as_str(), Some("json_array"));
        assert_eq!(v["client"]["measured"]["version"].as_str(), Some("1.2.3"));
        // the era, as clients.toml reads it
        let era: crate::config::profiles::EraRule = v["client"]["era"].clone().try_into().unwrap();
        assert_eq!(
            (
                era.opens_with.as_str(),
                era.version.as_str(),
                era.falls_back
            ),
            ("server/discover", "2026-07-28", true)
        );
        assert!(era.sourced.source.ends_with(
            "on a server from before 2026, 2026-07-28 (server/discover), refused -32601: fell back to 2025-11-25"
        ), "{}", era.sourced.source);
        assert!(cut["source"]
            .as_str()
            .unwrap()
            .starts_with("measured: mcp-budget lab"));
    }
}
