//! The CI gate: every outcome and exit status, a regression of one tool named, the GitHub
//! annotations and job summary, the Markdown comment (snapshot), bad thresholds and baselines.

use std::path::{Path, PathBuf};

use crate::support::{mcp_budget, repo};

/// The demo's audit.json, written once per test into `dir`.
fn demo_report(dir: &Path) -> PathBuf {
    let out = dir.join("base");
    mcp_budget(dir, dir)
        .arg("audit")
        .arg(repo().join("probes/demo.toml"))
        .arg("--out")
        .arg(&out)
        .args(["--no-charts"])
        .assert()
        .code(0);
    out.join("audit.json")
}

/// A copy of `base` in which tool `tool` costs `grow` more tokens (and so does its server).
fn grown(base: &Path, tool: &str, grow: u64) -> PathBuf {
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(base).unwrap()).unwrap();
    let s = &mut r["servers"][0];
    let t = s["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == tool)
        .unwrap();
    t["model_tokens"] = (t["model_tokens"].as_u64().unwrap() + grow).into();
    let total = s["tools_list"]["model_tokens"].as_u64().unwrap();
    s["tools_list"]["model_tokens"] = (total + grow).into();
    let path = base.with_file_name(format!("grown-{tool}.json"));
    std::fs::write(&path, serde_json::to_string(&r).unwrap()).unwrap();
    path
}

#[test]
fn unchanged_passes_and_one_grown_tool_fails_by_name() {
    let home = tempfile::tempdir().unwrap();
    let base = demo_report(home.path());
    let gate = |cur: &Path, extra: &[&str]| {
        let mut c = mcp_budget(home.path(), home.path());
        c.arg("gate")
            .arg(cur)
            .arg("--baseline")
            .arg(&base)
            .args(extra);
        c.env_remove("GITHUB_STEP_SUMMARY");
        c
    };
    // the same report: passes, nothing moved
    gate(&base, &["--max-regression-pct", "0"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("gate passed"))
        .stdout(predicates::str::contains("0 of 24 moved"));

    // list_docs grows from 32 to 48 tokens: +50%; the server grows 16 of 1,052 (+1.5%)
    let cur = grown(&base, "list_docs", 16);
    let out = gate(&cur, &["--max-regression-pct", "10", "--format", "json"])
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["violations"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["violations"][0]["tool"], "list_docs");
    assert_eq!(v["violations"][0]["rule"], "max_regression_pct");
    assert_eq!(v["violations"][0]["value"], 50.0);
    // the server's schema tax and the tool moved by the same 16 tokens; nothing else moved
    let moved: Vec<(&str, &str, i64)> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["movement"] != "unchanged")
        .map(|c| {
            (
                c["subject"].as_str().unwrap(),
                c["name"].as_str().unwrap(),
                c["delta"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        moved,
        vec![("server", "demo", 16), ("tool", "list_docs", 16)]
    );

    // the server-level regression trips a tighter threshold, per-tool overrides do not matter
    let out = gate(&cur, &["--max-regression-pct", "1", "--format", "json"])
        .assert()
        .code(1);
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["violations"].as_array().unwrap().len(), 2, "{v}");

    // --exit-zero reports without failing
    gate(&cur, &["--max-regression-pct", "10", "--exit-zero"])
        .assert()
        .code(0)
        .stdout(predicates::str::contains("gate FAILED"));

    // markdown for a PR comment: the verdict first, then the tool changes
    let out = gate(
        &cur,
        &["--max-regression-pct", "10", "--format", "markdown"],
    )
    .assert()
    .code(1);
    let md = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let md = md.replace(&base.display().to_string(), "<baseline>");
    insta::assert_snapshot!("gate_markdown", md);
}

#[test]
fn github_format_annotates_and_appends_the_job_summary() {
    let home = tempfile::tempdir().unwrap();
    let base = demo_report(home.path());
    let cur = grown(&base, "search_code", 100);
    let summary = home.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = mcp_budget(home.path(), home.path())
        .arg("gate")
        .arg(&cur)
        .arg("--baseline")
        .arg(&base)
        .args(["--max-regression-pct", "20", "--max-raw-tokens", "200000"])
        .args(["--format", "github"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .assert()
        .code(1);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.contains(
            &"::error title=mcp-budget max_raw_tokens%3A demo/scrape_as_markdown::`scrape_as_markdown` returned 237%2C295 tokens (max 200%2C000)"
                .replace("%2C", ",")
                .as_str()
        ),
        "{text}"
    );
    assert!(
        lines.iter().any(|l| l
            .starts_with("::warning title=mcp-budget%3A demo/search_code grew::")
            && l.contains("from 158 to 258 tokens (+63.3%25)")),
        "{text}"
    );
    assert!(lines
        .last()
        .unwrap()
        .starts_with("::notice title=mcp-budget::mcp-budget gate failed"));
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(
        written.starts_with("earlier step\n### ❌ mcp-budget gate failed"),
        "{written}"
    );
    assert!(
        written.contains("| 🔺 grown | tool | demo | `search_code` | 158 | 258 | +100 | +63.3% |")
    );
}

#[test]
fn audit_gate_uses_the_probe_files_thresholds_and_writes_the_verdict() {
    let home = tempfile::tempdir().unwrap();
    let base = demo_report(home.path());
    let demo = std::fs::read_to_string(repo().join("probes/demo.toml")).unwrap();
    let probe = home.path().join("gated.toml");
    std::fs::write(
        &probe,
        format!("{demo}\n[gate]\nmax_tool_tokens = 150\n[gate.overrides.\"search_*\"]\nmax_tool_tokens = 200\n"),
    )
    .unwrap();
    let out = home.path().join("out");
    mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(&probe)
        .arg("--out")
        .arg(&out)
        .arg("--baseline")
        .arg(&base)
        .args(["--gate", "--no-charts"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "tool `list_pull_requests` costs 185 tokens per turn (max 150)",
        ));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("gate.json")).unwrap()).unwrap();
    // search_code (158) is under its override of 200; only list_pull_requests (185) fails
    let tools: Vec<&str> = v["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, vec!["list_pull_requests"]);
    assert!(std::fs::read_to_string(out.join("gate.md"))
        .unwrap()
        .contains("gate failed"));
    // the same with --exit-zero
    mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(&probe)
        .args(["--no-write", "--gate", "--exit-zero"])
        .assert()
        .code(0);
}

#[test]
fn bad_thresholds_and_baselines_are_usage_errors_that_name_them() {
    let home = tempfile::tempdir().unwrap();
    let base = demo_report(home.path());
    let run = |args: &[&str]| {
        let mut c = mcp_budget(home.path(), home.path());
        c.arg("gate").arg(&base).args(args);
        c.assert().code(2)
    };
    run(&["--max-regression-pct=-5"]).stderr(predicates::str::contains("--max-regression-pct"));
    let newer = home.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema_version": 7, "servers": []}"#).unwrap();
    run(&["--baseline", newer.to_str().unwrap()])
        .stderr(predicates::str::contains("newer.json has schema_version 7"));
    run(&["--baseline", "/nonexistent/base.json"]).stderr(predicates::str::contains(
        "cannot read /nonexistent/base.json",
    ));
    let bad = home.path().join("bad.toml");
    std::fs::write(&bad, "[gate]\nmax_tools_tokenz = 1\n").unwrap();
    run(&["--config", bad.to_str().unwrap()])
        .stderr(predicates::str::contains("gate.max_tools_tokenz"))
        .stderr(predicates::str::contains("bad.toml"));
}

/// A copy of `base` in which tool `tool` costs 0 tokens (its server that much less).
fn zeroed(base: &Path, tool: &str) -> PathBuf {
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(base).unwrap()).unwrap();
    let s = &mut r["servers"][0];
    let t = s["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == tool)
        .unwrap();
    let was = t["model_tokens"].as_u64().unwrap();
    t["model_tokens"] = 0.into();
    let total = s["tools_list"]["model_tokens"].as_u64().unwrap();
    s["tools_list"]["model_tokens"] = (total - was).into();
    let path = base.with_file_name(format!("zeroed-{tool}.json"));
    std::fs::write(&path, serde_json::to_string(&r).unwrap()).unwrap();
    path
}

#[test]
fn growth_from_a_zero_token_baseline_is_a_regression() {
    let home = tempfile::tempdir().unwrap();
    let cur = demo_report(home.path());
    let base = zeroed(&cur, "list_docs");
    let gate = |format: &str| {
        let mut c = mcp_budget(home.path(), home.path());
        c.arg("gate").arg(&cur).arg("--baseline").arg(&base);
        c.args(["--max-regression-pct", "1000", "--format", format]);
        c.env_remove("GITHUB_STEP_SUMMARY");
        c.assert().code(1)
    };
    let out = gate("json");
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    // the server grew 32 of 1,020 tokens (+3%: under 1000%); the tool grew from 0: infinite
    let broken: Vec<(&str, &str)> = v["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["rule"].as_str().unwrap(),
                x["tool"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(broken, vec![("max_regression_pct", "list_docs")], "{v}");
    let message = v["violations"][0]["message"].as_str().unwrap();
    assert!(message.contains("grew from 0 to 32 tokens"), "{message}");
    let md = String::from_utf8(gate("markdown").get_output().stdout.clone()).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| ") && l.contains("list_docs"))
        .unwrap();
    assert!(row.ends_with("| 0 | 32 | +32 | new (from 0) |"), "{row}");
    let table = String::from_utf8(gate("table").get_output().stdout.clone()).unwrap();
    assert!(table.contains("new (from 0)"), "{table}");
    let gh = String::from_utf8(gate("github").get_output().stdout.clone()).unwrap();
    assert!(
        gh.contains("::error title=mcp-budget max_regression_pct%3A demo/list_docs::"),
        "{gh}"
    );
}

/// A baseline that is this run's own `--out/audit.json` (the previous run's report, as a CI
/// job that keeps its output folder has it) is read before the fresh report replaces it: the
/// growth since is judged, not the new report against itself.
#[test]
fn a_baseline_in_the_output_folder_is_read_before_it_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let base = demo_report(dir.path());
    // the previous run: one tool 40 tokens smaller, saved where this run writes
    let smaller = grown(&base, "search_code", 0);
    let mut r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&smaller).unwrap()).unwrap();
    for t in r["servers"][0]["tools"].as_array_mut().unwrap() {
        if t["name"] == "search_code" {
            let n = t["model_tokens"].as_u64().unwrap();
            t["model_tokens"] = (n - 40).into();
        }
    }
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("audit.json"), r.to_string()).unwrap();
    let run = mcp_budget(dir.path(), dir.path())
        .arg("audit")
        .arg(repo().join("probes/demo.toml"))
        .arg("--out")
        .arg(&out)
        .arg("--baseline")
        .arg(out.join("audit.json"))
        .args(["--gate", "--no-charts", "--max-regression-pct", "5"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("search_code"), "{stderr}");
}
