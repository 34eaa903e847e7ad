//! What a number means (DESIGN.md, "Accounting rules"): raw and budgeted counted on one basis,
//! duplicates of structuredContent found however they are wrapped, pagination read from the
//! result's structure, tool errors kept, wire bytes as sent, and image data that is no image
//! never free.

use std::collections::HashMap;
use std::path::Path;

use mcp_budget::budget::{CallInfo, Engine, Policy, SpillStore, Strategy, DEFAULT_MAX_BYTES};
use mcp_budget::ground::tokens::{Tokenizer, TokenizerSet};
use mcp_budget::judge::assess::findings;
use mcp_budget::measure::facts::{ProbeResult, ServerReport};
use mcp_budget::measure::measure_result;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::support::{audit_probe, mcp_budget, read_report, real_server, repo};

fn engine(dir: &Path, budget: usize) -> Engine {
    let mut policy = Policy::builtin();
    policy.set_budget(budget).unwrap();
    Engine::new(
        policy,
        Tokenizer::Cl100k,
        SpillStore::new(dir, DEFAULT_MAX_BYTES),
    )
}

fn run(engine: &Engine, tool: &str, result: &Value) -> mcp_budget::budget::Budgeted {
    let call = CallInfo {
        server: "s",
        tool,
        raw: None,
        output_schema: false,
    };
    engine.run(&call, result)
}

fn probes(report: &Value) -> Vec<Value> {
    report["servers"][0]["probes"].as_array().unwrap().clone()
}

fn by_tool<'a>(probes: &'a [Value], tool: &str) -> &'a Value {
    probes.iter().find(|p| p["tool"] == tool).unwrap()
}

/// Every probe: the engine's `tokens_before` is the raw model count, and a pass-through result
/// is budgeted at exactly that count.
fn assert_one_basis(probes: &[Value]) {
    for p in probes {
        let (raw, b) = (&p["raw"], &p["budgeted"]);
        assert_eq!(
            b["tokens_before"], raw["model_tokens"],
            "{}: tokens_before vs raw model",
            p["tool"]
        );
        if b["strategy"] == "pass_through" {
            assert_eq!(
                b["tokens"], raw["model_tokens"],
                "{}: pass_through",
                p["tool"]
            );
        }
    }
}

// ---- 12: raw and budgeted on one basis ---------------------------------------------------------

#[test]
fn demo_pass_through_is_budgeted_at_its_raw_model_count() {
    let home = tempfile::tempdir().unwrap();
    let toml = std::fs::read_to_string(repo().join("probes/demo.toml")).unwrap();
    let (report, _) = audit_probe(home.path(), &toml, &[], &[], 0);
    let probes = probes(&report);
    assert_one_basis(&probes);
    let forecast = by_tool(&probes, "get_forecast");
    let raw = &forecast["raw"];
    // counted here, independently: the text block and the compact structuredContent
    let mut args = serde_json::Map::new();
    args.insert("city".into(), json!("Lisbon"));
    let result = mcp_budget::wire::demo::DemoServer::new("demo")
        .call("get_forecast", &args)
        .unwrap();
    let content = count(result["content"][0]["text"].as_str().unwrap());
    let structured = count(&result["structuredContent"].to_string());
    assert!(content > 1000 && structured > 1000, "{raw}");
    assert_eq!(raw["content_tokens"], content);
    assert_eq!(raw["model_tokens"], content + structured);
    assert_eq!(forecast["budgeted"]["strategy"], "pass_through");
    assert_eq!(forecast["budgeted"]["tokens"], content + structured);
}

fn count(text: &str) -> u64 {
    Tokenizer::Cl100k.count(text) as u64
}

#[test]
fn server_everything_structured_tool_is_budgeted_at_its_raw_model_count() {
    let Some(bin) = real_server("mcp-server-everything") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let toml = format!(
        "[servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\n\
         [[servers.everything.probes]]\ntool = \"get-structured-content\"\n\
         arguments = {{ location = \"Chicago\" }}\n",
        bin.display().to_string()
    );
    let (report, _) = audit_probe(home.path(), &toml, &[], &[], 0);
    let probes = probes(&report);
    assert_one_basis(&probes);
    let p = &probes[0];
    let structured = p["raw"]["structured_tokens"].as_u64().unwrap();
    assert!(structured > 0, "{p}");
    assert_eq!(p["budgeted"]["strategy"], "pass_through");
    assert_eq!(
        p["budgeted"]["tokens"].as_u64().unwrap(),
        p["raw"]["content_tokens"].as_u64().unwrap() + structured
    );
}

// ---- 13: wrapped duplicates --------------------------------------------------------------------

/// server-memory's `create_entities`: the entities as indented JSON text, and the same array
/// wrapped as `{"entities": [...]}` in structuredContent.
fn create_entities(n: usize) -> Value {
    let entities: Vec<Value> = (0..n)
        .map(|i| {
            json!({
                "name": format!("Entity_{i:03}"),
                "entityType": "person",
                "observations": [format!("works on project {i}"), "speaks Rust and Python"],
            })
        })
        .collect();
    let text = serde_json::to_string_pretty(&entities).unwrap();
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"entities": entities},
    })
}

#[test]
fn a_structured_content_wrapping_the_text_is_a_duplicate_and_the_engine_drops_it() {
    let result = create_entities(20);
    let set = TokenizerSet::default();
    let raw = measure_result(&result.to_string(), &set).unwrap();
    assert!(raw.structured_duplicate, "wrapped under one key");
    let (text, copy) = (
        result["content"][0]["text"].as_str().unwrap(),
        result["structuredContent"].to_string(),
    );
    assert_eq!(raw.content_tokens as u64, count(text));
    assert_eq!(raw.model_tokens as u64, count(text) + count(&copy));

    // a budget the text fits but text and copy do not
    let budget = raw.content_tokens + 200;
    assert!(raw.model_tokens > budget);
    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), budget);
    let out = run(&e, "create_entities", &result);
    assert_eq!(out.strategy, Strategy::Stripped);
    assert!(
        out.result.get("structuredContent").is_none(),
        "the copy is dropped"
    );
    assert_eq!(
        out.result["content"][0]["text"], result["content"][0]["text"],
        "the text is kept whole"
    );
    let note = out.note.as_deref().unwrap();
    assert!(note.contains("structuredContent dropped"), "{note}");
    assert_eq!(
        out.tokens_after,
        raw.content_tokens + Tokenizer::Cl100k.count(note)
    );
    assert_eq!(e.cost(&out.result), out.tokens_after);

    // the reverse: the text wraps the structuredContent under one key
    let entities = result["structuredContent"]["entities"].clone();
    let reverse = json!({
        "content": [{"type": "text", "text": json!({"entities": entities}).to_string()}],
        "structuredContent": entities,
    });
    assert!(
        measure_result(&reverse.to_string(), &set)
            .unwrap()
            .structured_duplicate
    );
    // and a structuredContent with more than the text is not a duplicate
    let more = json!({
        "content": result["content"].clone(),
        "structuredContent": {"entities": entities, "created": 20},
    });
    assert!(
        !measure_result(&more.to_string(), &set)
            .unwrap()
            .structured_duplicate
    );
}

// ---- 16: pagination from the structure --------------------------------------------------------

fn over_cap_flagged(result: &Value) -> bool {
    let raw = measure_result(&result.to_string(), &TokenizerSet::default()).unwrap();
    assert!(raw.model_tokens > 25_000, "{} tokens", raw.model_tokens);
    let mut s = ServerReport::new("git", "stdio", "x", "test");
    s.probes = vec![ProbeResult {
        raw: Some(raw),
        ..ProbeResult::new("git_diff")
    }];
    findings::check_server(&s)
        .iter()
        .any(|f| f.rule == "result-over-cap-unpaginated")
}

#[test]
fn pagination_is_read_from_the_structure_not_the_payload() {
    // a diff whose code mentions nextCursor, has_more and truncation, at both ends
    let mut diff = String::from(
        "diff --git a/src/page.ts b/src/page.ts\n+// returns { items, nextCursor, has_more } (truncated at 50)\n",
    );
    for i in 0..6000 {
        diff.push_str(&format!(
            "+  const row{i} = await fetchRow({i}); // offset {i}\n"
        ));
    }
    diff.push_str("+  return { items, nextCursor: next, truncated: false };\n }\n");
    let text = |t: &str| json!({"content": [{"type": "text", "text": t}]});
    assert!(over_cap_flagged(&text(&diff)), "a diff is not paginated");
    assert!(
        over_cap_flagged(&text(&format!("{diff}\nthe page starts at offset 0\n"))),
        "a page's own words are not a marker"
    );

    // a JSON object with a top-level nextCursor is paginated
    let items: Vec<Value> = (0..3000)
        .map(|i| json!({"id": i, "title": format!("Issue number {i} about pages")}))
        .collect();
    let page = json!({"items": items, "nextCursor": "abc"});
    assert!(!over_cap_flagged(&text(&page.to_string())));
    assert!(!over_cap_flagged(&json!({
        "content": [{"type": "text", "text": "see structuredContent"}],
        "structuredContent": {"items": page["items"], "has_more": true},
    })));
    // the server's own trailing marker line
    let marked = format!(
        "{diff}\n<error>Content truncated. Call the fetch tool with a start_index of 5000 to get more content.</error>"
    );
    assert!(!over_cap_flagged(&text(&marked)));
    // a nextCursor nested in the items is data
    let nested = json!({"items": (0..3000).map(|i| json!({"id": i, "nextCursor": format!("c{i}"), "t": "entry text here"})).collect::<Vec<_>>()});
    assert!(over_cap_flagged(&text(&nested.to_string())));
}

// ---- 17: tool error text kept -----------------------------------------------------------------

#[test]
fn tool_error_text_is_kept_in_json_csv_markdown_and_the_table() {
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("out");
    let toml = "[servers.demo]\nbuiltin = \"demo\"\n[[servers.demo.probes]]\ntool = \"run_query\"\narguments = { sql = \"DROP TABLE users\" }\n";
    let probe = home.path().join("p.toml");
    std::fs::write(&probe, toml).unwrap();
    let assert = mcp_budget(home.path(), home.path())
        .args(["audit", probe.to_str().unwrap(), "--out"])
        .arg(&out)
        .args(["--width", "200", "--spill-dir"])
        .arg(home.path().join("spill"))
        .assert()
        .code(0);
    let report = read_report(&out);
    let p = &probes(&report)[0];
    assert_eq!(p["status"], "tool_error");
    let error = p["error"].as_str().expect("the tool's error text is kept");
    assert_eq!(error, "Error: only SELECT statements are allowed");
    let csv = std::fs::read_to_string(out.join("probes.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let row: HashMap<String, String> = rows.deserialize().next().unwrap().unwrap();
    assert_eq!(row["error"], error);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains(&format!("tool error: {}", error.replace('\n', " "))),
        "{md}"
    );
    let table = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let first = error.lines().next().unwrap();
    assert!(table.contains(&format!("tool error: {first}")), "{table}");
}

#[test]
fn a_multi_line_json_rpc_error_is_one_line_in_the_table_and_whole_in_json() {
    let home = tempfile::tempdir().unwrap();
    let script = repo().join("tests/fixtures/hostile_server.py");
    let probe = home.path().join("p.toml");
    std::fs::write(
        &probe,
        format!(
            "[servers.trace]\ncommand = \"python3\"\nargs = [{:?}, \"error-lines\"]\n[[servers.trace.probes]]\ntool = \"probe\"\n",
            script.display().to_string()
        ),
    )
    .unwrap();
    let out = home.path().join("out");
    let assert = mcp_budget(home.path(), home.path())
        .args(["audit", probe.to_str().unwrap(), "--out"])
        .arg(&out)
        .args(["--width", "200", "--spill-dir"])
        .arg(home.path().join("spill"))
        .assert();
    let table = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let report = read_report(&out);
    let error = probes(&report)[0]["error"].as_str().unwrap().to_string();
    assert_eq!(error.lines().count(), 50, "{error}");
    assert!(error.contains("query failed") && error.contains("frame48"));
    // the probe table's rows: one for the probe, none for the 49 frames
    let start = table.find("Probe results").unwrap();
    let section = &table[start..];
    let end = section.find("\n\n").unwrap_or(section.len());
    let rows: Vec<&str> = section[..end]
        .lines()
        .filter(|l| l.contains("┆") && !l.contains("status"))
        .collect();
    // one row (its cell may wrap), saying how much more audit.json has
    let probe_rows = rows.iter().filter(|l| l.starts_with("│ trace")).count();
    assert_eq!(probe_rows, 1, "{table}");
    assert!(rows.len() <= 2, "{table}");
    let trimmed = error.trim();
    let first = trimmed.lines().next().unwrap().trim_end();
    let rest = trimmed.chars().count() - first.chars().count();
    let more = format!(
        "{} more characters in",
        mcp_budget::ground::units::thousands(rest)
    );
    assert!(rows[0].contains("query failed …("), "{table}");
    let joined: String = rows.concat().split_whitespace().collect();
    assert!(joined.contains(&more.replace(' ', "")), "{table}");
    assert!(!table.contains("frame"), "{table}");
}

// ---- 20: wire is the `result` member as sent --------------------------------------------------

#[test]
fn wire_bytes_are_the_result_member_of_the_recorded_line() {
    let home = tempfile::tempdir().unwrap();
    let rec = home.path().join("rec");
    let toml = "[servers.demo]\nbuiltin = \"demo\"\n\
        [[servers.demo.probes]]\ntool = \"list_tickets\"\narguments = { limit = 10 }\n\
        [[servers.demo.probes]]\ntool = \"get_forecast\"\narguments = { city = \"Lisbon\" }\n";
    let (report, _) = audit_probe(
        home.path(),
        toml,
        &["--record", rec.to_str().unwrap()],
        &[],
        0,
    );
    let transcript = std::fs::read_to_string(rec.join("demo.jsonl")).unwrap();
    // the tools/call answers, in call order: each line's `result` member as its exact bytes
    let mut answers: Vec<(usize, String)> = Vec::new();
    for entry in transcript.lines() {
        let entry: Value = serde_json::from_str(entry).unwrap();
        let line = entry["line"].as_str().unwrap();
        let Ok(members) = serde_json::from_str::<HashMap<String, Box<RawValue>>>(line) else {
            continue;
        };
        if let Some(result) = members.get("result") {
            let is_call = serde_json::from_str::<Value>(result.get())
                .is_ok_and(|v| v.get("content").is_some());
            if is_call {
                answers.push((line.len(), result.get().to_string()));
            }
        }
    }
    let probes = probes(&report);
    assert_eq!(answers.len(), probes.len());
    for (p, (line_bytes, result)) in probes.iter().zip(&answers) {
        assert_eq!(p["raw"]["wire_bytes"], result.len(), "{}", p["tool"]);
        assert_eq!(
            p["raw"]["wire_tokens"],
            Tokenizer::Cl100k.count(result),
            "{}",
            p["tool"]
        );
        assert!(
            *line_bytes > result.len() + 20,
            "the envelope is not counted"
        );
    }
}

// ---- 22: image data that is no image ------------------------------------------------------------

#[test]
fn undecodable_image_data_is_counted_and_reduced_to_the_budget() {
    // 100 KB of data that is not base64 of any image
    let garbage: String = (0..100_000u32)
        .map(|i| char::from(b"abcXYZ019+/!?"[(i * 7 % 13) as usize]))
        .collect();
    let result = json!({"content": [
        {"type": "text", "text": "Here is the chart:"},
        {"type": "image", "mimeType": "image/png", "data": garbage},
    ]});
    let raw = measure_result(&result.to_string(), &TokenizerSet::default()).unwrap();
    let as_text = Tokenizer::Cl100k.count(&garbage);
    assert!(as_text > 10_000, "{as_text}");
    assert_eq!(raw.image_tokens, as_text);
    assert_eq!(raw.blocks[1].tokens, as_text);
    assert!(raw.model_tokens > as_text);

    let dir = tempfile::tempdir().unwrap();
    let e = engine(dir.path(), 500);
    assert_eq!(e.cost(&result), raw.model_tokens);
    let out = run(&e, "render_chart", &result);
    assert_ne!(out.strategy, Strategy::PassThrough);
    assert!(out.tokens_after <= 500, "{}", out.tokens_after);
    assert_eq!(e.cost(&out.result), out.tokens_after);
    let shown = out.result.to_string();
    assert!(!shown.contains(&garbage[..1000]), "the data is not sent on");
    // the data is kept as it came, not lost to a failed decode
    let kept: Vec<_> = walk(dir.path())
        .into_iter()
        .filter(|p| std::fs::read(p).is_ok_and(|b| b == garbage.as_bytes()))
        .collect();
    assert_eq!(kept.len(), 1, "the image data is in the spill store");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn count_plain_prints_bare_numbers_for_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
    std::fs::write(&a, "héllo wörld, 日本語 ".repeat(50)).unwrap();
    std::fs::write(&b, "{\"items\": [1, 2, 3]}").unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(crate::support::bin_path())
            .arg("count")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let text = |p: &Path| std::fs::read_to_string(p).unwrap();
    // one file: the number alone
    let one = run(&["--plain", a.to_str().unwrap()]);
    assert_eq!(one, format!("{}\n", count(&text(&a))));
    // two files, two tokenizers: tab-separated, the file last, no total
    let two = run(&[
        "--plain",
        "--tokenizer",
        "cl100k_base,o200k_base",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let o200k = |p: &Path| Tokenizer::O200k.count(&text(p));
    assert_eq!(
        two,
        format!(
            "{}\t{}\t{}\n{}\t{}\t{}\n",
            count(&text(&a)),
            o200k(&a),
            a.display(),
            count(&text(&b)),
            o200k(&b),
            b.display()
        )
    );
}
