//! Issue 29: the proxy's telemetry through real engines on loopback. An OTLP/HTTP receiver
//! decodes what the proxy exports with the official OpenTelemetry protobuf definitions
//! (tests/fixtures/otlp_receiver.py, PyPI `opentelemetry-proto`); Prometheus from Debian scrapes
//! `/metrics` and answers PromQL over its HTTP API; a collector that is down, that fails and that
//! hangs costs the calls nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{bin_path, free_port, repo, venv_python, Pipelined, Served};

/// A running receiver: its port and the file of what it decoded.
struct Receiver {
    _served: Served,
    port: u16,
    out: PathBuf,
}

/// Start tests/fixtures/otlp_receiver.py in `mode` (`ok`, `fail`, `hang`), or a skip.
fn receiver(dir: &Path, mode: &str) -> Option<Receiver> {
    let python = venv_python("opentelemetry.proto", "opentelemetry-proto")?;
    let (port_file, out) = (
        dir.join(format!("{mode}.port")),
        dir.join(format!("{mode}.jsonl")),
    );
    let child = Command::new(python)
        .arg(repo().join("tests/fixtures/otlp_receiver.py"))
        .args([&port_file, &out])
        .arg(mode)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let served = Served(child);
    let started = Instant::now();
    while !port_file.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the receiver did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let port = std::fs::read_to_string(&port_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    Some(Receiver {
        _served: served,
        port,
        out,
    })
}

/// What the receiver decoded so far, one value per line.
fn decoded(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `mcp-budget proxy` in front of tests/fixtures/hostile_server.py `mode`, with `env`.
fn proxy(dir: &Path, mode: &str, args: &[&str], env: &[(&str, String)]) -> Pipelined {
    let mut cmd = Command::new(bin_path());
    cmd.arg("proxy")
        .arg("--spill-dir")
        .arg(dir.join("spill"))
        .arg("--log")
        .arg(dir.join("calls.jsonl"))
        .args(args)
        .args(["--name", "echo", "--", "python3"])
        .arg(repo().join("tests/fixtures/hostile_server.py"))
        .arg(mode);
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") || k.starts_with("MCP_BUDGET_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    Pipelined::spawn(cmd, "telemetry-test")
}

fn call_probe(p: &mut Pipelined, id: u64, meta: Option<Value>) -> Value {
    let mut params = json!({"name": "probe", "arguments": {}});
    if let Some(m) = meta {
        params["_meta"] = m;
    }
    p.call(id, "tools/call", params)
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn call_log(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("calls.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Wait until `out` holds what `ready` asks for (the exporters batch and flush at the end).
fn wait_for(out: &Path, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let lines = decoded(out);
        if ready(&lines) || started.elapsed() > Duration::from_secs(20) {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The conventions' attribute names this proxy sets inside `mcp.*` (semantic-conventions
/// v1.41.1, docs/registry/attributes/mcp.md): nothing of ours may stand there.
const CONVENTION_MCP_KEYS: &[&str] = &[
    "mcp.method.name",
    "mcp.protocol.version",
    "mcp.session.id",
    "mcp.resource.uri",
];

#[test]
fn spans_and_metrics_reach_a_collector_named_as_the_conventions_say_with_the_trace_carried_through()
{
    let dir = tempfile::tempdir().unwrap();
    let Some(rx) = receiver(dir.path(), "ok") else {
        return;
    };
    let env = [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", rx.port),
        ),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "authorization=Bearer%20s3cr3t-otlp".into(),
        ),
        ("OTEL_SERVICE_NAME", "fleet-proxy".into()),
    ];
    let mut p = proxy(dir.path(), "echo-meta", &[], &env);
    let listed = p.call(1, "tools/list", json!({}));
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let parent = "b7ad6b7169203331";
    let traced = call_probe(
        &mut p,
        2,
        Some(json!({"traceparent": format!("00-{trace}-{parent}-01")})),
    );
    let untraced = call_probe(&mut p, 3, None);
    let stderr = p.finish();
    assert!(!stderr.contains("s3cr3t"), "{stderr}");
    assert!(stderr.contains("authorization=<redacted>"), "{stderr}");
    let lines = wait_for(&rx.out, |l| {
        l.iter().filter(|v| v["kind"] == "span").count() >= 3
            && l.iter().any(|v| v["kind"] == "metric")
    });
    let spans: Vec<&Value> = lines.iter().filter(|v| v["kind"] == "span").collect();
    let call = spans
        .iter()
        .find(|s| s["trace_id"] == trace)
        .unwrap_or_else(|| panic!("no span continues the client's trace: {spans:?}"));
    // the client's span is the parent; the upstream saw the proxy's span as its parent
    assert_eq!(call["parent_span_id"], parent);
    assert_eq!(call["name"], "tools/call probe");
    assert_eq!(call["span_kind"], "server");
    let seen: Value = serde_json::from_str(&text_of(&traced)).unwrap();
    assert_eq!(
        seen["traceparent"],
        format!("00-{trace}-{}-01", call["span_id"].as_str().unwrap())
    );
    let a = &call["attributes"];
    assert_eq!(a["mcp.method.name"], "tools/call");
    assert_eq!(a["gen_ai.tool.name"], "probe");
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["jsonrpc.request.id"], "2");
    assert_eq!(a["mcp.protocol.version"], "2025-06-18");
    assert_eq!(a["network.transport"], "pipe");
    assert_eq!(a["mcp_budget.client.name"], "telemetry-test");
    assert_eq!(a["mcp_budget.client.version"], "1");
    assert_eq!(a["mcp_budget.tokenizer"], "cl100k_base");
    // the span's numbers are the call log's
    let log = call_log(dir.path());
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(a["mcp_budget.result.raw_tokens"], log[0]["raw_tokens"]);
    assert_eq!(
        a["mcp_budget.result.budgeted_tokens"],
        log[0]["returned_tokens"]
    );
    assert_eq!(a["mcp_budget.result.wire_bytes"], log[0]["raw_bytes"]);
    assert_eq!(a["mcp_budget.strategy"], log[0]["strategy"]);
    // a call without a trace starts one of its own, and hands it on all the same
    let own = spans
        .iter()
        .find(|s| s["attributes"]["jsonrpc.request.id"] == "3")
        .unwrap();
    assert_eq!(own["parent_span_id"], "");
    let seen: Value = serde_json::from_str(&text_of(&untraced)).unwrap();
    assert!(seen["traceparent"]
        .as_str()
        .unwrap()
        .contains(own["trace_id"].as_str().unwrap()));
    let list = spans.iter().find(|s| s["name"] == "tools/list").unwrap();
    assert_eq!(list["attributes"]["mcp.method.name"], "tools/list");
    // nothing of ours inside mcp.*
    for s in &spans {
        for key in s["attributes"].as_object().unwrap().keys() {
            assert!(
                !key.starts_with("mcp.") || CONVENTION_MCP_KEYS.contains(&key.as_str()),
                "{key} is inside mcp.*"
            );
        }
        assert_eq!(s["resource"]["service.name"], "fleet-proxy");
    }
    // the header arrived, and the metrics add up to the call log
    let request = lines.iter().find(|v| v["kind"] == "request").unwrap();
    assert_eq!(request["headers"]["authorization"], "Bearer s3cr3t-otlp");
    let raw: Vec<&Value> = lines
        .iter()
        .filter(|v| v["kind"] == "metric" && v["name"] == "mcp_budget.result.raw_tokens")
        .collect();
    let last = raw.last().expect("a raw-token histogram");
    assert_eq!(last["count"], 2);
    let logged: f64 = log.iter().map(|l| l["raw_tokens"].as_f64().unwrap()).sum();
    assert_eq!(last["sum"].as_f64().unwrap(), logged);
    assert_eq!(last["unit"], "{token}");
    assert_eq!(
        last["bounds"],
        json!([
            100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 25000.0, 50000.0, 100000.0,
            250000.0, 500000.0, 1000000.0
        ])
    );
    let duration = lines
        .iter()
        .filter(|v| v["kind"] == "metric" && v["name"] == "mcp.server.operation.duration")
        .map(|v| v["attributes"]["mcp.method.name"].as_str().unwrap())
        .collect::<std::collections::BTreeSet<_>>();
    assert!(
        duration.contains("tools/call") && duration.contains("tools/list"),
        "{duration:?}"
    );
}

#[test]
fn a_collector_that_is_down_fails_or_hangs_costs_the_calls_nothing_and_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fail) = receiver(dir.path(), "fail") else {
        return;
    };
    let Some(hang) = receiver(dir.path(), "hang") else {
        return;
    };
    let down = free_port();
    for (what, port) in [("down", down), ("fail", fail.port), ("hang", hang.port)] {
        let run = dir.path().join(what);
        std::fs::create_dir_all(&run).unwrap();
        let env = [
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{port}"),
            ),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "1000".into()),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "x-api-key=k3y-never-shown".into(),
            ),
        ];
        let mut p = proxy(&run, "fine", &[], &env);
        for id in 1..=40 {
            let answer = call_probe(&mut p, id, None);
            assert_eq!(text_of(&answer), "fine", "{what}: {answer}");
        }
        // the batches go out every half second: give the exporter time to fail
        std::thread::sleep(Duration::from_millis(1_500));
        let ended = Instant::now();
        let stderr = p.finish();
        // a hanging collector holds the end of the proxy no longer than its flush bound
        assert!(
            ended.elapsed() < Duration::from_secs(15),
            "{what}: {:?}",
            ended.elapsed()
        );
        assert_eq!(call_log(&run).len(), 40, "{what}");
        // the first loss is said when it happens, the count once at the end
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("warning: telemetry:"))
            .collect();
        assert_eq!(lines.len(), 2, "{what}: {stderr}");
        let lost: u64 = lines[1]
            .split("telemetry: ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{what}: {}", lines[1]));
        if what == "hang" {
            // what was still being sent when the flush gave up is not counted
            assert!(lost >= 1, "{what}: {stderr}");
        } else {
            // every span of the 40 calls was refused
            assert_eq!(lost, 40, "{what}: {stderr}");
        }
        assert!(!stderr.contains("k3y-never-shown"), "{what}: {stderr}");
    }
}

/// GET `path` on `port` with an optional bearer token: the status and the body.
fn get(port: u16, path: &str, token: Option<&str>) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out[9..12].parse().unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (status, head.to_lowercase(), body.to_string())
}

/// POST one JSON-RPC message to the proxy's `/mcp` (with the session, once there is one): the
/// response's headers and body.
fn post(port: u16, token: &str, session: Option<&str>, msg: &Value) -> (String, String) {
    use std::io::{Read, Write};
    let body = msg.to_string();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let session = session.map_or(String::new(), |id| format!("Mcp-Session-Id: {id}\r\n"));
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n{session}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (head.to_lowercase(), body.to_string())
}

/// Initialize a session over streamable HTTP and call the demo's `search_code`: the call's answer.
fn http_tool_call(port: u16, token: &str) -> String {
    let (head, _) = post(
        port,
        token,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "http-test", "version": "2"}}}),
    );
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap_or_else(|| panic!("no session: {head}"))
        .trim()
        .to_string();
    post(
        port,
        token,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    post(
        port,
        token,
        Some(&session),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "search_code", "arguments": {"q": "token budgets"}}}),
    )
    .1
}

fn wait_listening(port: u16) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "nothing on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn metrics_are_served_behind_the_listen_token_and_on_their_own_for_a_stdio_proxy() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut cmd = Command::new(bin_path());
    cmd.args(["proxy", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--bearer-token-env", "PROXY_TOKEN", "--spill-dir"])
        .arg(dir.path().join("spill"))
        .args(["--", bin_path().to_str().unwrap(), "demo-server"])
        .env("PROXY_TOKEN", "sesame-42")
        .stderr(std::process::Stdio::null());
    let _listening = crate::support::serve_on(cmd, port);
    let (status, _, _) = get(port, "/metrics", None);
    assert_eq!(status, 401);
    // one call over streamable HTTP, then the metrics count it
    let call = http_tool_call(port, "sesame-42");
    assert!(call.contains("\"text\":"), "{call}");
    // a call's numbers are recorded once its raw result is counted, after the answer
    let started = Instant::now();
    let (status, head, body) = loop {
        let got = get(port, "/metrics", Some("sesame-42"));
        if got.2.contains("mcp_budget_result_raw_tokens_count{") || started.elapsed().as_secs() > 10
        {
            break got;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("application/openmetrics-text"), "{head}");
    assert!(
        body.contains("mcp_budget_client_name=\"http-test\""),
        "{body}"
    );
    assert!(
        body.contains("# TYPE mcp_budget_result_raw_tokens histogram"),
        "{body}"
    );
    assert!(body.trim_end().ends_with("# EOF"), "{body}");
    // a stdio proxy serves them on an address of its own
    let mport = free_port();
    let mut p = proxy(
        dir.path(),
        "fine",
        &["--metrics-listen", &format!("127.0.0.1:{mport}")],
        &[],
    );
    let _ = call_probe(&mut p, 1, None);
    wait_listening(mport);
    let started = Instant::now();
    let body = loop {
        let (status, _, body) = get(mport, "/metrics", None);
        assert_eq!(status, 200);
        if body.contains("mcp_budget_result_raw_tokens_count{") || started.elapsed().as_secs() > 10
        {
            break body;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(body.contains("gen_ai_tool_name=\"probe\""), "{body}");
    assert_eq!(get(mport, "/other", None).0, 404);
    p.finish();
}

/// Debian's Prometheus, or a skip (a failure under MCP_BUDGET_REQUIRE_REAL_SERVERS).
fn prometheus() -> Option<PathBuf> {
    let found = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() {
        crate::support::skip("prometheus is not installed (.ci/run installs Debian's)");
    }
    found
}

/// A PromQL instant query over Prometheus's HTTP API: the vector's samples.
fn promql(port: u16, query: &str) -> Vec<Value> {
    let url = format!("http://127.0.0.1:{port}/api/v1/query");
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "10", &url, "--data-urlencode"])
        .arg(format!("query={query}"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(v["status"], "success", "{query}: {v}");
    v["data"]["result"].as_array().cloned().unwrap_or_default()
}

fn scalar(samples: &[Value]) -> f64 {
    samples
        .iter()
        .map(|s| s["value"][1].as_str().unwrap().parse::<f64>().unwrap())
        .sum()
}

#[test]
fn prometheus_scrapes_the_proxy_promql_equals_the_call_log_and_every_dashboard_panel_has_data() {
    let Some(prom) = prometheus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (mport, pport) = (free_port(), free_port());
    // 3,000 words: about 15 KB, over Codex's 12,000 bytes and under Claude Code's 50,000
    // characters; over a 1,000-token budget, so every result is cut
    let mut p = proxy(
        dir.path(),
        "echo-meta",
        &[
            "--metrics-listen",
            &format!("127.0.0.1:{mport}"),
            "--budget",
            "1000",
            "--client",
            "codex,claude-code",
        ],
        &[("HOSTILE_WORDS", "3000".into())],
    );
    let calls = 12u64;
    for id in 1..=calls {
        let answer = call_probe(&mut p, id, None);
        assert!(answer["result"].is_object(), "{answer}");
    }
    wait_listening(mport);
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: mcp-budget\n    static_configs:\n      - targets: ['127.0.0.1:{mport}']\n"
        ),
    )
    .unwrap();
    let mut cmd = Command::new(prom);
    cmd.arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{pport}"));
    let _prometheus = crate::support::serve_on(cmd, pport);
    // scraped at least a few times, with every call counted
    let started = Instant::now();
    loop {
        let n = scalar(&promql(pport, "sum(mcp_budget_result_raw_tokens_count)"));
        let points = scalar(&promql(
            pport,
            "count_over_time(up{job=\"mcp-budget\"}[1m])",
        ));
        if (n == calls as f64 && points >= 4.0) || started.elapsed() > Duration::from_secs(60) {
            assert_eq!(n, calls as f64, "Prometheus never saw every call");
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let log = call_log(dir.path());
    assert_eq!(log.len() as u64, calls);
    let sum = |key: &str| log.iter().map(|l| l[key].as_f64().unwrap()).sum::<f64>();
    assert_eq!(
        scalar(&promql(pport, "sum(mcp_budget_result_raw_tokens_sum)")),
        sum("raw_tokens")
    );
    assert_eq!(
        scalar(&promql(pport, "sum(mcp_budget_result_budgeted_tokens_sum)")),
        sum("returned_tokens")
    );
    let spilled = log.iter().filter(|l| !l["spill_id"].is_null()).count() as f64;
    assert!(spilled > 0.0, "{log:?}");
    assert_eq!(
        scalar(&promql(pport, "sum(mcp_budget_spills_total)")),
        spilled
    );
    let over = promql(
        pport,
        "sum by (mcp_budget_client_profile) (mcp_budget_over_client_limit_total)",
    );
    assert_eq!(over.len(), 1, "{over:?}");
    assert_eq!(over[0]["metric"]["mcp_budget_client_profile"], "codex");
    assert_eq!(scalar(&over), calls as f64);
    let max = scalar(&promql(pport, "max(mcp_budget_result_raw_tokens_max)"));
    let largest = log
        .iter()
        .map(|l| l["raw_tokens"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(max, largest);
    // every panel of the dashboard returns data, its variables at "All"
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("docs/grafana/mcp-budget.json")).unwrap(),
    )
    .unwrap();
    let panels = dashboard["panels"].as_array().unwrap();
    assert!(panels.len() >= 8, "{}", panels.len());
    for panel in panels {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "1m")
                .replace("$server", ".*")
                .replace("$client", ".*");
            let data = promql(pport, &expr);
            assert!(
                !data.is_empty(),
                "{}: {expr} returned nothing",
                panel["title"]
            );
        }
    }
    p.finish();
}

#[test]
fn audit_otlp_exports_the_reports_numbers_and_a_failed_export_is_an_error_with_the_report_written()
{
    let dir = tempfile::tempdir().unwrap();
    let Some(rx) = receiver(dir.path(), "ok") else {
        return;
    };
    let Some(fail) = receiver(dir.path(), "fail") else {
        return;
    };
    let demo = repo().join("probes/demo.toml");
    let audit = |port: u16, out: &Path| {
        crate::support::mcp_budget(dir.path(), dir.path())
            .arg("audit")
            .arg(&demo)
            .args(["--otlp", "--no-charts", "--out"])
            .arg(out)
            .env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{port}"),
            )
            .env("OTEL_EXPORTER_OTLP_HEADERS", "api-key=n1ghtly-s3cret")
            .assert()
    };
    let out = dir.path().join("report");
    let a = audit(rx.port, &out).code(0);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(stderr.contains("data points exported"), "{stderr}");
    assert!(!stderr.contains("n1ghtly"), "{stderr}");
    let report = crate::support::read_report(&out);
    let lines = wait_for(&rx.out, |l| l.iter().any(|v| v["kind"] == "metric"));
    let points = |name: &str| -> Vec<&Value> {
        lines
            .iter()
            .filter(|v| v["kind"] == "metric" && v["name"] == name)
            .collect()
    };
    let server = &report["servers"][0];
    let name = server["name"].as_str().unwrap();
    let schema = points("mcp_budget.audit.schema_tokens");
    let whole = schema
        .iter()
        .find(|p| p["attributes"]["gen_ai.tool.name"].is_null())
        .unwrap();
    assert_eq!(whole["attributes"]["mcp_budget.server"], name);
    assert_eq!(whole["value"], server["tools_list"]["model_tokens"]);
    assert_eq!(whole["type"], "gauge");
    // one point per tool, each the report's
    let tools = server["tools"].as_array().unwrap();
    assert_eq!(schema.len(), tools.len() + 1);
    for t in tools {
        let p = schema
            .iter()
            .find(|p| p["attributes"]["gen_ai.tool.name"] == t["name"])
            .unwrap();
        assert_eq!(p["value"], t["model_tokens"]);
    }
    let raw = points("mcp_budget.audit.probe.raw_tokens");
    let probes = server["probes"].as_array().unwrap();
    let with_raw = probes.iter().filter(|p| p["raw"].is_object()).count();
    assert_eq!(raw.len(), with_raw);
    let total: i64 = raw.iter().map(|p| p["value"].as_i64().unwrap()).sum();
    let want: i64 = probes
        .iter()
        .filter_map(|p| p["raw"]["model_tokens"].as_i64())
        .sum();
    assert_eq!(total, want);
    assert!(!points("mcp_budget.audit.client.schema_tokens").is_empty());
    // a collector that refuses: exit 2, said, and the report written all the same
    let out = dir.path().join("refused");
    let a = audit(fail.port, &out).code(2);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(stderr.contains("error: --otlp:"), "{stderr}");
    assert!(!stderr.contains("n1ghtly"), "{stderr}");
    assert!(out.join("audit.json").exists());
}

/// An https collector (a TLS front with a test CA, trusted through `SSL_CERT_FILE`) gets the
/// audit's metrics; without the CA the export is refused in one line. The SDK's own client had
/// no TLS: before 2026-12-05 every https export failed.
#[test]
fn audit_otlp_exports_to_an_https_collector_it_trusts() {
    let dir = tempfile::tempdir().unwrap();
    let Some(rx) = receiver(dir.path(), "ok") else {
        return;
    };
    let (port, ca) = crate::transports::tls_front(rx.port);
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    let audit = |out: &Path, trusted: bool| {
        let mut cmd = crate::support::mcp_budget(dir.path(), dir.path());
        cmd.arg("audit")
            .arg(repo().join("probes/demo.toml"))
            .args(["--otlp", "--no-charts", "--out"])
            .arg(out)
            .env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("https://127.0.0.1:{port}"),
            );
        if trusted {
            cmd.env("SSL_CERT_FILE", &ca_file);
        }
        cmd.assert()
    };
    let a = audit(&dir.path().join("trusted"), true).code(0);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(stderr.contains("data points exported"), "{stderr}");
    let lines = wait_for(&rx.out, |l| l.iter().any(|v| v["kind"] == "metric"));
    assert!(lines
        .iter()
        .any(|v| v["name"] == "mcp_budget.audit.schema_tokens"));
    let a = audit(&dir.path().join("untrusted"), false).code(2);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    let line = stderr
        .lines()
        .find(|l| l.contains("error: --otlp:"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        line.contains("UnknownIssuer") || line.contains("certificate"),
        "{line}"
    );
}

mod flood;
