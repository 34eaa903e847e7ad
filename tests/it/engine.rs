//! The budget engine's invariants (DESIGN.md, "The budget engine"), property-tested on generated
//! results, checked on hand-made edge cases and on the shared corpus. The checks live in
//! `fuzz/invariants.rs`, shared with the cargo-fuzz target, so its logic runs here on stable.

use base64::Engine as _;
use mcp_budget::budget::{Budgeted, Strategy as Strat, MIN_BUDGET};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{json, Map, Value};

use crate::support::corpus;

#[path = "../../fuzz/invariants.rs"]
#[allow(dead_code)]
mod invariants;

use invariants::{check, compact, engine, engine_sized, model_text_size, png_base64, TOOLS};
use mcp_budget::budget::SizeLimits;

/// Run `input` at `budget` as `tool` in a fresh spill store; panics with the broken invariant.
fn run(budget: usize, tool: &str, input: &Value) -> Budgeted {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), budget);
    match check(&e, "prop", tool, input) {
        Ok(out) => out,
        Err(msg) => panic!(
            "budget {budget}, tool {tool}: {msg}\ninput: {}",
            short(&compact(input))
        ),
    }
}

/// The same, for proptest: a failure is a test-case failure (and is shrunk).
fn prop_run(budget: usize, tool: &str, input: &Value) -> Result<Budgeted, TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), budget);
    check(&e, "prop", tool, input)
        .map_err(|msg| TestCaseError::fail(format!("budget {budget}, tool {tool}: {msg}")))
}

fn short(s: &str) -> String {
    match s.char_indices().nth(1500) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

// ---- generators -------------------------------------------------------------------------------

const WORDS: &[&str] = &[
    "the",
    "budget",
    "engine",
    "result",
    "token",
    "server",
    "model",
    "context",
    "window",
    "JSON",
    "array",
    "spill",
    "preview",
    "strip",
    "markdown",
    "issue",
    "pull",
    "request",
    "commit",
    "file",
    "directory",
    "error:",
    "warning",
    "value",
    "42",
    "3.14",
    "(see",
    "below)",
    "-",
    "*",
    "#",
    "über",
    "naïve",
    "café",
    "東京",
    "데이터",
    "😀",
    "→",
    "`code`",
    "**bold**",
    "_x_",
    "1.",
];

fn prose() -> impl Strategy<Value = String> {
    words(1500)
}

/// Random words (some multi-byte) and line breaks, blank-line runs among them.
fn words(max_words: usize) -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        12 => prop::sample::select(WORDS).prop_map(String::from),
        2 => Just("\n".to_string()),
        1 => Just("\n\n\n\n".to_string()),
        1 => Just("\n  \n\t\n".to_string()),
        1 => "[a-zA-Z0-9]{1,40}",
    ];
    prop::collection::vec(piece, 0..max_words).prop_map(|w| w.join(" "))
}

fn multibyte() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[\u{4e00}-\u{9fff}]{1,40}",
        "[\u{ac00}-\u{d7a3}]{1,20}",
        "[😀😂🎉🚀🇳🇿👩‍💻]{1,10}",
        "[éüßøñ\u{301}\u{308}]{1,10}",
        "[\u{0600}-\u{06ff}]{1,20}",
        Just("\n".to_string()),
        Just(" ".to_string()),
    ];
    prop::collection::vec(piece, 0..1500).prop_map(|p| p.concat())
}

fn base64_payload(min: usize, max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<u8>(), min..max).prop_map(|b| b64(&b))
}

fn url() -> impl Strategy<Value = String> {
    (
        "[a-z]{3,12}",
        "[a-z0-9/_-]{0,400}",
        prop::collection::vec(
            prop_oneof![
                Just("utm_source=news"),
                Just("utm_medium=email"),
                Just("utm_campaign=spring_sale"),
                Just("fbclid=IwAR0abcdefghijklmnop"),
                Just("gclid=Cj0KCQ"),
                Just("id=7"),
                Just("page=2"),
                Just("q=rust%20mcp"),
            ],
            0..6,
        ),
        prop::option::of("[a-z]{1,10}"),
    )
        .prop_map(|(host, path, query, frag)| {
            let mut u = format!("https://{host}.example.com/{path}");
            if !query.is_empty() {
                u.push('?');
                u.push_str(&query.join("&"));
            }
            if let Some(f) = frag {
                u.push('#');
                u.push_str(&f);
            }
            u
        })
}

fn markdown() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => prose().prop_map(|p| p.chars().take(400).collect::<String>()),
        1 => "[a-zA-Z ]{1,30}".prop_map(|t| format!("\n## {t}\n")),
        2 => ("[a-z ]{0,12}", base64_payload(40, 2000))
            .prop_map(|(alt, data)| format!("![{alt}](data:image/png;base64,{data})")),
        1 => base64_payload(40, 2000)
            .prop_map(|data| format!("<img alt=\"x\" src=\"data:image/gif;base64,{data}\">")),
        3 => ("[a-z ]{1,20}", url()).prop_map(|(t, u)| format!("[{t}]({u})")),
        1 => url(),
        1 => base64_payload(300, 1500),
        1 => Just("\n\n\n\n\n".to_string()),
    ];
    prop::collection::vec(piece, 0..30).prop_map(|p| p.join(" "))
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        "[a-z ]{0,30}".prop_map(Value::from),
        ".{0,60}".prop_map(Value::from),
        "[a-z ]{300,900}".prop_map(Value::from),
        multibyte().prop_map(|s| Value::from(s.chars().take(300).collect::<String>())),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof!["[a-z_]{1,12}", ".{0,8}"]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(8, 160, 24, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..24).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..12)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A container of `depth` levels (objects and arrays alternating), with data at every level.
fn deep(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for i in 0..depth {
        v = if i % 2 == 0 {
            json!({"level": i, "note": "x".repeat(i % 7), "child": v, "tags": ["a", "b", "c"]})
        } else {
            json!([i, v, {"k": i}])
        };
    }
    v
}

fn deep_json() -> impl Strategy<Value = Value> {
    (21usize..140, leaf()).prop_map(|(d, l)| deep(d, l))
}

/// A JSON value as a text block (compact or pretty).
fn json_text(v: &Value, pretty: bool) -> String {
    if pretty {
        serde_json::to_string_pretty(v).unwrap()
    } else {
        compact(v)
    }
}

fn block() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => words(600).prop_map(|t| json!({"type": "text", "text": t})),
        1 => markdown().prop_map(|t| json!({"type": "text", "text": t})),
        3 => (json_value(), any::<bool>())
            .prop_map(|(v, p)| json!({"type": "text", "text": json_text(&v, p)})),
        1 => multibyte().prop_map(|t| json!({"type": "text", "text": t})),
        1 => (1u32..5000, 1u32..5000, prop::collection::vec(any::<u8>(), 0..64)).prop_map(
            |(w, h, junk)| json!({"type": "image", "mimeType": "image/png", "data": png_base64(w, h, &junk)})
        ),
        1 => ".{0,200}".prop_map(|garbage| json!({"type": "image", "mimeType": "image/png", "data": garbage})),
        1 => (words(600), prop::sample::select(vec!["text/markdown", "application/json", "text/plain"]))
            .prop_map(|(t, m)| json!({"type": "resource", "resource": {"uri": "file:///doc", "mimeType": m, "text": t}})),
        1 => base64_payload(0, 3000).prop_map(|b| json!({"type": "resource", "resource": {"uri": "file:///blob.bin", "mimeType": "application/octet-stream", "blob": b}})),
        1 => url().prop_map(|u| json!({"type": "resource_link", "uri": u, "name": "a link", "mimeType": "text/html"})),
        1 => base64_payload(0, 500).prop_map(|b| json!({"type": "audio", "mimeType": "audio/wav", "data": b})),
    ]
}

/// structuredContent next to the blocks.
#[derive(Debug, Clone, Copy)]
enum Structured {
    None,
    /// The first JSON text block's value.
    CopyOfJson,
    /// `{"result": <first text>}`.
    Wrapped,
    /// Something else.
    Own,
}

fn mixed() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(block(), 0..4),
        prop_oneof![
            Just(Structured::None),
            Just(Structured::CopyOfJson),
            Just(Structured::Wrapped),
            Just(Structured::Own)
        ],
        json_value(),
        prop::option::of(any::<bool>()),
    )
        .prop_map(|(blocks, how, own, is_error)| {
            let first_text = blocks.iter().find_map(|b| {
                (b["type"] == "text").then(|| b["text"].as_str().unwrap().to_string())
            });
            let structured = match how {
                Structured::None => None,
                Structured::CopyOfJson => first_text
                    .as_deref()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .filter(Value::is_object),
                Structured::Wrapped => first_text.map(|t| json!({"result": t})),
                Structured::Own => Some(own),
            };
            // the engine's own block order: content, structuredContent, then the rest
            let mut m = Map::new();
            m.insert("content".into(), Value::Array(blocks));
            if let Some(s) = structured {
                m.insert("structuredContent".into(), s);
            }
            if let Some(e) = is_error {
                m.insert("isError".into(), Value::Bool(e));
            }
            Value::Object(m)
        })
}

fn budget() -> impl Strategy<Value = usize> {
    prop_oneof![MIN_BUDGET..600, 600usize..3000]
}

fn tool() -> impl Strategy<Value = &'static str> {
    prop::sample::select(TOOLS)
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        // PROPTEST_CASES still sets a longer run
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(cases),
        // failures are reported, not written into the repository
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..ProptestConfig::default()
    }
}

/// `prop_run` with bounds in bytes, characters and lines beside the budget.
fn prop_run_sized(
    budget: usize,
    size: SizeLimits,
    tool: &str,
    input: &Value,
) -> Result<Budgeted, TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    // the note first or last: half the cases each
    let e = engine_sized(dir.path(), budget, size, budget.is_multiple_of(2));
    check(&e, "prop", tool, input).map_err(|msg| {
        TestCaseError::fail(format!(
            "budget {budget}, size {size:?}, tool {tool}: {msg}"
        ))
    })
}

/// Bounds as clients set them: often none in a unit, some at the minimums.
fn size_limits() -> impl Strategy<Value = SizeLimits> {
    (
        prop::option::of(1000usize..12_000),
        prop::option::of(1000usize..12_000),
        prop::option::of(20usize..300),
    )
        .prop_map(|(bytes, chars, lines)| SizeLimits {
            bytes,
            chars,
            lines,
        })
}

// ---- properties -------------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn prose_results_keep_the_invariants(text in prose(), budget in budget(), tool in tool()) {
        prop_run(budget, tool, &text_result(&text))?;
    }

    #[test]
    fn markdown_with_data_uris_and_tracked_urls(text in markdown(), budget in budget(), tool in tool()) {
        let out = prop_run(budget, tool, &text_result(&text))?;
        if out.strategy == Strat::Stripped {
            let after = out.result["content"][0]["text"].as_str().unwrap();
            prop_assert!(!after.contains("utm_source="), "a stripped result keeps tracking parameters");
        }
    }

    #[test]
    fn json_text_results_keep_the_invariants(v in json_value(), pretty in any::<bool>(), structured in any::<bool>(), budget in budget(), tool in tool()) {
        let text = json_text(&v, pretty);
        let mut input = text_result(&text);
        if structured && v.is_object() {
            input["structuredContent"] = v.clone();
        }
        prop_run(budget, tool, &input)?;
    }

    #[test]
    fn deep_json_keeps_the_invariants(v in deep_json(), as_text in any::<bool>(), budget in budget(), tool in tool()) {
        let input = if as_text {
            text_result(&compact(&v))
        } else {
            json!({"content": [{"type": "text", "text": "see structuredContent"}], "structuredContent": {"data": v}})
        };
        prop_run(budget, tool, &input)?;
    }

    #[test]
    fn multibyte_text_keeps_the_invariants(text in multibyte(), budget in budget()) {
        prop_run(budget, "fetch", &text_result(&text))?;
    }

    #[test]
    fn mixed_blocks_keep_the_invariants(input in mixed(), budget in budget(), tool in tool()) {
        prop_run(budget, tool, &input)?;
    }

    #[test]
    fn size_bounds_hold_on_prose_markdown_and_multibyte(text in prop_oneof![prose(), markdown(), multibyte()], size in size_limits(), budget in budget(), tool in tool()) {
        prop_run_sized(budget, size, tool, &text_result(&text))?;
    }

    #[test]
    fn size_bounds_hold_on_json_and_mixed_blocks(v in json_value(), pretty in any::<bool>(), mixed_input in mixed(), size in size_limits(), budget in budget(), tool in tool()) {
        prop_run_sized(budget, size, tool, &text_result(&json_text(&v, pretty)))?;
        prop_run_sized(budget, size, tool, &mixed_input)?;
    }

    #[test]
    fn fuzz_logic_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..3000)) {
        let dir = tempfile::tempdir().unwrap();
        invariants::fuzz_one(&data, dir.path());
    }
}

// ---- edge cases -------------------------------------------------------------------------------

#[test]
fn a_result_exactly_at_a_clients_bounds_passes_through() {
    let size = SizeLimits {
        bytes: Some(10_000),
        chars: None,
        lines: Some(256),
    };
    let dir = tempfile::tempdir().unwrap();
    let e = engine_sized(dir.path(), 8000, size, false);
    for (what, text) in [
        ("10,000 bytes", "word ".repeat(2000)),
        ("256 lines", "a line\n".repeat(256)),
    ] {
        let out = check(&e, "edge", "fetch", &text_result(&text)).unwrap();
        assert_eq!(out.strategy, Strat::PassThrough, "{what}");
        let over = format!("{text}x");
        let out = check(&e, "edge", "fetch", &text_result(&over)).unwrap();
        assert_ne!(out.strategy, Strat::PassThrough, "{what} and one more");
    }
}

#[test]
fn codex_bounds_hold_on_every_shape() {
    // 10,000 bytes and 256 lines, which a budget of 8,000 tokens alone does not keep
    let size = SizeLimits {
        bytes: Some(10_000),
        chars: None,
        lines: Some(256),
    };
    let short_lines: String = (0..20_000).map(|i| format!("{i}\n")).collect();
    let one_line = "word ".repeat(400_000);
    let rows: Vec<Value> = (0..3000)
        .map(|i| json!({"id": i, "name": format!("row {i}"), "tags": ["a", "b"]}))
        .collect();
    let pretty = serde_json::to_string_pretty(&rows).unwrap();
    let wide = "\u{4e2d}\u{6587}".repeat(20_000);
    for (what, input) in [
        ("short lines", text_result(&short_lines)),
        ("one 2 MB line", text_result(&one_line)),
        ("pretty JSON", text_result(&pretty)),
        ("CJK", text_result(&wide)),
        (
            "structuredContent",
            json!({"content": [{"type": "text", "text": "rows"}], "structuredContent": {"rows": rows}}),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let e = engine_sized(dir.path(), 8000, size, what == "CJK");
        let out = check(&e, "edge", "fetch", &input).unwrap_or_else(|m| panic!("{what}: {m}"));
        let s = model_text_size(&out.result);
        assert!(s.bytes <= 10_000 && s.lines <= 256, "{what}: {s:?}");
        assert_ne!(out.strategy, Strat::PassThrough, "{what}");
        let note = out.note.unwrap();
        assert!(
            note.contains("within 10,000 bytes and 256 lines"),
            "{what}: the note names the bounds: {note}"
        );
        // the preview fills what the bounds leave: not a few lines when 256 are allowed
        if what == "short lines" {
            assert!(s.lines > 200, "{what}: only {} lines kept", s.lines);
        }
        if what == "one 2 MB line" {
            assert!(s.bytes > 8_000, "{what}: only {} bytes kept", s.bytes);
        }
    }
}

#[test]
fn empty_and_odd_results_pass_through() {
    for input in [
        json!({}),
        json!({"content": []}),
        json!({"content": null}),
        json!({"content": "not an array"}),
        json!({"content": [{"type": "text", "text": ""}]}),
        json!({"content": [{"type": "text"}]}),
        json!({"content": [{"type": "text", "text": 42}]}),
        json!({"content": [null, 1, "x", []]}),
        json!({"content": [{"no": "type"}]}),
        json!({"isError": true}),
        json!(null),
        json!(42),
        json!("a string"),
        json!([1, 2, 3]),
        json!({"content": [], "structuredContent": null}),
    ] {
        let out = run(MIN_BUDGET, "fetch", &input);
        assert_eq!(out.strategy, Strat::PassThrough, "{input}");
    }
}

#[test]
fn huge_single_lines_without_newlines() {
    for line in [
        "abcdefghij".repeat(30_000),
        "word ".repeat(60_000),
        "東京😀".repeat(20_000),
        "x".repeat(200_000),
    ] {
        for budget in [MIN_BUDGET, 2000] {
            // a long run of letters is a base64 run to the strip stage: stripped or spilled
            let out = run(budget, "fetch", &text_result(&line));
            assert_ne!(out.strategy, Strat::PassThrough);
        }
    }
}

#[test]
fn data_uri_images_and_tracked_urls_are_stripped_first() {
    let img = format!(
        "![chart](data:image/png;base64,{})",
        "iVBORw0KGgo".repeat(400)
    );
    let link = format!(
        "[deal](https://shop.example.com/p/{}?id=7&utm_source=news&utm_medium=email&fbclid=abc)",
        "a".repeat(300)
    );
    let text = format!("# Title\n{img}\nSee {link}.\n\n\n\n\nThe end.\n");
    let out = run(1000, "fetch", &text_result(&text));
    assert_eq!(out.strategy, Strat::Stripped);
    let after = out.result["content"][0]["text"].as_str().unwrap();
    assert!(
        after.contains("[image removed: chart]") && !after.contains("utm_"),
        "{after}"
    );
}

#[test]
fn deep_nesting_past_20_and_past_serde_limit() {
    for depth in [21, 40, 100, 126, 127, 128, 200] {
        let v = deep(depth, json!("leaf"));
        for budget in [MIN_BUDGET, 1000] {
            run(budget, "fetch", &text_result(&compact(&v)));
            run(
                budget,
                "fetch",
                &json!({"content": [], "structuredContent": v}),
            );
        }
    }
}

#[test]
fn arrays_of_5000_items() {
    let items: Vec<Value> = (0..5000)
        .map(|i| json!({"id": i, "title": format!("item {i}"), "labels": ["a", "b"]}))
        .collect();
    let arr = Value::Array(items.clone());
    let obj = json!({"total_count": 5000, "incomplete_results": false, "items": items});
    // (at MIN_BUDGET the note alone can be over the budget:
    // `bug_the_note_alone_goes_over_a_min_budget`)
    let cases = [
        ("fetch", 400, text_result(&compact(&arr))),
        ("list_issues", 2000, text_result(&compact(&arr))),
        ("fetch", 2000, text_result(&compact(&obj))),
        ("search_issues", 400, text_result(&compact(&obj))),
        (
            "search_issues",
            2000,
            json!({"content": [{"type": "text", "text": serde_json::to_string_pretty(&obj).unwrap()}], "structuredContent": obj}),
        ),
        (
            "fetch",
            400,
            json!({"content": [{"type": "text", "text": "5000 items"}], "structuredContent": {"result": arr}}),
        ),
    ];
    for (tool, budget, input) in &cases {
        let out = run(*budget, tool, input);
        assert!(
            matches!(out.strategy, Strat::Projected | Strat::Shrunk),
            "{tool} {budget}: {}",
            out.strategy.name()
        );
    }
}

/// The Python SDK's shape for a tool returning a list: one JSON text block per record, and the
/// whole list in structuredContent. The blocks are cut as an array's items are (from the end,
/// the note saying how many are left), not each emptied to `{}`.
#[test]
fn one_json_block_per_record_is_cut_like_an_array() {
    let rows: Vec<Value> = (0..2000)
        .map(|i| json!({"id": i, "name": format!("row {i}"), "score": i * 7 % 100}))
        .collect();
    let blocks: Vec<Value> = rows
        .iter()
        .map(|r| json!({"type": "text", "text": compact(r)}))
        .collect();
    let input = json!({"content": blocks, "structuredContent": {"result": rows}});
    for budget in [1000, 4000] {
        let out = run(budget, "fetch", &input);
        assert!(
            matches!(out.strategy, Strat::Shrunk),
            "{}",
            out.strategy.name()
        );
        let content = out.result["content"].as_array().unwrap();
        let kept: Vec<Value> = content[..content.len() - 1]
            .iter()
            .map(|b| serde_json::from_str(b["text"].as_str().unwrap()).unwrap())
            .collect();
        // the first records, whole and in order
        assert!(!kept.is_empty() && kept.len() < 2000);
        assert_eq!(kept[..], rows[..kept.len()]);
        let note = content.last().unwrap()["text"].as_str().unwrap();
        let said = format!(
            "content: the first {} of 2,000 JSON blocks kept",
            kept.len()
        );
        assert!(note.contains(&said), "{note}");
        let structured = out.result["structuredContent"]["result"]
            .as_array()
            .unwrap();
        assert_eq!(structured[..], rows[..structured.len()]);
    }
}

#[test]
fn images_blobs_links_and_audio() {
    let png =
        |w, h| json!({"type": "image", "mimeType": "image/png", "data": png_base64(w, h, b"junk")});
    let cases = [
        json!({"content": [png(4000, 3000)]}),
        json!({"content": [png(800, 600), png(800, 600), png(800, 600), png(1568, 1568)]}),
        json!({"content": [{"type": "image", "mimeType": "image/png", "data": "!!! not base64 ???"}]}),
        json!({"content": [{"type": "image", "mimeType": "image/png", "data": b64(&[0u8; 5000])}]}),
        json!({"content": [{"type": "image", "data": 5}, {"type": "text", "text": "word ".repeat(3000)}]}),
        json!({"content": [
            {"type": "text", "text": "word ".repeat(3000)},
            {"type": "resource", "resource": {"uri": "file:///a.bin", "mimeType": "application/octet-stream", "blob": b64(&[7u8; 30_000])}},
            {"type": "resource", "resource": {"uri": "file:///a.md", "mimeType": "text/markdown", "text": "line\n".repeat(5000)}},
            {"type": "audio", "mimeType": "audio/wav", "data": b64(&[1u8; 10_000])},
        ]}),
        json!({"content": (0..300).map(|i| json!({"type": "resource_link", "uri": format!("https://example.com/very/long/path/{i}?utm_source=x&utm_medium=y&id={i}"), "name": format!("link {i}")})).collect::<Vec<_>>()}),
        json!({"content": [{"type": "resource", "resource": {"uri": "file:///only.json", "mimeType": "application/json", "text": compact(&deep(30, json!("x")))}}]}),
        json!({"content": [{"type": "mystery", "payload": "z".repeat(20_000)}]}),
    ];
    for input in &cases {
        for budget in [MIN_BUDGET, 1500] {
            for tool in ["fetch", "take_screenshot"] {
                run(budget, tool, input);
            }
        }
    }
}

#[test]
fn fuzz_seeds() {
    let dir = tempfile::tempdir().unwrap();
    let seeds: Vec<Vec<u8>> = vec![
        vec![],
        vec![0],
        vec![0, 0],
        [&[0u8, 0][..], "word ".repeat(500).as_bytes()].concat(),
        [
            &[0u8, 2][..],
            br#"{"content":[{"type":"text","text":"hi"}],"isError":true}"#,
        ]
        .concat(),
        [&[16u8, 3][..], br#"{"items":[1,2,3],"total_count":3}"#].concat(),
        [
            &[0u8, 4][..],
            b"\x00abc\xff\x03\x04\x05\x06\x07\xff\x05# doc\n\xff\x06\x01\x02\xff\x07q\xff\x08a",
        ]
        .concat(),
        [&[0u8, 38][..], "東京😀 ".repeat(300).as_bytes()].concat(),
        [&[5u8, 6][..], b"[1,[2,[3,[4]]]]"].concat(),
        [
            &[0u8, 7][..],
            b"\x02{\"a\":[1,2,3]}\xff\x00text\xff\x03\x10\x10\x10\x10",
        ]
        .concat(),
    ];
    for s in &seeds {
        invariants::fuzz_one(s, dir.path());
    }
}

// ---- corpus -----------------------------------------------------------------------------------

/// A tool name for an octokit fixture's request path.
fn fixture_tool(path: &str) -> &'static str {
    let path = path.split('?').next().unwrap_or(path);
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match parts.as_slice() {
        ["search", "issues"] => "search_issues",
        ["search", "code"] => "search_code",
        ["repos", _, _, "pulls"] => "list_pull_requests",
        ["repos", _, _, "issues"] => "list_issues",
        ["repos", _, _, "commits"] => "list_commits",
        ["repos", _, _, "commits", _] => "get_commit",
        _ => "fixture",
    }
}

struct Row {
    file: String,
    budget: usize,
    before: usize,
    after: usize,
    strategy: String,
}

fn corpus_check(
    dir: &std::path::Path,
    server: &str,
    tool: &str,
    input: &Value,
    budget: usize,
) -> (usize, Budgeted) {
    let e = engine(dir, budget);
    let before = e.cost(input);
    let out = check(&e, server, tool, input)
        .unwrap_or_else(|msg| panic!("{server}/{tool} at {budget}: {msg}"));
    // least destructive: nothing is cut from a result that fits
    if matches!(
        out.strategy,
        Strat::Spilled | Strat::Stripped | Strat::Shrunk | Strat::Projected
    ) {
        assert!(
            before > budget,
            "{tool}: {} but it fit",
            out.strategy.name()
        );
    }
    (before, out)
}

#[test]
fn corpus_keeps_the_invariants() {
    let Some(corpus) = corpus() else { return };
    let spill = tempfile::tempdir().unwrap();
    let mut rows: Vec<Row> = Vec::new();
    let mut responses: Vec<_> = std::fs::read_dir(corpus.join("responses"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    responses.sort();
    assert!(!responses.is_empty());
    for path in &responses {
        let payload = mcp_budget::budget::load_payload(path, None).unwrap();
        for budget in [8000, 2000] {
            let (before, out) = corpus_check(
                spill.path(),
                &payload.server,
                &payload.tool,
                &payload.result,
                budget,
            );
            rows.push(Row {
                file: path.file_name().unwrap().to_string_lossy().into_owned(),
                budget,
                before,
                after: out.tokens_after,
                strategy: out.strategy.name().into(),
            });
        }
    }
    let mut fixtures: Vec<_> = std::fs::read_dir(corpus.join("octokit-fixtures"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".raw-fixture.json"))
        .collect();
    fixtures.sort();
    assert!(!fixtures.is_empty());
    for path in &fixtures {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let entries: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        for budget in [8000, 2000] {
            let (mut before, mut after) = (0, 0);
            let mut strategies: Vec<String> = Vec::new();
            for (i, entry) in entries.iter().enumerate() {
                let text = match &entry["response"] {
                    Value::String(s) => s.clone(),
                    v => compact(v),
                };
                let tool = fixture_tool(entry["path"].as_str().unwrap_or(""));
                let input = text_result(&text);
                let server = format!("octokit-{i}");
                let (cost, out) = corpus_check(spill.path(), &server, tool, &input, budget);
                before += cost;
                after += out.tokens_after;
                if out.strategy != Strat::PassThrough {
                    strategies.push(format!("{}:{}", tool, out.strategy.name()));
                }
            }
            strategies.sort();
            strategies.dedup();
            rows.push(Row {
                file: format!("{name} ({} responses, summed)", entries.len()),
                budget,
                before,
                after,
                strategy: if strategies.is_empty() {
                    "pass_through".into()
                } else {
                    format!("pass_through + {}", strategies.join(", "))
                },
            });
        }
    }
    eprintln!("\n| file | budget | before | after | strategy |\n|---|---:|---:|---:|---|");
    for r in &rows {
        eprintln!(
            "| {} | {} | {} | {} | {} |",
            r.file, r.budget, r.before, r.after, r.strategy
        );
    }
}

#[test]
fn fixture_tools_from_paths() {
    assert_eq!(fixture_tool("/search/issues?q=sesame"), "search_issues");
    assert_eq!(fixture_tool("/repos/o/r/pulls"), "list_pull_requests");
    assert_eq!(fixture_tool("/repos/o/r/issues?page=2"), "list_issues");
    assert_eq!(fixture_tool("/repos/o/r/issues/1/labels"), "fixture");
    assert_eq!(fixture_tool("/"), "fixture");
}

// ---- reproductions of engine bugs found by these tests ------------------------------------------

/// A structuredContent counts as a copy of a prose text block when any one of its string values
/// equals the text, so a status text next to a large structuredContent drops the data from the
/// result and the spill file holds only the text: the rows are lost.
#[test]
fn bug_structured_content_sharing_a_string_with_the_text_is_not_spilled() {
    let rows: Vec<Value> = (0..3000)
        .map(|i| json!({"id": i, "name": format!("row {i}")}))
        .collect();
    let input = json!({
        "content": [{"type": "text", "text": "done"}],
        "structuredContent": {"status": "done", "rows": rows},
    });
    run(2000, "fetch", &input);
}

/// In the spill stage the JSON is capped until it takes at most half the budget, but the note
/// lists every array path cut; when those lines do not fit, the engine sends the note alone,
/// over the budget.
#[test]
fn bug_a_note_listing_many_array_paths_goes_over_the_budget() {
    let prose = "lorem ipsum dolor sit amet ".repeat(2000);
    let long_key = (0..40)
        .map(|i| format!("segment{i}"))
        .collect::<Vec<_>>()
        .join("_");
    let inner: Map<String, Value> = (0..30)
        .map(|i| (format!("k{i:02}"), json!((0..25).collect::<Vec<_>>())))
        .collect();
    let input = json!({"content": [
        {"type": "text", "text": prose},
        {"type": "text", "text": compact(&json!({long_key: inner}))},
    ]});
    run(2000, "fetch", &input);
}

/// The same at the smallest budget with an ordinary page and a JSON block of a few arrays: the
/// note (strip counts, one line per array cut, the spill path) leaves no room for the preview or
/// the JSON, both are dropped, and the note alone is over the budget (it also still says which
/// items were "kept" of a JSON block that is no longer there).
#[test]
fn bug_the_note_alone_goes_over_a_min_budget() {
    let list =
        |name: &str| -> Vec<Value> { (0..30).map(|i| json!(format!("{name} {i}"))).collect() };
    let obj = json!({
        "items": list("item"), "labels": list("label"), "assignees": list("user"),
        "milestones": list("milestone"), "reviewers": list("reviewer"), "files": list("file"),
        "commits": list("commit"), "checks": list("check"),
    });
    let page = format!(
        "# Results\n![chart](data:image/png;base64,{})\nSee [the deal](https://shop.example.com/p/{}?id=7&utm_source=news&fbclid=abc).\n\n\n\n\n{}",
        "iVBORw0KGgo".repeat(100),
        "a".repeat(300),
        "lorem ipsum dolor sit amet\n".repeat(400)
    );
    let input = json!({"content": [
        {"type": "text", "text": page},
        {"type": "text", "text": compact(&obj)},
    ]});
    run(MIN_BUDGET, "fetch", &input);
}

/// A built-in projection is applied to JSON of another shape: a multi-select hash over any
/// non-null value gives an object of nulls, so a GitHub error object under `search_issues`
/// becomes `{"total_count":null,"incomplete_results":null,"items":null}` and an array of
/// strings under `list_issues` becomes objects of nulls. The data is only in the spill; the
/// structural shrink would have kept it visible.
#[test]
fn bug_a_projection_of_the_wrong_shape_gives_nulls() {
    let errors: Vec<Value> = (0..400)
        .map(|i| {
            json!({"resource": "Search", "field": format!("q{i}"), "code": "invalid",
            "message": format!("The listed users and repositories cannot be searched {i}")})
        })
        .collect();
    let error = json!({"message": "Validation Failed", "errors": errors});
    let out = run(2000, "search_issues", &text_result(&compact(&error)));
    let shown = out.result["content"][0]["text"].as_str().unwrap();
    assert!(
        shown.contains("Validation Failed"),
        "{}: {shown}",
        out.strategy.name()
    );
    let names = json!(["alpha", "beta", "gamma"].repeat(2000));
    let out = run(2000, "list_issues", &text_result(&compact(&names)));
    let shown = out.result["content"][0]["text"].as_str().unwrap();
    assert!(
        shown.contains("alpha"),
        "{}: {}",
        out.strategy.name(),
        short(shown)
    );
}

/// The spill of a multi-block result rebuilds each text block as `{"type","text"}`: a text
/// block's `annotations` and `_meta` are in neither the result nor the spill file.
#[test]
fn bug_spill_drops_text_block_annotations() {
    let input = json!({"content": [
        {"type": "text", "text": "Summary", "annotations": {"audience": ["user"], "priority": 0.5}},
        {"type": "text", "text": "word ".repeat(3000), "_meta": {"source": "cache"}},
    ]});
    run(1000, "fetch", &input);
}

/// The spill of a multi-block result holds the bytes the server sent, not a re-serialisation:
/// keys in the server's order (`isError` first, `text` before `type`, as the fetch and git
/// servers send), its spacing, its escapes and its number forms (issue 12, item 33).
#[test]
fn spill_holds_the_original_bytes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 1000);
    let words = "word ".repeat(3000);
    for raw in [
        format!(
            r#"{{"isError": false, "content": [{{"type":"text","text":"{words}"}}, {{"type":"text","text":"second"}}]}}"#
        ),
        format!(
            r#"{{"content":[{{"text":"{words}","type":"text"}},{{"text":"caf\u00e9 1.0e3","type":"text"}}],"_meta":{{"n":1.50}}}}"#
        ),
    ] {
        let input: Value = serde_json::from_str(&raw).unwrap();
        assert_ne!(
            compact(&input),
            raw,
            "the test needs bytes a re-serialisation would change"
        );
        let call = mcp_budget::budget::CallInfo {
            server: "prop",
            tool: "fetch",
            raw: Some(&raw),
            output_schema: false,
        };
        let out = e.run(&call, &input);
        let spilled = std::fs::read(&out.spill.expect("spilled").path).unwrap();
        assert_eq!(
            String::from_utf8(spilled).unwrap(),
            raw,
            "the spill is the bytes sent"
        );
    }
}

/// Found by the mixed-blocks property: a spilled multi-block result with `structuredContent:
/// null` wrote the null into the spill file. When the bytes the server sent are known the spill
/// is those bytes exactly (null and all, see `check`); without them it is the result's compact
/// JSON without the null.
#[test]
fn a_null_structured_content_is_not_in_a_reserialised_spill() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 300);
    let long = "alpha beta gamma delta\n".repeat(400);
    let input = json!({
        "content": [{"type": "text", "text": long}, {"type": "text", "text": long}],
        "structuredContent": null
    });
    check(&e, "prop", "search_code", &input).unwrap();
    let call = mcp_budget::budget::CallInfo {
        server: "prop",
        tool: "search_code",
        raw: None,
        output_schema: false,
    };
    let out = e.run(&call, &input);
    let spilled = std::fs::read_to_string(&out.spill.unwrap().path).unwrap();
    assert!(
        !spilled.contains("structuredContent"),
        "{}",
        &spilled[..100]
    );
}

/// Issue 12, item 2: the spill id names the content. Two results of the same call (a page
/// snapshot with no arguments, taken twice) never share a file; the same content is one file.
#[test]
fn spill_ids_name_the_content_not_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 1000);
    let page = |n: usize| -> Value {
        let text: String = (0..3000)
            .map(|i| format!("- row {i} of page {n}: a link [x](https://ex.example/{i})\n"))
            .collect();
        json!({"content": [{"type": "text", "text": text}]})
    };
    let (first, second) = (page(1), page(2));
    let a = run_in(&e, "browser_snapshot", &first);
    let b = run_in(&e, "browser_snapshot", &second);
    let again = run_in(&e, "browser_snapshot", &first);
    let (ha, hb) = (a.spill.unwrap(), b.spill.unwrap());
    assert_ne!(ha.id, hb.id, "different pages, different files");
    assert_eq!(again.spill.unwrap().id, ha.id, "the same page, one file");
    assert!(ha.id.starts_with("prop/browser_snapshot-"), "{}", ha.id);
    assert_eq!(
        std::fs::read_to_string(&ha.path).unwrap(),
        first["content"][0]["text"].as_str().unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(&hb.path).unwrap(),
        second["content"][0]["text"].as_str().unwrap()
    );
}

fn run_in(e: &mcp_budget::budget::Engine, tool: &str, input: &Value) -> Budgeted {
    check(e, "prop", tool, input).unwrap_or_else(|m| panic!("{tool}: {m}"))
}

/// Issue 12, item 14: after a stripped preview the note says where the preview ends in the
/// original (its line, and the byte inside it), not "line 1".
#[test]
fn a_stripped_preview_says_where_to_continue_in_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 2000);
    let img = format!(
        "![logo](data:image/png;base64,{})",
        "iVBORw0KGgo".repeat(60)
    );
    let text: String = (1..=2400)
        .map(|i| {
            if i % 10 == 0 {
                format!("{img}\n\n\n\n")
            } else {
                format!("line {i}: some words of a scraped page\n")
            }
        })
        .collect();
    let input = json!({"content": [{"type": "text", "text": text}]});
    let out = run_in(&e, "fetch", &input);
    let note = out.note.unwrap();
    let next: usize = note
        .split("continue at line ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{note}"));
    assert!(next > 50, "{note}");
    let preview = out.result["content"][0]["text"].as_str().unwrap();
    let original: Vec<&str> = text.split('\n').collect();
    let last_shown = preview.trim_end_matches('\n').rsplit('\n').next().unwrap();
    let resumes_inside = note.contains(", byte ");
    if resumes_inside {
        // the preview ends inside line `next`: what it shows of it is that line's beginning
        assert!(original[next - 1].starts_with(last_shown), "{note}");
    } else {
        assert_eq!(original[next - 2], last_shown, "{note}");
    }
    assert_eq!(original.len() - 1, 3120);
    assert!(
        note.contains("of 3,120 of the original, stripped"),
        "{note}"
    );
}

/// The policy's `toon`: a real table (the memory server's 178 relations, from the corpus) too
/// big for the budget as compact JSON but not as TOON is sent as TOON, which reads back to the
/// same value; without `toon` the JSON is shrunk and stays JSON.
#[test]
fn a_table_too_big_as_json_fits_as_toon_and_reads_back_the_same() {
    let Some(corpus) = corpus() else { return };
    let line =
        std::fs::read_to_string(corpus.join("responses/memory__search_nodes.jsonl")).unwrap();
    let result: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    let graph: Value =
        serde_json::from_str(result["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    let table = json!({"relations": graph["relations"]});
    assert_eq!(table["relations"].as_array().unwrap().len(), 178);
    let text = serde_json::to_string(&table).unwrap();
    let toon = mcp_budget::budget::toon_encode(&table).unwrap();
    let (json_tokens, toon_tokens) = (
        mcp_budget::ground::tokens::Tokenizer::Cl100k.count(&text),
        mcp_budget::ground::tokens::Tokenizer::Cl100k.count(&toon),
    );
    // a third fewer: no keys, quotes or braces per row
    assert!(
        toon_tokens * 10 < json_tokens * 7,
        "{toon_tokens} vs {json_tokens}"
    );
    let budget = (json_tokens + toon_tokens) / 2;
    let input = text_result(&text);
    let dir = tempfile::tempdir().unwrap();
    let mut policy = mcp_budget::budget::Policy::builtin();
    policy.set_budget(budget).unwrap();
    let plain = mcp_budget::budget::Engine::new(
        policy.clone(),
        mcp_budget::ground::tokens::Tokenizer::Cl100k,
        mcp_budget::budget::SpillStore::new(dir.path(), 1 << 30),
    );
    policy
        .extend_from_toml(&toml::from_str::<toml::Value>("toon = true").unwrap())
        .unwrap();
    let with_toon = mcp_budget::budget::Engine::new(
        policy,
        mcp_budget::ground::tokens::Tokenizer::Cl100k,
        mcp_budget::budget::SpillStore::new(dir.path(), 1 << 30),
    );
    let call = mcp_budget::budget::CallInfo {
        server: "memory",
        tool: "read_graph",
        raw: None,
        output_schema: false,
    };
    let off = plain.run(&call, &input);
    assert_eq!(off.strategy, Strat::Shrunk);
    let kept: Value =
        serde_json::from_str(off.result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert!(kept["relations"].as_array().unwrap().len() < 178);

    let on = with_toon.run(&call, &input);
    assert_eq!(on.strategy, Strat::Toon);
    assert!(on.tokens_after <= budget, "{} > {budget}", on.tokens_after);
    let sent = on.result["content"][0]["text"].as_str().unwrap();
    assert_eq!(mcp_budget::budget::toon_decode(sent).unwrap(), table);
    let note = on.note.as_deref().unwrap();
    let said = format!(
        "JSON written as TOON (the same value, tables of rows): {} -> {} tokens",
        mcp_budget::ground::units::thousands(json_tokens),
        mcp_budget::ground::units::thousands(toon_tokens)
    );
    assert!(note.contains(&said), "{note}");
    // the original JSON is saved, as for every strategy that changes a result
    let spill = on.spill.as_ref().unwrap();
    assert_eq!(std::fs::read_to_string(&spill.path).unwrap(), text);
}
