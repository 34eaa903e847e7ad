//! The official Python SDK's client through the proxy, in front of a stdio server, a URL (with
//! or without SSE) or a named server.

use std::process::Command;

use mcp_budget::ground::tokens::Tokenizer;
use mcp_budget::wire::demo::DemoServer;
use serde_json::Value;

use crate::support::{bin_path, free_port, real_server, serve_on};

use super::*;

#[test]
fn the_python_sdk_client_works_through_the_proxy() {
    let Some(python) = python_sdk() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let bin = bin_path();
    let (spill_s, bin_s) = (spill.to_str().unwrap(), bin.to_str().unwrap());

    // the demo: a 237k-token scrape arrives within 4,000 tokens and pages back whole
    let got = sdk_run(
        &python,
        "scrape_as_markdown",
        &[
            "proxy",
            "--spill-dir",
            spill_s,
            "--budget",
            "4000",
            "--",
            bin_s,
            "demo-server",
        ],
    );
    assert_eq!(
        got["server_name"], "mcp-budget-demo",
        "the upstream's own name"
    );
    assert_eq!(got["tools"].as_array().unwrap().len(), 14);
    let shown = got["shown"].as_str().unwrap();
    assert!(Tokenizer::Cl100k.count(shown) <= 4000);
    let original = DemoServer::new("demo")
        .call("scrape_as_markdown", &serde_json::Map::new())
        .unwrap();
    let original = original["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        got["paged"].as_str().unwrap().lines().count(),
        original.lines().count()
    );
    assert!(got["paged"].as_str().unwrap().lines().eq(original.lines()));
    // read back as a resource, page by page (issue 26, case 9)
    assert!(got["resource"]
        .as_str()
        .unwrap()
        .lines()
        .eq(original.lines()));

    // the real server-everything: its tools pass through, a small result untouched
    if let Some(everything) = crate::support::real_server("mcp-server-everything") {
        let got = sdk_run(
            &python,
            "get-tiny-image",
            &[
                "proxy",
                "--spill-dir",
                spill_s,
                "--",
                everything.to_str().unwrap(),
                "stdio",
            ],
        );
        let tools: Vec<&str> = got["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(tools.contains(&"get-tiny-image") && tools.contains(&"mcp_budget_read"));
        // the proxy offers the server sampling, elicitation and roots (passing them on to its
        // client), so server-everything adds the four tools it keeps for such clients
        for t in EVERYTHING_CLIENT_TOOLS {
            assert!(tools.contains(&t), "{t} missing from {tools:?}");
        }
        assert_eq!(
            tools.len(),
            18,
            "server-everything's 13 tools, its 4 for capable clients, and mcp_budget_read"
        );
        assert_eq!(got["is_error"], false);
        assert_eq!(got["handle"], Value::Null, "a small result is not cut");
    }
}

#[test]
fn the_upstream_can_be_a_url_with_or_without_sse_or_a_named_server() {
    let (Some(python), Some(everything)) = (python_sdk(), real_server("mcp-server-everything"))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let spill = spill.to_str().unwrap();
    let bin = bin_path();
    let bin = bin.to_str().unwrap();
    let serve_everything = |mode: &str| {
        let port = free_port();
        let mut cmd = Command::new(&everything);
        cmd.arg(mode).env("PORT", port.to_string());
        (port, serve_on(cmd, port))
    };

    // streamable HTTP upstream: tools, a call, and progress across both hops
    let (port, _http) = serve_everything("streamableHttp");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let got = sdk(
        &python,
        &[
            "--args",
            LONG_RUN,
            "trigger-long-running-operation",
            bin,
            "proxy",
            "--spill-dir",
            spill,
            "--upstream-url",
            &url,
        ],
    );
    assert_eq!(
        got["tools"].as_array().unwrap().len(),
        18,
        "{}",
        got["tools"]
    );
    assert_eq!(progress(&got), four_steps());

    // legacy HTTP+SSE upstream
    let (port, _sse) = serve_everything("sse");
    let url = format!("http://127.0.0.1:{port}/sse");
    let got = sdk(
        &python,
        &[
            "--args",
            r#"{"a": 2, "b": 3}"#,
            "get-sum",
            bin,
            "proxy",
            "--spill-dir",
            spill,
            "--upstream-url",
            &url,
            "--sse",
        ],
    );
    assert_eq!(got["shown"], "The sum of 2 and 3 is 5.");

    // a server named in a probe file; its name is the one logged
    let probes = home.path().join("probes.toml");
    std::fs::write(
        &probes,
        format!("[servers.everything]\ncommand = {everything:?}\nargs = [\"stdio\"]\n"),
    )
    .unwrap();
    let log = home.path().join("calls.jsonl");
    let got = sdk(
        &python,
        &[
            "--args",
            r#"{"message": "through a named server"}"#,
            "echo",
            bin,
            "proxy",
            "--spill-dir",
            spill,
            "--log",
            log.to_str().unwrap(),
            "--server",
            "everything",
            "--config",
            probes.to_str().unwrap(),
        ],
    );
    assert_eq!(got["shown"], "Echo: through a named server");
    let records = mcp_budget::ground::calllog::read_log(&log).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(
        (records[0].server.as_str(), records[0].tool.as_str()),
        ("everything", "echo")
    );
    assert_eq!(records[0].client_name.as_deref(), Some("mcp"));

    // an unknown name is a one-line error naming it
    let out = Command::new(bin)
        .args(["proxy", "--server", "nope", "--config"])
        .arg(&probes)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nope") && err.lines().count() == 1, "{err}");
}
