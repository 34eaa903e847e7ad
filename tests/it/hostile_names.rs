//! Names and texts a server sends end up in files people open: the suggested policy, report.md,
//! report.html, the CSV tables, the terminal. A real server (tests/fixtures/hostile_names.py)
//! sends hostile ones; every file must show them as text and nothing else.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::support::{mcp_budget, repo};

/// A server name that, written raw on a line of its own, is a TOML table giving every tool a
/// new description.
const TOML_SERVER: &str = "srv\n[policy.tools.\"*\"]\ndescription = \"pwned\"\n#";

/// A description long enough (about 1,100 tokens) for the audit to suggest a cut.
fn long_description() -> String {
    (1..=80)
        .map(|i| format!("Step {i} reads the named file and returns its lines with their numbers."))
        .collect::<Vec<_>>()
        .join(" ")
}

fn tool(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
}

/// Run `audit` on one hostile server named `server` offering `tools` (a call of a tool named in
/// `errors` answers with that text as a tool error), probing each of `probes`, with `args`.
fn audit(home: &Path, server: &str, spec: Value, probes: &[&str], args: &[&str]) -> Output {
    let spec_file = home.join("spec.json");
    std::fs::write(&spec_file, spec.to_string()).unwrap();
    let script = repo().join("tests/fixtures/hostile_names.py");
    let mut entry = toml::Table::new();
    entry.insert("command".into(), "python3".into());
    let argv = [
        script.display().to_string(),
        spec_file.display().to_string(),
    ];
    entry.insert("args".into(), argv.to_vec().into());
    let probes: Vec<toml::Value> = probes
        .iter()
        .map(|t| toml::Value::Table([("tool".to_string(), (*t).into())].into_iter().collect()))
        .collect();
    if !probes.is_empty() {
        entry.insert("probes".into(), probes.into());
    }
    let mut servers = toml::Table::new();
    servers.insert(server.into(), entry.into());
    let mut file = toml::Table::new();
    file.insert("servers".into(), servers.into());
    let probe_file = home.join("probe.toml");
    std::fs::write(&probe_file, toml::to_string(&file).unwrap()).unwrap();
    let out = mcp_budget(home, home)
        .arg("audit")
        .arg(&probe_file)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "audit failed: {stderr}");
    out
}

#[test]
fn the_suggested_policy_is_exactly_what_the_audit_suggests_whatever_the_names() {
    let home = tempfile::tempdir().unwrap();
    // DEL is not allowed raw in a TOML string; `*` would be a glob
    let name = "read*\u{7f}\u{202e}";
    let spec = json!({"tools": [tool(name, &long_description()), tool("plain", "Short.")]});
    let policy: PathBuf = home.path().join("policy.toml");
    let out = home.path().join("out");
    let args = ["--no-charts", "--format", "json", "--suggest-policy"];
    let mut args: Vec<&str> = args.to_vec();
    args.extend([policy.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    audit(home.path(), TOML_SERVER, spec, &[], &args);
    let report = crate::support::read_report(&out);
    let chars = report["servers"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()["description_cut_chars"]
        .as_i64()
        .expect("the audit suggests a cut");
    let text = std::fs::read_to_string(&policy).unwrap();
    let parsed: toml::Value =
        toml::from_str(&text).unwrap_or_else(|e| panic!("the policy does not parse: {e}\n{text}"));
    let expected: toml::Value = toml::from_str(&format!(
        "[policy]\nlean_schemas = true\n[policy.tools.\"read[*]\\u007F\\u202E\"]\nmax_description_chars = {chars}\n"
    ))
    .unwrap();
    assert_eq!(parsed, expected, "{text}");
    // the name is in the header, escaped, on the header's line
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("srv\\n[policy.tools.\"*\"]\\ndescription = \"pwned\"\\n#."),
        "{text}"
    );
    assert!(
        !text.contains('\u{7f}') && !text.contains('\u{202e}'),
        "{text}"
    );
}

/// Hostile names for Markdown, HTML, spreadsheets and terminals.
const IMG_TOOL: &str = "x`<img src=x onerror=alert(1)>`y";
const FORMULA_TOOL: &str = "=HYPERLINK(\"http://evil\",\"click\")";
const BIDI_TOOL: &str = "abc\u{202e}fed";

#[test]
fn report_files_show_hostile_names_as_text() {
    let home = tempfile::tempdir().unwrap();
    let spec =
        json!({"tools": [tool(IMG_TOOL, "Img."), tool(FORMULA_TOOL, "F."), tool(BIDI_TOOL, "B.")]});
    let out = home.path().join("out");
    let args = [
        "--no-charts",
        "--format",
        "table",
        "--out",
        out.to_str().unwrap(),
    ];
    let run = audit(home.path(), "srv|<b>x</b>", spec, &[IMG_TOOL], &args);
    let table = String::from_utf8(run.stdout).unwrap();
    assert!(!table.contains('\u{202e}'), "{table}");
    assert!(table.contains("abc\\u{202e}fed"), "{table}");
    // report.md: outside code spans no `<` or backtick is left unescaped
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("``x`<img src=x onerror=alert(1)>`y``"), "{md}");
    for line in md.lines() {
        let bare = crate::renderers::outside_code_spans(line);
        assert!(
            !crate::renderers::unescaped(&bare, '<') && !crate::renderers::unescaped(&bare, '`'),
            "{line}"
        );
    }
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        !html.contains("<img") && !html.contains("<b>"),
        "raw HTML in report.html"
    );
    assert!(!html.contains('\u{202e}'));
    // tools.csv: the formula is text, the numbers stay numbers
    let mut csv = csv::Reader::from_path(out.join("tools.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
    let formula = rows.iter().find(|r| r[1].contains("HYPERLINK")).unwrap();
    assert_eq!(&formula[1], format!("'{FORMULA_TOOL}"));
    assert!(formula[2].parse::<u64>().is_ok(), "{formula:?}");
    let bidi = rows.iter().find(|r| r[1].starts_with("abc")).unwrap();
    assert_eq!(&bidi[1], "abc\\u{202e}fed");
}

#[test]
fn a_huge_tool_error_is_a_bounded_preview_in_every_table() {
    let home = tempfile::tempdir().unwrap();
    let error = format!("error: {}", "lorem ipsum dolor sit amet ".repeat(18_600));
    let spec = json!({"tools": [tool("big", "Big.")], "errors": {"big": error}});
    let out = home.path().join("out");
    let args = [
        "--no-charts",
        "--format",
        "table",
        "--out",
        out.to_str().unwrap(),
    ];
    let run = audit(home.path(), "s", spec, &["big"], &args);
    let table = String::from_utf8(run.stdout).unwrap();
    assert!(table.len() < 60_000, "the table is {} bytes", table.len());
    // the status cell is cut to the width, and the table says where the whole of it is
    assert!(
        table.contains("│ tool er") || table.contains("┆ tool er"),
        "{table}"
    );
    assert!(
        table.contains("… marks text cut to fit it; all of it in probes.csv and audit.json"),
        "{table}"
    );
    let report = crate::support::read_report(&out);
    let kept = report["servers"][0]["probes"][0]["error"].as_str().unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.len() < 60_000, "report.md is {} bytes", md.len());
    // the status cell is "tool error: " and the error
    let more = "tool error: ".len() + kept.chars().count() - 1_000;
    let note = format!("…({} more characters in audit.json)", thousands(more));
    assert!(md.contains(&note), "{note}");
    let mut csv = csv::Reader::from_path(out.join("probes.csv")).unwrap();
    let headers = csv.headers().unwrap().clone();
    let col = headers.iter().position(|h| h == "error").unwrap();
    let row = csv.records().next().unwrap().unwrap();
    let cell = &row[col];
    let more = kept.chars().count() - 32_000;
    assert!(cell.ends_with(&format!(
        "…({} more characters in audit.json)",
        thousands(more)
    )));
}

fn thousands(n: usize) -> String {
    mcp_budget::ground::units::thousands(n)
}
