//! The protocol era a client speaks, read from its own requests in a lab run (issue 39, part
//! 3): a client of the 2026-07-28 era opens with `server/discover`; on a server of the
//! handshake era only (`lab-server --era legacy`, -32022; `--era unaware`, -32601) it falls
//! back to `initialize` or cannot use the server, and the lab says which.

use std::path::Path;

use serde_json::Value;

use super::{lab, test_adapter};
use crate::support::bin_path;

/// A probe file mounting `mcp-budget lab-server --era ERA` with one small probe.
fn lab_server(dir: &Path, era: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{era}.toml"));
    std::fs::write(
        &path,
        format!(
            "[servers.shapes]\ncommand = {}\nargs = [\"lab-server\", \"--era\", \"{era}\"]\n\n[[servers.shapes.probes]]\ntool = \"lab_result\"\narguments = {{ shape = \"lines\", chars = 500 }}\n",
            toml::Value::String(bin_path().display().to_string())
        ),
    )
    .unwrap();
    path
}

/// The lab's report of the test client opening as `discover` says, on a server of `era`.
fn run(era: &str, discover: &str) -> (Value, i32) {
    let dir = tempfile::tempdir().unwrap();
    let adapter = test_adapter(dir.path(), &[("LAB_DISCOVER", discover)]);
    let (report, code, stderr) = lab(dir.path(), &lab_server(dir.path(), era), &adapter, &[]);
    assert!(report.is_object(), "{stderr}");
    (report["clients"][0]["servers"][0].clone(), code)
}

#[test]
fn a_discovering_client_is_seen_speaking_2026_07_28_to_a_server_of_both_eras() {
    let (server, code) = run("both", "fallback");
    assert_eq!(code, 0, "{server:#}");
    let era = &server["era"];
    assert_eq!(era["opened_with"], "server/discover", "{server:#}");
    assert_eq!(era["asked"], "2026-07-28");
    assert_eq!(era["settled"], "2026-07-28");
    assert!(era["discover_refused"].is_null() && era["fell_back"].is_null());
    assert_eq!(server["probes"][0]["delivery"], "whole", "{server:#}");
    // a handshake client opens with initialize
    let (server, _) = run("both", "");
    assert_eq!(server["era"]["opened_with"], "initialize");
    assert_eq!(server["era"]["settled"], "2025-06-18");
}

#[test]
fn on_a_server_of_the_handshake_era_a_client_falls_back_or_the_lab_says_it_did_not() {
    let (server, code) = run("legacy", "fallback");
    assert_eq!(code, 0, "{server:#}");
    let era = &server["era"];
    assert_eq!(era["discover_refused"], -32022, "{server:#}");
    assert_eq!(era["fell_back"], true);
    assert_eq!(era["settled"], "2025-06-18");
    assert_eq!(server["probes"][0]["delivery"], "whole", "{server:#}");
    // a server from before 2026 does not know the method; a client that gives up is said
    let (server, code) = run("unaware", "only");
    assert_eq!(code, 2, "{server:#}");
    assert_eq!(server["era"]["discover_refused"], -32601, "{server:#}");
    assert_eq!(server["era"]["fell_back"], false);
    let error = server["error"].as_str().unwrap();
    assert!(
        error.contains(
            "it spoke 2026-07-28 (server/discover), refused -32601: did not fall back to initialize"
        ),
        "{error}"
    );
}
