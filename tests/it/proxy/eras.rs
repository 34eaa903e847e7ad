//! The proxy serves clients of both protocol eras at once, in front of an upstream of either:
//! the official Python SDK's `mcp.Client` in `legacy`, `auto` and `2026-07-28` mode
//! (tests/fixtures/era_client.py), over stdio and streamable HTTP, in front of a Python SDK 2.3
//! server (both eras) and a server of the 2026-07-28 era only; spills are read back whole.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{bin_path, free_port, repo, run_json, serve_on, venv_python};

const MODES: [(&str, &str); 3] = [
    ("legacy", "2025-11-25"),
    ("auto", "2026-07-28"),
    ("2026-07-28", "2026-07-28"),
];

/// era_client.py in `mode`, calling `tool` with `args`, through `target` (a URL, or the proxy
/// command to start on stdio).
fn client(python: &Path, mode: &str, tool: &str, args: &str, target: &[String]) -> Value {
    let mut cmd = Command::new(python);
    cmd.arg(repo().join("tests/fixtures/era_client.py"))
        .args(["--mode", mode, "--args", args]);
    match target {
        [url] if url.starts_with("http") => cmd.args(["--url", url, tool]),
        command => cmd.arg(tool).args(command),
    };
    run_json(&mut cmd)
}

/// `mcp-budget proxy` with a spill folder and a call log in `home`, its options before `--`.
fn proxy_options(home: &Path) -> Vec<String> {
    let path = |p: &str| home.join(p).to_string_lossy().to_string();
    vec![
        "proxy".into(),
        "--spill-dir".into(),
        path("spill"),
        "--log".into(),
        path("calls.jsonl"),
        "--budget".into(),
        "1000".into(),
    ]
}

/// The proxy over stdio (started by the client) and over HTTP (started here), each client mode
/// through each: `check(result)`. Every call is in the log under the client's own name, told
/// by its handshake or, in the 2026-07-28 era, by the request's `_meta`.
fn each_way(python: &Path, upstream: &[String], tool: &str, args: &str, check: impl Fn(&Value)) {
    let home = tempfile::tempdir().unwrap();
    let bin = bin_path().to_string_lossy().to_string();
    let mut stdio = vec![bin.clone()];
    stdio.extend(proxy_options(home.path()));
    stdio.push("--".into());
    stdio.extend(upstream.iter().cloned());
    let port = free_port();
    let mut http = Command::new(&bin);
    http.args(proxy_options(home.path()))
        .args(["--listen", &format!("127.0.0.1:{port}"), "--"])
        .args(upstream);
    let _served = serve_on(http, port);
    let url = vec![format!("http://127.0.0.1:{port}/mcp")];
    let mut calls = 0;
    for target in [&stdio, &url] {
        for (mode, era) in MODES {
            let got = client(python, mode, tool, args, target);
            assert_eq!(got["protocol_version"], era, "{mode} via {target:?}: {got}");
            let tools = got["tools"].as_array().unwrap();
            assert!(
                tools.iter().any(|t| t == tool) && tools.iter().any(|t| t == "mcp_budget_read")
            );
            assert_eq!(got["is_error"], false, "{got}");
            check(&got);
            calls += 1;
        }
    }
    let log = std::fs::read_to_string(home.path().join("calls.jsonl")).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l["tool"] == tool)
        .collect();
    assert_eq!(lines.len(), calls);
    for line in &lines {
        assert_eq!(line["client_name"], "mcp", "{line}");
    }
}

#[test]
fn clients_of_both_eras_list_call_and_read_spills_through_the_proxy() {
    let Some(python) = venv_python("mcp", "the Python mcp SDK") else {
        return;
    };
    let sdk = vec![
        python.to_string_lossy().to_string(),
        repo()
            .join("tests/fixtures/sdk_server.py")
            .to_string_lossy()
            .to_string(),
    ];
    // 2,000 records (the SDK sends one text block per record, and structuredContent): cut to
    // the budget, the client's output-schema check still passes, and the spill reads back whole
    each_way(&python, &sdk, "rows", r#"{"count": 2000}"#, |got| {
        let shown = got["shown"].as_str().unwrap();
        // as many whole records as fill the budget, not a fixed 20 (issue 38)
        let kept: usize = shown
            .split("content: the first ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.replace(',', "").parse().ok())
            .unwrap_or_else(|| panic!("{shown}"));
        assert!(shown.contains(" of 2,000 JSON blocks kept"), "{shown}");
        assert!(kept > 20 && kept < 2000, "{kept}: {shown}");
        let handle = got["handle"].as_str().expect("a spill handle");
        let resource = got["resource"].as_str().unwrap();
        let original: Value = serde_json::from_str(resource).unwrap();
        assert_eq!(
            original["structuredContent"]["result"]
                .as_array()
                .unwrap()
                .len(),
            2000
        );
        assert_eq!(original["content"].as_array().unwrap().len(), 2000);
        assert!(got["paged"].as_str().unwrap().lines().eq(resource.lines()));
        assert!(got["pages"].as_u64().unwrap() > 1);
        let uri = format!("mcp-budget://spill/{handle}");
        assert!(got["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r == &uri));
    });

    // a server of the 2026-07-28 era only: the proxy reaches it without a handshake, and a
    // client of the handshake era is served all the same
    let stateless = vec![
        "python3".to_string(),
        repo()
            .join("tests/fixtures/stateless_server.py")
            .to_string_lossy()
            .to_string(),
    ];
    each_way(
        &python,
        &stateless,
        "echo",
        r#"{"text": "both eras"}"#,
        |got| {
            assert_eq!(got["shown"], "both eras");
        },
    );
}

#[test]
fn requests_of_the_2026_era_over_http_are_served_side_by_side() {
    let Some(python) = venv_python("mcp", "the Python mcp SDK") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut cmd = Command::new(bin_path());
    cmd.args(["proxy", "--spill-dir"])
        .arg(home.path().join("spill"))
        .args(["--listen", &format!("127.0.0.1:{port}"), "--"])
        .arg(&python)
        .arg(repo().join("tests/fixtures/sdk_server.py"));
    let _served = serve_on(cmd, port);
    let url = vec![format!("http://127.0.0.1:{port}/mcp")];
    // two clients without sessions, each calling a tool that sleeps 2 s: the two sleeps overlap
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let (python, url) = (python.clone(), url.clone());
            std::thread::spawn(move || {
                client(&python, "2026-07-28", "wait", r#"{"seconds": 2}"#, &url)
            })
        })
        .collect();
    let spans: Vec<(f64, f64)> = calls
        .into_iter()
        .map(|c| {
            let got = c.join().unwrap();
            let span: Value = serde_json::from_str(got["shown"].as_str().unwrap()).unwrap();
            (
                span["started"].as_f64().unwrap(),
                span["ended"].as_f64().unwrap(),
            )
        })
        .collect();
    let (a, b) = (spans[0], spans[1]);
    assert!(
        a.0 < b.1 && b.0 < a.1,
        "the calls ran one after the other: {spans:?}"
    );
}
