//! `--protocol auto` (and the proxy's `--upstream-protocol auto`) keeps the hand-written
//! servers of the handshake era that `legacy` reaches: a `server/discover` answered with `{}`,
//! `null`, a string or a `supportedVersions` that is not a list falls back to `initialize` as an
//! error does, over stdio and streamable HTTP (tests/fixtures/handshake_era_server.py); a
//! failure of both is told once; a hostile discover's version list is kept distinct and short.

use serde_json::Value;

use crate::support::{audit_probe, bin_path, free_port, repo, serve_on, RawClient};

fn fixture() -> String {
    repo()
        .join("tests/fixtures/handshake_era_server.py")
        .to_string_lossy()
        .to_string()
}

fn stdio_server(mode: &str) -> String {
    format!(
        "[servers.s]\ncommand = \"python3\"\nargs = [{:?}, {mode:?}]\n",
        fixture()
    )
}

/// The fixture in `mode` as a streamable HTTP endpoint (stopped when dropped), and its URL.
fn http_server(mode: &str) -> (crate::support::Served, String) {
    let port = free_port();
    let mut cmd = std::process::Command::new("python3");
    cmd.args([&fixture(), mode, "http", &port.to_string()]);
    (serve_on(cmd, port), format!("http://127.0.0.1:{port}/mcp"))
}

/// What a discover answered with something that is not a discover result looks like.
const NOT_DISCOVER: [&str; 4] = [
    "empty",
    r#"json:{"supportedVersions": 5}"#,
    "json:null",
    r#"json:"a string""#,
];

fn audited_in_the_handshake_era(s: &Value, mode: &str) {
    assert_eq!(s["status"], "ok", "{mode}: {s}");
    assert_eq!(s["protocol_version"], "2025-11-25", "{mode}");
    assert_eq!(s["eras"], serde_json::json!(["2025-11-25"]), "{mode}");
    assert_eq!(s["server_info"]["name"], "handshake-era", "{mode}");
    assert_eq!(s["tools_list"]["tool_count"], 1, "{mode}");
    assert_eq!(s["probes"][0]["status"], "ok", "{mode}: {s}");
}

const PROBE: &str = "[[servers.s.probes]]\ntool = \"echo\"\narguments = { text = \"hi\" }\n";

#[test]
fn auto_falls_back_to_initialize_when_discover_gets_no_discover_result_over_stdio() {
    let home = tempfile::tempdir().unwrap();
    for mode in NOT_DISCOVER {
        let toml = format!("{}\n{PROBE}", stdio_server(mode));
        let (report, _) = audit_probe(home.path(), &toml, &["--protocol", "auto"], &[], 0);
        audited_in_the_handshake_era(&report["servers"][0], mode);
    }
}

#[test]
fn auto_falls_back_to_initialize_when_discover_gets_no_discover_result_over_http() {
    let home = tempfile::tempdir().unwrap();
    for mode in NOT_DISCOVER {
        let (_served, url) = http_server(mode);
        let toml = format!("[servers.s]\nurl = {url:?}\n\n{PROBE}");
        let (report, _) = audit_probe(home.path(), &toml, &["--protocol", "auto"], &[], 0);
        audited_in_the_handshake_era(&report["servers"][0], mode);
    }
}

#[test]
fn the_proxy_falls_back_too_over_stdio_and_http() {
    let bin = bin_path();
    for mode in ["empty", "json:null"] {
        let fixture = fixture();
        let (_served, url) = http_server(mode);
        let stdio = [
            "proxy",
            "--upstream-protocol",
            "auto",
            "--",
            "python3",
            &fixture,
            mode,
        ];
        let http = [
            "proxy",
            "--upstream-protocol",
            "auto",
            "--upstream-url",
            &url,
        ];
        for args in [&stdio[..], &http[..]] {
            let mut client = RawClient::spawn(&bin, args);
            let listed: Value =
                serde_json::from_str(&client.request("tools/list", serde_json::json!({}))).unwrap();
            let names: Vec<&str> = listed["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            assert!(names.contains(&"echo"), "{mode} {args:?}: {listed}");
        }
    }
}

#[test]
fn when_discover_and_initialize_fail_alike_the_failure_is_told_once() {
    let home = tempfile::tempdir().unwrap();
    let (_served, url) = http_server("refuse");
    let http = format!("[servers.s]\nurl = {url:?}\n");
    for toml in [stdio_server("refuse"), http] {
        let (report, stderr) = audit_probe(home.path(), &toml, &["--protocol", "auto"], &[], 2);
        let error = report["servers"][0]["error"].as_str().unwrap();
        assert_eq!(error.matches("nothing here").count(), 1, "{error}");
        assert!(
            error.contains("-32601: nothing here (to server/discover and initialize alike)"),
            "{error}"
        );
        assert_eq!(stderr.matches("nothing here").count(), 1, "{stderr}");
    }
}

#[test]
fn a_hostile_discovers_versions_are_kept_once_and_at_most_32() {
    let home = tempfile::tempdir().unwrap();
    let toml = stdio_server("versions:200001");
    let (report, _) = audit_probe(home.path(), &toml, &["--protocol", "auto"], &[], 0);
    let s = &report["servers"][0];
    assert_eq!(s["status"], "ok", "{s}");
    let eras: Vec<&str> = s["eras"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(eras.len(), 32);
    let distinct: std::collections::BTreeSet<&&str> = eras.iter().collect();
    assert_eq!(distinct.len(), 32, "{eras:?}");
    // the versions the sessions spoke are kept, then the newest listed ones
    assert_eq!(&eras[..3], ["2026-07-28", "2025-11-25", "2000-01-099"]);
    assert_eq!(eras[31], "2000-01-070");
    assert_eq!(
        s["warnings"],
        serde_json::json!([
            "server/discover listed 200,101 protocol versions: `eras` keeps the newest 32 of the 102 distinct ones"
        ])
    );
}

#[test]
fn a_request_answered_with_an_empty_202_fails_at_once_and_discover_falls_back() {
    let home = tempfile::tempdir().unwrap();
    let (_served, url) = http_server("silent");
    let toml = format!("[servers.s]\nurl = {url:?}\n\n{PROBE}");
    let args = ["--protocol", "auto", "--timeout", "60"];
    let (report, _) = audit_probe(home.path(), &toml, &args, &[], 2);
    let s = &report["servers"][0];
    // the server is measured in its era; only the probe fails, and says why
    assert_eq!(s["status"], "ok", "{s}");
    assert_eq!(s["protocol_version"], "2025-11-25");
    assert_eq!(s["tools_list"]["tool_count"], 1);
    assert_eq!(s["probes"][0]["status"], "error");
    let error = s["probes"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("HTTP 202 Accepted with an empty body: no response to the request"),
        "{error}"
    );
}

/// A stdio server of the handshake era that reads nothing for 11 s (a slow start): the
/// negotiation sends `initialize` after 10 s without an answer, the late error to
/// `server/discover` and the answer to that `initialize` are both used, and the server (which
/// refuses a second `initialize`, as a strict one does) is asked once. Found by the survey under
/// load (excel, the Python servers).
#[test]
fn a_slow_server_of_the_handshake_era_is_initialized_once_over_stdio() {
    let home = tempfile::tempdir().unwrap();
    let toml = format!("{}\n{PROBE}", stdio_server("slow:11"));
    let (report, _) = audit_probe(home.path(), &toml, &[], &[], 0);
    let s = &report["servers"][0];
    audited_in_the_handshake_era(s, "slow:11");
    assert_eq!(s["warnings"], serde_json::json!([]), "{s}");
}

/// Issue 37, 1.1: a slow server of the 2026-07-28 era (`sh -c "sleep 11; exec SERVER"`, as
/// markitdown-mcp under load): the late answer to `server/discover` is used, never dropped, and
/// the `initialize` sent after 10 s (which such a server refuses with -32022) changes nothing.
#[test]
fn a_slow_server_of_the_2026_era_is_audited_in_it_under_the_default() {
    let home = tempfile::tempdir().unwrap();
    let server = repo().join("tests/fixtures/stateless_server.py");
    let script = format!("sleep 11; exec python3 {:?}", server.to_string_lossy());
    let toml = format!("[servers.s]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\n\n{PROBE}");
    let (report, _) = audit_probe(home.path(), &toml, &[], &[], 0);
    let s = &report["servers"][0];
    assert_eq!(s["status"], "ok", "{s}");
    assert_eq!(s["protocol_version"], "2026-07-28");
    assert_eq!(s["server_info"]["name"], "stateless-fixture");
    assert_eq!(s["tools_list"]["tool_count"], 1);
    assert_eq!(s["probes"][0]["status"], "ok", "{s}");
}

/// A server that never answers a method it does not know (no error, nothing): `initialize`
/// follows the unanswered discover after 10 s, as the SDK clients fall back after their wait.
#[test]
fn a_server_that_ignores_discover_is_audited_in_the_handshake_era() {
    let home = tempfile::tempdir().unwrap();
    let toml = format!("{}\n{PROBE}", stdio_server("mute"));
    let (report, _) = audit_probe(home.path(), &toml, &[], &[], 0);
    audited_in_the_handshake_era(&report["servers"][0], "mute");
}

/// Issue 37, 1.3: a stdio server that exits on `server/discover` (mcp-server-duckdb 1.1.0) is
/// started again and audited in the handshake era; the report says so, and why.
#[test]
fn a_server_that_exits_on_discover_is_restarted_in_the_handshake_era() {
    let home = tempfile::tempdir().unwrap();
    let toml = format!("{}\n{PROBE}", stdio_server("exit"));
    let (report, _) = audit_probe(home.path(), &toml, &[], &[], 0);
    let s = &report["servers"][0];
    audited_in_the_handshake_era(s, "exit");
    let ended = s["discover_ended"].as_str().unwrap();
    assert!(ended.contains("server/discover"), "{ended}");
    assert!(ended.contains("exited with exit status: 1"), "{ended}");
    assert!(ended.contains("ValidationError"), "{ended}");
    let finding = s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "ends-on-discover")
        .unwrap_or_else(|| panic!("the finding: {s}"));
    assert_eq!(finding["severity"], "error");
    // what the finding says of a client that discovers first, measured: the official Python
    // SDK 2.3 client in its default mode cannot connect to this server at all
    let Some(python) = crate::support::venv_python("mcp", "the Python mcp SDK") else {
        return;
    };
    let sdk = crate::support::run_json(
        std::process::Command::new(python)
            .arg(repo().join("tests/fixtures/sdk_auto_connect.py"))
            .args(["python3", &fixture(), "exit"]),
    );
    assert_eq!(sdk["connected"], false, "{sdk}");
}

/// Issue 37, 1.2: over streamable HTTP, a discover answered with a DiscoverResult that lists
/// only the handshake era's versions (kubernetes-mcp-server 0.0.67) goes on with `initialize`
/// at the newest version both speak, over stdio too.
#[test]
fn a_discover_result_without_2026_is_the_handshake_era_over_http_and_stdio() {
    let home = tempfile::tempdir().unwrap();
    let (_served, url) = http_server("old");
    let http = format!("[servers.s]\nurl = {url:?}\n\n{PROBE}");
    let stdio = format!("{}\n{PROBE}", stdio_server("old"));
    for toml in [http, stdio] {
        let (report, _) = audit_probe(home.path(), &toml, &[], &[], 0);
        let s = &report["servers"][0];
        assert_eq!(s["status"], "ok", "{s}");
        assert_eq!(s["protocol_version"], "2025-11-25", "{s}");
        assert_eq!(s["tools_list"]["tool_count"], 1);
        assert_eq!(s["probes"][0]["status"], "ok", "{s}");
    }
}

/// Issue 37, 1.4: a negotiation that fails names the era tried last and the flag that forces
/// the other, and `--record` keeps what was tried.
#[test]
fn a_failed_negotiation_says_what_it_tried_and_is_recorded() {
    let home = tempfile::tempdir().unwrap();
    let record = home.path().join("rec");
    let toml = stdio_server("refuse");
    let args = ["--record", record.to_str().unwrap()];
    let (report, _) = audit_probe(home.path(), &toml, &args, &[], 2);
    let error = report["servers"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("`--protocol 2026-07-28` forces the other era"),
        "{error}"
    );
    let mut text = String::new();
    for entry in walk(&record) {
        text.push_str(&std::fs::read_to_string(entry).unwrap_or_default());
    }
    assert!(text.contains("server/discover"), "{text}");
    assert!(text.contains(r#"\"method\":\"initialize\""#), "{text}");
    assert!(text.contains("nothing here"), "{text}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
