//! The probe files shipped in `probes/` run as a user runs them from a clone, against the real
//! servers they name (the versions `.ci/run` installs, which the files pin): every probe is
//! measured with no probe warning, nothing needs the network, and the filesystem probes leave
//! out the clone's `target/`.

use std::path::{Path, PathBuf};

use crate::support::{mcp_budget, read_report, real_server, repo};

/// `probes/NAME.toml` with its `npx -y PACKAGE@VERSION` launch replaced by the installed
/// server `bin`; the version it pins is the one `.ci/run` installs.
fn shipped(name: &str, package: &str, bin: &Path, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(repo().join(format!("probes/{name}.toml"))).unwrap();
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    let pinned = ci
        .split_whitespace()
        .find(|w| w.starts_with(&format!("{package}@")))
        .unwrap_or_else(|| panic!(".ci/run installs no {package}"));
    let launch = format!("command = \"npx\"\nargs = [\"-y\", \"{pinned}\", ");
    assert!(
        text.contains(&launch),
        "probes/{name}.toml does not launch {pinned} as .ci/run installs it"
    );
    let local = format!("command = {:?}\nargs = [", bin.display().to_string());
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text.replace(&launch, &local)).unwrap();
    path
}

/// Audit `probe` from `cwd` and return its one server, every probe measured.
fn audit(home: &Path, cwd: &Path, probe: &Path, env: &[(&str, &Path)]) -> serde_json::Value {
    let out = home.join("out");
    let mut cmd = mcp_budget(home, cwd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.arg("audit")
        .arg(probe)
        .arg("--out")
        .arg(&out)
        .args(["--no-charts", "--format", "json"])
        .assert()
        .code(0);
    let report = read_report(&out);
    let s = report["servers"][0].clone();
    assert_eq!(s["status"], "ok", "{s}");
    for p in s["probes"].as_array().unwrap() {
        assert_eq!(p["status"], "ok", "{p}");
        assert!(p.get("argument_errors").is_none(), "{p}");
    }
    let probe_findings: Vec<_> = s["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("probe-"))
        .collect();
    assert!(probe_findings.is_empty(), "{probe_findings:?}");
    s
}

#[test]
fn everything_toml_measures_every_probe_offline() {
    let Some(bin) = real_server("mcp-server-everything") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probe = shipped(
        "everything",
        "@modelcontextprotocol/server-everything",
        &bin,
        home.path(),
    );
    let s = audit(home.path(), home.path(), &probe, &[]);
    let probes = s["probes"].as_array().unwrap();
    assert_eq!(probes.len(), 5);
    // the gzip probe compresses its data: URI (no fetch) and returns a blob resource
    let gzip = probes
        .iter()
        .find(|p| p["tool"] == "gzip-file-as-resource")
        .unwrap();
    let blocks = gzip["raw"]["blocks"].as_array().unwrap();
    assert!(blocks.iter().any(|b| b["type"] == "resource"), "{blocks:?}");
}

/// `.rs` files under `dir`, leaving out the folders the probe file excludes.
fn rust_files(dir: &Path, found: &mut usize) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() && !["target", "node_modules", ".git"].contains(&name.as_ref()) {
            rust_files(&entry.path(), found);
        } else if kind.is_file() && name.ends_with(".rs") {
            *found += 1;
        }
    }
}

#[test]
fn filesystem_toml_from_a_clone_leaves_out_target() {
    let Some(bin) = real_server("mcp-server-filesystem") else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probe = shipped(
        "filesystem",
        "@modelcontextprotocol/server-filesystem",
        &bin,
        home.path(),
    );
    // run from this clone, whose target/ holds the build (and .rs files of build scripts)
    let root = repo();
    let s = audit(home.path(), &root, &probe, &[("PROJECT_DIR", &root)]);
    let mut expected = 0;
    rust_files(&root, &mut expected);
    assert!(expected > 100, "{expected}");
    let search = s["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["tool"] == "search_files")
        .unwrap();
    // one path per line: the clone's sources, none of target/'s
    assert_eq!(search["raw"]["text_lines"], expected, "{search}");
}
