//! Issue 26, cases 15 and 16: numbers the engine keeps are the server's text, a repeated key is
//! reported, and a pretty-printed JSON result that fits once compact is compacted, not cut.

use mcp_budget::budget::{Budgeted, CallInfo, Engine, Policy, SpillStore, Strategy};
use mcp_budget::ground::tokens::Tokenizer;
use serde_json::{json, Value};

fn engine(dir: &std::path::Path, budget: usize, toml: &str) -> Engine {
    let mut policy = Policy::builtin();
    policy.set_budget(budget).unwrap();
    policy
        .extend_from_toml(&toml::from_str::<toml::Value>(toml).unwrap())
        .unwrap();
    Engine::new(policy, Tokenizer::Cl100k, SpillStore::new(dir, 1 << 30))
}

fn run(budget: usize, toml: &str, text: &str) -> Budgeted {
    let dir = tempfile::tempdir().unwrap();
    let call = CallInfo {
        server: "s",
        tool: "t",
        raw: None,
        output_schema: false,
    };
    let input = json!({"content": [{"type": "text", "text": text}]});
    let out = engine(dir.path(), budget, toml).run(&call, &input);
    // the spilled original is the text as sent
    if let Some(s) = &out.spill {
        assert_eq!(std::fs::read_to_string(&s.path).unwrap(), text);
    }
    out
}

/// Every number token of a JSON-ish text (strings skipped), in order.
fn number_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut in_string, mut escaped, mut token) = (false, false, String::new());
    for c in text.chars() {
        if in_string {
            (escaped, in_string) = (!escaped && c == '\\', escaped || c != '"');
            continue;
        }
        if c.is_ascii_digit()
            || matches!(c, '-' | '+' | '.' | 'e' | 'E') && !token.is_empty()
            || c == '-'
        {
            token.push(c);
            continue;
        }
        if !token.is_empty() {
            out.push(std::mem::take(&mut token));
        }
        in_string = c == '"';
    }
    out
}

fn sent(out: &Budgeted) -> &str {
    out.result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn shrink_writes_every_kept_number_as_the_server_did() {
    let items: Vec<String> = (0..200)
        .map(|i| {
            format!(
                r#"{{"id": {}000000000000000000000, "price": {i}.50, "rate": {}E-7, "zero": -0, "n": {i}, "name": "item {i}"}}"#,
                1000 + i,
                i + 1
            )
        })
        .collect();
    let text = format!(r#"{{"total": 200, "items": [{}]}}"#, items.join(", "));
    let out = run(1000, "", &text);
    assert_eq!(out.strategy, Strategy::Shrunk);
    let kept = number_tokens(sent(&out));
    let original = number_tokens(&text);
    assert!(kept.len() > 10, "{kept:?}");
    // the kept numbers are the original's first ones, token for token
    assert_eq!(kept[..], original[..kept.len()]);
    assert!(
        sent(&out).contains(r#""id":1000000000000000000000000,"price":0.50,"rate":1E-7,"zero":-0"#)
    );
}

#[test]
fn toon_writes_the_server_numbers_and_refuses_what_would_merge() {
    let toon = "toon = true";
    let rows = |amount: &dyn Fn(usize) -> String| {
        let items: Vec<String> = (0..100)
            .map(|i| {
                format!(
                    r#"{{"id": {i}, "amount": {}, "who": "user{i}"}}"#,
                    amount(i)
                )
            })
            .collect();
        format!("[{}]", items.join(", "))
    };
    // distinct amounts serde reads as distinct f64s: written as sent, in a TOON table
    let text = rows(&|i| format!("{i}.10"));
    let out = run(1200, toon, &text);
    assert_eq!(out.strategy, Strategy::Toon, "{:?}", out.note);
    let written: Vec<String> = sent(&out)
        .lines()
        .skip(1)
        .map(|r| r.split(',').nth(1).unwrap().to_string())
        .collect();
    assert_eq!(
        written,
        (0..100).map(|i| format!("{i}.10")).collect::<Vec<_>>()
    );
    // 100 distinct amounts that serde reads as 2 values: kept as the text they are
    let text = rows(&|i| format!("9007199254740993.{i:02}"));
    let out = run(1200, toon, &text);
    assert_ne!(out.strategy, Strategy::Toon);
    assert_ne!(out.strategy, Strategy::Shrunk);
    // a preview of the text (written compactly, which changes no byte of a token)
    let shown = number_tokens(sent(&out));
    let original = number_tokens(&text);
    assert!(shown.len() > 20, "{}", sent(&out));
    assert_eq!(shown[..20], original[..20]);
    assert!(sent(&out).starts_with(r#"[{"id":0,"amount":9007199254740993.00,"who":"user0"},"#));
    let note = out.note.as_deref().unwrap();
    assert!(note.contains("would both be written as one"), "{note}");
    // a number serde cannot hold at all
    let out = run(1200, toon, &rows(&|i| format!("1E40{i}")));
    assert!(!sent(&out).contains("null"), "{}", sent(&out));
}

#[test]
fn a_repeated_key_is_reported_and_both_values_kept() {
    let items: Vec<String> = (0..300)
        .map(|i| format!(r#"{{"id": {i}, "text": "row {i}"}}"#))
        .collect();
    let text = format!(
        r#"{{"id": "first", "id": "second", "items": [{}]}}"#,
        items.join(",")
    );
    // the fill copies what it keeps from the text: both values of the key stay, in order, and
    // the JSON is cut as any other (issue 38; it was kept as it is, as a preview, before)
    let out = run(800, "", &text);
    assert_eq!(out.strategy, Strategy::Shrunk, "{:?}", out.note);
    let sent = sent(&out);
    assert!(
        sent.starts_with(r#"{"id":"first","id":"second","items":[{"id":0,"#),
        "{sent}"
    );
    assert!(sent.ends_with("}]}"), "{sent}");
    let note = out.note.as_deref().unwrap();
    assert!(note.contains("items: items 1-"), "{note}");
}

#[test]
fn pretty_json_that_fits_compact_is_compacted_not_cut() {
    let items: Vec<Value> = (0..150)
        .map(|i| json!({"id": i, "name": format!("item {i}"), "ok": i % 2 == 0, "price": 1.5}))
        .collect();
    let value = json!({"items": items});
    let pretty = serde_json::to_string_pretty(&value).unwrap();
    let compact = serde_json::to_string(&value).unwrap();
    let e = engine(tempfile::tempdir().unwrap().path(), 100_000, "");
    let cost = |t: &str| e.cost(&json!({"content": [{"type": "text", "text": t}]}));
    let (pretty_tokens, compact_tokens) = (cost(&pretty), cost(&compact));
    assert!(
        compact_tokens + 300 < pretty_tokens,
        "{compact_tokens} vs {pretty_tokens}"
    );
    let budget = compact_tokens + 200;
    let out = run(budget, "", &pretty);
    assert_eq!(out.strategy, Strategy::Compacted, "{:?}", out.note);
    assert_eq!(sent(&out), compact);
    assert!(out.tokens_after <= budget);
    let note = out.note.as_deref().unwrap();
    assert!(note.contains("(compacted;"), "{note}");
    assert!(
        note.contains("bytes of whitespace between tokens removed, nothing else"),
        "{note}"
    );
}

/// A number token in any form JSON allows.
fn number() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    // rarely one that no rewrite can keep (beyond f64, or two decimals of one f64)
    prop_oneof![
        20 => any::<i64>().prop_map(|n| n.to_string()),
        20 => "-?[1-9][0-9]{19,30}",
        20 => "-?(0|[1-9][0-9]{0,17})\\.[0-9]{1,20}",
        20 => "-?[1-9](\\.[0-9]{1,6})?[eE][+-]?[0-9]{1,2}",
        5 => Just("-0".to_string()),
        1 => Just("1E400".to_string()),
        1 => Just("9007199254740993.17".to_string()),
        1 => Just("9007199254740993.18".to_string()),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
    /// Through the whole engine, with TOON on or off, pretty or compact, at any budget: every
    /// number the result sends is a token of the original text, byte for byte.
    #[test]
    fn numbers_of_any_form_survive_the_engine(
        rows in proptest::collection::vec((number(), number()), 2..60),
        pretty in proptest::prelude::any::<bool>(),
        toon in proptest::prelude::any::<bool>(),
        budget in 200usize..1500,
    ) {
        let sep = if pretty { "\n  " } else { "" };
        let items: Vec<String> = rows
            .iter()
            .map(|(a, b)| format!(r#"{sep}{{"id": {a}, "name": "n", "amount": {b}}}"#))
            .collect();
        let text = format!(r#"{{"items": [{}]}}"#, items.join(","));
        let out = run(budget, if toon { "toon = true" } else { "" }, &text);
        let original = number_tokens(&text);
        let blocks = out.result["content"].as_array().unwrap();
        for b in &blocks[..blocks.len() - 1] {
            let t = b["text"].as_str().unwrap();
            // a TOON header's `[n]` is a count, not a number of the data
            let body: Vec<&str> = t.lines().filter(|l| !l.ends_with(':')).collect();
            let mut tokens = number_tokens(&body.join("\n"));
            if out.strategy == Strategy::Spilled {
                tokens.pop(); // a preview may end inside a number
            }
            for n in tokens {
                proptest::prop_assert!(original.contains(&n), "`{}` not sent in {}", n, text);
            }
        }
    }
}

#[test]
fn a_projection_passes_numbers_through_as_sent() {
    let items: Vec<String> = (0..300)
        .map(|i| {
            format!(
                r#"{{"id": {}000000000000000000000, "price": {i}.50, "body": "{}"}}"#,
                1000 + i,
                "words ".repeat(20)
            )
        })
        .collect();
    let text = format!(r#"{{"items": [{}]}}"#, items.join(", "));
    let out = run(
        8000,
        "[tools.t]\nproject = \"items[].{id: id, price: price}\"",
        &text,
    );
    assert_eq!(out.strategy, Strategy::Projected, "{:?}", out.note);
    let want: Vec<String> = (0..300)
        .flat_map(|i| {
            [
                format!("{}000000000000000000000", 1000 + i),
                format!("{i}.50"),
            ]
        })
        .collect();
    assert_eq!(number_tokens(sent(&out)), want);
}
