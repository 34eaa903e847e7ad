//! Every renderer (table, csv, json, markdown, html) on one fixture report: the embedded demo's
//! audit (deterministic payloads), with timings, dates and paths replaced so snapshots are stable.

use mcp_budget::report::charts::{ChartKind, DrawnChart};
use mcp_budget::report::{render, CsvKind, Format, Report};

/// The demo audit, with everything that varies from run to run fixed.
fn fixture() -> Report {
    let home = tempfile::tempdir().unwrap();
    // a fixed spill dir: the notes name it, and their token counts must not depend on a random
    // temporary name
    let spill = std::env::temp_dir().join("mcp-budget-snapshot-spill");
    let out = crate::support::mcp_budget(home.path(), home.path())
        .arg("audit")
        .arg(crate::support::repo().join("probes/demo.toml"))
        .args(["--no-write", "--format", "json", "--spill-dir"])
        .arg(&spill)
        .args(["--tokenizer", "cl100k_base,o200k_base"])
        // a debug build on a busy machine can take over the default 60 s
        .args(["--timeout", "600"])
        .assert()
        .code(0);
    let mut report: Report =
        serde_json::from_slice(&out.get_output().stdout).expect("audit.json loads as a Report");
    let spill = spill.display().to_string();
    report.generated_at = "2026-01-01T00:00:00Z".into();
    report.tool_version = "0.0.0".into();
    assert!(report.engine_startup_us.is_some_and(|us| us > 0));
    report.engine_startup_us = Some(42_000);
    report.spill_dir = report.spill_dir.map(|d| d.replace(&spill, "<spill>"));
    for s in &mut report.servers {
        s.initialize_ms = Some(1.0);
        s.tools_list.latency_ms = 2.0;
        s.source = "probes/demo.toml".into();
        for p in &mut s.probes {
            p.latency_ms = 3.0;
            if let Some(b) = &mut p.budgeted {
                b.engine_us = 1500;
                b.spill_path = b.spill_path.as_ref().map(|x| x.replace(&spill, "<spill>"));
                b.note = b.note.as_ref().map(|x| x.replace(&spill, "<spill>"));
            }
        }
    }
    report
}

fn rendered(report: &Report, format: Format<'_>) -> String {
    let mut out = Vec::new();
    render(report, format, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn csv(report: &Report, kind: CsvKind) -> String {
    rendered(report, Format::Csv(kind))
}

#[test]
fn every_renderer_on_the_demo_report() {
    let report = fixture();
    insta::assert_snapshot!(
        "table",
        rendered(&report, Format::Table { width: Some(120) })
    );
    insta::assert_snapshot!("servers_csv", csv(&report, CsvKind::Servers));
    insta::assert_snapshot!("tools_csv", csv(&report, CsvKind::Tools));
    insta::assert_snapshot!("probes_csv", csv(&report, CsvKind::Probes));
    insta::assert_snapshot!("json", rendered(&report, Format::Json));
    let svg = |kind: ChartKind, t: &str| {
        DrawnChart {
        kind,
        svg: format!("<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"><text>{t}</text></svg>"),
    }
    };
    let charts = [
        svg(ChartKind::SchemaTax, "tax"),
        svg(ChartKind::ProbeTokens, "tokens"),
    ];
    let md = rendered(&report, Format::Markdown { charts: &charts });
    insta::assert_snapshot!("markdown", md);
    let html = rendered(&report, Format::Html { charts: &charts });
    insta::assert_snapshot!("html", html);
}

#[test]
fn the_report_sections_are_filled_from_the_numbers() {
    let report = fixture();
    let md = rendered(&report, Format::Markdown { charts: &[] });
    let demo = &report.servers[0];
    // the summary paragraph states the measured totals
    let first = md.lines().nth(2).unwrap();
    assert!(
        first.contains(&format!("{} tools", demo.tools_list.tool_count))
            && first.contains(&mcp_budget::units::thousands(demo.tools_list.model_tokens)),
        "{first}"
    );
    for heading in [
        "## Schema tax per server",
        "## Most expensive tools",
        "## Probe results: raw and budgeted",
        "## Client limits",
        "## Findings",
    ] {
        assert!(md.contains(heading), "{heading}");
    }
    // every finding appears, and each has a rule --explain knows
    assert!(!demo.findings.is_empty());
    for f in &demo.findings {
        assert!(md.contains(&format!("`{}`", f.rule)));
        assert!(mcp_budget::report::findings::rule(&f.rule).is_some());
    }
    // costs: claude-sonnet-4.5 by default, priced on the claude estimate
    let pricing = report.pricing.as_ref().unwrap();
    assert_eq!(pricing.model, "claude-sonnet-4.5");
    let cost = demo.cost.as_ref().unwrap();
    assert_eq!(
        cost.tokens_per_turn,
        (demo.tools_list.model_tokens as f64 * 1.23).round() as usize
    );
    // o200k side by side
    assert!(md.contains("o200k_base tokens/turn"));
    // the html is one self-contained page: no external resource at all
    let html = rendered(&report, Format::Html { charts: &[] });
    for external in ["src=\"http", "href=\"http", "<link", "@import", "url("] {
        assert!(!html.contains(external), "{external}");
    }
    assert_eq!(
        html.matches("<table class=\"sortable\">").count(),
        md.lines().filter(|l| l.starts_with("|---")).count()
    );
}

#[test]
fn explain_prints_a_rule_and_refuses_an_unknown_one() {
    let home = tempfile::tempdir().unwrap();
    crate::support::mcp_budget(home.path(), home.path())
        .args(["audit", "--explain", "cursor-ignored"])
        .assert()
        .success()
        .stdout(predicates::str::contains("Why:"))
        .stdout(predicates::str::contains("nextCursor"));
    crate::support::mcp_budget(home.path(), home.path())
        .args(["audit", "--explain", "no-such-rule"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown rule `no-such-rule`"));
    crate::support::mcp_budget(home.path(), home.path())
        .args(["audit", "--model", "gpt-99", "--no-write"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown model `gpt-99`"));
}
