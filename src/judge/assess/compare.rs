//! `replay --compare`: one result as each contender gives it to the model, judged side by side
//! (`quality.rs`): the engine's output, each client's own cut of the raw result, and each
//! client's cut of the engine's output (the proxy in front of it, budgeted for that client).
//! Facts (needles) can be planted first, at seeded places, to count how many each view shows
//! and how many the engine's handle still reaches.

use serde_json::Value;

use super::quality::{judge, Judged, View};
use crate::budget::scan::{skip_ws, string_end};
use crate::budget::{Budgeted, CallInfo, Engine};
use crate::config::profiles::{client_view, ClientProfile};
use crate::ground::tokens::Tokenizer;

/// One contender's view of the result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Compared {
    /// `mcp-budget`, a client's id, or `<id> behind mcp-budget`.
    pub contender: String,
    /// `full`, `truncated`, `spilled_to_file`, `refused`, or the engine's strategy.
    pub outcome: String,
    pub tokens: usize,
    #[serde(flatten)]
    pub judged: Judged,
    /// Planted facts the engine's handle (the spilled original) holds, of those planted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reachable: Option<(usize, usize)>,
    /// The text the model is shown.
    pub text: String,
}

/// One result compared.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub budget: usize,
    pub tokens_before: usize,
    pub needles: Vec<String>,
    pub views: Vec<Compared>,
}

/// Every contender's view of `result` (with `needles` facts planted first, from `seed`).
pub fn compare(
    engine: &Engine,
    call: &CallInfo,
    result: &Value,
    clients: &[&ClientProfile],
    tokenizer: Tokenizer,
    needles: usize,
    seed: u64,
) -> Comparison {
    let (planted, facts) = plant(result, needles, seed);
    let result = planted.as_ref().unwrap_or(result);
    let original = texts(result);
    let out = engine.run(call, result);
    let tokens_before = engine.tokens_before(&out, result);
    let budget = out.budget;
    let mut views = vec![engine_view(
        &out,
        &original,
        budget,
        tokens_before,
        &facts,
        "mcp-budget",
    )];
    for p in clients {
        let seen = client_view(p, result, tokenizer);
        let labelled = seen.outcome != crate::config::profiles::Outcome::Full;
        let judged = judge(
            &View {
                original: &original,
                body: &seen.text,
                tokens: seen.tokens_to_model,
                labelled,
            },
            budget,
            tokens_before,
            &facts,
        );
        views.push(Compared {
            contender: p.id.clone(),
            outcome: seen.outcome.name().to_string(),
            tokens: seen.tokens_to_model,
            judged,
            reachable: None,
            text: seen.text,
        });
        // the proxy in front of the client: the engine held to the client's limits
        let tight = engine.for_clients(&[*p]);
        let behind = tight.run(call, result);
        let seen = client_view(p, &behind.result, tokenizer);
        let mut v = engine_view(&behind, &original, budget, tokens_before, &facts, "");
        v.contender = format!("{} behind mcp-budget", p.id);
        v.outcome = format!("{}, then {}", behind.strategy.name(), seen.outcome.name());
        v.tokens = seen.tokens_to_model;
        v.judged.fill = v
            .judged
            .fill
            .map(|_| seen.tokens_to_model as f64 / budget as f64);
        views.push(v);
    }
    Comparison {
        budget,
        tokens_before,
        needles: facts,
        views,
    }
}

fn engine_view(
    out: &Budgeted,
    original: &str,
    budget: usize,
    tokens_before: usize,
    facts: &[String],
    name: &str,
) -> Compared {
    let shown = texts(&out.result);
    // the body without the note: what is left of the result itself
    let body = match &out.note {
        Some(n) => shown
            .replace(n.as_str(), "")
            .trim_end_matches('\n')
            .to_string(),
        None => shown.clone(),
    };
    let judged = judge(
        &View {
            original,
            body: &body,
            tokens: out.tokens_after,
            labelled: out.note.is_some(),
        },
        budget,
        tokens_before,
        facts,
    );
    let reachable = (!facts.is_empty()).then(|| {
        let spilled = out
            .spill
            .as_ref()
            .and_then(|h| std::fs::read_to_string(&h.path).ok())
            .unwrap_or_default();
        let held = facts
            .iter()
            .filter(|f| body.contains(f.as_str()) || spilled.contains(f.as_str()));
        (held.count(), facts.len())
    });
    Compared {
        contender: name.to_string(),
        outcome: out.strategy.name().to_string(),
        tokens: out.tokens_after,
        judged,
        reachable,
        text: shown,
    }
}

/// The texts of a result's content, joined by line breaks.
fn texts(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| {
            b["text"]
                .as_str()
                .or_else(|| b["resource"]["text"].as_str())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `result` with `n` facts planted in its first text block (`None` when there are none to
/// plant or no text): in a JSON text, at the end of string values; in prose, as lines.
fn plant(result: &Value, n: usize, seed: u64) -> (Option<Value>, Vec<String>) {
    let Some(text) = result["content"][0]["text"].as_str().filter(|_| n > 0) else {
        return (None, Vec::new());
    };
    let mut rng = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = |below: usize| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((rng >> 33) as usize) % below.max(1)
    };
    // the places: before a string value's closing quote, or after a line break
    let b = text.as_bytes();
    let places: Vec<usize> = if crate::measure::is_json_text(text) {
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'"' {
                let end = string_end(b, i);
                let j = skip_ws(b, end);
                if b.get(j) != Some(&b':') {
                    out.push(end - 1);
                }
                i = end;
            } else {
                i += 1;
            }
        }
        out
    } else {
        text.match_indices('\n').map(|(i, _)| i + 1).collect()
    };
    if places.is_empty() {
        return (None, Vec::new());
    }
    let json = crate::measure::is_json_text(text);
    let mut chosen: Vec<usize> = (0..n).map(|_| places[next(places.len())]).collect();
    chosen.sort_unstable();
    chosen.dedup();
    let facts: Vec<String> = (0..chosen.len())
        .map(|k| format!("needle-{seed}-{k:03}"))
        .collect();
    let mut planted = String::with_capacity(text.len() + chosen.len() * 32);
    let mut from = 0;
    for (at, fact) in chosen.iter().zip(&facts) {
        planted.push_str(&text[from..*at]);
        match json {
            true => planted.push_str(&format!(" {fact}")),
            false => planted.push_str(&format!("{fact} is a planted fact.\n")),
        }
        from = *at;
    }
    planted.push_str(&text[from..]);
    let mut out = result.clone();
    out["content"][0]["text"] = Value::String(planted);
    (Some(out), facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_planted_in_string_values_and_the_json_stays_valid() {
        let rows: Vec<String> = (0..50)
            .map(|i| format!(r#"{{"id":{i},"name":"row {i}"}}"#))
            .collect();
        let result = serde_json::json!({"content": [{"type": "text", "text": format!("[{}]", rows.join(","))}]});
        let (planted, facts) = plant(&result, 5, 7);
        let text = planted.unwrap()["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(crate::measure::is_json_text(&text));
        assert!(!facts.is_empty() && facts.len() <= 5);
        for f in &facts {
            assert!(text.contains(&format!(" {f}\"")), "{f}");
        }
    }
}
