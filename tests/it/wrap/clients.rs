//! Clients started on wrapped configs get budgeted results: the official Python SDK client
//! started on each wrapped entry of a Claude Code config as a client starts it (its command,
//! args and env; one stdio server, one remote whose bearer token moved into `env`), and a real
//! coding client in the lab (Codex, on its wrapped `config.toml`).

use std::process::Command;

use serde_json::Value;

use super::{args_of, parsed, Home};
use crate::support::{bin_path, free_port, repo, run_json, serve_on, venv_python};

const SCRAPE: &str = r#"{"url": "demo://shop/search?q=wireless+earbuds"}"#;

/// The cl100k_base tokens of `text` by Python tiktoken (tests/fixtures/tiktoken_offline.py).
fn tiktoken(python: &std::path::Path, text: &str) -> usize {
    use std::io::Write;
    let mut child = Command::new(python)
        .args([
            "-c",
            "import sys, tiktoken_offline as t; print(len(t.ENC.encode(sys.stdin.read())))",
        ])
        .current_dir(repo().join("tests/fixtures"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "tiktoken failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn the_sdk_client_on_a_wrapped_config_gets_budgeted_results() {
    let Some(python) = venv_python("mcp", "the MCP Python SDK") else {
        return;
    };
    let port = free_port();
    let h = Home::new(port);
    // the remote server: the demo behind a proxy on 127.0.0.1 that wants the config's token
    let mut upstream = Command::new(bin_path());
    upstream
        .args(["proxy", "--budget", "1000000", "--spill-dir"])
        .arg(h.dir.path().join("upstream-spill"))
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--bearer-token-env", "UP_GATE", "--"])
        .arg(bin_path())
        .arg("demo-server")
        .env("UP_GATE", "tok-claude-SECRET-2222");
    let _upstream = serve_on(upstream, port);
    let log = h.dir.path().join("calls.jsonl");
    let (code, out, err) = h.run(&[
        "wrap",
        "--client",
        "claude-code",
        "--budget",
        "1500",
        "--log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let (path, _, _) = h.file("claude-code");
    let config = parsed(path, &std::fs::read_to_string(path).unwrap());
    for name in ["demo", "api"] {
        let entry = &config["mcpServers"][name];
        let mut cmd = Command::new(&python);
        cmd.arg(repo().join("tests/fixtures/sdk_client.py"))
            .args(["--args", SCRAPE, "--env"])
            .arg(entry["env"].to_string())
            .arg("scrape_as_markdown")
            .arg(entry["command"].as_str().unwrap())
            .args(args_of(entry))
            // the SDK passes HOME on: the proxy's spill folder goes under the test's
            .env("HOME", h.home());
        let got = run_json(&mut cmd);
        assert_eq!(got["is_error"], false, "{name}: {got:#}");
        let visible = got["visible"].as_str().unwrap();
        assert!(
            visible.contains("[mcp-budget]") && visible.contains("budget of 1,500 tokens"),
            "{name}: not budgeted by the wrapped proxy: {}",
            &visible[visible.len().saturating_sub(600)..]
        );
        assert!(
            got["handle"].is_string(),
            "{name}: no spill handle: {got:#}"
        );
        // counted apart from mcp-budget's tokenizer: Python tiktoken on what the client got
        let tokens = tiktoken(&python, visible);
        assert!(
            (1000..=1500).contains(&tokens),
            "{name}: {tokens} tokens reached the client"
        );
    }
    // the call log every wrapped proxy appends to: both calls, each within its budget
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let servers: Vec<&str> = lines
        .iter()
        .map(|l| l["server"].as_str().unwrap())
        .collect();
    assert_eq!(servers, ["demo", "api"], "{lines:#?}");
    for l in &lines {
        assert!(l["raw_tokens"].as_u64().unwrap() > 100_000, "{l}");
        assert!(l["returned_tokens"].as_u64().unwrap() <= 1500, "{l}");
    }
    assert!(!std::fs::read_to_string(&log)
        .unwrap()
        .contains("tok-claude-SECRET-2222"));
}

#[test]
fn codex_in_the_lab_on_a_wrapped_config_sends_its_model_the_budgeted_result() {
    let Some(npm) = crate::lab::real_clients::lab_clients() else {
        return;
    };
    let _one = crate::lab::real_clients::ONE_CLIENT
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let h = Home::new(free_port());
    let config = h.dir.path().join("codex-config.toml");
    std::fs::write(
        &config,
        format!(
            "# the demo, for Codex\n[mcp_servers.demo]\ncommand = \"{}\"\nargs = [\"demo-server\"]\n",
            bin_path().display()
        ),
    )
    .unwrap();
    let (code, out, err) = h.run(&[
        "wrap",
        "--config",
        config.to_str().unwrap(),
        "--budget",
        "2000",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("demo: wrapped (--client codex)"), "{out}");
    let probes = h.dir.path().join("probes.toml");
    std::fs::write(
        &probes,
        format!(
            "[servers.demo]\nfrom = \"{}:demo\"\n\n[[servers.demo.probes]]\ntool = \"scrape_as_markdown\"\narguments = {{ url = \"demo://shop/search?q=wireless+earbuds\" }}\n",
            config.display()
        ),
    )
    .unwrap();
    let out = crate::support::mcp_budget(&h.home(), h.dir.path())
        .env("TMPDIR", h.dir.path())
        .arg("lab")
        .arg(&probes)
        .args(["--client", "codex", "--format", "json", "--npm-dir"])
        .arg(&npm)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{report:#}");
    let client = &report["clients"][0];
    assert_eq!(client["status"], "measured", "{client:#}");
    let probe = &client["servers"][0]["probes"][0];
    // the proxy sent Codex at most its budget, and Codex sent it on to its model whole
    let sent = probe["raw"]["tokens"].as_u64().unwrap();
    let delivered = probe["delivered"]["tokens"].as_u64().unwrap();
    assert!(sent <= 2000 && sent > 1000, "{probe:#}");
    assert_eq!(probe["delivery"], "whole", "{probe:#}");
    assert!(delivered >= sent && delivered < sent + 200, "{probe:#}");
}
