//! `mcp-budget lab` through a hand-written client (tests/fixtures/lab/client.py: Chat
//! Completions, one stdio server) and, in `real_clients`, through the real coding clients.

mod derive_real;
mod eras;
pub(crate) mod real_clients;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{mcp_budget, repo};

/// A probe file mounting the demo server with these probes.
pub(crate) fn demo_probes(dir: &Path, probes: &[(&str, &str)]) -> PathBuf {
    let mut text = String::from("[servers.demo]\nbuiltin = \"demo\"\n");
    for (tool, args) in probes {
        text += &format!("\n[[servers.demo.probes]]\ntool = \"{tool}\"\narguments = {args}\n");
    }
    let path = dir.join("probes.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The test client's adapter with extra variables for it (LAB_CUT, LAB_TRY).
pub(crate) fn test_adapter(dir: &Path, env: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(repo().join("tests/fixtures/lab/client.toml")).unwrap();
    for (k, v) in env {
        text = text.replace("[env]\n", &format!("[env]\n{k} = \"{v}\"\n"));
    }
    let path = dir.join("client.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `mcp-budget lab` on the test client under the id `id` (its adapter file `adapter`), with
/// the runs' folders in `dir`; the caller adds the rest.
pub(crate) fn lab_command(dir: &Path, adapter: &Path, id: &str) -> assert_cmd::Command {
    let client = repo().join("tests/fixtures/lab/client.py");
    let mut cmd = mcp_budget(dir, dir);
    // the runs' folders go in the test's own folder
    cmd.env("TMPDIR", dir)
        .arg("lab")
        .args(["--client", id, "--adapter"])
        .arg(adapter)
        .arg("--client-bin")
        .arg(format!("{id}={}", client.display()));
    cmd
}

/// The client version `id`'s profile in clients.toml was measured with.
fn measured_version(id: &str) -> String {
    let text = std::fs::read_to_string(repo().join("src/config/profiles/clients.toml")).unwrap();
    let profiles: toml::Value = toml::from_str(&text).unwrap();
    profiles["client"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"].as_str() == Some(id))
        .unwrap()["measured"]["version"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Run the lab on the test client; the JSON report and the exit code.
pub(crate) fn lab(
    dir: &Path,
    probes: &Path,
    adapter: &Path,
    extra: &[&str],
) -> (Value, i32, String) {
    let out = lab_command(dir, adapter, "lab-test")
        // a variable of the user's: it must not reach the client
        .env("LAB_SECRET_OF_THE_USER", "s3cr3t-value")
        .arg(probes)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (
        report,
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_hand_written_client_is_measured_whole_and_cut_from_its_own_requests() {
    let dir = tempfile::tempdir().unwrap();
    let probes = demo_probes(
        dir.path(),
        &[
            ("get_forecast", "{ city = \"Lisbon\" }"),
            (
                "scrape_as_markdown",
                "{ url = \"demo://shop/search?q=wireless+earbuds\" }",
            ),
        ],
    );
    let adapter = test_adapter(dir.path(), &[("LAB_CUT", "20000")]);
    let (report, code, stderr) = lab(dir.path(), &probes, &adapter, &[]);
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    assert_eq!(report["isolation"], "namespace");
    let client = &report["clients"][0];
    assert_eq!(
        (client["id"].as_str(), client["version"].as_str()),
        (Some("lab-test"), Some("0.1.0"))
    );
    assert_eq!(client["status"], "measured");
    let server = &client["servers"][0];
    // the client sends every definition, each as a Chat Completions function named demo_TOOL
    let defs = &server["definitions"];
    assert_eq!(defs["form"], "whole");
    assert_eq!(defs["defined"], defs["server_tools"]);
    assert_eq!(defs["name_pattern"], "demo_{tool}");
    assert!(
        defs["dropped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k == "annotations"),
        "{defs}"
    );
    let probes = server["probes"].as_array().unwrap();
    let forecast = &probes[0];
    assert_eq!(
        (forecast["delivery"].as_str(), forecast["sent"].as_str()),
        (Some("whole"), Some("content"))
    );
    assert_eq!(forecast["delivered"]["chars"], forecast["raw"]["chars"]);
    let scrape = &probes[1];
    assert_eq!(scrape["delivery"], "cut");
    assert_eq!(scrape["head_chars"], 20000);
    assert_eq!(scrape["tail_chars"], 0);
    let raw = scrape["raw"]["chars"].as_u64().unwrap();
    assert_eq!(
        scrape["added"],
        format!("[kept]\n[{} characters cut]", raw - 20000)
    );
    assert!(
        scrape["raw"]["tokens"].as_u64().unwrap() > 200_000,
        "{scrape}"
    );
}

#[test]
fn a_run_where_the_client_let_the_tool_call_go_is_made_once_more_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let probes = demo_probes(dir.path(), &[("get_forecast", "{ city = \"Lisbon\" }")]);
    let marker = dir.path().join("skipped-once");
    let adapter = test_adapter(dir.path(), &[("LAB_SKIP_ONCE", marker.to_str().unwrap())]);
    let (report, code, stderr) = lab(dir.path(), &probes, &adapter, &[]);
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    assert!(marker.exists(), "the first run did not skip");
    let server = &report["clients"][0]["servers"][0];
    assert_eq!(server["probe_errors"], serde_json::json!([]), "{server:#}");
    assert_eq!(server["probes"][0]["delivery"], "whole", "{server:#}");
    let retried = server["retried"].as_array().unwrap();
    assert_eq!(retried.len(), 1, "{server:#}");
    assert!(
        retried[0]
            .as_str()
            .unwrap()
            .starts_with("lab-test: the client never called `get_forecast`; run once more"),
        "{server:#}"
    );
    assert_eq!(server["run_ms"].as_array().unwrap().len(), 2);
}

#[test]
fn a_client_that_tries_the_network_reaches_nothing_off_loopback() {
    // a listener on this machine's own non-loopback address: outside the lab it is reachable
    let Some(ip) = non_loopback_ip() else {
        eprintln!("skipped: this machine has no non-loopback IPv4 address");
        return;
    };
    let listener = std::net::TcpListener::bind((ip, 0)).unwrap();
    let target = listener.local_addr().unwrap();
    std::net::TcpStream::connect(target).expect("reachable from outside the lab");
    let _ = listener.accept().unwrap();
    listener.set_nonblocking(true).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let probes = demo_probes(dir.path(), &[("get_forecast", "{ city = \"Lisbon\" }")]);
    let adapter = test_adapter(dir.path(), &[("LAB_TRY", &target.to_string())]);
    let (report, code, stderr) = lab(dir.path(), &probes, &adapter, &["--keep"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        listener.accept().is_err(),
        "a client in the lab reached {target}"
    );
    let kept = report["clients"][0]["servers"][0]["kept"][0]
        .as_str()
        .unwrap()
        .to_string();
    assert!(Path::new(&kept).join("home/lab.json").exists());
    std::fs::remove_dir_all(&kept).unwrap();
}

/// The first IPv4 address of this machine that is not loopback.
fn non_loopback_ip() -> Option<std::net::IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// The run folders the lab left in `dir` (its TMPDIR).
fn run_folders(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("mcp-budget-lab-")
        })
        .map(|e| e.path())
        .collect()
}

#[test]
fn the_client_gets_a_cleared_environment_and_its_home_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let probes = demo_probes(dir.path(), &[("get_forecast", "{ city = \"Lisbon\" }")]);
    let adapter = test_adapter(dir.path(), &[]);
    let (report, code, stderr) = lab(dir.path(), &probes, &adapter, &["--keep"]);
    assert_eq!(code, 0, "{stderr}");
    let kept = PathBuf::from(
        report["clients"][0]["servers"][0]["kept"][0]
            .as_str()
            .unwrap(),
    );
    let env: Value =
        serde_json::from_str(&std::fs::read_to_string(kept.join("home/env.json")).unwrap())
            .unwrap();
    let mut names: Vec<&str> = env
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    names.sort();
    assert_eq!(names, ["HOME", "LAB_BASE_URL", "LANG", "PATH", "TMPDIR"]);
    assert_eq!(env["HOME"], kept.join("home").display().to_string());
    // the model's requests are kept too, one JSON line each, as the client sent them
    let requests: Vec<Value> = std::fs::read_to_string(kept.join("model.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(requests[0]["seq"], 1);
    assert_eq!(requests[0]["path"], "/v1/chat/completions");
    assert_eq!(requests[0]["reply"]["kind"], "call_tool");
    assert_eq!(requests[0]["body"]["model"], "lab-test");
    let last = requests.last().unwrap();
    assert_eq!(last["reply"]["kind"], "text");
    assert!(
        last["body"].to_string().contains("call_probe_target"),
        "{last}"
    );
    std::fs::remove_dir_all(&kept).unwrap();

    assert!(run_folders(dir.path()).is_empty());
    let (_, code, stderr) = lab(dir.path(), &probes, &adapter, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(run_folders(dir.path()).is_empty(), "left behind");
}

#[test]
fn a_client_that_hangs_is_ended_with_its_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let probes = demo_probes(dir.path(), &[("get_forecast", "{ city = \"Lisbon\" }")]);
    let adapter = test_adapter(
        dir.path(),
        &[
            ("LAB_HANG", "1"),
            ("LAB_PID_FILE", pid_file.to_str().unwrap()),
        ],
    );
    let (report, code, stderr) = lab(dir.path(), &probes, &adapter, &["--timeout", "3"]);
    assert_eq!(code, 2, "{stderr}");
    let error = report["clients"][0]["servers"][0]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("timed out"), "{error}");
    assert_eq!(report["clients"][0]["status"], "failed");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!running(pid), "the client's child {pid} outlived the lab");
}

/// A client that starts a daemon in a session of its own (out of its process group's reach,
/// as Cline's hub daemon is) and ends normally: the daemon is ended with the run, not left
/// running after the lab.
#[test]
fn a_daemon_a_client_starts_in_its_own_session_is_ended_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("daemon.pid");
    let probes = demo_probes(dir.path(), &[("get_forecast", "{ city = \"Lisbon\" }")]);
    let adapter = test_adapter(dir.path(), &[("LAB_DAEMON", pid_file.to_str().unwrap())]);
    let (report, code, stderr) = lab(dir.path(), &probes, &adapter, &[]);
    assert_eq!(code, 0, "{stderr}\n{report:#}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let session = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok();
    assert!(
        !running(pid),
        "the client's daemon {pid} outlived the lab: {session:?}"
    );
}

/// Whether process `pid` runs (a zombie waiting to be reaped does not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

/// `audit --client measured` with no client the lab can run: one line naming the flag, exit
/// 2, and the report folder as it was (the modelled report is not passed off as measured).
#[test]
fn audit_client_measured_without_a_lab_client_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let probes = demo_probes(dir.path(), &[("get_forecast", "{ city = \"Lisbon\" }")]);
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::write(out_dir.join("audit.json"), "earlier").unwrap();
    let out = mcp_budget(dir.path(), dir.path())
        .arg("audit")
        .arg(&probes)
        .args(["--client", "measured,naive,cursor", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: --client measured: none of the clients chosen has a lab adapter"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(out_dir.join("audit.json")).unwrap(),
        "earlier"
    );
}

/// Issue 37, item 6: a lab run that measured nothing it was asked for must not pass a CI step.
/// An unknown id (in --client or --client-bin) is a one-line error listing the known ones, and
/// a client asked for whose executable is not there fails the run (exit 2), the report still
/// printed.
#[test]
fn issue_37_lab_exits_2_for_an_unknown_client_or_one_asked_for_and_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let probes = demo_probes(dir.path(), &[("get_forecast", "{ city = \"Lisbon\" }")]);
    let adapter = test_adapter(dir.path(), &[]);
    let run = |args: &[&str]| {
        let out = mcp_budget(dir.path(), dir.path())
            .env("TMPDIR", dir.path())
            .arg("lab")
            .arg(&probes)
            .args(["--format", "json", "--adapter"])
            .arg(&adapter)
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        (out.status.code(), stdout, stderr)
    };
    let known = "(known: claude-code, codex, gemini-cli, opencode, copilot-cli, qwen-code, cline, kilo, continue-cli, lab-test)";
    for args in [
        &["--client", "lab-test,nope"][..],
        &["--client", "lab-test", "--client-bin", "nope=/bin/true"],
    ] {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("unknown client `nope`"), "{stderr}");
        assert!(stderr.contains(known), "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
    }
    // an executable given for a client this run does not run would be ignored
    let (code, _, stderr) = run(&["--client", "lab-test", "--client-bin", "codex=/bin/true"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--client-bin `codex`: not a client this run runs (--client lab-test)"),
        "{stderr}"
    );
    // a client asked for whose executable is missing: measured nothing, exit 2, said
    let missing = dir.path().join("no-such-client");
    let bin = format!("lab-test={}", missing.display());
    // with --client, and without it (every adapter runs; lab-test is the one asked for)
    for args in [
        &["--client", "lab-test", "--client-bin", &bin][..],
        &["--client-bin", &bin],
    ] {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "error: lab: lab test client (`lab-test`) was not measured: not found in {}",
                missing.display()
            )),
            "{stderr}"
        );
        let report: Value = serde_json::from_str(&stdout).unwrap();
        let client = report["clients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "lab-test")
            .unwrap();
        assert_eq!(client["status"], "not_installed", "{client:#}");
    }
}

/// The tap writes a line down before the client has it: a client that ends (and so ends the
/// tap) the moment it has read a large result leaves a transcript that holds it. (The tap once
/// passed the line on first; under CI's load Gemini CLI read two large results, answered and
/// ended before the tap had written them, and the lab said the tool was never called.)
#[test]
fn the_tap_records_a_result_before_the_client_reads_it() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tap.jsonl");
    // a server that answers its one request with a 16 MB line
    let server = "import sys\nsys.stdin.readline()\nsys.stdout.write('{\"id\":1,\"result\":\"' + 'x' * (16 << 20) + '\"}\\n')\nsys.stdout.flush()\n";
    let mut tap = std::process::Command::new(crate::support::bin_path())
        .arg("lab-tap")
        .arg("--out")
        .arg(&out)
        .args(["--", "python3", "-c", server])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = tap.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    let mut line = String::new();
    BufReader::new(tap.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // read at once, as the client would have it, before the tap is asked to end
    let text = std::fs::read_to_string(&out).unwrap();
    let _ = tap.kill();
    let _ = tap.wait();
    assert_eq!(line.len(), (16 << 20) + 21, "the client got the whole line");
    let received: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["dir"] == "received")
        .collect();
    assert_eq!(
        received.len(),
        1,
        "the transcript lacks the result it passed on"
    );
    assert_eq!(received[0]["line"].as_str(), Some(line.trim_end()));
}

/// `lab --check`, the gate a team runs when it upgrades its clients: a client whose installed
/// version is not its profile's, and a result its profile does not predict, are a line each
/// and exit 1; without `--check` the same lines are warnings and the run passes.
#[test]
fn lab_check_fails_on_a_client_that_moved_from_its_profile() {
    let dir = tempfile::tempdir().unwrap();
    let probes = demo_probes(
        dir.path(),
        &[
            (
                "list_pull_requests",
                "{ owner = \"acme\", repo = \"widgets\", per_page = 2 }",
            ),
            (
                "scrape_as_markdown",
                "{ url = \"demo://shop/search?q=wireless+earbuds\" }",
            ),
        ],
    );
    // the test client under Claude Code's id: neither its version nor its cut is Claude Code's
    let adapter = test_adapter(dir.path(), &[("LAB_CUT", "10000")]);
    let text = std::fs::read_to_string(&adapter)
        .unwrap()
        .replace("id = \"lab-test\"", "id = \"claude-code\"");
    std::fs::write(&adapter, text).unwrap();
    let measured_on = measured_version("claude-code");
    let run = |extra: &[&str]| {
        let out = lab_command(dir.path(), &adapter, "claude-code")
            .arg(&probes)
            .args(["--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
            serde_json::from_slice::<Value>(&out.stdout).unwrap_or(Value::Null),
        )
    };
    let (code, stderr, report) = run(&["--check"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: lab: claude-code: profile measured on {measured_on}, installed 0.1.0: run `mcp-budget lab --derive --client claude-code`"
        )),
        "{stderr}"
    );
    // a line for each result the report says DIFFERS, and only for those
    let probes = report["clients"][0]["servers"][0]["probes"]
        .as_array()
        .unwrap();
    assert_eq!(probes.len(), 2, "{report:#}");
    for p in probes {
        let line = format!(
            "error: lab: claude-code: {}: the profile predicts {} tokens",
            p["tool"].as_str().unwrap(),
            mcp_budget::ground::units::thousands(p["modelled"]["tokens"].as_u64().unwrap() as usize)
        );
        assert_eq!(
            stderr.contains(&line),
            p["modelled"]["agrees"] == false,
            "{line}\n{stderr}"
        );
    }
    // the test client cuts a large page at 10,000 characters, which Claude Code does not
    assert!(
        stderr.lines().any(|l| l
            .starts_with("error: lab: claude-code: scrape_as_markdown: the profile predicts ")
            && l.ends_with("(truncated)")),
        "{stderr}"
    );
    let (code, stderr, _) = run(&[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("warning: lab: claude-code: profile measured on"),
        "{stderr}"
    );
}

/// `audit --client X` says when X is installed in another version than its profile's, and what
/// to run; the profile's own version is not said.
#[test]
fn audit_client_says_an_installed_version_that_is_not_the_profiles() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let probes = demo_probes(dir.path(), &[("get_forecast", "{ city = \"Lisbon\" }")]);
    let measured_on = measured_version("codex");
    let npm = dir.path().join("npm");
    std::fs::create_dir_all(npm.join(".bin")).unwrap();
    let run = |installed: &str| {
        let bin = npm.join(".bin/codex");
        std::fs::write(&bin, format!("#!/bin/sh\necho 'codex-cli {installed}'\n")).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let out = mcp_budget(dir.path(), dir.path())
            .env("MCP_BUDGET_LAB_NPM", &npm)
            .arg("audit")
            .arg(&probes)
            .args(["--client", "codex", "--out"])
            .arg(dir.path().join("out"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let stderr = run("0.1.2");
    assert!(
        stderr.contains(&format!(
            "warning: codex: profile measured on {measured_on}, installed 0.1.2: run `mcp-budget lab --derive --client codex`"
        )),
        "{stderr}"
    );
    let stderr = run(&measured_on);
    assert!(!stderr.contains("profile measured on"), "{stderr}");
}

/// A server that fails to start is reported with what it said: its exit and the end of its
/// stderr (its own variables redacted), not only "the client never listed the server's tools".
#[test]
fn a_server_that_fails_to_start_is_reported_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let probes = dir.path().join("probes.toml");
    std::fs::write(
        &probes,
        "[servers.broken]\ncommand = \"sh\"\nargs = [\"-c\", \"echo starting >&2; echo \\\"bad token $BROKEN_TOKEN: config missing\\\" >&2; exit 3\"]\nenv = { BROKEN_TOKEN = \"tok-9f8e7d6c5b4a3928\" }\n\n[[servers.broken.probes]]\ntool = \"anything\"\n",
    )
    .unwrap();
    let adapter = test_adapter(dir.path(), &[]);
    let (report, code, stderr) = lab(dir.path(), &probes, &adapter, &[]);
    assert_eq!(code, 2, "{stderr}\n{report:#}");
    let error = report["clients"][0]["servers"][0]["error"]
        .as_str()
        .unwrap_or_default();
    assert!(
        error.contains("the client never listed the server's tools: the server ended (exit 3), its stderr ending: starting | bad token <redacted>: config missing"),
        "{error}"
    );
    assert!(
        !report.to_string().contains("tok-9f8e7d6c5b4a3928"),
        "{report:#}"
    );
}

/// `--derive --keep` says where the bisection's runs are (it kept them and said nothing), and
/// the folders are there.
#[test]
fn derive_with_keep_says_where_the_runs_are() {
    let dir = tempfile::tempdir().unwrap();
    let adapter = test_adapter(dir.path(), &[("LAB_CUT", "3000")]);
    let run = |format: &str| {
        lab_command(dir.path(), &adapter, "lab-test")
            .args(["--derive", "--shape", "lines", "--keep", "--format", format])
            .output()
            .unwrap()
    };
    let out = run("json");
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &report["clients"][0];
    assert_eq!(c["rules"][0]["threshold"], 3000, "{c:#}");
    let kept: Vec<&str> = c["derive_kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(
        kept.len() as u64,
        c["rules"][0]["runs"].as_u64().unwrap(),
        "{c:#}"
    );
    for k in &kept {
        assert!(Path::new(k).join("tap.jsonl").is_file(), "{k}");
    }
    let table = run("table");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("  kept: "), "{text}");
}

/// An adapter with `derive_calls = 3`: each derive run makes three calls of the tool, one after
/// another, and the derive finds the same rule as one call a run, in fewer runs; each run's
/// folder is kept once.
#[test]
fn derive_with_several_calls_a_run_finds_the_same_rule_in_fewer_runs() {
    let dir = tempfile::tempdir().unwrap();
    let one = test_adapter(dir.path(), &[("LAB_CUT", "3000")]);
    let text = std::fs::read_to_string(&one).unwrap();
    let three = dir.path().join("three.toml");
    std::fs::write(
        &three,
        text.replace("command = ", "derive_calls = 3\ncommand = "),
    )
    .unwrap();
    let derive = |adapter: &Path| {
        let out = lab_command(dir.path(), adapter, "lab-test")
            .args(["--derive", "--shape", "lines", "--keep", "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["clients"][0].clone()
    };
    let (a, b) = (derive(&one), derive(&three));
    // the same rule; each interval (to 1%) holds the client's 3,000 characters
    let rule = |c: &Value| {
        let r = &c["rules"][0];
        let (lo, hi) = (
            r["whole_up_to"]["chars"].as_u64(),
            r["cut_from"]["chars"].as_u64(),
        );
        assert!(
            lo <= Some(3000) && hi > Some(3000) && hi.unwrap() - lo.unwrap() <= 100,
            "{r:#}"
        );
        (
            r["unit"].clone(),
            r["threshold"].clone(),
            r["marker"].clone(),
            r["delivery"].clone(),
        )
    };
    assert_eq!(rule(&a), rule(&b), "{a:#}\n{b:#}");
    assert_eq!(b["rules"][0]["threshold"], 3000);
    let runs = |c: &Value| c["rules"][0]["runs"].as_u64().unwrap();
    assert!(
        runs(&b) < runs(&a),
        "{} runs against {}",
        runs(&b),
        runs(&a)
    );
    let kept = b["derive_kept"].as_array().unwrap();
    assert_eq!(kept.len() as u64, runs(&b), "{b:#}");
    // a run of three calls: the model's requests hold three results, the tap three calls
    let calls = kept
        .iter()
        .map(|k| {
            let tap =
                std::fs::read_to_string(Path::new(k.as_str().unwrap()).join("tap.jsonl")).unwrap();
            tap.matches("tools/call").count()
        })
        .max()
        .unwrap();
    assert_eq!(calls, 3, "{kept:?}");
    // an adapter asking for more calls than a run may make is refused, naming the file
    let many = dir.path().join("many.toml");
    std::fs::write(
        &many,
        text.replace("command = ", "derive_calls = 9\ncommand = "),
    )
    .unwrap();
    let out = lab_command(dir.path(), &many, "lab-test")
        .args(["--derive", "--shape", "lines"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("many.toml") && stderr.contains("derive_calls is 9"),
        "{stderr}"
    );
}
