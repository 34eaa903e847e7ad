//! Issue 31, part 4: the JSON Schemas of audit.json, gate.json, a call log line and the lab's
//! report. The committed copies in docs/schemas/ are what `mcp-budget schema NAME` prints, and
//! every JSON document the renderers write validates against them under an independent
//! validator (Python's `jsonschema`, tests/fixtures/validate_schema.py), closed: a field a
//! writer emits that its type does not declare fails as well.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::support::{bin_path, mcp_budget, repo, venv_python, Pipelined};

const NAMES: [&str; 4] = ["audit", "gate", "call-log", "lab"];

/// Each document's errors under the schema `name` (strict: closed objects).
fn errors(name: &str, documents: &[Value]) -> Option<Vec<Vec<String>>> {
    let python = venv_python("jsonschema", "jsonschema (PyPI)")?;
    let schema = repo().join(format!("docs/schemas/{name}.schema.json"));
    let mut child = Command::new(python)
        .arg(repo().join("tests/fixtures/validate_schema.py"))
        .arg(schema)
        .arg("--strict")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(documents).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the validator failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// Every document is valid under the schema `name`; `what` names them in a failure.
fn assert_valid(name: &str, documents: &[(&str, Value)]) {
    let docs: Vec<Value> = documents.iter().map(|(_, d)| d.clone()).collect();
    let Some(found) = errors(name, &docs) else {
        return;
    };
    for ((what, _), errs) in documents.iter().zip(found) {
        assert!(
            errs.is_empty(),
            "{what} is not valid under {name}: {errs:#?}"
        );
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn the_committed_schemas_are_what_the_binary_prints() {
    let dir = tempfile::tempdir().unwrap();
    for name in NAMES {
        let out = mcp_budget(dir.path(), dir.path())
            .args(["schema", name])
            .output()
            .unwrap();
        assert!(out.status.success(), "schema {name}");
        let committed =
            std::fs::read_to_string(repo().join(format!("docs/schemas/{name}.schema.json")))
                .unwrap_or_default();
        assert!(
            committed == String::from_utf8(out.stdout).unwrap(),
            "docs/schemas/{name}.schema.json is stale: \
             cargo run -- schema {name} > docs/schemas/{name}.schema.json"
        );
    }
    let out = mcp_budget(dir.path(), dir.path())
        .args(["schema", "audit.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_committed_reports_and_a_fresh_audit_and_gate_validate() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let baseline = repo().join("reports/example/audit.json");
    let run = mcp_budget(dir.path(), &repo())
        .arg("audit")
        .arg("probes/demo.toml")
        .arg("--out")
        .arg(&out_dir)
        .arg("--baseline")
        .arg(&baseline)
        .args(["--gate", "--format", "json", "--max-tool-tokens", "100"])
        .output()
        .unwrap();
    // a tool over 100 tokens: the gate fails, and gate.json has violations to check
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let printed: Value = serde_json::from_slice(&run.stdout).unwrap();
    let gate_json = read(&out_dir.join("gate.json"));
    assert!(!gate_json["violations"].as_array().unwrap().is_empty());
    let gate_printed = mcp_budget(dir.path(), &repo())
        .arg("gate")
        .arg(out_dir.join("audit.json"))
        .arg("--baseline")
        .arg(&baseline)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_valid(
        "audit",
        &[
            ("reports/example/audit.json", read(&baseline)),
            (
                "reports/survey/audit.json",
                read(&repo().join("reports/survey/audit.json")),
            ),
            ("a fresh audit.json", read(&out_dir.join("audit.json"))),
            ("audit --format json", printed),
        ],
    );
    assert_valid(
        "gate",
        &[
            ("gate.json", gate_json),
            (
                "gate --format json",
                serde_json::from_slice(&gate_printed.stdout).unwrap(),
            ),
        ],
    );
}

#[test]
fn every_line_of_a_call_log_validates() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.jsonl");
    let mut cmd = Command::new(bin_path());
    cmd.args(["proxy", "--budget", "2000", "--spill-dir"])
        .arg(dir.path().join("spill"))
        .arg("--log")
        .arg(&log)
        .arg("--")
        .arg(bin_path())
        .arg("demo-server");
    let mut proxy = Pipelined::spawn(cmd, "proxy");
    proxy.call(
        0,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "schema-test", "version": "1"}}),
    );
    proxy.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    // small, spilled, and a tool the server does not have (an error)
    for (id, tool, args) in [
        (1, "get_forecast", json!({"city": "Lisbon"})),
        (
            2,
            "scrape_as_markdown",
            json!({"url": "demo://shop/search?q=earbuds"}),
        ),
        (3, "no_such_tool", json!({})),
    ] {
        proxy.call(id, "tools/call", json!({"name": tool, "arguments": args}));
    }
    proxy.finish();
    let lines: Vec<(&str, Value)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| ("a call log line", serde_json::from_str(l).unwrap()))
        .collect();
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(
        lines.iter().any(|(_, l)| l["spill_id"].is_string()),
        "{lines:#?}"
    );
    assert_valid("call-log", &lines);
}

#[test]
fn a_lab_report_validates() {
    let dir = tempfile::tempdir().unwrap();
    let probes = crate::lab::demo_probes(
        dir.path(),
        &[
            ("get_forecast", "{ city = \"Lisbon\" }"),
            (
                "scrape_as_markdown",
                "{ url = \"demo://shop/search?q=earbuds\" }",
            ),
        ],
    );
    let adapter = crate::lab::test_adapter(dir.path(), &[]);
    let (report, code, stderr) = crate::lab::lab(dir.path(), &probes, &adapter, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(report["clients"][0]["status"], "measured", "{report:#}");
    assert_valid("lab", &[("lab --format json", report)]);
}

/// The validator is not a rubber stamp: a wrong type, a missing required field and an
/// undeclared field are each an error naming where.
#[test]
fn a_broken_report_does_not_validate() {
    let good = read(&repo().join("reports/example/audit.json"));
    let mut wrong_type = good.clone();
    wrong_type["servers"][0]["tools"][0]["model_tokens"] = json!("many");
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("servers");
    let mut unknown = good.clone();
    unknown["servers"][0]["surprise"] = json!(1);
    let Some(found) = errors("audit", &[good, wrong_type, missing, unknown]) else {
        return;
    };
    assert!(found[0].is_empty(), "{:?}", found[0]);
    assert!(
        found[1]
            .iter()
            .any(|e| e.starts_with("servers/0/tools/0/model_tokens:")),
        "{:?}",
        found[1]
    );
    assert!(
        found[2]
            .iter()
            .any(|e| e.contains("'servers' is a required property")),
        "{:?}",
        found[2]
    );
    assert!(
        found[3]
            .iter()
            .any(|e| e.starts_with("servers/0:") && e.contains("surprise")),
        "{:?}",
        found[3]
    );
}
