//! Issue 37, item 3: a flood of made-up tool names from eight clients, through a real proxy in
//! front of the demo server over streamable HTTP on 127.0.0.1, then Debian's Prometheus
//! scraping it. `/metrics` stays small, real tools keep their names, and when client names and
//! real tools together would pass the cap of series, what is past it is folded and counted.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{prometheus, promql, scalar, wait_listening};
use crate::support::{bin_path, free_port, Served};

/// The cap of series (`telemetry::MAX_SERIES`).
const MAX_SERIES: usize = 10_000;
const TOKEN: &str = "fl00d-token";
/// Eight clients each call the same 2,000 made-up names: 16,000 calls.
const CLIENTS: usize = 8;
const MADE_UP: usize = 2_000;
/// Sessions per client name.
const SESSIONS: usize = 4;

/// One MCP session over streamable HTTP, kept alive.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
    next: u64,
}

impl Session {
    /// `initialize` as client `name`, then `notifications/initialized`.
    async fn open(port: u16, name: &str) -> Session {
        let http = mcp_budget::wire::tls::client()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}});
        let r = post(&http, &url, None, &init).await;
        let id = r
            .headers()
            .get("mcp-session-id")
            .unwrap_or_else(|| panic!("no session for {name}"))
            .to_str()
            .unwrap()
            .to_string();
        let _ = r.text().await;
        let mut s = Session {
            http,
            url,
            id,
            next: 1,
        };
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        s
    }

    async fn send(&mut self, msg: &Value) -> String {
        post(&self.http, &self.url, Some(&self.id), msg)
            .await
            .text()
            .await
            .unwrap()
    }

    /// Call `tool`: the answer's text (SSE or JSON), which carries its id.
    async fn call(&mut self, tool: &str, arguments: Value) -> String {
        let id = self.next;
        self.next += 1;
        let answer = self
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}}))
            .await;
        assert!(answer.contains(&format!("\"id\":{id}")), "{tool}: {answer}");
        answer
    }
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    msg: &Value,
) -> reqwest::Response {
    let mut req = http
        .post(url)
        .bearer_auth(TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("content-type", "application/json")
        .body(msg.to_string());
    if let Some(id) = session {
        req = req.header("mcp-session-id", id);
    }
    req.send().await.unwrap()
}

/// `/metrics` with the token: the body and how long it took.
async fn scrape(port: u16) -> (String, Duration) {
    let started = Instant::now();
    let body = mcp_budget::wire::tls::client()
        .build()
        .unwrap()
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .bearer_auth(TOKEN)
        .timeout(Duration::from_secs(120))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    (body, started.elapsed())
}

/// The series of an OpenMetrics text: its sample lines.
fn series(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .count()
}

/// The sum of the samples of `name` whose line holds `with`.
fn sum(text: &str, name: &str, with: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) && l.contains(with))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

/// The proxy's resident memory, in MB.
fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The demo server behind `mcp-budget proxy --listen`, its stderr in `dir/proxy.err`.
fn start_proxy(dir: &Path, port: u16) -> Served {
    let err = std::fs::File::create(dir.join("proxy.err")).unwrap();
    let child = Command::new(bin_path())
        .args(["proxy", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--bearer-token-env", "FLOOD_TOKEN", "--spill-dir"])
        .arg(dir.join("spill"))
        .args(["--", bin_path().to_str().unwrap(), "demo-server"])
        .env("FLOOD_TOKEN", TOKEN)
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap();
    let served = Served(child);
    wait_listening(port);
    served
}

/// 2,000 made-up tool names from each of eight clients, at once (each client in
/// [`SESSIONS`] sessions, a share of the names each: the proxy's answers over HTTP take some
/// 40 ms each here); within `deadline`.
async fn flood(port: u16, deadline: Duration) {
    let started = Instant::now();
    let mut sessions = tokio::task::JoinSet::new();
    for c in 0..CLIENTS {
        for share in 0..SESSIONS {
            sessions.spawn(async move {
                let mut s = Session::open(port, &format!("flood-client-{c}")).await;
                for n in (share..MADE_UP).step_by(SESSIONS) {
                    let answer = s.call(&format!("made_up_tool_{n}"), json!({})).await;
                    assert!(answer.contains("unknown tool"), "{answer}");
                }
            });
        }
    }
    while let Some(done) = sessions.join_next().await {
        done.unwrap();
    }
    let took = started.elapsed();
    eprintln!("flood: {} calls in {took:?}", CLIENTS * MADE_UP);
    assert!(took < deadline, "the flood took {took:?}");
}

/// Prometheus scraping the proxy every second, and the PromQL port.
fn start_prometheus(dir: &Path, prom: &Path, target: u16) -> (Served, u16) {
    let pport = free_port();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: flood\n    authorization:\n      credentials: {TOKEN}\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
        ),
    )
    .unwrap();
    let mut cmd = Command::new(prom);
    cmd.arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{pport}"));
    (crate::support::serve_on(cmd, pport), pport)
}

/// Wait until the last scrape was up and `query` has data; the samples of that scrape.
fn scraped(pport: u16, query: &str) -> f64 {
    let started = Instant::now();
    loop {
        let up = scalar(&promql(pport, "up{job=\"flood\"}"));
        if (up == 1.0 && !promql(pport, query).is_empty())
            || started.elapsed() > Duration::from_secs(60)
        {
            assert_eq!(up, 1.0, "Prometheus could not scrape the proxy");
            assert!(!promql(pport, query).is_empty(), "{query}: no data");
            return scalar(&promql(pport, "scrape_samples_scraped{job=\"flood\"}"));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Scrape until `ready` (a result's numbers are recorded once its raw form is counted, after
/// the answer), at most 20 s: the last text and how long its scrape took.
fn scrape_until(
    rt: &tokio::runtime::Runtime,
    port: u16,
    ready: impl Fn(&str) -> bool,
) -> (String, Duration) {
    let started = Instant::now();
    loop {
        let (text, took) = rt.block_on(scrape(port));
        if ready(&text) || started.elapsed() > Duration::from_secs(20) {
            return (text, took);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn issue_37_a_flood_of_made_up_tool_names_keeps_metrics_bounded_and_real_tools_named() {
    let Some(prom) = prometheus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let proxy = start_proxy(dir.path(), port);
    let rss_before = rss_mb(proxy.0.id());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(flood(port, Duration::from_secs(180)));
    // a real client calls real tools after the flood
    let mut real = rt.block_on(Session::open(port, "claude-code"));
    for _ in 0..3 {
        rt.block_on(real.call("list_tickets", json!({"limit": 5})));
        rt.block_on(real.call("get_time", json!({})));
    }
    let tickets = "gen_ai_tool_name=\"list_tickets\"";
    let (text, took) = scrape_until(&rt, port, |t| {
        sum(t, "mcp_budget_result_raw_tokens_count", tickets) == 3.0
    });
    eprintln!(
        "after the flood: /metrics {} bytes, {} series, scraped in {took:?}; proxy {rss_before:.0} -> {:.0} MB",
        text.len(),
        series(&text),
        rss_mb(proxy.0.id())
    );
    assert!(series(&text) <= MAX_SERIES, "{} series", series(&text));
    assert!(text.len() < 100_000, "{} bytes", text.len());
    assert_eq!(
        sum(&text, "mcp_budget_result_raw_tokens_count", tickets),
        3.0
    );
    assert_eq!(
        sum(
            &text,
            "mcp_server_operation_duration_seconds_count",
            "gen_ai_tool_name=\"unknown\""
        ),
        (CLIENTS * MADE_UP) as f64
    );
    assert!(!text.contains("made_up_tool"), "a made-up name is a label");
    assert_eq!(
        sum(&text, "mcp_budget_labels_folded_total", "\"unlisted_tool\""),
        (CLIENTS * MADE_UP) as f64
    );
    // Prometheus scrapes it, and sees what the text says
    let (_prometheus, pport) = start_prometheus(dir.path(), &prom, port);
    let samples = scraped(pport, "mcp_budget_labels_folded_total");
    assert!(samples <= MAX_SERIES as f64, "{samples} samples");
    let by_tool = promql(
        pport,
        "sum by (gen_ai_tool_name) (mcp_budget_result_raw_tokens_count)",
    );
    let mut named: Vec<&str> = by_tool
        .iter()
        .map(|s| s["metric"]["gen_ai_tool_name"].as_str().unwrap())
        .collect();
    named.sort();
    assert_eq!(named, ["get_time", "list_tickets"]);
    let folded = promql(pport, "sum(mcp_budget_labels_folded_total)");
    assert_eq!(scalar(&folded), (CLIENTS * MADE_UP) as f64);
    // then client names with real tools past the cap of series: folded, counted, said once
    rt.block_on(past_the_cap(port));
    rt.block_on(real.call("list_tickets", json!({"limit": 5})));
    let own = format!("{tickets},mcp_budget_client_name=\"claude-code\"");
    let (text, took) = scrape_until(&rt, port, |t| {
        sum(t, "mcp_budget_result_raw_tokens_count", &own) == 4.0
    });
    eprintln!(
        "past the cap: /metrics {} bytes, {} series, scraped in {took:?}; proxy {:.0} MB",
        text.len(),
        series(&text),
        rss_mb(proxy.0.id())
    );
    assert!(series(&text) <= MAX_SERIES, "{} series", series(&text));
    assert!(text.len() < 2_500_000, "{} bytes", text.len());
    assert!(sum(&text, "mcp_budget_labels_folded_total", "\"series\"") > 0.0);
    assert!(text.contains("gen_ai_tool_name=\"other\""));
    // a label set admitted before the cap keeps its name
    assert_eq!(sum(&text, "mcp_budget_result_raw_tokens_count", &own), 4.0);
    let samples = scraped(
        pport,
        "mcp_budget_labels_folded_total{mcp_budget_fold_reason=\"series\"}",
    );
    assert!(samples <= MAX_SERIES as f64, "{samples} samples");
    drop(proxy);
    let stderr = std::fs::read_to_string(dir.path().join("proxy.err")).unwrap();
    assert_eq!(
        stderr.matches("reached their cap of 10,000 series").count(),
        1,
        "{stderr}"
    );
}

/// 60 more client names, each calling five real tools: more (tool, client) pairs than the cap
/// of series holds.
async fn past_the_cap(port: u16) {
    let tools = [
        "list_tickets",
        "get_time",
        "create_ticket",
        "get_forecast",
        "list_docs",
    ];
    for c in 0..60 {
        let mut s = Session::open(port, &format!("named-client-{c}")).await;
        for t in tools {
            s.call(t, json!({})).await;
        }
    }
}

/// The OTLP side counts with the same labels: a made-up name is exported as `unknown`, never
/// as an attribute of its own, and the folds are counted.
#[test]
fn issue_37_made_up_tool_names_reach_an_otlp_collector_as_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let Some(rx) = super::receiver(dir.path(), "ok") else {
        return;
    };
    let env = [(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        format!("http://127.0.0.1:{}", rx.port),
    )];
    let mut p = super::proxy(dir.path(), "fine", &[], &env);
    let made_up = 300;
    for id in 0..made_up {
        let answer = p.call(
            id,
            "tools/call",
            json!({"name": format!("made_up_tool_{id}"), "arguments": {}}),
        );
        assert!(answer["result"].is_object(), "{answer}");
    }
    let answer = p.call(
        made_up,
        "tools/call",
        json!({"name": "probe", "arguments": {}}),
    );
    assert_eq!(super::text_of(&answer), "fine");
    p.finish();
    let lines = super::wait_for(&rx.out, |l| {
        l.iter()
            .any(|v| v["kind"] == "metric" && v["name"] == "mcp_budget.labels.folded")
    });
    let points: Vec<&Value> = lines.iter().filter(|v| v["kind"] == "metric").collect();
    let mut tools: Vec<&str> = points
        .iter()
        .filter_map(|p| p["attributes"]["gen_ai.tool.name"].as_str())
        .collect();
    tools.sort();
    tools.dedup();
    assert_eq!(tools, ["probe", "unknown"]);
    let folded = points
        .iter()
        .rfind(|p| p["name"] == "mcp_budget.labels.folded")
        .unwrap();
    assert_eq!(
        folded["attributes"]["mcp_budget.fold.reason"],
        "unlisted_tool"
    );
    assert_eq!(folded["value"], made_up);
    let raw = points
        .iter()
        .rfind(|p| {
            p["name"] == "mcp_budget.result.raw_tokens"
                && p["attributes"]["gen_ai.tool.name"] == "unknown"
        })
        .unwrap();
    assert_eq!(raw["count"], made_up);
}
