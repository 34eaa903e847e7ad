//! The packages install and run offline (issue 41): the npm packages (a launcher and the
//! linux-x64 platform package) into an empty prefix with no network, then `npx mcp-budget`;
//! the PyPI wheel (maturin, `bin` bindings) into a fresh venv with no index. Both run
//! `--version` and the demo audit. The packages are built from this checkout by
//! scripts/build-packages.sh (`.ci/run` runs it before the tests) into target/packages.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::repo;

/// The built packages' folder, or a skip (a failure when real servers are required).
fn packages(kind: &str, ext: &str) -> Option<Vec<PathBuf>> {
    let dir = repo().join("target/packages").join(kind);
    let found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == ext))
                .collect()
        })
        .unwrap_or_default();
    if found.is_empty() {
        crate::support::skip(&format!(
            "no {kind} package in {} (run scripts/build-packages.sh)",
            dir.display()
        ));
        return None;
    }
    Some(found)
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The demo audit through `cmd` (the installed command) writes its report into `out`.
fn demo_audit(mut cmd: Command, out: &Path) {
    let (code, _, err) = run(cmd.args(["audit", "--out"]).arg(out));
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("audit.json")).unwrap()).unwrap();
    assert_eq!(report["servers"][0]["name"], "demo", "{report}");
}

fn npm_install(prefix: &Path, tarballs: &[&PathBuf]) {
    std::fs::write(prefix.join("package.json"), "{\"private\": true}\n").unwrap();
    let (code, _, err) = run(Command::new("npm")
        .current_dir(prefix)
        .args(["install", "--offline", "--no-audit", "--no-fund"])
        .args(tarballs));
    assert_eq!(code, 0, "{err}");
}

fn npx(prefix: &Path) -> Command {
    let mut cmd = Command::new("npx");
    cmd.current_dir(prefix).args(["--no-install", "mcp-budget"]);
    cmd
}

#[test]
fn the_npm_packages_install_offline_and_npx_runs_the_demo() {
    let Some(tarballs) = packages("npm", "tgz") else {
        return;
    };
    let launcher = tarballs
        .iter()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("mcp-budget-0"))
        })
        .expect("the launcher's tarball");
    let platform = tarballs
        .iter()
        .find(|p| p.to_string_lossy().contains("linux-x64"))
        .expect("the linux-x64 tarball");
    let prefix = tempfile::tempdir().unwrap();
    npm_install(prefix.path(), &[platform, launcher]);
    let (code, out, err) = run(npx(prefix.path()).arg("--version"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        format!("mcp-budget {}", env!("CARGO_PKG_VERSION"))
    );
    demo_audit(npx(prefix.path()), &prefix.path().join("report"));
    // the binary's exit status comes through the launcher (2: a usage error)
    let (code, _, err) = run(npx(prefix.path()).arg("--no-such-flag"));
    assert_eq!(code, 2, "{err}");
    // the launcher alone (its platform package left out): one line that says so
    let bare = tempfile::tempdir().unwrap();
    npm_install(bare.path(), &[launcher]);
    let (code, _, err) = run(npx(bare.path()).arg("--version"));
    assert_eq!(code, 1);
    assert!(
        err.contains("the package @mcp-budget/linux-x64 is not installed"),
        "{err}"
    );
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_with_no_index_and_runs_the_demo() {
    let Some(wheels) = packages("pypi", "whl") else {
        return;
    };
    let name = wheels[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // the distribution's name is free on PyPI; the command is mcp-budget
    assert!(name.starts_with("mcp_budget_cli-"), "{name}");
    let venv = tempfile::tempdir().unwrap();
    let (code, _, err) = run(Command::new("python3")
        .args(["-m", "venv"])
        .arg(venv.path()));
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(Command::new(venv.path().join("bin/pip"))
        .args([
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .arg(&wheels[0]));
    assert_eq!(code, 0, "{err}");
    let installed = venv.path().join("bin/mcp-budget");
    let (code, out, err) = run(Command::new(&installed).arg("--version"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        format!("mcp-budget {}", env!("CARGO_PKG_VERSION"))
    );
    demo_audit(Command::new(&installed), &venv.path().join("report"));
}
