//! The lab's measurements in an audit report: rows found by server and tool in order, images
//! at the audit's pixel cost, and the break read from what was delivered.

use super::*;
use crate::config::profiles::{client_view, select};
use crate::ground::tokens::Tokenizer;
use crate::lab::definitions::{Definitions, Form};
use crate::lab::isolate::Isolation;
use crate::lab::model::Api;
use crate::lab::probe::Sizes;
use crate::lab::report::{ClientReport, LabServerReport};
use crate::measure::facts::ClientResult;
use crate::measure::facts::{ProbeResult, RawCost, ServerReport};
use serde_json::json;

fn outcome(
    tool: &str,
    delivery: Delivery,
    raw_tokens: usize,
    delivered_tokens: usize,
) -> ProbeOutcome {
    ProbeOutcome {
        tool: tool.into(),
        raw: Sizes {
            chars: 40_000,
            bytes: 40_000,
            tokens: raw_tokens,
            lines: 1,
        },
        has_structured: false,
        delivered: Some(Sizes {
            chars: 1_000,
            bytes: 1_000,
            tokens: delivered_tokens,
            lines: 1,
        }),
        delivery,
        head_chars: 0,
        tail_chars: 0,
        sent: Sent::Content,
        added: String::new(),
        file: None,
        is_error: delivery == Delivery::Error,
        images: 0,
        images_delivered: 0,
        image_as_text: false,
        image_tokens: 0,
        blobs: 0,
        modelled: None,
        json_array: false,
    }
}

fn lab(client: &str, version: Option<&str>, probes: Vec<ProbeOutcome>) -> LabReport {
    LabReport {
        schema_version: 1,
        tool: "mcp-budget".into(),
        generated_at: "2026-12-02T00:00:00Z".into(),
        isolation: Isolation::UrlsOnly,
        tokenizer: "cl100k_base".into(),
        clients: vec![ClientReport {
            id: client.into(),
            name: client.into(),
            version: version.map(String::from),
            status: if version.is_some() {
                ClientStatus::Measured
            } else {
                ClientStatus::NotInstalled
            },
            api: Api::AnthropicMessages,
            model: "lab-model".into(),
            adapter: "built-in".into(),
            binary: None,
            looked_in: Vec::new(),
            servers: vec![LabServerReport {
                server: "srv".into(),
                pages_read: 1,
                stopped_before_last_page: false,
                era: None,
                definitions: Some(Definitions {
                    form: Form::Whole,
                    server_tools: 2,
                    defined: 2,
                    named: 0,
                    bytes: 800,
                    tokens: 210,
                    server_bytes: 700,
                    server_tokens: 190,
                    name_pattern: None,
                    dropped: Vec::new(),
                    added: Vec::new(),
                    added_parameters: Vec::new(),
                    modelled_tokens: None,
                }),
                probes,
                run_ms: vec![1],
                error: None,
                probe_errors: Vec::new(),
                kept: Vec::new(),
                retried: Vec::new(),
            }],
            rules: Vec::new(),
            derive_errors: Vec::new(),
            derive_kept: Vec::new(),
            era: None,
            profile: String::new(),
        }],
    }
}

/// A report with server `srv`, probes of `tools` (in order, with their text's tokens), each
/// with a claude-code row.
fn report(tools: &[(&str, usize)], image_tokens: usize) -> Report {
    let mut s = ServerReport::new("srv", "stdio", "srv", "test");
    let profile = select("claude-code").unwrap()[0];
    for (t, tokens) in tools {
        let seen = client_view(profile, &json!({"content": []}), Tokenizer::Cl100k);
        s.probes.push(ProbeResult {
            tool: t.to_string(),
            raw: Some(RawCost {
                image_tokens,
                content_tokens: tokens + image_tokens,
                ..RawCost::default()
            }),
            clients: vec![ClientResult {
                model_tokenizer: None,
                client: "claude-code".into(),
                raw: seen,
                budgeted: None,
                confirmed: true,
                measured: None,
                measured_version: None,
                unlisted: false,
            }],
            ..ProbeResult::new(t)
        });
    }
    s.clients = vec![crate::measure::facts::ClientSchema {
        client: "claude-code".into(),
        schema_tokens_per_turn: 100,
        deferred: false,
        tool_limit_exceeded: false,
        usd_per_1k_turns: None,
        confirmed: true,
        tools_offered: None,
        listing_era: None,
        model_tokenizer: None,
        model_tokens_per_turn: None,
        measured: None,
    }];
    Report::new(vec!["cl100k_base".into()], vec![s])
}

#[test]
fn probes_are_matched_by_tool_in_order_and_definitions_by_server() {
    let mut r = report(&[("read", 500), ("read", 700), ("other", 9)], 0);
    let lab = lab(
        "claude-code",
        Some("2.1.332"),
        vec![
            outcome("read", Delivery::Whole, 500, 510),
            outcome("read", Delivery::Whole, 700, 720),
            outcome("missing", Delivery::Whole, 9, 9),
        ],
    );
    merge(&mut r, &lab);
    let probes = &r.servers[0].probes;
    let m = |i: usize| {
        probes[i].clients[0]
            .measured
            .as_ref()
            .map(|m| m.tokens_to_model)
    };
    assert_eq!((m(0), m(1), m(2)), (Some(510), Some(720), None));
    assert_eq!(
        probes[0].clients[0].measured_version.as_deref(),
        Some("2.1.332")
    );
    let d = r.servers[0].clients[0].measured.as_ref().unwrap();
    assert_eq!(
        (d.tokens_per_turn, d.bytes_per_turn, d.form.as_str()),
        (210, 800, "whole")
    );
    assert_eq!(r.measured_clients[0].status, "measured");
    assert_eq!(r.measured_clients[0].version.as_deref(), Some("2.1.332"));
}

#[test]
fn a_client_not_installed_is_listed_and_measures_nothing() {
    let mut r = report(&[("read", 5)], 0);
    merge(
        &mut r,
        &lab(
            "claude-code",
            None,
            vec![outcome("read", Delivery::Whole, 5, 5)],
        ),
    );
    assert_eq!(r.measured_clients[0].status, "not_installed");
    assert!(r.servers[0].probes[0].clients[0].measured.is_none());
    assert!(r.servers[0].clients[0].measured.is_none());
}

#[test]
fn delivered_images_add_their_pixel_cost() {
    let mut r = report(&[("shot", 11)], 1_366);
    let mut o = outcome("shot", Delivery::Whole, 11, 11);
    // one image of two reached the model: the judge priced it (683 tokens of pixels)
    (o.images, o.images_delivered, o.image_tokens) = (2, 1, 683);
    merge(&mut r, &lab("claude-code", Some("1"), vec![o]));
    let m = r.servers[0].probes[0].clients[0].measured.as_ref().unwrap();
    // on top of the 11 text tokens, and not the audit's 1,366 for both images
    assert_eq!(m.tokens_to_model, 11 + 683);
}

#[test]
fn an_error_is_the_cap_when_over_it_else_the_json_array() {
    // Claude Code's profile refuses over 25,000 tokens: a 30,000-token array is over the cap
    let mut over = outcome("a", Delivery::Error, 30_000, 300);
    over.json_array = true;
    let mut small = outcome("b", Delivery::Error, 2_000, 300);
    small.json_array = true;
    let other = outcome("c", Delivery::Error, 2_000, 300);
    let b = |o: &ProbeOutcome| seen(o, "claude-code", "Claude Code", "2.1.332").breaks;
    assert_eq!(
        b(&over),
        Some(Break::CapNoPreview {
            cap: 25_000,
            unit: "tokens".into()
        })
    );
    assert_eq!(b(&small), Some(Break::JsonArrayError));
    assert_eq!(b(&other), Some(Break::ErrorInstead));
    assert_eq!(
        b(&outcome("d", Delivery::MarkerOnly, 90_000, 80)),
        Some(Break::MarkerOnly)
    );
}

#[test]
fn a_fixed_marker_is_judged_against_the_share_cut() {
    // 40,000 chars, 10,000 tokens; 4,000 + 4,000 chars kept: a fifth kept, 8,000 tokens cut
    let mut o = outcome("a", Delivery::Cut, 10_000, 2_000);
    (o.head_chars, o.tail_chars) = (4_000, 4_000);
    o.added = "\n…7 tokens truncated…\n".into();
    assert_eq!(
        seen(&o, "codex", "Codex", "0.171.0").breaks,
        Some(Break::MisstatedMarker {
            stated: 7,
            cut: 8_000,
            unit: "tokens".into()
        })
    );
    // a marker with the real count is no finding
    o.added = "[8,100 tokens truncated]".into();
    assert_eq!(seen(&o, "codex", "Codex", "0.171.0").breaks, None);
    assert_eq!(seen(&o, "codex", "Codex", "0.171.0").kept_fraction, 0.2);
}

#[test]
fn a_lab_call_with_another_result_than_the_audits_is_not_measured() {
    // the audit read 58,180 tokens; the lab's fresh server answered "Access denied" (40)
    let mut r = report(&[("read", 58_180), ("small", 300)], 0);
    let lab = lab(
        "claude-code",
        Some("2.1.332"),
        vec![
            outcome("read", Delivery::Whole, 40, 39),
            // within a tenth: the same result
            outcome("small", Delivery::Whole, 320, 330),
        ],
    );
    merge(&mut r, &lab);
    let probes = &r.servers[0].probes;
    assert!(probes[0].clients[0].measured.is_none());
    assert_eq!(
        probes[1].clients[0]
            .measured
            .as_ref()
            .map(|m| m.tokens_to_model),
        Some(330)
    );
    assert_eq!(
        r.measured_clients[0].errors,
        ["srv: read: not measured: the lab's call returned 40 tokens of text, the audit's 58,180"]
    );
}
