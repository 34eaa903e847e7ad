//! `audit --record DIR` and `serve-capture DIR`: a recording audits to the same numbers as the
//! run it was made from, holds no secret, and says clearly what it cannot answer.

use std::path::Path;

use serde_json::Value;

use crate::support::{audit_probe, bin_path, mcp_budget, real_server, repo};

/// Fields that may differ between a run and the audit of its recording: timings, where the
/// server was declared and how it was reached (the recording is always served over stdio).
const VARYING: &[&str] = &[
    "generated_at",
    "latency_ms",
    "initialize_ms",
    "engine_us",
    "engine_startup_us",
    "target",
    "source",
    "transport",
    "spill_path",
];

fn normalise(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for key in VARYING {
                if let Some(field) = map.get_mut(*key) {
                    *field = Value::Null;
                }
            }
            map.values_mut().for_each(normalise);
        }
        Value::Array(items) => items.iter_mut().for_each(normalise),
        _ => {}
    }
}

/// Audit `toml` with `--record DIR`, then audit `DIR/probes.toml`; both reports.
fn record_and_replay(home: &Path, toml: &str, envs: &[(&str, &str)]) -> (Value, Value) {
    let dir = home.join("rec");
    let (run, _) = audit_probe(home, toml, &["--record", dir.to_str().unwrap()], envs, 0);
    // moved elsewhere first: the recording must not depend on where it was made
    let moved = home.join("moved");
    std::fs::rename(&dir, &moved).unwrap();
    let out = crate::support::mcp_budget(home, home)
        .arg("audit")
        .arg(moved.join("probes.toml"))
        .args(["--no-write", "--format", "json", "--spill-dir"])
        .arg(home.join("spill"))
        .assert()
        .code(0);
    let replayed = serde_json::from_slice(&out.get_output().stdout).expect("a JSON report");
    (run, replayed)
}

/// The everything server's probes: one of each kind of content it returns.
const EVERYTHING_PROBES: &str = r#"
[[servers.everything.probes]]
tool = "echo"
arguments = { message = "hello from a recording" }

[[servers.everything.probes]]
tool = "get-sum"
arguments = { a = 2, b = 3.5 }

[[servers.everything.probes]]
tool = "get-tiny-image"

[[servers.everything.probes]]
tool = "get-structured-content"
arguments = { location = "Chicago" }

[[servers.everything.probes]]
tool = "get-resource-links"
arguments = { count = 3 }

[[servers.everything.probes]]
tool = "get-resource-reference"
arguments = { resourceType = "Text", resourceId = 2 }

[[servers.everything.probes]]
tool = "get-annotated-message"
arguments = { messageType = "success" }
"#;

fn everything_server(bin: &Path) -> String {
    format!(
        "\n[servers.everything]\ncommand = {:?}\nargs = [\"stdio\"]\n{EVERYTHING_PROBES}",
        bin.display().to_string()
    )
}

#[test]
fn the_audit_of_a_recording_equals_the_audit_it_was_recorded_from() {
    let home = tempfile::tempdir().unwrap();
    let mut toml = std::fs::read_to_string(repo().join("probes/demo.toml")).unwrap();
    let everything = real_server("mcp-server-everything");
    if let Some(bin) = &everything {
        toml.push_str(&everything_server(bin));
    }
    let (mut run, mut replayed) = record_and_replay(home.path(), &toml, &[]);
    for (a, b) in run["servers"]
        .as_array()
        .unwrap()
        .iter()
        .zip(replayed["servers"].as_array().unwrap())
    {
        assert_eq!(
            b["transport"], "capture",
            "{} is replayed from the recording",
            a["name"]
        );
    }
    normalise(&mut run);
    normalise(&mut replayed);

    let servers = run["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1 + usize::from(everything.is_some()));
    for (a, b) in servers.iter().zip(replayed["servers"].as_array().unwrap()) {
        let name = a["name"].as_str().unwrap();
        assert_eq!(a["status"], "ok", "{name}: {}", a["error"]);
        eprintln!(
            "{name}: tools/list wire tokens {} recorded, {} replayed; probes' raw wire tokens {:?} recorded, {:?} replayed",
            a["tools_list"]["wire_tokens"],
            b["tools_list"]["wire_tokens"],
            wire_tokens(a),
            wire_tokens(b)
        );
        assert_eq!(a["tools_list"], b["tools_list"], "{name}: tools_list");
        assert_eq!(a["tools"], b["tools"], "{name}: tools");
        let (p, q) = (
            a["probes"].as_array().unwrap(),
            b["probes"].as_array().unwrap(),
        );
        assert_eq!(p.len(), q.len(), "{name}: probes");
        for (p, q) in p.iter().zip(q) {
            let tool = p["tool"].as_str().unwrap();
            assert_eq!(p["status"], q["status"], "{name}/{tool}: {}", q["error"]);
            assert_eq!(p["raw"], q["raw"], "{name}/{tool}: raw cost");
            assert_eq!(p["budgeted"], q["budgeted"], "{name}/{tool}: budgeted");
        }
    }
    assert_eq!(run, replayed, "the whole report, timings and origin aside");
}

fn wire_tokens(server: &Value) -> Vec<u64> {
    server["probes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["raw"]["wire_tokens"].as_u64().unwrap_or(0))
        .collect()
}

#[test]
fn no_recorded_file_holds_a_secret() {
    const SECRET: &str = "sk-planted-0123456789";
    const FROM_ENV: &str = "query-from-env-98765";
    let home = tempfile::tempdir().unwrap();
    // the secret is a server's env value and also a probe argument; another comes from ${VAR}
    let mut toml = format!(
        r#"
[servers.demo-stdio]
command = {bin:?}
args = ["demo-server"]
env = {{ DEMO_API_KEY = "{SECRET}" }}

[[servers.demo-stdio.probes]]
tool = "search_code"
arguments = {{ q = "{SECRET}" }}

[[servers.demo-stdio.probes]]
tool = "list_tickets"
arguments = {{ limit = 3, label = "${{PLANTED_QUERY}}" }}
"#,
        bin = bin_path().display().to_string()
    );
    let everything = real_server("mcp-server-everything");
    if let Some(bin) = &everything {
        toml.push_str(&format!(
            r#"
[servers.everything]
command = {:?}
args = ["stdio"]
env = {{ EVERYTHING_TOKEN = "{SECRET}" }}

[[servers.everything.probes]]
tool = "echo"
arguments = {{ message = "the key is {SECRET}" }}

[[servers.everything.probes]]
tool = "get-env"
"#,
            bin.display().to_string()
        ));
    }
    let dir = home.path().join("rec");
    let (run, stderr) = audit_probe(
        home.path(),
        &toml,
        &["--record", dir.to_str().unwrap()],
        &[("PLANTED_QUERY", FROM_ENV)],
        0,
    );
    assert!(stderr.contains("secret(s) replaced"), "{stderr}");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for secret in [SECRET, FROM_ENV] {
            assert!(!text.contains(secret), "{secret} in {}", path.display());
        }
        files += 1;
    }
    assert_eq!(files, 3 + usize::from(everything.is_some()));

    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let by_name = |n: &str| {
        manifest["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    let demo = by_name("demo-stdio");
    assert_eq!(demo["transport"], "stdio");
    assert_eq!(demo["probes"][0]["arguments"]["q"], "<redacted>");
    assert_eq!(demo["probes"][1]["arguments"]["label"], "<redacted>");
    assert!(demo["redactions"].as_u64().unwrap() >= 2, "{demo}");
    assert!(demo["messages"]["sent"].as_u64().unwrap() >= 4, "{demo}");
    let sent = demo["messages"]["sent"].as_u64().unwrap();
    let received = demo["messages"]["received"].as_u64().unwrap();
    let lines = std::fs::read_to_string(dir.join("demo-stdio.jsonl")).unwrap();
    assert_eq!(lines.lines().count() as u64, sent + received);
    if everything.is_some() {
        let e = by_name("everything");
        // the echo request, its result, and get-env's dump of the server's environment
        assert!(e["redactions"].as_u64().unwrap() >= 3, "{e}");
    }

    // the recording audits without the secrets: the redacted arguments match what was recorded
    let out = crate::support::mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(dir.join("probes.toml"))
        .args(["--no-write", "--format", "json", "--spill-dir"])
        .arg(home.path().join("spill"))
        .assert()
        .code(0);
    let replayed: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    for (a, b) in run["servers"]
        .as_array()
        .unwrap()
        .iter()
        .zip(replayed["servers"].as_array().unwrap())
    {
        assert_eq!(a["name"], b["name"]);
        assert_eq!(
            a["tools_list"]["wire_tokens"],
            b["tools_list"]["wire_tokens"]
        );
        for p in b["probes"].as_array().unwrap() {
            assert_eq!(p["status"], "ok", "{}: {}", p["tool"], p["error"]);
        }
    }
}

/// Record the demo with one probe into `home/rec`.
fn small_recording(home: &Path) -> std::path::PathBuf {
    let dir = home.join("rec");
    let toml = r#"
[servers.demo]
builtin = "demo"

[[servers.demo.probes]]
tool = "list_tickets"
arguments = { limit = 10 }
"#;
    audit_probe(home, toml, &["--record", dir.to_str().unwrap()], &[], 0);
    dir
}

#[test]
fn an_unrecorded_call_gets_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    let dir = small_recording(home.path());
    let toml = format!(
        r#"
[servers.replay]
command = {bin:?}
args = ["serve-capture", {dir:?}]

[[servers.replay.probes]]
tool = "list_tickets"
arguments = {{ limit = 10 }}

[[servers.replay.probes]]
tool = "list_tickets"
arguments = {{ limit = 11 }}

[[servers.replay.probes]]
tool = "not_a_tool"
arguments = {{ x = 1 }}
"#,
        bin = bin_path().display().to_string(),
        dir = dir.display().to_string()
    );
    // a probe that could not be made exits 2, with the report still written
    let (report, _) = audit_probe(home.path(), &toml, &[], &[], 2);
    let probes = report["servers"][0]["probes"].as_array().unwrap();
    assert_eq!(probes[0]["status"], "ok", "{}", probes[0]["error"]);
    assert_eq!(probes[1]["status"], "error");
    assert_eq!(
        probes[1]["error"],
        "`tools/call` returned JSON-RPC error -32602: no recorded result for tool `list_tickets` with arguments {\"limit\":11}"
    );
    assert!(
        probes[2]["error"]
            .as_str()
            .unwrap()
            .ends_with("no recorded result for tool `not_a_tool` with arguments {\"x\":1}"),
        "{}",
        probes[2]["error"]
    );
}

/// `serve-capture` with `args`: exit 2 and one line on stderr, which is returned.
fn serve_capture_fails(home: &Path, args: &[&str]) -> String {
    let assert = mcp_budget(home, home)
        .arg("serve-capture")
        .args(args)
        .write_stdin("")
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    stderr
}

#[test]
fn a_missing_or_broken_recording_exits_2_naming_the_file_or_server() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("no-such-dir");
    let err = serve_capture_fails(home.path(), &[missing.to_str().unwrap()]);
    let manifest = missing.join("manifest.json");
    assert!(
        err.contains(manifest.to_str().unwrap()),
        "names the missing manifest: {err}"
    );

    let dir = small_recording(home.path());
    let d = dir.to_str().unwrap();
    let err = serve_capture_fails(home.path(), &[d, "--server", "nope"]);
    assert!(
        err.contains("no server `nope`") && err.contains("demo"),
        "{err}"
    );

    let transcript = dir.join("demo.jsonl");
    let good = std::fs::read_to_string(&transcript).unwrap();
    std::fs::write(&transcript, format!("{good}{{\"dir\":\"sent\"\n")).unwrap();
    let err = serve_capture_fails(home.path(), &[d]);
    assert!(err.contains(transcript.to_str().unwrap()), "{err}");
    assert!(
        err.contains(&format!("line {}", good.lines().count() + 1)),
        "{err}"
    );

    let manifest = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut two: Value = serde_json::from_str(&text).unwrap();
    let mut other = two["servers"][0].clone();
    other["name"] = "other".into();
    two["servers"].as_array_mut().unwrap().push(other);
    std::fs::write(&manifest, two.to_string()).unwrap();
    let err = serve_capture_fails(home.path(), &[d]);
    assert!(
        err.contains("2 servers (demo, other)") && err.contains("--server"),
        "{err}"
    );

    std::fs::write(&manifest, &text[..text.len() / 2]).unwrap();
    let err = serve_capture_fails(home.path(), &[d]);
    assert!(err.contains(manifest.to_str().unwrap()), "{err}");
}
