//! The definition rules on real definitions: every tool of the corpus's tool lists (the GitHub
//! server's 117, the reference servers', Playwright's, Bright Data's). Each rule's saving is
//! checked by tests/fixtures/check_lints.py, which applies the fix itself and counts with Python
//! tiktoken. The rules run twice: at the audit's limits, and at limits low enough that every
//! rule meets real definitions (no corpus tool has a 1,000-token outputSchema).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use mcp_budget::ground::tokens::Tokenizer;
use mcp_budget::measure::{factor_repeats, lint_tool_with, LintLimits};
use serde_json::{json, Map, Value};

use crate::support::{corpus, repo, venv_python};

/// Every tool definition of the corpus's tool lists, with the list's name.
pub fn corpus_tools(corpus: &Path) -> Vec<(String, Map<String, Value>)> {
    let mut files: Vec<_> = ["toolslists/live", "toolslists/github-mcp-server"]
        .iter()
        .flat_map(|d| std::fs::read_dir(corpus.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let pages: Vec<Value> = match serde_json::from_str::<Value>(&text) {
            Ok(v) if v.get("result").is_some() => vec![v["result"].clone()],
            Ok(v) => vec![v],
            Err(_) => text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str::<Value>(l).unwrap()["result"].clone())
                .collect(),
        };
        for page in pages {
            for t in page["tools"].as_array().into_iter().flatten() {
                out.push((name.clone(), t.as_object().unwrap().clone()));
            }
        }
    }
    out
}

/// Run tests/fixtures/check_lints.py on `lines` (JSON cases written to `cases`): its verdict,
/// with no mismatch.
fn check_lints(python: &Path, cases: &Path, lines: &str) -> Value {
    std::fs::write(cases, lines).unwrap();
    let got: Value = crate::support::run_json(
        Command::new(python)
            .current_dir(repo().join("tests/fixtures"))
            .arg("check_lints.py")
            .arg(cases),
    );
    assert_eq!(got["mismatches"], json!([]), "{got}");
    got
}

const LOW: LintLimits = LintLimits {
    description_tokens: 60,
    list_tokens: 30,
    list_share: 0.05,
    output_schema_tokens: 60,
    shared_bytes: 24,
};

#[test]
fn every_rule_saves_what_an_independent_count_of_the_fixed_definition_says() {
    let Some(corpus) = corpus() else { return };
    let Some(python) = venv_python("tiktoken", "tiktoken") else {
        return;
    };
    let mut tools = corpus_tools(&corpus);
    assert!(tools.len() > 250, "{}", tools.len());
    // no corpus tool repeats a subschema large enough for a `$defs` entry to pay for itself
    // (the largest repeats are two copies of 117 bytes in Playwright's browser_drag); one made
    // of a real part, the memory server's entity schema, taken three times
    let entity = tools
        .iter()
        .find(|(_, t)| t["name"] == "create_entities")
        .map(|(_, t)| t["inputSchema"]["properties"]["entities"]["items"].clone())
        .expect("the memory server's create_entities");
    let composed = json!({"name": "merge_entities", "description": "Merge two entities into a third.",
        "inputSchema": {"type": "object", "properties": {"first": entity, "second": entity, "into": entity}}});
    tools.push(("composed".into(), composed.as_object().unwrap().clone()));
    // issue 37: a description with a JSON example across the 500-token line, whose cut stays
    // out of the example and saves what the text loses (the Python cut skips code on its own)
    let mut d = String::from("Extract structured data from web pages. ");
    for i in 1..18 {
        d += &format!("Rule {i}: keep the prompt short and name each field the schema asks for, so the model extracts it from the page. ");
    }
    d += "\n```json\n{\n  \"urls\": [\"https://example.com/a\", \"https://example.com/b\"],\n  \"prompt\": \"Extract the price. Skip ads.\",\n  \"schema\": { ... }\n}\n```\nUse `{\"a\": \"b. c\"}` and <example>One. Two.</example> as you like. ";
    d += &"Note: the result is one JSON object per page. ".repeat(12);
    let extract = json!({"name": "extract", "description": d, "inputSchema": {"type": "object"}});
    tools.push(("example".into(), extract.as_object().unwrap().clone()));
    let home = tempfile::tempdir().unwrap();
    let cases = home.path().join("cases.jsonl");
    let mut lines = String::new();
    let mut per_rule: BTreeMap<String, usize> = BTreeMap::new();
    for limits in [LintLimits::default(), LOW] {
        for (_, tool) in &tools {
            let lints = lint_tool_with(tool, Tokenizer::Cl100k, &limits);
            // `list-without-limit` has no fix to count (its own test is below)
            for l in lints
                .lints
                .iter()
                .filter(|l| l.rule != "list-without-limit")
            {
                *per_rule.entry(l.rule.clone()).or_default() += 1;
                let mut case = json!({
                    "tool": tool,
                    "rule": l.rule,
                    "saves_tokens": l.saves_tokens,
                    "saves_wire_tokens": l.saves_wire_tokens,
                    "limit": limits.description_tokens,
                });
                if l.rule == "repeated-subtree" {
                    let mut s = tool["inputSchema"].clone();
                    assert!(!factor_repeats(&mut s, limits.shared_bytes).is_empty());
                    case["factored"] = s;
                }
                lines.push_str(&case.to_string());
                lines.push('\n');
            }
            // what every fix together leaves is never more than the tool, and the suggested
            // policy (lean and a cut description) never saves more than all fixes
            let base = Tokenizer::Cl100k.count(&mcp_budget::measure::compact_json(
                &mcp_budget::measure::model_view(tool),
            ));
            assert!(lints.fixed_tokens <= lints.suggested_tokens.min(base) + 1);
        }
    }
    for rule in [
        "schema-meta-keys",
        "title-repeats-name",
        "null-default",
        "repeated-subtree",
        "list-dwarfs-tool",
        "long-description",
        "heavy-output-schema",
    ] {
        assert!(
            per_rule.get(rule).copied().unwrap_or(0) > 0,
            "{rule} met no real definition: {per_rule:?}"
        );
    }
    let got = check_lints(&python, &cases, &lines);
    for (rule, n) in &per_rule {
        assert_eq!(got["checked"][rule], *n as u64, "{rule}");
    }
}

/// Issue 30: parameters repeated across one server's tools, on every corpus tool list, checked
/// by check_lints.py's own grouping and count (at the audit's 5 tools, and at 3).
#[test]
fn shared_parameters_save_what_an_independent_grouping_and_count_say() {
    let Some(corpus) = corpus() else { return };
    let Some(python) = venv_python("tiktoken", "tiktoken") else {
        return;
    };
    let mut servers: BTreeMap<String, Vec<Map<String, Value>>> = BTreeMap::new();
    for (file, tool) in corpus_tools(&corpus) {
        servers.entry(file).or_default().push(tool);
    }
    let home = tempfile::tempdir().unwrap();
    let cases = home.path().join("shared.jsonl");
    let (mut lines, mut groups, mut saved) = (String::new(), 0, 0);
    for min_tools in [mcp_budget::measure::SHARED_PARAMETER_TOOLS, 3] {
        for (file, tools) in &servers {
            let found = mcp_budget::measure::shared_parameters(tools, Tokenizer::Cl100k, min_tools);
            for g in &found {
                eprintln!(
                    "{file} (>= {min_tools}): `{}` in {} tools, hide {:?}, once {}",
                    g.name,
                    g.tools.len(),
                    g.hide_saves_tokens,
                    g.state_once_saves_tokens
                );
                if min_tools == mcp_budget::measure::SHARED_PARAMETER_TOOLS {
                    saved += g.best_saving();
                }
            }
            groups += found.len();
            let case = json!({"rule": "shared-parameters", "tools": tools,
                "min_tools": min_tools, "groups": found});
            lines.push_str(&case.to_string());
            lines.push('\n');
        }
    }
    // GitHub's `owner` and `repo` (required: stated once), pagination and the browser's
    // element references repeat across the real lists
    assert!(groups >= 10, "{groups}");
    assert!(saved > 1_000, "{saved}");
    let got = check_lints(&python, &cases, &lines);
    assert_eq!(got["checked"]["shared-parameters"], groups as u64);
}

#[test]
fn the_audit_limits_find_what_the_corpus_carries() {
    let Some(corpus) = corpus() else { return };
    let mut per_rule: BTreeMap<String, usize> = BTreeMap::new();
    let mut saved = 0;
    for (_, tool) in corpus_tools(&corpus) {
        for l in lint_tool_with(&tool, Tokenizer::Cl100k, &LintLimits::default()).lints {
            saved += l.saves_tokens;
            *per_rule.entry(l.rule).or_default() += 1;
        }
    }
    // zod's `$schema` on the TypeScript servers' tools, pydantic's titles and null defaults on
    // the Python servers', and sequential thinking's 566-token description
    assert!(per_rule["schema-meta-keys"] >= 100, "{per_rule:?}");
    assert!(per_rule["title-repeats-name"] >= 10, "{per_rule:?}");
    assert!(per_rule["null-default"] >= 3, "{per_rule:?}");
    assert_eq!(per_rule["long-description"], 1, "{per_rule:?}");
    assert!(saved > 2_000, "{saved}");
}

/// `audit --suggest-policy` on real tool lists, and the proxy applying the policy: the schema
/// tax the proxy shows is the one the audit said the policy would leave.
#[test]
fn the_suggested_policy_leaves_the_tax_the_audit_says() {
    let Some(corpus) = corpus() else { return };
    let home = tempfile::tempdir().unwrap();
    let server = repo().join("tests/fixtures/toolslist_server.py");
    let lists = [
        ("git", "toolslists/live/git.tools-list.jsonl"),
        (
            "seq",
            "toolslists/live/sequential-thinking.tools-list.jsonl",
        ),
        // issue 30: `element`, optional and the same in 7 of Playwright's tools, is hidden
        ("playwright", "toolslists/live/playwright.tools-list.jsonl"),
    ];
    let mut probes = String::new();
    for (name, list) in lists {
        probes.push_str(&format!(
            "[servers.{name}]\ncommand = \"python3\"\nargs = [{:?}, {:?}]\n\n",
            server.to_str().unwrap(),
            corpus.join(list).to_str().unwrap()
        ));
    }
    let probe_file = home.path().join("probes.toml");
    std::fs::write(&probe_file, probes).unwrap();
    let policy = home.path().join("lean.toml");
    let out = Command::new(crate::support::bin_path())
        .arg("audit")
        .arg(&probe_file)
        .args([
            "--no-charts",
            "--client",
            "naive",
            "--format",
            "json",
            "--out",
        ])
        .arg(home.path().join("out"))
        .arg("--suggest-policy")
        .arg(&policy)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: Value =
        serde_json::from_slice(&std::fs::read(home.path().join("out/audit.json")).unwrap())
            .unwrap();
    let text = std::fs::read_to_string(&policy).unwrap();
    let parsed: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(parsed["policy"]["lean_schemas"].as_bool(), Some(true));
    // sequential thinking's 566-token description is cut where the finding says
    let server_named = |n: &str| {
        report["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    let seq = &server_named("seq")["tools"][0];
    assert_eq!(seq["name"], "sequentialthinking");
    assert_eq!(
        parsed["policy"]["tools"]["sequentialthinking"]["max_description_chars"]
            .as_integer()
            .map(|i| i as u64),
        seq["description_cut_chars"].as_u64()
    );
    let hides: Vec<&str> = parsed["policy"]["tools"]
        .as_table()
        .unwrap()
        .iter()
        .filter(|(_, r)| r.get("hide_params").is_some())
        .map(|(t, _)| t.as_str())
        .collect();
    assert_eq!(hides.len(), 7, "{text}");
    assert!(hides.contains(&"browser_click"), "{hides:?}");
    assert_eq!(
        parsed["policy"]["tools"]["browser_click"]["hide_params"],
        toml::Value::Array(vec!["element".into()])
    );
    let mut total = (0, 0);
    for (name, list) in lists.iter() {
        let s = &server_named(name);
        let tools = s["tools"].as_array().unwrap();
        let now: u64 = tools
            .iter()
            .map(|t| t["model_tokens"].as_u64().unwrap())
            .sum();
        let then: u64 = tools
            .iter()
            .map(|t| t["suggested_model_tokens"].as_u64().unwrap())
            .sum();
        assert!(then < now, "{name}: {then} vs {now}");
        total = (total.0 + now, total.1 + then);
        // the proxy with the policy: what it shows costs what the audit said, plus its own tool
        let out = Command::new(crate::support::bin_path())
            .args(["proxy", "--policy"])
            .arg(&policy)
            .args(["--", "python3"])
            .arg(&server)
            .arg(corpus.join(list))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let line = String::from_utf8_lossy(&out.stderr)
            .lines()
            .next()
            .unwrap()
            .to_string();
        let read = mcp_budget::run::proxy::read_tool_definition();
        let read = Tokenizer::Cl100k.count(&mcp_budget::measure::compact_json(
            &mcp_budget::measure::model_view(read.as_object().unwrap()),
        ));
        let want = format!(
            "schema {} -> {} tokens per turn",
            mcp_budget::ground::units::thousands(now as usize),
            mcp_budget::ground::units::thousands((then as usize) + read)
        );
        assert!(line.contains(&want), "{name}: `{line}` lacks `{want}`");
    }
    assert!(
        text.contains(&format!(
            "{} -> {} tokens per turn",
            mcp_budget::ground::units::thousands(total.0 as usize),
            mcp_budget::ground::units::thousands(total.1 as usize)
        )),
        "{text}"
    );
    assert!(stderr.contains("suggested policy written to"), "{stderr}");
}

/// Issue 30: how many tools make a shared parameter is a setting (`--shared-min-tools`,
/// `MCP_BUDGET_SHARED_MIN_TOOLS`), at least 2.
#[test]
fn the_shared_parameter_threshold_is_a_setting() {
    let Some(corpus) = corpus() else { return };
    let home = tempfile::tempdir().unwrap();
    let probes = home.path().join("probes.toml");
    std::fs::write(
        &probes,
        format!(
            "[servers.playwright]\ncommand = \"python3\"\nargs = [{:?}, {:?}]\n",
            repo()
                .join("tests/fixtures/toolslist_server.py")
                .to_str()
                .unwrap(),
            corpus
                .join("toolslists/live/playwright.tools-list.jsonl")
                .to_str()
                .unwrap()
        ),
    )
    .unwrap();
    let groups = |extra: &[&str], env: Option<&str>| -> Vec<String> {
        let mut cmd = crate::support::mcp_budget(home.path(), home.path());
        cmd.arg("audit")
            .arg(&probes)
            .args(["--no-write", "--format", "json", "--client", "naive"])
            .args(extra);
        if let Some(n) = env {
            cmd.env("MCP_BUDGET_SHARED_MIN_TOOLS", n);
        }
        let out = cmd.assert().code(0).get_output().stdout.clone();
        let r: Value = serde_json::from_slice(&out).unwrap();
        r["servers"][0]["shared_parameters"]
            .as_array()
            .map(|g| {
                g.iter()
                    .map(|g| {
                        format!(
                            "{} x{}",
                            g["name"].as_str().unwrap(),
                            g["tools"].as_array().unwrap().len()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    // `element` is the same in 7 of Playwright's tools, `target` in 5
    assert_eq!(groups(&[], None), ["element x7", "target x5"]);
    assert_eq!(groups(&["--shared-min-tools", "6"], None), ["element x7"]);
    assert_eq!(groups(&[], Some("8")), Vec::<String>::new());
    crate::support::mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(&probes)
        .args(["--shared-min-tools", "1"])
        .assert()
        .code(2);
}

/// Issue 37: `list-without-limit` read only the top-level parameter names. It fired on tools
/// whose limit sits in a wrapper object and on tools whose limit goes in the query. The
/// corpus: Bright Data's `search_engine_batch` takes a batch of searches, each with its
/// `cursor` (`queries[].cursor`); the memory server's `search_nodes` takes a natural-language
/// query and no limit, and stays flagged. tests/fixtures/list_limits.tools.json: PagerDuty's
/// `list_incidents`, `list_services` and `list_oncalls` as FastMCP (mcp 2.3.0) lists them from
/// the server's pydantic query models (the `limit` inside `query_model`, behind a `$ref`);
/// LaunchDarkly's Speakeasy tools (`request` holding `limit` and `offset`, from its zod
/// schemas; a later `list-feature-flags` whose `request` has none); the SQLite server's
/// `read_query`, `write_query` and `list_tables`, the Postgres reference server's `query`
/// (`sql`, its only parameter), Grafana's `query_prometheus` (PromQL) and a JQL search (JQL has
/// no limit clause: still flagged, and the message says why).
#[test]
fn list_without_limit_reads_wrappers_and_query_languages() {
    let Some(corpus) = corpus() else { return };
    let home = tempfile::tempdir().unwrap();
    let server = repo().join("tests/fixtures/toolslist_server.py");
    let lists = [
        (
            "brightdata",
            corpus.join("toolslists/live/brightdata.tools-list.jsonl"),
        ),
        (
            "memory",
            corpus.join("toolslists/live/memory.tools-list.jsonl"),
        ),
        (
            "fixture",
            repo().join("tests/fixtures/list_limits.tools.json"),
        ),
    ];
    let mut probes = String::new();
    for (name, list) in &lists {
        probes.push_str(&format!(
            "[servers.{name}]\ncommand = \"python3\"\nargs = [{:?}, {:?}]\n\n",
            server.to_str().unwrap(),
            list.to_str().unwrap()
        ));
    }
    let probe_file = home.path().join("probes.toml");
    std::fs::write(&probe_file, probes).unwrap();
    let out = crate::support::mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(&probe_file)
        .args(["--no-write", "--format", "json", "--client", "naive"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let report: Value = serde_json::from_slice(&out).unwrap();
    let mut flagged: Vec<(String, String)> = Vec::new();
    for s in report["servers"].as_array().unwrap() {
        for f in s["findings"].as_array().unwrap() {
            if f["rule"] == "list-without-limit" {
                assert!(f["saves_tokens"].is_null(), "{f}");
                flagged.push((
                    format!(
                        "{}/{}",
                        s["name"].as_str().unwrap(),
                        f["tool"].as_str().unwrap()
                    ),
                    f["message"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    let tools: Vec<&str> = flagged.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        tools,
        [
            "fixture/list-feature-flags",
            "fixture/list_tables",
            "fixture/search_issues",
            "memory/search_nodes",
        ]
    );
    assert_eq!(
        flagged[2].1,
        "`search_issues` looks list-shaped but takes no limit or cursor, and its JQL query (`jql`) has no limit clause (parameters: jql, fields)"
    );
    // on the whole corpus, the batch search is the one tool that moved
    let still: Vec<String> = corpus_tools(&corpus)
        .iter()
        .filter(|(_, t)| {
            lint_tool_with(t, Tokenizer::Cl100k, &LintLimits::default())
                .lints
                .iter()
                .any(|l| l.rule == "list-without-limit")
        })
        .map(|(file, t)| format!("{file}: {}", t["name"].as_str().unwrap()))
        .collect();
    assert_eq!(still.len(), 17, "{still:#?}");
    assert!(!still.iter().any(|t| t.contains("search_engine_batch")));
}
