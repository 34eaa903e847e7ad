//! The two protocol eras (`audit --protocol legacy|2026-07-28|auto`), with real parts: a server
//! made with the official Python SDK 2.3, which speaks both (stdio and streamable HTTP); a
//! stdio server of the 2026-07-28 era only (tests/fixtures/stateless_server.py); and a server
//! of the handshake era only (tests/fixtures/toolslist_server.py, the corpus's git tools).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{audit_probe, bin_path, corpus, free_port, repo, serve_on, venv_python};

/// Audit one server with `--protocol ERA`; the server's report.
fn audit(home: &Path, server: &str, era: &str) -> Value {
    let probes = home.join(format!("{era}.toml"));
    std::fs::write(&probes, server).unwrap();
    let out = home.join(format!("out-{era}"));
    let _ = Command::new(bin_path())
        .arg("audit")
        .arg(&probes)
        .args([
            "--no-charts",
            "--client",
            "naive",
            "--protocol",
            era,
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("audit.json")).unwrap()).unwrap();
    report["servers"][0].clone()
}

fn stdio(python: &Path, script: &str, args: &[&str], probe: &str) -> String {
    let mut all = vec![repo()
        .join("tests/fixtures")
        .join(script)
        .to_string_lossy()
        .to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    format!(
        "[servers.s]\ncommand = {:?}\nargs = {:?}\n\n{probe}",
        python.to_str().unwrap(),
        all
    )
}

fn eras(s: &Value) -> Vec<&str> {
    s["eras"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn the_python_sdk_server_is_measured_in_either_era_over_stdio_and_http() {
    let Some(python) = venv_python("mcp", "the Python mcp SDK") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probe = "[[servers.s.probes]]\ntool = \"rows\"\n";
    let check = |server: String, home: &Path| {
        let auto = audit(home, &server, "auto");
        assert_eq!(auto["status"], "ok", "{auto}");
        assert_eq!(auto["protocol_version"], "2026-07-28");
        assert_eq!(eras(&auto), ["2026-07-28", "2025-11-25"]);
        assert_eq!(auto["server_info"]["name"], "sdk-fixture");
        let legacy = audit(home, &server, "legacy");
        assert_eq!(legacy["protocol_version"], "2025-11-25");
        assert_eq!(eras(&legacy), ["2025-11-25"]);
        let modern = audit(home, &server, "2026-07-28");
        assert_eq!(modern["protocol_version"], "2026-07-28");
        // the same tools and results; the 2026 era's wire carries more (resultType, ttlMs,
        // cacheScope), and clients receive it
        assert_eq!(
            modern["tools_list"]["model_tokens"],
            legacy["tools_list"]["model_tokens"]
        );
        let wire = |s: &Value| s["tools_list"]["wire_tokens"].as_u64().unwrap();
        assert!(
            wire(&modern) > wire(&legacy),
            "{} vs {}",
            wire(&modern),
            wire(&legacy)
        );
        let raw = |s: &Value| s["probes"][0]["raw"]["model_tokens"].as_u64().unwrap();
        assert_eq!(raw(&modern), raw(&legacy));
        assert!(raw(&modern) > 1_000);
    };
    check(stdio(&python, "sdk_server.py", &[], probe), home.path());

    let port = free_port();
    let mut cmd = Command::new(&python);
    cmd.arg(repo().join("tests/fixtures/sdk_server.py"))
        .args(["http", &port.to_string()]);
    let _served = serve_on(cmd, port);
    let http = format!("[servers.s]\nurl = \"http://127.0.0.1:{port}/mcp\"\n\n{probe}");
    check(http, home.path());
}

#[test]
fn a_stateless_only_server_works_and_a_legacy_only_one_stays_legacy() {
    let Some(python) = venv_python("mcp", "the Python mcp SDK") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let stateless = stdio(
        &python,
        "stateless_server.py",
        &[],
        "[[servers.s.probes]]\ntool = \"echo\"\narguments = { text = \"hello\" }\n",
    );
    for era in ["auto", "2026-07-28"] {
        let s = audit(home.path(), &stateless, era);
        assert_eq!(s["status"], "ok", "{era}: {s}");
        assert_eq!(s["protocol_version"], "2026-07-28");
        assert_eq!(
            eras(&s),
            ["2026-07-28"],
            "no handshake era: initialize is refused"
        );
        assert_eq!(s["server_info"]["name"], "stateless-fixture");
        assert_eq!(s["probes"][0]["status"], "ok");
    }
    let s = audit(home.path(), &stateless, "legacy");
    assert_eq!(s["status"], "error");
    assert!(s["error"].as_str().unwrap().contains("-32022"), "{s}");

    let Some(corpus) = corpus() else { return };
    let list = corpus.join("toolslists/live/git.tools-list.jsonl");
    let legacy_only = stdio(
        &python,
        "toolslist_server.py",
        &[list.to_str().unwrap()],
        "",
    );
    let s = audit(home.path(), &legacy_only, "auto");
    assert_eq!(s["status"], "ok", "{s}");
    assert_eq!(s["protocol_version"], "2025-11-25");
    assert_eq!(eras(&s), ["2025-11-25"]);
    assert_eq!(s["tools_list"]["tool_count"], 12);
    let s = audit(home.path(), &legacy_only, "2026-07-28");
    assert_eq!(s["status"], "error");
    assert!(
        s["error"].as_str().unwrap().contains("server/discover"),
        "{s}"
    );
}

/// The findings of the 2026-07-28 era's rules.
fn rules(s: &Value) -> Vec<(&str, &str)> {
    s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["message"].as_str().unwrap()))
        .filter(|(rule, _)| ["list-cache-hints", "era-rules-broken"].contains(rule))
        .collect()
}

#[test]
fn the_2026_eras_rules_are_checked_and_each_break_is_a_finding() {
    let Some(python) = venv_python("mcp", "the Python mcp SDK") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probe = "[[servers.s.probes]]\ntool = \"echo\"\narguments = { text = \"hi\" }\n";
    // a server that keeps the rules (a minute's ttl, public, -32022 with its versions)
    let good = audit(
        home.path(),
        &stdio(&python, "stateless_server.py", &[], probe),
        "auto",
    );
    let c = &good["era_conformance"];
    assert_eq!(c["tools_list_ttl_ms"], serde_json::json!([60000]));
    assert_eq!(c["tools_list_cache_scope"], serde_json::json!(["public"]));
    assert_eq!(c["without_result_type"], serde_json::json!([]));
    assert_eq!(c["unknown_version"]["code"], -32022);
    assert_eq!(c["unknown_version"]["lists_supported"], true);
    assert!(rules(&good).is_empty(), "{:?}", rules(&good));

    // the same server ported in haste
    let sloppy = audit(
        home.path(),
        &stdio(&python, "stateless_server.py", &["--sloppy"], probe),
        "auto",
    );
    assert_eq!(sloppy["status"], "ok", "{sloppy}");
    assert_eq!(
        rules(&sloppy),
        [
            (
                "era-rules-broken",
                "no resultType on tools/list page 1, tools/call echo; `server/discover` asked in 2099-01-01 got error -32602, not -32022"
            ),
            ("list-cache-hints", "no ttlMs on the page; no cacheScope on the page"),
        ]
    );

    // a list that changes between two listings, on its second page
    let drift = audit(
        home.path(),
        &stdio(&python, "stateless_server.py", &["--drift"], probe),
        "auto",
    );
    assert_eq!(drift["tools_list"]["pages"], 2);
    assert_eq!(drift["tools_list"]["relist_differs_at_page"], 2);
    let unstable: Vec<&str> = drift["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "unstable-tools-list")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        unstable,
        ["a second tools/list returned the same tools with different bytes (from page 2 of 2)"]
    );

    // the Python SDK 2.3 keeps the rules, and says nothing reusable by default
    let sdk = audit(
        home.path(),
        &stdio(&python, "sdk_server.py", &[], ""),
        "auto",
    );
    assert_eq!(
        rules(&sdk),
        [("list-cache-hints", "ttlMs 0 or none on the page")]
    );
    // in the handshake era there is nothing of the kind to check
    let legacy = audit(
        home.path(),
        &stdio(&python, "sdk_server.py", &[], ""),
        "legacy",
    );
    assert!(legacy.get("era_conformance").is_none());
    assert!(rules(&legacy).is_empty(), "{:?}", rules(&legacy));
}

#[test]
fn a_recording_keeps_the_era_it_was_made_in() {
    let Some(python) = venv_python("mcp", "the Python mcp SDK") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let record = |name: &str, server: String, era: &str| -> std::path::PathBuf {
        let probes = home.path().join(format!("{name}.toml"));
        std::fs::write(&probes, server).unwrap();
        let dir = home.path().join(format!("rec-{name}"));
        let status = Command::new(bin_path())
            .arg("audit")
            .arg(&probes)
            .args(["--no-charts", "--client", "naive", "--out"])
            .arg(home.path().join(format!("out-rec-{name}")))
            .arg("--record")
            .arg(&dir)
            .args(["--protocol", era])
            .status()
            .unwrap();
        assert!(status.success());
        dir.join("probes.toml")
    };
    let replayed = |probes: &Path, era: &str| {
        let text = std::fs::read_to_string(probes).unwrap();
        let dir = format!("capture = {:?}", probes.parent().unwrap());
        audit(home.path(), &text.replace("capture = \".\"", &dir), era)
    };

    // made in the 2026-07-28 era: served in it, and `initialize` refused as its server does
    let modern = record(
        "modern",
        stdio(
            &python,
            "stateless_server.py",
            &[],
            "[[servers.s.probes]]\ntool = \"echo\"\narguments = { text = \"hi\" }\n",
        ),
        "auto",
    );
    let s = replayed(&modern, "auto");
    assert_eq!(s["status"], "ok", "{s}");
    assert_eq!(s["protocol_version"], "2026-07-28");
    assert_eq!(s["probes"][0]["status"], "ok");
    assert_eq!(s["era_conformance"]["unknown_version"]["code"], -32022);
    let s = replayed(&modern, "legacy");
    assert_eq!(s["status"], "error");
    let error = s["error"].as_str().unwrap();
    assert!(
        error.contains("-32022") && error.contains("2026-07-28 era"),
        "{error}"
    );

    // made in the handshake era: a client asking server/discover first falls back to it
    let legacy = record("legacy", stdio(&python, "sdk_server.py", &[], ""), "legacy");
    let s = replayed(&legacy, "auto");
    assert_eq!(s["status"], "ok", "{s}");
    assert_eq!(s["protocol_version"], "2025-11-25");
    assert!(s.get("era_conformance").is_none());
    let s = replayed(&legacy, "2026-07-28");
    assert_eq!(s["status"], "error");
    assert!(
        s["error"].as_str().unwrap().contains("server/discover"),
        "{s}"
    );
}

/// Issue 39, part 3: a server that lists its tools differently in the two eras
/// (stateless_server.py --both lists `echo_legacy` to an `initialize` session only): each
/// client's row counts the listing of the era its profile says it speaks: Codex
/// (`initialize`, 2025-06-18) both tools, Copilot CLI (`server/discover`, 2026-07-28) one.
#[test]
fn each_client_is_counted_on_the_listing_of_the_era_it_speaks() {
    let Some(python) = venv_python("mcp", "the Python mcp SDK") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let both = stdio(&python, "stateless_server.py", &["--both"], "");
    let (report, _) = audit_probe(
        home.path(),
        &both,
        &["--client", "codex,copilot-cli"],
        &[],
        0,
    );
    let s = &report["servers"][0];
    assert_eq!(eras(s), ["2026-07-28", "2025-06-18"], "{s:#}");
    let list = &s["tools_list"];
    assert_eq!(list["tool_count"], 1);
    let old = &list["handshake_era"];
    assert_eq!(old["protocol_version"], "2025-06-18", "{list:#}");
    assert_eq!(old["tools"], serde_json::json!(["echo", "echo_legacy"]));
    let (modern, handshake) = (
        list["model_tokens"].as_u64().unwrap(),
        old["model_tokens"].as_u64().unwrap(),
    );
    assert!(handshake > modern, "{list:#}");
    let row = |id: &str| {
        s["clients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["client"] == id)
            .unwrap()
            .clone()
    };
    let codex = row("codex");
    assert_eq!(codex["listing_era"], "2025-06-18");
    assert_eq!(codex["schema_tokens_per_turn"].as_u64(), Some(handshake));
    let copilot = row("copilot-cli");
    assert_eq!(copilot["listing_era"], "2026-07-28");
    assert_eq!(copilot["schema_tokens_per_turn"].as_u64(), Some(modern));
    // a server that lists the same in both eras gets no second listing and no era on a row
    let same = stdio(&python, "sdk_server.py", &[], "");
    let (report, _) = audit_probe(home.path(), &same, &["--client", "codex"], &[], 0);
    let s = &report["servers"][0];
    assert_eq!(eras(s).len(), 2, "{s:#}");
    assert!(s["tools_list"].get("handshake_era").is_none(), "{s:#}");
    assert!(s["clients"][0].get("listing_era").is_none(), "{s:#}");
}
