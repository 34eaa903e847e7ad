//! The per-client rows the report derives: the schema tax each client sends per turn, and the
//! totals and labels every output shows.

use serde_json::{json, Value};

use super::*;
use crate::config::profiles::{client_view, profile, profiles, ClientSeen};
use crate::ground::tokens::Tokenizer;
use crate::measure::facts::{ClientResult, MeasuredClient};
use crate::measure::facts::{Report, ServerReport, ToolCost};

fn text(t: &str) -> Value {
    json!({"content": [{"type": "text", "text": t}]})
}

fn seen(id: &str, result: &Value) -> ClientSeen {
    client_view(profile(id).unwrap(), result, Tokenizer::Cl100k)
}

#[test]
fn schema_tax_per_client() {
    let mut s = ServerReport::new("files", "stdio", "x", "t");
    s.tools_list.tool_count = 2;
    s.tools_list.model_tokens = 900;
    s.tools = ["read_file", "write_file"]
        .iter()
        .map(|n| ToolCost {
            name: n.to_string(),
            ..ToolCost::default()
        })
        .collect();
    let mut big = ServerReport::new("big", "stdio", "x", "t");
    big.tools_list.tool_count = 130;
    big.tools_list.model_tokens = 40_000;
    big.tools = (0..130)
        .map(|i| ToolCost {
            name: format!("t{i}"),
            ..ToolCost::default()
        })
        .collect();
    let mut r = Report::new(vec!["cl100k_base".into()], vec![s, big]);
    r.clients = profiles().to_vec();
    apply(&mut r);
    let row = |server: usize, id: &str| {
        r.servers[server]
            .clients
            .iter()
            .find(|c| c.client == id)
            .unwrap()
            .clone()
    };
    assert_eq!(row(0, "naive").schema_tokens_per_turn, 900);
    let cc = row(0, "claude-code");
    assert!(cc.deferred);
    assert_eq!(
        cc.schema_tokens_per_turn,
        Tokenizer::Cl100k.count("mcp__files__read_file\nmcp__files__write_file")
    );
    // Codex with the profile's model (outside its catalog) sends every definition of 132
    // tools, measured on 158 (it was deferred over 100 tools)
    assert!(!row(0, "codex").deferred && !row(1, "codex").deferred);
    assert_eq!(row(1, "codex").schema_tokens_per_turn, 40_000);
    assert!(row(1, "vscode").tool_limit_exceeded && !row(0, "vscode").tool_limit_exceeded);
    assert_eq!(row(1, "vscode").schema_tokens_per_turn, 40_000);
    assert!(row(1, "cursor").tool_limit_exceeded && !row(1, "cursor").confirmed);
}

/// Issue 39: Qwen Code lists each deferred tool with its description's first line every turn
/// (cut at 160 characters), under its server; Gemini CLI adds `wait_for_previous` to every
/// definition. Both are counted, as the clients' own code writes them.
#[test]
fn deferred_descriptions_and_an_added_parameter_are_counted_per_turn() {
    let mut s = ServerReport::new("demo", "stdio", "x", "t");
    s.tools_list.tool_count = 2;
    s.tools_list.model_tokens = 500;
    let long = "Scrape ".repeat(40);
    s.tools = [
        ("get_forecast", "Get the forecast."),
        ("scrape", long.trim()),
    ]
    .iter()
    .map(|(n, d)| ToolCost {
        name: n.to_string(),
        model_tokens: 250,
        description_head: d.to_string(),
        ..ToolCost::default()
    })
    .collect();
    let mut r = Report::new(vec!["cl100k_base".into()], vec![s]);
    r.clients = profiles().to_vec();
    apply(&mut r);
    let row = |id: &str| {
        r.servers[0]
            .clients
            .iter()
            .find(|c| c.client == id)
            .unwrap()
            .clone()
    };
    let cut: String = long.trim().chars().take(157).collect::<String>() + "...";
    let qwen = format!(
        "#### demo\n- \"mcp__demo__get_forecast\": \"Get the forecast.\"\n- \"mcp__demo__scrape\": \"{cut}\""
    );
    assert_eq!(
        row("qwen-code").schema_tokens_per_turn,
        Tokenizer::Cl100k.count(&qwen)
    );
    let wait = r#","wait_for_previous":{"type":"boolean","description":"Set to true to wait for all previously requested tools in this turn to complete before starting. Set to false (or omit) to run in parallel. Use true when this tool depends on the output of previous tools."}"#;
    assert_eq!(
        row("gemini-cli").schema_tokens_per_turn,
        500 + 2 * Tokenizer::Cl100k.count(wait)
    );
    // the others as before: every definition, or the names alone
    assert_eq!(row("opencode").schema_tokens_per_turn, 500);
    assert_eq!(
        row("claude-code").schema_tokens_per_turn,
        Tokenizer::Cl100k.count("mcp__demo__get_forecast\nmcp__demo__scrape")
    );
}

/// A server of 13 tools over three pages (5, 5, 3), tool i costing 100 + i model tokens, with a
/// probe of the first tool and of the last.
fn paged_server() -> ServerReport {
    let mut s = ServerReport::new("paged", "stdio", "x", "t");
    s.tools = (0..13)
        .map(|i| ToolCost {
            name: format!("tool_{i}"),
            model_tokens: 100 + i,
            ..ToolCost::default()
        })
        .collect();
    s.tools_list.tool_count = 13;
    s.tools_list.pages = 3;
    s.tools_list.first_page_tools = 5;
    s.tools_list.page_tools = vec![5, 5, 3];
    s.tools_list.model_tokens = s.tools.iter().map(|t| t.model_tokens).sum();
    for tool in ["tool_0", "tool_12"] {
        let mut p = crate::measure::facts::ProbeResult::new(tool);
        let result = text("a short result");
        for id in ["gemini-cli", "codex"] {
            p.clients.push(ClientResult {
                model_tokenizer: None,
                client: id.into(),
                raw: seen(id, &result),
                budgeted: None,
                confirmed: true,
                measured: None,
                measured_version: None,
                unlisted: false,
            });
        }
        s.probes.push(p);
    }
    s
}

#[test]
fn a_client_that_reads_the_first_page_only_is_sent_and_offered_that_page_alone() {
    let mut r = Report::new(vec!["cl100k_base".into()], vec![paged_server()]);
    r.clients = vec![
        profile("gemini-cli").unwrap().clone(),
        profile("codex").unwrap().clone(),
    ];
    apply(&mut r);
    let s = &r.servers[0];
    let gemini = &s.clients[0];
    // the first page's five definitions: 100 + 101 + ... + 104, each with the parameter
    // Gemini CLI adds
    let wait = format!(
        ",{}",
        &profile("gemini-cli")
            .unwrap()
            .schema
            .adds_parameter
            .as_ref()
            .unwrap()[1..]
    );
    let wait = &wait[..wait.len() - 1];
    assert_eq!(
        gemini.schema_tokens_per_turn,
        510 + 5 * Tokenizer::Cl100k.count(wait)
    );
    assert_eq!(gemini.tools_offered, Some(5));
    assert!(!gemini.deferred);
    // Codex follows the cursor: every definition (it does not defer 13 tools)
    assert_eq!(s.clients[1].schema_tokens_per_turn, 1_378);
    assert_eq!(s.clients[1].tools_offered, None);
    // the probe of the last tool is unreachable for Gemini CLI only
    let unlisted = |probe: usize, id: &str| {
        s.probes[probe]
            .clients
            .iter()
            .find(|c| c.client == id)
            .unwrap()
            .unlisted
    };
    assert!(!unlisted(0, "gemini-cli") && unlisted(1, "gemini-cli"));
    assert!(!unlisted(1, "codex"));
    let totals = client_totals(&r);
    assert_eq!(totals[0].results, 1);
    assert_eq!(totals[1].results, 2);
    assert_eq!(definitions_text(&totals[0]), "page 1 only; 8 tools unseen");
    assert_eq!(definitions_text(&totals[1]), "every definition");
    // one page, or a report from before the first page was counted: every tool
    let mut one = paged_server();
    one.tools_list.pages = 1;
    let mut old = paged_server();
    old.tools_list.first_page_tools = 0;
    let mut r = Report::new(vec!["cl100k_base".into()], vec![one, old]);
    r.clients = vec![profile("gemini-cli").unwrap().clone()];
    apply(&mut r);
    for s in &r.servers {
        assert_eq!(
            s.clients[0].schema_tokens_per_turn,
            1_378 + 13 * Tokenizer::Cl100k.count(wait)
        );
        assert_eq!(s.clients[0].tools_offered, None);
    }
}

/// Qwen Code stops asking for pages once it has 100 tools (measured on 158 tools in pages of
/// 50): a client with `max_tools` is offered the pages up to that count.
#[test]
fn a_client_that_stops_at_a_number_of_tools_is_offered_the_pages_up_to_it() {
    let mut qwen = profile("qwen-code").unwrap().clone();
    assert_eq!(qwen.listing.as_ref().unwrap().max_tools, Some(100));
    qwen.listing.as_mut().unwrap().max_tools = Some(8);
    qwen.schema.mode = crate::config::profiles::SchemaMode::Full;
    let mut r = Report::new(vec!["cl100k_base".into()], vec![paged_server()]);
    r.clients = vec![qwen.clone()];
    apply(&mut r);
    let row = &r.servers[0].clients[0];
    // 5 tools, then 10: the third page is never read
    assert_eq!(row.tools_offered, Some(10));
    assert_eq!(row.schema_tokens_per_turn, (100..110).sum::<usize>());
    // as measured, 100: all 13 tools of three pages are read
    qwen.listing.as_mut().unwrap().max_tools = Some(100);
    r.clients = vec![qwen];
    apply(&mut r);
    assert_eq!(r.servers[0].clients[0].tools_offered, None);
}

#[test]
fn a_measured_row_is_labelled_and_its_numbers_are_the_measured_ones() {
    let codex = profile("codex").unwrap();
    let result = text(&"lorem ipsum ".repeat(2_000));
    let modelled = seen("codex", &result);
    let mut s = ServerReport::new("srv", "stdio", "srv", "test");
    let mut p = crate::measure::facts::ProbeResult::new("read");
    let measured = ClientSeen {
        model_tokens: None,
        tokens_to_model: modelled.tokens_to_model + 40,
        ..modelled.clone()
    };
    p.clients.push(ClientResult {
        model_tokenizer: None,
        client: "codex".into(),
        raw: modelled.clone(),
        budgeted: None,
        confirmed: true,
        measured: Some(measured),
        measured_version: Some("0.171.0".into()),
        unlisted: false,
    });
    s.probes.push(p);
    let mut r = Report::new(vec!["cl100k_base".into()], vec![s]);
    r.clients = vec![codex.clone()];
    // modelled: the label and the sentence say the profile was measured, not this run
    let t = &client_totals(&r)[0];
    assert_eq!(client_label(t), "codex *");
    assert_eq!(t.raw_tokens, modelled.tokens_to_model + 40);
    let text = measured_profiles_text(&r).unwrap();
    assert!(
        text.starts_with("Profiles measured in the lab (`mcp-budget lab`): codex 0.171.0 with model lab-model-x (2026-12-04). The rows apply the profiles"),
        "{text}"
    );
    // run here: the label names the version, the sentence says the rows were measured
    r.measured_clients.push(MeasuredClient {
        client: "codex".into(),
        name: "Codex CLI".into(),
        version: Some("0.171.0".into()),
        model: "lab-model-x".into(),
        status: "measured".into(),
        measured_at: "2026-12-02T00:00:00Z".into(),
        errors: Vec::new(),
        drift: vec!["opened with server/discover asking 2026-07-28, the profile says initialize asking 2025-06-18".into()],
    });
    assert_eq!(
        client_label(&client_totals(&r)[0]),
        "codex (measured 0.171.0)"
    );
    let text = measured_profiles_text(&r).unwrap();
    assert!(text.contains(
        "Rows marked (measured VERSION) are what that client sent its model in this run"
    ));
    // and a measured client that moved from its profile marks it stale
    assert!(text.ends_with(" Stale profile: codex: opened with server/discover asking 2026-07-28, the profile says initialize asking 2025-06-18."), "{text}");
    // a client the lab did not find keeps its modelled label
    r.measured_clients[0].status = "not_installed".into();
    assert_eq!(client_label(&client_totals(&r)[0]), "codex *");
}
