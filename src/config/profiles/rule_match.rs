//! Which of a client's rules act on a result of a given kind (one text, a JSON array, an
//! `isError` result), and what a fixed marker states was cut.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::visible::Visible;
use super::{Break, Rule};

/// Whether a rule acts on a result of this kind (size aside): one text only, a JSON array
/// only, only on an `isError` result or not on one.
pub(super) fn applies(rule: &Rule, v: &Visible, whole: &str, error: bool) -> bool {
    (!rule.only_single_text || v.single_text)
        && (rule.when.as_deref() != Some("json_array") || (v.single_text && is_json_array(whole)))
        && (rule.when.as_deref() != Some("cut") || v.cut_per_block)
        && !(rule.not_on_error && error)
        && (!rule.only_on_error || error)
        && rule
            .unless_marked
            .as_deref()
            .is_none_or(|m| !whole.contains(m))
}

/// Whether a text is a JSON array (what some clients parse a text result into and reject).
fn is_json_array(text: &str) -> bool {
    text.trim_start().starts_with('[') && serde_json::from_str::<Vec<Value>>(text).is_ok()
}

/// Whether a result's content is one text block holding a JSON array.
pub fn is_json_array_result(result: &Value) -> bool {
    match result["content"].as_array().map(Vec::as_slice) {
        Some([b]) => b["type"] == "text" && b["text"].as_str().is_some_and(is_json_array),
        _ => false,
    }
}

/// The amount a marker states was cut, and its unit (`chars` for "characters"), when the
/// marker is a fixed text: "…7 tokens truncated…" states 7 tokens.
pub fn stated_cut(marker: &str) -> Option<(usize, &'static str)> {
    static STATED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(\d[\d,]*)\s*(tokens|bytes|chars|characters|lines)\b").expect("static regex")
    });
    if marker.contains('{') {
        return None;
    }
    let m = STATED.captures(marker)?;
    let stated = m[1].replace(',', "").parse().ok()?;
    let unit = match &m[2] {
        "tokens" => "tokens",
        "bytes" => "bytes",
        "lines" => "lines",
        _ => "chars",
    };
    Some((stated, unit))
}

/// A [`Break::MisstatedMarker`] when `stated` is off from `cut` by more than a tenth.
pub fn misstated_by(stated: usize, cut: usize, unit: &str) -> Option<Break> {
    (stated.abs_diff(cut) * 10 > cut).then(|| Break::MisstatedMarker {
        stated,
        cut,
        unit: unit.to_string(),
    })
}
