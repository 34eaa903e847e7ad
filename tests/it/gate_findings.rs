//! Findings in the gate: `--fail-on error|warning` (and `fail_on` in a probe file's `[gate]`)
//! fails on every finding of that severity or worse; a probe of a tool the server does not
//! list, or with arguments its input schema refuses, is such a warning, naming what the server
//! offers.

use std::path::Path;

use crate::support::{mcp_budget, repo};

fn severities(report: &serde_json::Value) -> Vec<String> {
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["findings"].as_array().unwrap().iter())
        .map(|f| f["severity"].as_str().unwrap().to_string())
        .collect()
}

fn violations(stdout: &[u8]) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(stdout).unwrap();
    v["violations"].as_array().unwrap().clone()
}

#[test]
fn fail_on_fails_on_each_finding_of_that_severity_or_worse() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let out = dir.join("o");
    mcp_budget(dir, dir)
        .arg("audit")
        .arg(repo().join("probes/demo.toml"))
        .arg("--out")
        .arg(&out)
        .arg("--no-charts")
        .assert()
        .code(0);
    let report_path = out.join("audit.json");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).unwrap()).unwrap();
    let sev = severities(&report);
    let errors = sev.iter().filter(|s| *s == "error").count();
    let warnings = sev.iter().filter(|s| *s == "warning").count();
    assert!(errors > 0 && warnings > 0, "{sev:?}");
    let gate = |extra: &[&str]| {
        let mut c = mcp_budget(dir, dir);
        c.arg("gate")
            .arg(&report_path)
            .args(["--format", "json"])
            .args(extra)
            .env_remove("GITHUB_STEP_SUMMARY");
        c
    };
    // no --fail-on: findings alone never fail
    gate(&[]).assert().code(0);
    let got = violations(
        &gate(&["--fail-on", "error"])
            .assert()
            .code(1)
            .get_output()
            .stdout,
    );
    assert_eq!(got.len(), errors);
    assert!(got.iter().all(
        |v| v["rule"] == "fail_on" && v["message"].as_str().unwrap().starts_with("error demo")
    ));
    let got = violations(
        &gate(&["--fail-on", "warning"])
            .assert()
            .code(1)
            .get_output()
            .stdout,
    );
    assert_eq!(got.len(), errors + warnings);
    // the rule's id closes each message, and the tool is named where the finding has one
    assert!(got.iter().any(|v| v["tool"] == "list_docs"
        && v["message"]
            .as_str()
            .unwrap()
            .ends_with("[list-without-limit]")));

    // a probe file's [gate] table says it too; the flag wins over the file
    let probe = dir.join("gate.toml");
    std::fs::write(&probe, "[gate]\nfail_on = \"warning\"\n").unwrap();
    let got = violations(
        &gate(&["--config", probe.to_str().unwrap()])
            .assert()
            .code(1)
            .get_output()
            .stdout,
    );
    assert_eq!(got.len(), errors + warnings);
    let got = violations(
        &gate(&["--config", probe.to_str().unwrap(), "--fail-on", "error"])
            .assert()
            .code(1)
            .get_output()
            .stdout,
    );
    assert_eq!(got.len(), errors);

    // a severity that is not one: a one-line usage error (2), and one in a file names the file
    gate(&["--fail-on", "info"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--fail-on"));
    std::fs::write(&probe, "[gate]\nfail_on = \"sometimes\"\n").unwrap();
    gate(&["--config", probe.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("gate.toml"));
}

fn probe_file(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("probes.toml");
    std::fs::write(
        &p,
        r#"
[servers.demo]
builtin = "demo"

[[servers.demo.probes]]
tool = "scrape_as_markdwn"
arguments = { url = "demo://shop/search?q=x" }

[[servers.demo.probes]]
tool = "search_code"
arguments = { query = "fetchUser" }

[[servers.demo.probes]]
tool = "get_time"
"#,
    )
    .unwrap();
    p
}

#[test]
fn a_probe_of_an_unknown_tool_or_with_refused_arguments_is_a_warning_naming_what_is_offered() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let out = dir.join("o");
    let run = mcp_budget(dir, dir)
        .arg("audit")
        .arg(probe_file(dir))
        .arg("--out")
        .arg(&out)
        .args([
            "--no-charts",
            "--width",
            "200",
            "--gate",
            "--fail-on",
            "warning",
        ])
        .assert()
        // the unknown tool's call fails (2, which a failed gate does not lower)
        .code(2);
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).to_string();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("audit.json")).unwrap()).unwrap();
    let findings = report["servers"][0]["findings"].as_array().unwrap();
    let of = |rule: &str| -> Vec<&serde_json::Value> {
        findings.iter().filter(|f| f["rule"] == rule).collect()
    };
    let unknown = of("probe-unknown-tool");
    assert_eq!(unknown.len(), 1, "{findings:?}");
    assert_eq!(unknown[0]["severity"], "warning");
    let message = unknown[0]["message"].as_str().unwrap();
    assert!(
        message.contains("(did you mean `scrape_as_markdown`?)")
            && message.contains("it offers 13: scrape_as_markdown, browser_snapshot"),
        "{message}"
    );
    let args = of("probe-arguments");
    assert_eq!(args.len(), 1, "{findings:?}");
    assert_eq!(args[0]["tool"], "search_code");
    let message = args[0]["message"].as_str().unwrap();
    assert!(
        message.contains("\"q\" is a required property")
            && message.contains("(it takes parameters q, sort, order, per_page, page)"),
        "{message}"
    );
    // the errors are kept on the probe; a probe that matches has none
    let probes = report["servers"][0]["probes"].as_array().unwrap();
    assert_eq!(probes[1]["argument_errors"].as_array().unwrap().len(), 1);
    assert!(probes[2].get("argument_errors").is_none(), "{}", probes[2]);
    assert!(stdout.contains("[probe-unknown-tool]"), "{stdout}");
    let gate: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("gate.json")).unwrap()).unwrap();
    assert_eq!(gate["passed"], false);
    assert!(gate["violations"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["message"]
            .as_str()
            .unwrap()
            .ends_with("[probe-arguments]")));
}
