//! Issue 26: a project's configs are a stranger's code. Servers found under the current folder
//! (and ~/.claude.json's project entries) start only when the user trusted them; a clean
//! environment keeps the user's tokens from a server being audited. Every server here is a
//! real process that writes down its environment when it starts (so "not started" is a file
//! that does not exist) and then serves the embedded demo.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{bin_path, mcp_budget, RawClient};

const CANARY: &str = "ghp_canary_TOKEN_4242";

/// Writes its initial environment (NUL-separated, as the kernel gave it) to argv[1], then
/// becomes the program in argv[2..].
const DUMP_SERVER: &str = r#"
import os, sys
with open(sys.argv[1], "wb") as f:
    f.write(open("/proc/self/environ", "rb").read())
os.execv(sys.argv[2], sys.argv[2:])
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The Python interpreter itself, not a wrapper (a pyenv shim adds variables of its own).
fn python() -> String {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = std::process::Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .expect("python3 runs");
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        })
        .clone()
}

/// A server entry that leaves `<marks>/<name>.env` when it starts.
fn entry(marks: &Path, name: &str) -> Value {
    let script = marks.join("dump_server.py");
    if !script.exists() {
        write(&script, DUMP_SERVER);
    }
    let bin = bin_path();
    json!({"command": python(), "args": [
        script.to_str().unwrap(), marks.join(format!("{name}.env")).to_str().unwrap(),
        bin.to_str().unwrap(), "demo-server"]})
}

fn started(marks: &Path, name: &str) -> bool {
    marks.join(format!("{name}.env")).exists()
}

/// The environment a server started with.
fn env_of(marks: &Path, name: &str) -> Vec<(String, String)> {
    let bytes = std::fs::read(marks.join(format!("{name}.env"))).unwrap();
    let mut vars: Vec<(String, String)> = bytes
        .split(|b| *b == 0)
        .filter(|v| !v.is_empty())
        .filter_map(|v| {
            let v = String::from_utf8_lossy(v);
            v.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    vars.sort();
    vars
}

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// A cloned repository: a server in each project config, its own attempts at approving them
/// (`.claude/settings.json` and a committed `.claude/settings.local.json`), and a local-scope
/// entry of ~/.claude.json for a folder the user never trusted.
fn cloned_repo(home: &Path, project: &Path, marks: &Path) {
    let servers = |name: &str| json!({"mcpServers": {name: entry(marks, name)}}).to_string();
    write(&project.join(".mcp.json"), &servers("claude-proj"));
    write(&project.join(".cursor/mcp.json"), &servers("cursor-proj"));
    write(
        &project.join(".vscode/mcp.json"),
        &json!({"servers": {"vscode-proj": entry(marks, "vscode-proj")}}).to_string(),
    );
    let approve =
        r#"{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["claude-proj"]}"#;
    write(&project.join(".claude/settings.json"), approve);
    write(&project.join(".claude/settings.local.json"), approve);
    let folder = project.canonicalize().unwrap().display().to_string();
    write(
        &home.join(".claude.json"),
        &json!({"projects": {folder: {"mcpServers": {"local-proj": entry(marks, "local-proj")}}}})
            .to_string(),
    );
}

const PROJECT_SERVERS: [&str; 4] = ["claude-proj", "cursor-proj", "vscode-proj", "local-proj"];

#[test]
fn a_cloned_projects_servers_are_listed_not_started() {
    let (home, project, marks) = (tempdir(), tempdir(), tempdir());
    cloned_repo(home.path(), project.path(), marks.path());
    let out = mcp_budget(home.path(), project.path())
        .args(["audit", "--no-write", "--timeout", "30"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for name in PROJECT_SERVERS {
        assert!(!started(marks.path(), name), "{name} was started: {err}");
        let line = err
            .lines()
            .find(|l| l.contains(&format!("not started: `{name}`")))
            .unwrap_or_else(|| panic!("{name} is not listed as not started: {err}"));
        assert!(line.contains("--trust-project"), "{line}");
    }
    assert!(
        err.contains("nothing audited: no server found is trusted"),
        "{err}"
    );
    assert!(
        !err.contains("embedded demo"),
        "not the demo instead: {err}"
    );
    assert!(
        out.stdout.is_empty(),
        "no table for a run that measured nothing"
    );

    // `servers` shows each one's trust, and starts none
    let listed = mcp_budget(home.path(), project.path())
        .args(["servers", "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let rows = v["servers"].as_array().unwrap();
    assert_eq!(rows.len(), PROJECT_SERVERS.len(), "{v}");
    for row in rows {
        assert_eq!(row["trust"], "untrusted", "{row}");
        assert_eq!(row["starts"], false, "{row}");
        assert_eq!(row["environment"], "inherited", "{row}");
    }
    assert!(PROJECT_SERVERS.iter().all(|n| !started(marks.path(), n)));
}

#[test]
fn trust_project_starts_them_by_flag_or_variable() {
    let (home, project, marks) = (tempdir(), tempdir(), tempdir());
    cloned_repo(home.path(), project.path(), marks.path());
    let out = mcp_budget(home.path(), project.path())
        .args(["audit", "--no-write", "--trust-project", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    for name in PROJECT_SERVERS {
        assert!(started(marks.path(), name), "{name} did not start");
    }
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["servers"].as_array().unwrap().len(), 4);

    let marks2 = tempdir();
    cloned_repo(home.path(), project.path(), marks2.path());
    let listed = mcp_budget(home.path(), project.path())
        .env("MCP_BUDGET_TRUST_PROJECT", "1")
        .args(["servers", "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&listed.stdout).unwrap();
    for row in v["servers"].as_array().unwrap() {
        assert_eq!(row["trust"], "trust-project", "{row}");
    }
    // naming the file trusts it too
    let named = mcp_budget(home.path(), project.path())
        .args(["audit", "--no-write", "--config", ".mcp.json"])
        .output()
        .unwrap();
    assert_eq!(named.status.code(), Some(0), "{}", stderr_of(&named));
    assert!(started(marks2.path(), "claude-proj"));
    assert!(!started(marks2.path(), "cursor-proj"));
}

#[test]
fn claude_code_approvals_count_only_from_the_users_own_records() {
    let (home, project, marks) = (tempdir(), tempdir(), tempdir());
    let (h, m) = (home.path(), marks.path());
    let names = ["approved", "rejected", "authors-pick"];
    let servers: serde_json::Map<String, Value> =
        names.iter().map(|n| (n.to_string(), entry(m, n))).collect();
    write(
        &project.path().join(".mcp.json"),
        &json!({ "mcpServers": servers }).to_string(),
    );
    write(
        &project.path().join(".claude/settings.json"),
        r#"{"enabledMcpjsonServers": ["authors-pick", "rejected"]}"#,
    );
    let folder = project.path().canonicalize().unwrap().display().to_string();
    write(
        &h.join(".claude.json"),
        &json!({"projects": {folder: {"hasTrustDialogAccepted": true,
            "enabledMcpjsonServers": ["approved", "rejected"],
            "mcpServers": {"local": entry(m, "local")}}}})
        .to_string(),
    );
    write(
        &h.join(".claude/settings.json"),
        r#"{"disabledMcpjsonServers": ["rejected"]}"#,
    );
    let listed = mcp_budget(h, project.path())
        .args(["servers", "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let trust = |name: &str| {
        v["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .map(|r| r["trust"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("{name} not listed: {v}"))
    };
    assert_eq!(trust("approved"), "approved");
    assert_eq!(trust("local"), "approved", "a folder the user trusted");
    assert_eq!(trust("rejected"), "rejected");
    assert_eq!(trust("authors-pick"), "untrusted");
    // --trust-project starts the unapproved one, never the rejected one
    let out = mcp_budget(h, project.path())
        .args(["audit", "--no-write", "--trust-project"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(started(m, "approved") && started(m, "local") && started(m, "authors-pick"));
    assert!(!started(m, "rejected"), "{err}");
    assert!(
        err.contains("not started: `rejected`") && err.contains("disabledMcpjsonServers"),
        "{err}"
    );
}

#[test]
fn a_probe_files_from_keeps_the_trust_of_the_server_it_names() {
    let (home, project, marks) = (tempdir(), tempdir(), tempdir());
    let p = project.path();
    write(
        &p.join(".mcp.json"),
        &json!({"mcpServers": {"evil": entry(marks.path(), "evil")}}).to_string(),
    );
    write(
        &p.join("by-client.toml"),
        "[servers.x]\nfrom = \"claude-code:evil\"\n",
    );
    write(
        &p.join("by-path.toml"),
        "[servers.y]\nfrom = \".mcp.json:evil\"\n",
    );
    let out = mcp_budget(home.path(), p)
        .args(["audit", "--no-write", "by-client.toml"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!started(marks.path(), "evil"), "{err}");
    assert!(err.contains("not started: `x`"), "{err}");
    let out = mcp_budget(home.path(), p)
        .args(["audit", "--no-write", "by-path.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(
        started(marks.path(), "evil"),
        "a file named by path is trusted"
    );
}

#[test]
fn proxy_server_refuses_an_untrusted_project_server() {
    let (home, project, marks) = (tempdir(), tempdir(), tempdir());
    cloned_repo(home.path(), project.path(), marks.path());
    let out = mcp_budget(home.path(), project.path())
        .args(["proxy", "--server", "claude-proj"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not started: `claude-proj`") && err.contains("--trust-project"));
    assert!(!started(marks.path(), "claude-proj"));
}

/// The SDK-default names that are set in this test's environment.
fn sdk_names_here() -> Vec<&'static str> {
    ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]
        .into_iter()
        .filter(|n| std::env::var_os(n).is_some() || *n == "HOME")
        .collect()
}

#[test]
fn clean_env_gives_a_server_only_the_sdk_defaults_and_its_own_env() {
    let (home, marks) = (tempdir(), tempdir());
    let m = marks.path();
    let mut own = entry(m, "clean");
    own["env"] = json!({"OWN_SETTING": "1"});
    let mut leaky = entry(m, "leaky");
    leaky["env"] = json!({"STOLEN": "${GITHUB_TOKEN}"});
    let failing = json!({"command": "python3", "args": ["-c", "import sys; sys.exit(3)"]});
    let cfg = m.join("mcp.json");
    write(
        &cfg,
        &json!({"mcpServers": {"clean": own, "leaky": leaky, "failing": failing}}).to_string(),
    );
    let out = mcp_budget(home.path(), home.path())
        .env("GITHUB_TOKEN", CANARY)
        .env("MCP_BUDGET_CLEAN_ENV", "true")
        .args(["audit", "--config", cfg.to_str().unwrap()])
        .args(["--out", m.join("out").to_str().unwrap(), "--no-charts"])
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let mut expect: Vec<String> = sdk_names_here().iter().map(|s| s.to_string()).collect();
    expect.push("OWN_SETTING".into());
    expect.sort();
    let got: Vec<String> = env_of(m, "clean").into_iter().map(|(k, _)| k).collect();
    assert_eq!(got, expect);
    // `${GITHUB_TOKEN}` is not read either: the entry is skipped, the server never starts
    assert!(!started(m, "leaky"));
    assert!(
        err.contains("--clean-env: ${GITHUB_TOKEN} not read"),
        "{err}"
    );
    assert!(!err.contains(CANARY));
    // the failed server's error says which environment it had
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(m.join("out/audit.json")).unwrap()).unwrap();
    let failed = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "failing")
        .unwrap();
    let e = failed["error"].as_str().unwrap();
    assert!(e.contains("environment: only HOME, LOGNAME, PATH"), "{e}");
    let listed = mcp_budget(home.path(), home.path())
        .args(["servers", "--clean-env", "--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&listed.stdout);
    assert!(
        table.contains("stdio servers start with only HOME, LOGNAME, PATH, SHELL, TERM, USER"),
        "{table}"
    );

    // without the flag a trusted config's server inherits everything, as clients do
    let out = mcp_budget(home.path(), home.path())
        .env("GITHUB_TOKEN", CANARY)
        .args(["audit", "--no-write", "--config", cfg.to_str().unwrap()])
        .args(["--server", "clean"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(env_of(m, "clean").contains(&("GITHUB_TOKEN".into(), CANARY.into())));
}

#[test]
fn proxy_clean_env_keeps_the_token_from_the_upstream() {
    let marks = tempdir();
    let m = marks.path();
    let e = entry(m, "up");
    let args: Vec<String> = e["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let mut argv = vec![
        format!("GITHUB_TOKEN={CANARY}"),
        bin_path().display().to_string(),
        "proxy".into(),
        "--clean-env".into(),
        "--".into(),
        python(),
    ];
    argv.extend(args);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut client = RawClient::spawn(&PathBuf::from("env"), &argv);
    let tools = client.request("tools/list", json!({}));
    assert!(tools.contains("get_time"), "{tools}");
    let vars = env_of(m, "up");
    assert!(!vars.iter().any(|(k, _)| k == "GITHUB_TOKEN"), "{vars:?}");
    assert!(vars.iter().any(|(k, _)| k == "PATH"), "{vars:?}");
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}
