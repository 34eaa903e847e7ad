//! `lab --derive` on a real client (the pinned Kilo CLI `.ci/run` installs): several sizes in
//! one client run find the client's rules, a profile that holds in one run a shape (issue 39:
//! a full derive of a client under 5 minutes).

use serde_json::Value;

use super::real_clients::{lab_clients, ONE_CLIENT};
use crate::support::mcp_budget;

#[test]
fn kilo_derives_its_rules_four_sizes_to_a_run() {
    let Some(npm) = lab_clients() else {
        return;
    };
    let _one = ONE_CLIENT.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = mcp_budget(dir.path(), dir.path())
        .env("TMPDIR", dir.path())
        .args(["lab", "--derive", "--client", "kilo"])
        .args([
            "--shape",
            "lines,wide,short_lines,image",
            "--format",
            "json",
        ])
        .arg("--npm-dir")
        .arg(&npm)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{report:#}");
    let client = &report["clients"][0];
    assert_eq!(client["derive_errors"], serde_json::json!([]), "{client:#}");
    let rule = |shape: &str| {
        client["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["shape"] == shape && r["stage"] == 1)
            .unwrap_or_else(|| panic!("no rule for {shape}: {client:#}"))
            .clone()
    };
    // 50 KiB of text (the wide shape tells bytes from characters), 2,000 lines, no image
    for shape in ["lines", "wide"] {
        let r = rule(shape);
        assert_eq!(
            (r["unit"].as_str(), r["threshold"].as_u64()),
            (Some("bytes"), Some(51_200)),
            "{r:#}"
        );
        assert_eq!(r["file"], true, "{r:#}");
    }
    // a line cap under the byte cap: 2,000 lines whole, 2,001 not (the unit is told as lines
    // only beside the pretty JSON shapes; here the interval says it)
    let lines = rule("short_lines");
    let (lo, hi) = (&lines["whole_up_to"]["lines"], &lines["cut_from"]["lines"]);
    assert!(
        lo.as_u64() <= Some(2_000) && hi.as_u64() > Some(2_000),
        "{lines:#}"
    );
    assert!(
        lines["cut_from"]["bytes"].as_u64() < Some(51_200),
        "{lines:#}"
    );
    // the image dropped at the smallest size: nothing but Kilo's note reaches the model
    let image = rule("image");
    assert_eq!(image["whole_up_to"], Value::Null, "{image:#}");
    assert_eq!(image["delivery"], "marker_only", "{image:#}");
    // the profile holds: one client run a shape, its boundary and the search past it together
    for shape in ["lines", "wide", "short_lines", "image"] {
        assert_eq!(rule(shape)["runs"], 1, "{shape}: {client:#}");
    }
    // no second rule up to 1,000,000 characters
    assert!(
        client["rules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["stage"] == 1),
        "{client:#}"
    );
}
