//! The action's install step takes the release binary of its own version where there is one:
//! downloaded from a release server (here on 127.0.0.1), its sha256 checked against the
//! release's checksum file; a checksum that does not match fails the step with nothing
//! installed and nothing built; no release at all falls back to `cargo install`.

use std::path::Path;
use std::process::Command;

use super::runner::Runner;
use crate::support::{free_port, repo, serve_on, Served};

const TARGET: &str = "x86_64-unknown-linux-musl";

/// A release server on 127.0.0.1 for this version: `mcp-budget` (a script that runs the binary
/// under test, marked) in the target's tarball, and a checksum file that says `sha` (the
/// tarball's own when `None`). Nothing published when `publish` is false.
fn release_server(dir: &Path, publish: bool, sha: Option<&str>) -> (Served, String) {
    let version = env!("CARGO_PKG_VERSION");
    let folder = dir.join(format!("v{version}"));
    std::fs::create_dir_all(&folder).unwrap();
    if publish {
        let stage = dir.join("stage");
        std::fs::create_dir_all(&stage).unwrap();
        let exe = stage.join("mcp-budget");
        std::fs::write(
            &exe,
            format!(
                "#!/bin/sh\n# the release binary\nexec '{}' \"$@\"\n",
                env!("CARGO_BIN_EXE_mcp-budget")
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let tarball = folder.join(format!("mcp-budget-{TARGET}.tar.gz"));
        let ok = Command::new("tar")
            .arg("-czf")
            .arg(&tarball)
            .arg("-C")
            .arg(&stage)
            .arg("mcp-budget")
            .status()
            .unwrap();
        assert!(ok.success());
        let own = Command::new("sha256sum").arg(&tarball).output().unwrap();
        let own = String::from_utf8_lossy(&own.stdout);
        let own = own.split(' ').next().unwrap().to_string();
        std::fs::write(
            folder.join(format!("mcp-budget-{TARGET}.tar.gz.sha256")),
            format!("{}  mcp-budget-{TARGET}.tar.gz\n", sha.unwrap_or(&own)),
        )
        .unwrap();
    }
    let port = free_port();
    let mut cmd = Command::new("python3");
    cmd.args([
        "-m",
        "http.server",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
    ])
    .arg("--directory")
    .arg(dir);
    (serve_on(cmd, port), format!("http://127.0.0.1:{port}"))
}

/// A `cargo` on the PATH that records that it ran (and installs nothing).
fn cargo_that_records(dir: &Path) -> std::path::PathBuf {
    let log = dir.join("cargo-ran");
    let cargo = dir.join("bin/cargo");
    std::fs::create_dir_all(cargo.parent().unwrap()).unwrap();
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\ntouch '{}'\nroot=\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\nmkdir -p \"$root/bin\" && ln -sf '{}' \"$root/bin/mcp-budget\"\n",
            log.display(),
            env!("CARGO_BIN_EXE_mcp-budget")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    log
}

fn runner(url: &str) -> (Runner, std::path::PathBuf) {
    let demo = repo().join("probes/demo.toml");
    let mut r = Runner::new(&[
        ("probe", demo.to_str().unwrap()),
        ("args", "--no-charts"),
        ("release-url", url),
    ]);
    let log = cargo_that_records(&r.temp);
    // no mcp-budget on the PATH but the one installed
    r.path.remove(0);
    r.path.insert(0, r.temp.join("bin"));
    (r, log)
}

#[test]
fn install_takes_the_release_binary_of_its_version_with_its_sha256_checked() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = release_server(dir.path(), true, None);
    let (r, cargo) = runner(&url);
    let f = r.run();
    assert_eq!(f.status, 0, "{}", f.log());
    assert_eq!(f.outputs["verdict"], "passed");
    let installed = r.home.join(".cargo/bin/mcp-budget");
    assert!(std::fs::read_to_string(&installed)
        .unwrap()
        .contains("# the release binary"));
    assert!(!cargo.exists(), "cargo ran though a release was there");
    assert!(
        f.stdout.contains(&format!(
            "mcp-budget: the release binary {url}/v{}/mcp-budget-{TARGET}.tar.gz (sha256 ",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        f.log()
    );
}

#[test]
fn a_release_binary_whose_sha256_does_not_match_is_not_installed_nor_built() {
    let dir = tempfile::tempdir().unwrap();
    let wrong = "0".repeat(64);
    let (_server, url) = release_server(dir.path(), true, Some(&wrong));
    let (r, cargo) = runner(&url);
    let f = r.run();
    assert_eq!(f.status, 2, "{}", f.log());
    assert!(
        f.stdout.contains("its checksum file says 0000"),
        "{}",
        f.log()
    );
    assert!(!r.home.join(".cargo/bin/mcp-budget").exists());
    assert!(!cargo.exists(), "cargo ran after a checksum mismatch");
}

#[test]
fn with_no_release_install_builds_with_cargo() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = release_server(dir.path(), false, None);
    let (r, cargo) = runner(&url);
    let f = r.run();
    assert_eq!(f.status, 0, "{}", f.log());
    assert!(f.stdout.contains("no release binary at"), "{}", f.log());
    assert!(cargo.exists(), "cargo did not run");
}
