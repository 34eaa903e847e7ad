//! Every renderer (table, csv, json, markdown, html) on one fixture report: the embedded demo's
//! audit (deterministic payloads), with timings, dates and paths replaced so snapshots are stable.

use mcp_budget::measure::facts::Report;
use mcp_budget::output::report::charts::{ChartKind, DrawnChart};
use mcp_budget::output::report::{render, CsvKind, Format};

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
        rendered(
            &report,
            Format::Table {
                width: Some(120),
                wrap: true,
            }
        )
    );
    // the terminal's widths: at 80 columns the least important columns are left out (and
    // named), at 200 none; no line is wider than asked, no number is split
    for width in [80u16, 200] {
        let table = rendered(
            &report,
            Format::Table {
                width: Some(width),
                wrap: true,
            },
        );
        for line in table.lines() {
            assert!(
                unicode_width::UnicodeWidthStr::width(line) <= usize::from(width),
                "wider than {width}: {line}"
            );
        }
        insta::assert_snapshot!(format!("table_{width}"), table);
    }
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
            && first.contains(&mcp_budget::ground::units::thousands(
                demo.tools_list.model_tokens
            )),
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
        assert!(mcp_budget::judge::assess::findings::rule(&f.rule).is_some());
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

/// Issue 37: with no probes, probes.csv and clients.csv were 0-byte files. Every table has its
/// header row, the same as when it has rows.
#[test]
fn every_csv_has_its_header_without_rows() {
    let full = fixture();
    let mut bare = full.clone();
    for s in &mut bare.servers {
        s.probes.clear();
    }
    for kind in CsvKind::ALL {
        let header = |r: &Report| csv(r, kind).lines().next().map(String::from);
        assert!(
            header(&full).is_some_and(|h| h.starts_with("server,")),
            "{kind:?}"
        );
        assert_eq!(header(&bare), header(&full), "{kind:?}");
    }
    assert_eq!(csv(&bare, CsvKind::Probes).lines().count(), 1);
    assert_eq!(csv(&bare, CsvKind::Clients).lines().count(), 1);
    // no server at all (every one refused): every table is its header
    let mut none = full.clone();
    none.servers.clear();
    for kind in CsvKind::ALL {
        let text = csv(&none, kind);
        assert!(
            text.starts_with("server,") && text.lines().count() == 1,
            "{kind:?}: {text}"
        );
    }
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

/// Names and texts a hostile server could send: raw HTML behind a backtick, a Markdown table
/// pipe and a heading after a line break, a spreadsheet formula, a bidi override, ESC, and a
/// tool error far longer than any cell.
fn hostile_fixture() -> Report {
    use mcp_budget::measure::facts::{ProbeResult, ProbeStatus, RawCost, ServerReport, ToolCost};
    let mut s = ServerReport::new("srv|<b>x</b>\n# h @team", "stdio", "x", "t");
    let names = [
        ("x`<img src=x onerror=alert(1)>`y", 300),
        ("=HYPERLINK(\"http://evil\",\"click\")", 200),
        ("abc\u{202e}fed\u{1b}[2J", 100),
    ];
    s.tools = names
        .iter()
        .map(|(n, t)| ToolCost {
            name: n.to_string(),
            model_tokens: *t,
            ..ToolCost::default()
        })
        .collect();
    s.tools_list.tool_count = 3;
    s.tools_list.model_tokens = 600;
    s.probes.push(ProbeResult {
        status: ProbeStatus::ToolError,
        error: Some(format!("-1+2 <script>{}", "E".repeat(40_000))),
        latency_ms: 3.0,
        raw: Some(RawCost {
            model_tokens: 5_000,
            ..RawCost::default()
        }),
        ..ProbeResult::new(names[0].0)
    });
    let mut r = Report::new(vec!["cl100k_base".into()], vec![s]);
    r.generated_at = "2026-01-01T00:00:00Z".into();
    r.tool_version = "0.0.0".into();
    r
}

#[test]
fn hostile_names_render_as_text_in_every_format() {
    let r = hostile_fixture();
    let table = rendered(
        &r,
        Format::Table {
            width: Some(120),
            wrap: true,
        },
    );
    assert!(!table.contains('\u{202e}') && !table.contains('\u{1b}'));
    insta::assert_snapshot!("hostile_table", table);
    let md = rendered(&r, Format::Markdown { charts: &[] });
    for line in md.lines() {
        let bare = outside_code_spans(line);
        assert!(!unescaped(&bare, '<') && !unescaped(&bare, '`'), "{line}");
    }
    insta::assert_snapshot!("hostile_markdown", md);
    let html = rendered(&r, Format::Html { charts: &[] });
    let body = &html[html.find("<body>").unwrap()..html.find("<script>").unwrap()];
    assert!(!body.contains("<img") && !body.contains("<b>") && !body.contains('\u{202e}'));
    insta::assert_snapshot!("hostile_html_body", body);
    insta::assert_snapshot!("hostile_tools_csv", csv(&r, CsvKind::Tools));
    insta::assert_snapshot!("hostile_probes_csv", csv(&r, CsvKind::Probes));
}

/// A Markdown line without its code spans (CommonMark: a run of n backticks up to the next run
/// of exactly n), to check what is left for markup.
pub(crate) fn outside_code_spans(line: &str) -> String {
    let b: Vec<char> = line.chars().collect();
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        let escaped = i > 0 && b[i - 1] == '\\';
        if b[i] != '`' || escaped {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let n = b[i..].iter().take_while(|c| **c == '`').count();
        let mut j = i + n;
        let close = loop {
            if j >= b.len() {
                break None;
            }
            let m = b[j..].iter().take_while(|c| **c == '`').count();
            if m == n {
                break Some(j + m);
            }
            j += m.max(1);
        };
        match close {
            Some(end) => i = end,
            None => {
                out.extend(&b[i..i + n]);
                i += n;
            }
        }
    }
    out
}

/// Whether `c` occurs in `text` without a backslash before it.
pub(crate) fn unescaped(text: &str, c: char) -> bool {
    let b: Vec<char> = text.chars().collect();
    (0..b.len()).any(|i| b[i] == c && (i == 0 || b[i - 1] != '\\'))
}
