//! What each client's model is sent, on real servers: a large Playwright snapshot of a local page
//! (Chromium), server-filesystem reading a large file (structuredContent with an output schema)
//! and server-everything's structured content and resource links. The per-client table is
//! checked against an independent Python implementation of Codex's and Gemini CLI's rules
//! (tests/fixtures/client_rules.py, counted with Python tiktoken); after the engine with each
//! client's limits, no client cuts a result.

use std::process::Command;

use serde_json::Value;

use crate::support::{bin_path, free_port, real_server, repo, serve_on};

/// A long article: sections of paragraphs and links, as a Playwright snapshot shows them.
fn article() -> String {
    let mut html = String::from("<!doctype html><html><head><title>Budgets</title></head><body><main><h1>Context budgets</h1>");
    for s in 0..120 {
        html.push_str(&format!("<h2>Section {s}: tool results</h2><ul>"));
        for l in 0..6 {
            html.push_str(&format!(
                "<li><a href=\"/docs/section-{s}/item-{l}?ref=nav&utm_source=test\">Item {l} of section {s}</a></li>"
            ));
        }
        html.push_str(&format!(
            "</ul><p>Paragraph {s}: a client sends the model what the server returned, or a part of it, and the budget decides which part.</p>"
        ));
    }
    html.push_str("</main></body></html>");
    html
}

fn python_with_tiktoken() -> Option<std::path::PathBuf> {
    crate::support::venv_python("tiktoken", "tiktoken")
}

#[test]
fn each_clients_view_of_real_results_matches_an_independent_implementation() {
    let (Some(python), Some(playwright), Some(fs), Some(everything)) = (
        python_with_tiktoken(),
        real_server("playwright-mcp"),
        real_server("mcp-server-filesystem"),
        real_server("mcp-server-everything"),
    ) else {
        return;
    };
    let Some(chromium) = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
        crate::support::skip("chromium is not installed");
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let site = home.path().join("site");
    std::fs::create_dir(&site).unwrap();
    std::fs::write(site.join("index.html"), article()).unwrap();
    let port = free_port();
    let mut http = Command::new("python3");
    http.args([
        "-m",
        "http.server",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--directory",
    ])
    .arg(&site);
    let _served = serve_on(http, port);
    let files = home.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let log: String = (0..3000)
        .map(|i| {
            format!(
                "2026-12-01 05:{:02}:{:02} GET /api/items/{i} 200 {} ms\n",
                i / 60 % 60,
                i % 60,
                i % 89
            )
        })
        .collect();
    std::fs::write(files.join("access.log"), &log).unwrap();
    let probes = home.path().join("probes.toml");
    let q = |p: &std::path::Path| serde_json::to_string(&p.display().to_string()).unwrap();
    std::fs::write(
        &probes,
        format!(
            r#"
[defaults]
timeout_secs = 180

[servers.playwright]
command = {playwright}
args = ["--headless", "--isolated", "--browser", "chromium", "--executable-path", "{chromium}", "--output-dir", {out}]

[[servers.playwright.probes]]
tool = "browser_navigate"
arguments = {{ url = "http://127.0.0.1:{port}/" }}

[[servers.playwright.probes]]
tool = "browser_snapshot"

[servers.files]
command = {fs}
args = [{files}]

[[servers.files.probes]]
tool = "read_text_file"
arguments = {{ path = {log_path} }}

[servers.everything]
command = {everything}
args = ["stdio"]

[[servers.everything.probes]]
tool = "get-structured-content"
arguments = {{ location = "New York" }}

[[servers.everything.probes]]
tool = "get-resource-links"
arguments = {{ count = 10 }}
"#,
            playwright = q(&playwright),
            out = q(&home.path().join("pw-out")),
            fs = q(&fs),
            files = q(&files),
            log_path = q(&files.join("access.log")),
            everything = q(&everything),
        ),
    )
    .unwrap();
    let out_dir = home.path().join("report");
    let recording = home.path().join("recording");
    let audit = Command::new(bin_path())
        .arg("audit")
        .arg(&probes)
        .arg("--out")
        .arg(&out_dir)
        .arg("--record")
        .arg(&recording)
        .args(["--width", "140"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&audit.stdout);
    assert!(
        audit.status.success() || audit.status.code() == Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&audit.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("audit.json")).unwrap())
            .unwrap();
    for s in report["servers"].as_array().unwrap() {
        assert_eq!(s["status"], "ok", "{}: {}", s["name"], s["error"]);
    }

    // the independent implementation agrees on every probe, for Codex and Gemini CLI
    let checked = Command::new(&python)
        .arg(repo().join("tests/fixtures/client_rules.py"))
        .arg(out_dir.join("audit.json"))
        .arg(&recording)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let rows: Vec<Value> = String::from_utf8_lossy(&checked.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2 * 5, "two clients, five probes");
    let mut outcomes = Vec::new();
    for r in &rows {
        let (e, g) = (&r["expected"], &r["reported"]);
        for k in ["outcome", "bytes_to_model", "tokens_to_model"] {
            assert_eq!(
                e[k], g[k],
                "{} {} {}: {k}",
                r["server"], r["tool"], r["client"]
            );
        }
        let (ek, gk) = (
            e["kept_fraction"].as_f64().unwrap(),
            g["kept_fraction"].as_f64().unwrap(),
        );
        assert!((ek - gk).abs() < 1e-6, "{r}");
        outcomes.push((
            r["tool"].as_str().unwrap().to_string(),
            r["client"].as_str().unwrap().to_string(),
            e["outcome"].as_str().unwrap().to_string(),
        ));
    }
    // the large snapshot and the large file are cut by both (Codex sees the file as
    // structuredContent alone, one long JSON line; Gemini CLI never reads structuredContent and
    // sees one text over 40,000 characters); small results are kept whole
    let outcome = |tool: &str, client: &str| {
        outcomes
            .iter()
            .find(|(t, c, _)| t == tool && c == client)
            .map(|(_, _, o)| o.as_str())
            .unwrap()
    };
    assert_eq!(outcome("browser_snapshot", "codex"), "truncated");
    assert_eq!(outcome("browser_snapshot", "gemini-cli"), "truncated");
    assert_eq!(outcome("read_text_file", "codex"), "truncated");
    assert_eq!(outcome("read_text_file", "gemini-cli"), "truncated");
    assert_eq!(outcome("get-structured-content", "codex"), "full");

    // after the engine with each client's own limits, no client cuts anything
    for s in report["servers"].as_array().unwrap() {
        for p in s["probes"].as_array().unwrap() {
            for c in p["clients"].as_array().unwrap() {
                assert_eq!(
                    c["budgeted"]["outcome"], "full",
                    "{} {} {}",
                    s["name"], p["tool"], c["client"]
                );
            }
        }
    }
    // read_text_file declares an output schema: its structuredContent is kept, as the proxy
    // keeps it (a client validates it is there)
    let read = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["probes"].as_array().unwrap())
        .find(|p| p["tool"] == "read_text_file")
        .unwrap();
    let note = read["budgeted"]["note"].as_str().unwrap();
    assert!(!note.contains("structuredContent dropped"), "{note}");
    // and the terminal shows the per-client table
    assert!(stdout.contains("What each client sees"), "{stdout}");
}
