//! `proxy --client`: the engine keeps every result, and every page read back, within the
//! client's own limits, so the client never cuts one again; checked with the official Python
//! SDK client in front of the demo and of the real server-filesystem.

use mcp_budget::wire::demo::DemoServer;
use serde_json::Value;

use crate::support::{bin_path, real_server};

use super::*;

/// Codex keeps 12,000 bytes of a result (its profile, measured by the lab).
const CODEX_BYTES: usize = 12_000;

fn assert_within_codex(got: &Value, what: &str) {
    let shown = got["visible"].as_str().unwrap();
    assert!(
        shown.len() <= CODEX_BYTES,
        "{what}: the result is {} bytes",
        shown.len()
    );
    assert!(
        shown.contains("within 12,000 bytes"),
        "{what}: the note names the client's bounds"
    );
    let pages = got["page_sizes"].as_array().unwrap();
    assert!(pages.len() > 1, "{what}: paged back in several reads");
    for p in pages {
        let bytes = p[0].as_u64().unwrap() as usize;
        assert!(bytes <= CODEX_BYTES, "{what}: a page of {bytes} bytes");
    }
}

#[test]
fn proxy_client_codex_keeps_every_result_and_page_within_12000_bytes() {
    let Some(python) = python_sdk() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let bin = bin_path();
    let (spill_s, bin_s) = (spill.to_str().unwrap(), bin.to_str().unwrap());
    let demo = DemoServer::new("demo");
    // a 237k-token page in long lines, and a source file in many short ones
    for tool in ["scrape_as_markdown", "read_file"] {
        let got = sdk_run(
            &python,
            tool,
            &[
                "proxy",
                "--client",
                "codex",
                "--spill-dir",
                spill_s,
                "--",
                bin_s,
                "demo-server",
            ],
        );
        assert_within_codex(&got, tool);
        let original = demo.call(tool, &serde_json::Map::new()).unwrap();
        let block = &original["content"][0];
        let original = block["text"]
            .as_str()
            .or(block["resource"]["text"].as_str())
            .unwrap();
        assert!(
            got["paged"].as_str().unwrap().lines().eq(original.lines()),
            "{tool}: the pages give back the original"
        );
    }

    // the real filesystem server reading a 6,000-line file
    let Some(fs) = real_server("mcp-server-filesystem") else {
        return;
    };
    let root = home.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let file = root.join("log.txt");
    let body: String = (0..6000)
        .map(|i| {
            format!(
                "2026-12-01T05:{:02}:{:02} INFO request {i} served in {} ms\n",
                i / 60 % 60,
                i % 60,
                i % 97
            )
        })
        .collect();
    std::fs::write(&file, &body).unwrap();
    let args = serde_json::json!({"path": file}).to_string();
    let got = sdk(
        &python,
        &[
            "--args",
            &args,
            "read_text_file",
            bin_s,
            "proxy",
            "--client",
            "codex",
            "--spill-dir",
            spill_s,
            "--",
            fs.to_str().unwrap(),
            root.to_str().unwrap(),
        ],
    );
    assert_within_codex(&got, "read_text_file");
    assert!(got["paged"].as_str().unwrap().lines().eq(body.lines()));
}

#[test]
fn an_unknown_client_is_a_one_line_error_naming_the_known_ones() {
    let out = std::process::Command::new(bin_path())
        .args(["proxy", "--client", "netscape", "--", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown client `netscape`") && err.contains("codex"),
        "{err}"
    );
}
