//! Test fixtures shared by the chart tests: a small report with CJK and emoji names, a failed
//! server and probes over Claude Code's cap; a call-log row; a PNG decoder.

use crate::measure::facts::{
    BudgetedCost, ProbeResult, RawCost, Report, ServerReport, Status, ToolCost,
};

use crate::output::report::StatsRow;

pub(super) fn tool(name: &str, model_tokens: usize) -> ToolCost {
    ToolCost {
        name: name.to_string(),
        model_tokens,
        ..ToolCost::default()
    }
}

pub(super) fn probe(
    tool: &str,
    latency_ms: f64,
    raw: usize,
    budgeted: Option<usize>,
) -> ProbeResult {
    ProbeResult {
        latency_ms,
        raw: Some(RawCost {
            model_tokens: raw,
            ..RawCost::default()
        }),
        budgeted: budgeted.map(|tokens| BudgetedCost {
            budget: 8000,
            tokens,
            tokens_before: raw,
            strategy: "shrunk".to_string(),
            engine_us: 850,
            spill_path: None,
            note: None,
            ..BudgetedCost::default()
        }),
        ..ProbeResult::new(tool)
    }
}

pub(super) fn server(name: &str, tools: Vec<ToolCost>, probes: Vec<ProbeResult>) -> ServerReport {
    let mut s = ServerReport::new(name, "stdio", "demo", "test");
    s.tools_list.tool_count = tools.len();
    s.tools_list.model_tokens = tools.iter().map(|t| t.model_tokens).sum();
    s.tools = tools;
    s.probes = probes;
    s
}

pub(super) fn report(servers: Vec<ServerReport>) -> Report {
    Report::new(vec!["cl100k_base".to_string()], servers)
}

/// Two servers (one with CJK and emoji tool names), probes with raw and budgeted tokens,
/// one of them over Claude Code's 25k cap, and a failed server that must not be charted.
pub(super) fn fixture() -> Report {
    let github = server(
        "github",
        vec![
            tool("search_code", 1_840),
            tool("list_pull_requests", 12_345),
        ],
        vec![
            probe("search_code", 412.0, 61_234, Some(7_950)),
            probe("list_pull_requests", 88.5, 3_100, Some(3_100)),
        ],
    );
    let cjk = server(
        "中文-server",
        vec![tool("搜索", 640), tool("rocket🚀", 75)],
        vec![probe("搜索", 1_250.0, 9_000, None)],
    );
    let mut broken = server("broken", vec![tool("ghost", 99_999)], Vec::new());
    broken.status = Status::Error;
    let mut r = report(vec![github, cjk, broken]);
    with_clients(&mut r);
    r
}

/// What `naive` and `codex` see of every probe: the raw tokens whole, or cut to 2,500 by Codex;
/// after the engine, the budgeted tokens whole.
fn with_clients(r: &mut Report) {
    use crate::config::profiles::{select, ClientSeen, Outcome};
    use crate::measure::facts::ClientResult;
    let profiles = select("naive,codex").expect("known clients");
    r.clients = profiles.iter().map(|p| (*p).clone()).collect();
    let seen = |tokens: usize, outcome: Outcome| ClientSeen {
        model_tokens: None,
        tokens_to_model: tokens,
        bytes_to_model: tokens * 4,
        outcome,
        kept_fraction: if outcome == Outcome::Full { 1.0 } else { 0.1 },
        sent: vec!["content".into()],
        rules: Vec::new(),
        breaks: None,
        text: String::new(),
    };
    for s in &mut r.servers {
        for p in &mut s.probes {
            let raw = p.raw.as_ref().map_or(0, |r| r.model_tokens);
            let budgeted = p.budgeted.as_ref().map(|b| seen(b.tokens, Outcome::Full));
            p.clients = vec![
                ClientResult {
                    model_tokenizer: None,
                    client: "naive".into(),
                    raw: seen(raw, Outcome::Full),
                    budgeted: budgeted.clone(),
                    confirmed: true,
                    measured: None,
                    measured_version: None,
                    unlisted: false,
                },
                ClientResult {
                    model_tokenizer: None,
                    client: "codex".into(),
                    raw: if raw > 2_500 {
                        seen(2_500, Outcome::Truncated)
                    } else {
                        seen(raw, Outcome::Full)
                    },
                    budgeted,
                    confirmed: false,
                    measured: None,
                    measured_version: None,
                    unlisted: false,
                },
            ];
        }
    }
}

pub(super) fn no_probes() -> Report {
    report(vec![server("solo", vec![tool("ping", 42)], Vec::new())])
}

/// Width, height and the share of pixels that are not white.
pub(super) fn decode(bytes: &[u8]) -> (u32, u32, f64) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let decoder = png::Decoder::new(bytes);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let pixels = &buf[..info.buffer_size()];
    let inked = pixels.chunks(3).filter(|p| p != &[255, 255, 255]).count();
    (
        info.width,
        info.height,
        inked as f64 / (pixels.len() / 3) as f64,
    )
}

pub(super) fn stats_row(tool: &str, calls: usize, raw_p95: usize, returned_p95: usize) -> StatsRow {
    StatsRow {
        server: "demo".into(),
        tool: tool.into(),
        calls,
        errors: 0,
        spilled: 0,
        raw_tokens_p50: raw_p95 / 2,
        raw_tokens_p95: raw_p95,
        raw_tokens_max: raw_p95,
        returned_tokens_p50: returned_p95 / 2,
        returned_tokens_p95: returned_p95,
        returned_tokens_max: returned_p95,
        engine_ms_p50: 1.0,
        engine_ms_p95: 2.0,
        engine_ms_max: 3.0,
    }
}
