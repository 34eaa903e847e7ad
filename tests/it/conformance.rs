//! The conformance set (issue 37): 25 real MCP servers that no other test uses, of every kind
//! (the TypeScript SDK from 0.5 to 2.0, the Python SDK from mcp 1.8 to 2.3, FastMCP 4, a Go
//! server; stdio, streamable HTTP and legacy SSE; a slow starter; a server that dies on an
//! unknown method), installed pinned by `scripts/conformance-servers.sh` into
//! `target/conformance` (or `$MCP_BUDGET_CONFORMANCE`).
//!
//! Each is listed by the official Python SDK's client in its default mode
//! (tests/fixtures/conformance_lister.py, counted with Python tiktoken) and audited by
//! `mcp-budget audit` with default settings; the era each side negotiated, the tools (names in
//! order), each tool's model-view tokens and the wire size of the tools/list pages must be
//! equal. One more test audits all of them in one probe file at the default concurrency and
//! loses none.
//!
//! The comparison is within one era: the wire of a tools/list differs between eras. Two cases
//! compare with the SDK's `legacy` listing instead, each said on stderr: the SDK's `auto` failed
//! (an old server dies on its discover and then on its initialize on the same connection), or
//! the server is spoken to over legacy SSE, where mcp-budget speaks only the handshake era.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{free_port, mcp_budget, repo, serve_on, venv_python, Served};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Transport {
    Stdio,
    Http,
    Sse,
}

/// One server of the set. In `argv` and `env`: `{npm}` is the npm prefix's node_modules, `{c}`
/// the conformance folder, `{fx}` tests/fixtures/conformance, `{tmp}` a scratch folder,
/// `{repo}` this repository and `{port}` the port an HTTP server listens on.
struct Spec {
    /// Its name in the probe file.
    id: &'static str,
    /// The package, its version and the SDK it is built on.
    what: &'static str,
    transport: Transport,
    argv: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    /// The URL's path (HTTP and SSE).
    path: &'static str,
    /// A file the install makes: without it the server is not installed.
    needs: &'static str,
    /// How many tools it lists (the versions are pinned).
    tools: usize,
}

const fn stdio(
    id: &'static str,
    what: &'static str,
    argv: &'static [&'static str],
    needs: &'static str,
    tools: usize,
) -> Spec {
    Spec {
        id,
        what,
        transport: Transport::Stdio,
        argv,
        env: &[],
        path: "",
        needs,
        tools,
    }
}

const SEQ_OLD: &str = "{npm}/@modelcontextprotocol/server-sequential-thinking/dist/index.js";
const SEQ_NEW: &str = "{npm}/sequential-thinking-2026-8-31/dist/index.js";
const MEMORY: &str = "{npm}/@modelcontextprotocol/server-memory/dist/index.js";
const FILESYSTEM: &str = "{npm}/@modelcontextprotocol/server-filesystem/dist/index.js";
const POSTGRES: &str = "{npm}/@modelcontextprotocol/server-postgres/dist/index.js";
const GITHUB: &str = "{npm}/@modelcontextprotocol/server-github/dist/index.js";
const PDF: &str = "{npm}/@modelcontextprotocol/server-pdf/dist/index.js";
const MONITOR: &str = "{npm}/@modelcontextprotocol/server-system-monitor/dist/index.js";
const K8S_TS: &str = "{npm}/mcp-server-kubernetes/dist/index.js";
const K8S_GO: &str = "{npm}/.bin/kubernetes-mcp-server";
const EVERYTHING_OLD: &str = "{npm}/@modelcontextprotocol/server-everything/dist/sse.js";
const EVERYTHING_NEW: &str = "{npm}/everything-2025-11-25/dist/streamableHttp.js";
const KUBECONFIG: &str = "{fx}/kubeconfig.yaml";
const TIME_NEW: &str = "{c}/venv/bin/mcp-server-time";
const GIT: &str = "{c}/venv/bin/mcp-server-git";
const FETCH: &str = "{c}/venv/bin/mcp-server-fetch";
const MARKITDOWN: &str = "{c}/venv/bin/markitdown-mcp";
const CALCULATOR: &str = "{c}/venv-mcp1-late/bin/mcp-server-calculator";
const MOTHERDUCK: &str = "{c}/venv-fastmcp/bin/mcp-server-motherduck";
const DUCKDB: &str = "{c}/venv-mcp1-early/bin/mcp-server-duckdb";
const SQLITE: &str = "{c}/venv-mcp1-early/bin/mcp-server-sqlite";
const TIME_OLD: &str = "{c}/venv-mcp1-early/bin/mcp-server-time";

const SET: &[Spec] = &[
    stdio(
        "sequential-thinking-0-6-2",
        "@modelcontextprotocol/server-sequential-thinking 0.6.2 (TypeScript SDK 0.5.0)",
        &["node", SEQ_OLD],
        SEQ_OLD,
        1,
    ),
    stdio(
        "sequential-thinking-2026-8-31",
        "@modelcontextprotocol/server-sequential-thinking 2026.8.31 (TypeScript SDK 1.32.2)",
        &["node", SEQ_NEW],
        SEQ_NEW,
        1,
    ),
    stdio(
        "memory-0-6-2",
        "@modelcontextprotocol/server-memory 0.6.2 (TypeScript SDK 1.0.1)",
        &["node", MEMORY],
        MEMORY,
        9,
    ),
    stdio(
        "filesystem-0-6-2",
        "@modelcontextprotocol/server-filesystem 0.6.2 (TypeScript SDK 1.0.1)",
        &["node", FILESYSTEM, "{tmp}"],
        FILESYSTEM,
        9,
    ),
    stdio(
        "postgres-0-6-2",
        "@modelcontextprotocol/server-postgres 0.6.2 (TypeScript SDK 1.0.1; no database: listing only)",
        &["node", POSTGRES, "postgresql://127.0.0.1:1/none"],
        POSTGRES,
        1,
    ),
    stdio(
        "github-2025-4-8",
        "@modelcontextprotocol/server-github 2025.4.8 (TypeScript SDK 1.0.1; no token: listing only)",
        &["node", GITHUB],
        GITHUB,
        26,
    ),
    stdio(
        "pdf-2-0-4-stdio",
        "@modelcontextprotocol/server-pdf 2.0.4 (TypeScript SDK 2.0.0)",
        &["node", PDF, "--stdio"],
        PDF,
        9,
    ),
    stdio(
        "system-monitor-2-0-3",
        "@modelcontextprotocol/server-system-monitor 2.0.3 (TypeScript SDK 2.0.0)",
        &["node", MONITOR, "--stdio"],
        MONITOR,
        2,
    ),
    stdio(
        "kubernetes-ts-4-1-7",
        "mcp-server-kubernetes 4.1.7 (TypeScript SDK 1.26.0; no cluster)",
        &["node", K8S_TS],
        K8S_TS,
        23,
    ),
    stdio(
        "kubernetes-go-0-0-67-stdio",
        "kubernetes-mcp-server 0.0.67 (Go; a kubeconfig whose cluster is 127.0.0.1:1)",
        &[K8S_GO, "--kubeconfig", KUBECONFIG],
        K8S_GO,
        20,
    ),
    stdio(
        "time-2026-10-19",
        "mcp-server-time 2026.10.19 (Python, mcp 2.3.0)",
        &[TIME_NEW, "--local-timezone", "UTC"],
        TIME_NEW,
        2,
    ),
    stdio(
        "git-2026-10-19",
        "mcp-server-git 2026.10.19 (Python, mcp 2.3.0)",
        &[GIT, "--repository", "{repo}"],
        GIT,
        12,
    ),
    stdio(
        "fetch-2026-10-24",
        "mcp-server-fetch 2026.10.24 (Python, mcp 2.3.0; listing only)",
        &[FETCH],
        FETCH,
        1,
    ),
    stdio(
        "markitdown-slow",
        "markitdown-mcp 0.0.1a8 (Python, mcp 2.3.0) behind `sleep 11`: a slow starter",
        &["sh", "-c", "sleep 11; exec {c}/venv/bin/markitdown-mcp"],
        MARKITDOWN,
        1,
    ),
    stdio(
        "calculator-0-2-1",
        "mcp-server-calculator 0.2.1 (Python FastMCP, mcp 1.30.0)",
        &[CALCULATOR],
        CALCULATOR,
        1,
    ),
    stdio(
        "motherduck-1-1-0-stdio",
        "mcp-server-motherduck 1.1.0 (FastMCP 4.2.3 on mcp 2.3.0; in-memory DuckDB)",
        &[MOTHERDUCK, "--read-write"],
        MOTHERDUCK,
        4,
    ),
    stdio(
        "duckdb-1-1-0",
        "mcp-server-duckdb 1.1.0 (Python, mcp 1.8.0: dies on the request after an unknown method)",
        &[DUCKDB, "--db-path", "{tmp}/duckdb.db"],
        DUCKDB,
        1,
    ),
    stdio(
        "sqlite-2025-4-25",
        "mcp-server-sqlite 2025.4.25 (Python, mcp 1.8.0)",
        &[SQLITE, "--db-path", "{tmp}/sqlite.db"],
        SQLITE,
        6,
    ),
    stdio(
        "time-0-6-2",
        "mcp-server-time 0.6.2 (Python, mcp 1.8.0)",
        &[TIME_OLD, "--local-timezone", "UTC"],
        TIME_OLD,
        2,
    ),
    Spec {
        id: "everything-2025-11-25-http",
        what: "@modelcontextprotocol/server-everything 2025.11.25 (TypeScript SDK 1.32.2), streamable HTTP",
        transport: Transport::Http,
        argv: &["node", EVERYTHING_NEW],
        env: &[("PORT", "{port}")],
        path: "/mcp",
        needs: EVERYTHING_NEW,
        tools: 11,
    },
    Spec {
        id: "kubernetes-go-0-0-67-http",
        what: "kubernetes-mcp-server 0.0.67 (Go), streamable HTTP",
        transport: Transport::Http,
        argv: &[
            K8S_GO,
            "--kubeconfig",
            KUBECONFIG,
            "--port",
            "{port}",
            "--bind-address",
            "127.0.0.1",
        ],
        env: &[],
        path: "/mcp",
        needs: K8S_GO,
        tools: 20,
    },
    Spec {
        id: "motherduck-1-1-0-http",
        what: "mcp-server-motherduck 1.1.0 (FastMCP 4.2.3 on mcp 2.3.0), streamable HTTP",
        transport: Transport::Http,
        argv: &[
            MOTHERDUCK,
            "--read-write",
            "--transport",
            "http",
            "--host",
            "127.0.0.1",
            "--port",
            "{port}",
        ],
        env: &[],
        path: "/mcp",
        needs: MOTHERDUCK,
        tools: 4,
    },
    Spec {
        id: "pdf-2-0-4-http",
        what: "@modelcontextprotocol/server-pdf 2.0.4 (TypeScript SDK 2.0.0), streamable HTTP",
        transport: Transport::Http,
        argv: &["node", PDF],
        env: &[("PORT", "{port}")],
        path: "/mcp",
        needs: PDF,
        tools: 4,
    },
    Spec {
        id: "everything-0-6-2-sse",
        what: "@modelcontextprotocol/server-everything 0.6.2 (TypeScript SDK 1.0.1), SSE",
        transport: Transport::Sse,
        argv: &["node", EVERYTHING_OLD],
        env: &[("PORT", "{port}")],
        path: "/sse",
        needs: EVERYTHING_OLD,
        tools: 5,
    },
    Spec {
        id: "markitdown-sse",
        what: "markitdown-mcp 0.0.1a8 (Python, mcp 2.3.0), SSE",
        transport: Transport::Sse,
        argv: &[
            MARKITDOWN,
            "--http",
            "--host",
            "127.0.0.1",
            "--port",
            "{port}",
        ],
        env: &[],
        path: "/sse",
        needs: MARKITDOWN,
        tools: 1,
    },
];

/// Where `scripts/conformance-servers.sh` installed the set.
fn conformance_dir() -> PathBuf {
    std::env::var_os("MCP_BUDGET_CONFORMANCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/conformance"))
}

/// What a server's placeholders stand for in one test.
struct Places {
    dir: PathBuf,
    tmp: PathBuf,
}

impl Places {
    fn expand(&self, s: &str, port: Option<u16>) -> String {
        let dir = self.dir.to_string_lossy();
        let s = s
            .replace("{npm}", &format!("{dir}/npm/node_modules"))
            .replace("{c}", &dir)
            .replace(
                "{fx}",
                &repo().join("tests/fixtures/conformance").to_string_lossy(),
            )
            .replace("{tmp}", &self.tmp.to_string_lossy())
            .replace("{repo}", &repo().to_string_lossy());
        match port {
            Some(p) => s.replace("{port}", &p.to_string()),
            None => s,
        }
    }

    fn argv(&self, spec: &Spec, port: Option<u16>) -> Vec<String> {
        spec.argv.iter().map(|a| self.expand(a, port)).collect()
    }
}

/// The server's install, or a skip (a failure under MCP_BUDGET_REQUIRE_REAL_SERVERS).
fn installed(spec: &Spec, places: &Places) -> bool {
    let path = PathBuf::from(places.expand(spec.needs, None));
    if path.exists() {
        return true;
    }
    crate::support::skip(&format!(
        "{}: {} not installed (run scripts/conformance-servers.sh)",
        spec.id,
        path.display()
    ));
    false
}

/// A running HTTP or SSE server and its URL; nothing for a stdio one.
fn start(spec: &Spec, places: &Places) -> Option<(Served, String)> {
    if spec.transport == Transport::Stdio {
        return None;
    }
    let port = free_port();
    let argv = places.argv(spec, Some(port));
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).current_dir(&places.tmp);
    for (k, v) in spec.env {
        cmd.env(k, places.expand(v, Some(port)));
    }
    let served = serve_on(cmd, port);
    Some((served, format!("http://127.0.0.1:{port}{}", spec.path)))
}

/// The probe file's table for one server.
fn probe_entry(spec: &Spec, places: &Places, url: Option<&str>) -> String {
    match url {
        Some(url) if spec.transport == Transport::Sse => {
            format!(
                "[servers.{}]\nurl = {url:?}\ntransport = \"sse\"\n\n",
                spec.id
            )
        }
        Some(url) => format!("[servers.{}]\nurl = {url:?}\n\n", spec.id),
        None => {
            let argv = places.argv(spec, None);
            format!(
                "[servers.{}]\ncommand = {:?}\nargs = {:?}\n\n",
                spec.id,
                argv[0],
                &argv[1..]
            )
        }
    }
}

/// `mcp-budget audit` with default settings on `probe` (JSON, no files): the report, or what it
/// said when it wrote none.
fn audit(home: &Path, probe: &str) -> Result<Value, String> {
    let path = home.join("probe.toml");
    std::fs::write(&path, probe).unwrap();
    let out = mcp_budget(home, home)
        .args([
            "audit",
            path.to_str().unwrap(),
            "--no-write",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).map_err(|_| {
        format!(
            "no report (exit {:?}): {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The Python SDK's listing in `mode` (an HTTP or SSE server started for it alone: server-everything
/// 0.6.2's SSE server exits when its client leaves), or what the lister said on stderr.
fn sdk_listing(python: &Path, spec: &Spec, places: &Places, mode: &str) -> Result<Value, String> {
    let server = start(spec, places);
    let url = server.as_ref().map(|(_, url)| url.as_str());
    let mut cmd = Command::new(python);
    cmd.arg(repo().join("tests/fixtures/conformance_lister.py"))
        .args(["--mode", mode]);
    match url {
        Some(url) => {
            cmd.args(["--url", url]);
            if spec.transport == Transport::Sse {
                cmd.arg("--sse");
            }
        }
        None => {
            cmd.arg("--cwd").arg(&places.tmp).arg("--");
            cmd.args(places.argv(spec, None));
        }
    }
    let out = cmd.output().unwrap();
    if out.status.success() {
        return serde_json::from_slice(&out.stdout).map_err(|e| format!("not JSON: {e}"));
    }
    // the lister's own lines (the server's stderr comes through too)
    let err = String::from_utf8_lossy(&out.stderr);
    let own: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("conformance_lister: "))
        .collect();
    if own.is_empty() {
        return Err(err.lines().rev().take(3).collect::<Vec<_>>().join(" | "));
    }
    Err(own.join(" | "))
}

/// Where the SDK's listing and mcp-budget's audit of one server differ (none: they agree).
fn differences(spec: &Spec, sdk: &Value, ours: &Value) -> Vec<String> {
    if ours["status"] != "ok" {
        return vec![format!("mcp-budget: {}", ours["error"])];
    }
    let mut diff = Vec::new();
    let same = |diff: &mut Vec<String>, what: &str, sdk: &Value, ours: &Value| {
        if sdk != ours {
            diff.push(format!("{what}: the SDK {sdk}, mcp-budget {ours}"));
        }
    };
    same(
        &mut diff,
        "protocol version",
        &sdk["protocol_version"],
        &ours["protocol_version"],
    );
    let list = &ours["tools_list"];
    same(
        &mut diff,
        "tool count",
        &sdk["tool_count"],
        &list["tool_count"],
    );
    if sdk["tool_count"] != spec.tools {
        diff.push(format!(
            "the SDK lists {} tools, the set pins {}",
            sdk["tool_count"], spec.tools
        ));
    }
    let names: Vec<&Value> = ours["tools"]
        .as_array()
        .map(|t| t.iter().map(|t| &t["name"]).collect())
        .unwrap_or_default();
    same(
        &mut diff,
        "tool names",
        &sdk["tools"],
        &serde_json::json!(names),
    );
    same(
        &mut diff,
        "model tokens of the tools",
        &sdk["model_tokens_total"],
        &list["model_tokens"],
    );
    let theirs: BTreeMap<String, Value> = sdk["model_tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].clone()))
        .collect();
    for tool in ours["tools"].as_array().into_iter().flatten() {
        let name = tool["name"].as_str().unwrap_or("");
        if let Some(expected) = theirs.get(name) {
            same(
                &mut diff,
                &format!("model tokens of {name}"),
                expected,
                &tool["model_tokens"],
            );
        }
    }
    let pages = sdk["pages"].as_array().unwrap();
    same(
        &mut diff,
        "pages",
        &Value::from(pages.len()),
        &list["pages"],
    );
    same(
        &mut diff,
        "wire bytes",
        &sdk["wire_bytes"],
        &list["wire_bytes"],
    );
    same(
        &mut diff,
        "wire tokens",
        &sdk["wire_tokens"],
        &list["wire_tokens"],
    );
    let largest = pages.iter().filter_map(|p| p["bytes"].as_u64()).max();
    same(
        &mut diff,
        "largest page bytes",
        &serde_json::json!(largest),
        &list["largest_page_bytes"],
    );
    if let Some(notes) = sdk["notes"].as_array().filter(|n| !n.is_empty()) {
        diff.push(format!("the lister's notes: {notes:?}"));
    }
    diff
}

/// List one server with the SDK and audit it alone; panic naming every difference.
fn conformance(id: &str) {
    let spec = SET
        .iter()
        .find(|s| s.id == id)
        .expect("a server of the set");
    let Some(python) = venv_python("mcp, tiktoken", "the Python mcp SDK and tiktoken") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let places = Places {
        dir: conformance_dir(),
        tmp: tmp.path().join("scratch"),
    };
    std::fs::create_dir_all(&places.tmp).unwrap();
    if !installed(spec, &places) {
        return;
    }
    let mut said = Vec::new();
    let mut sdk = match sdk_listing(&python, spec, &places, "auto") {
        Ok(listing) => listing,
        Err(auto) => {
            said.push(format!(
                "the SDK's auto mode failed ({auto}): compared with its legacy listing"
            ));
            sdk_listing(&python, spec, &places, "legacy")
                .unwrap_or_else(|e| panic!("{id}: the Python SDK cannot list it: {e}"))
        }
    };
    let home = tempfile::tempdir().unwrap();
    let server = start(spec, &places);
    let url = server.as_ref().map(|(_, url)| url.as_str());
    let ours = match audit(home.path(), &probe_entry(spec, &places, url)) {
        Ok(report) => report["servers"][0].clone(),
        Err(e) => panic!("{id} ({}): {e}", spec.what),
    };
    drop(server);
    // mcp-budget speaks only the handshake era over legacy SSE: compare within it
    if spec.transport == Transport::Sse
        && ours["status"] == "ok"
        && ours["protocol_version"] != sdk["protocol_version"]
    {
        said.push(format!(
            "the SDK spoke {} over SSE: compared with its legacy listing",
            sdk["protocol_version"]
        ));
        sdk = sdk_listing(&python, spec, &places, "legacy")
            .unwrap_or_else(|e| panic!("{id}: the Python SDK cannot list it in legacy mode: {e}"));
    }
    for line in &said {
        eprintln!("NOTE: {id}: {line}");
    }
    let diff = differences(spec, &sdk, &ours);
    assert!(
        diff.is_empty(),
        "{id} ({}) differs from the Python SDK's listing:\n  {}",
        spec.what,
        diff.join("\n  ")
    );
    eprintln!(
        "conformance: {id}: {} tools in {}, {} wire tokens, {} model tokens, as the SDK",
        ours["tools_list"]["tool_count"],
        ours["protocol_version"],
        ours["tools_list"]["wire_tokens"],
        ours["tools_list"]["model_tokens"]
    );
}

macro_rules! servers {
    ($($test:ident => $id:literal,)*) => {
        $(
            #[test]
            fn $test() {
                conformance($id);
            }
        )*

        /// Every server of the set has its test above.
        #[test]
        fn every_server_of_the_set_has_a_test() {
            let tested = [$($id),*];
            let set: Vec<&str> = SET.iter().map(|s| s.id).collect();
            assert_eq!(tested.as_slice(), set.as_slice());
        }
    };
}

servers! {
    sequential_thinking_0_6_2 => "sequential-thinking-0-6-2",
    sequential_thinking_2026_8_31 => "sequential-thinking-2026-8-31",
    memory_0_6_2 => "memory-0-6-2",
    filesystem_0_6_2 => "filesystem-0-6-2",
    postgres_0_6_2 => "postgres-0-6-2",
    github_2025_4_8 => "github-2025-4-8",
    pdf_2_0_4_stdio => "pdf-2-0-4-stdio",
    system_monitor_2_0_3 => "system-monitor-2-0-3",
    kubernetes_ts_4_1_7 => "kubernetes-ts-4-1-7",
    kubernetes_go_0_0_67_stdio => "kubernetes-go-0-0-67-stdio",
    time_2026_10_19 => "time-2026-10-19",
    git_2026_10_19 => "git-2026-10-19",
    fetch_2026_10_24 => "fetch-2026-10-24",
    markitdown_slow_starter => "markitdown-slow",
    calculator_0_2_1 => "calculator-0-2-1",
    motherduck_1_1_0_stdio => "motherduck-1-1-0-stdio",
    duckdb_1_1_0 => "duckdb-1-1-0",
    sqlite_2025_4_25 => "sqlite-2025-4-25",
    time_0_6_2 => "time-0-6-2",
    everything_2025_11_25_http => "everything-2025-11-25-http",
    kubernetes_go_0_0_67_http => "kubernetes-go-0-0-67-http",
    motherduck_1_1_0_http => "motherduck-1-1-0-http",
    pdf_2_0_4_http => "pdf-2-0-4-http",
    everything_0_6_2_sse => "everything-0-6-2-sse",
    markitdown_sse => "markitdown-sse",
}

/// All of the set in one probe file at the default concurrency (8) on this machine: every
/// server is audited, none lost to the others' load.
#[test]
fn the_whole_set_in_one_audit_loses_no_server() {
    let tmp = tempfile::tempdir().unwrap();
    let places = Places {
        dir: conformance_dir(),
        tmp: tmp.path().join("scratch"),
    };
    std::fs::create_dir_all(&places.tmp).unwrap();
    if !SET.iter().all(|spec| installed(spec, &places)) {
        return;
    }
    let mut served = Vec::new();
    let mut probe = String::new();
    for spec in SET {
        let server = start(spec, &places);
        probe.push_str(&probe_entry(
            spec,
            &places,
            server.as_ref().map(|(_, url)| url.as_str()),
        ));
        served.extend(server);
    }
    let home = tempfile::tempdir().unwrap();
    let report = audit(home.path(), &probe).unwrap_or_else(|e| panic!("{e}"));
    drop(served);
    let servers = report["servers"].as_array().unwrap();
    let mut lost = Vec::new();
    for spec in SET {
        match servers.iter().find(|s| s["name"] == spec.id) {
            None => lost.push(format!("{}: not in the report", spec.id)),
            Some(s) if s["status"] != "ok" => lost.push(format!("{}: {}", spec.id, s["error"])),
            Some(s) if s["tools_list"]["tool_count"] != spec.tools => lost.push(format!(
                "{}: {} tools, not {}",
                spec.id, s["tools_list"]["tool_count"], spec.tools
            )),
            Some(_) => {}
        }
    }
    assert!(
        lost.is_empty(),
        "{} of {} servers lost in one audit:\n  {}",
        lost.len(),
        SET.len(),
        lost.join("\n  ")
    );
}
