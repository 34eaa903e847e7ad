//! Spilled originals (a server's results as it sent them, secrets it echoed included) stay out
//! of the report folder people commit: `audit --out OUT` spills to the cache's spill store, and
//! the report says where; `--spill-dir` still wins.

use std::path::Path;

use crate::secrets::files_under;
use crate::support::{mcp_budget, read_report};

/// A demo probe whose result is over a budget of 200 tokens, so it spills.
const PROBE: &str = "[servers.demo]\nbuiltin = \"demo\"\n\
                     [[servers.demo.probes]]\ntool = \"list_tickets\"\n";

fn audit(home: &Path, out: &Path, extra: &[&str]) -> serde_json::Value {
    let probe = home.join("probe.toml");
    std::fs::write(&probe, PROBE).unwrap();
    mcp_budget(home, home)
        .arg("audit")
        .arg(&probe)
        .args(["--budget", "200", "--out"])
        .arg(out)
        .args(extra)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .assert()
        .code(0);
    read_report(out)
}

fn spill_path(report: &serde_json::Value) -> String {
    report["servers"][0]["probes"][0]["budgeted"]["spill_path"]
        .as_str()
        .expect("the result spilled")
        .to_string()
}

#[test]
fn audit_spills_outside_the_report_folder_and_says_where() {
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("reports/latest");
    let report = audit(home.path(), &out, &[]);
    let store = home.path().join("cache/mcp-budget/spill");
    assert_eq!(report["spill_dir"], store.display().to_string());
    let path = spill_path(&report);
    assert!(path.starts_with(&store.display().to_string()), "{path}");
    assert!(Path::new(&path).is_file(), "{path}");
    assert!(
        !out.join("spill").exists(),
        "a spill folder inside the report folder"
    );
    for (name, _) in files_under(&out) {
        assert!(
            !name.contains("list_tickets-"),
            "a spilled original in {name}"
        );
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains(&format!("are in the spill store `{}`", store.display())),
        "{md}"
    );

    // an explicit --spill-dir still wins, and is the one named
    let chosen = home.path().join("chosen");
    let out2 = home.path().join("out2");
    let report = audit(
        home.path(),
        &out2,
        &["--spill-dir", chosen.to_str().unwrap()],
    );
    assert_eq!(report["spill_dir"], chosen.display().to_string());
    assert!(spill_path(&report).starts_with(&chosen.display().to_string()));
}
