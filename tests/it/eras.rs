//! The two protocol eras (`audit --protocol legacy|2026-07-28|auto`), with real parts: a server
//! made with the official Python SDK 2.3, which speaks both (stdio and streamable HTTP); a
//! stdio server of the 2026-07-28 era only (tests/fixtures/stateless_server.py); and a server
//! of the handshake era only (tests/fixtures/toolslist_server.py, the corpus's git tools).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{bin_path, corpus, free_port, repo, serve_on, venv_python};

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
