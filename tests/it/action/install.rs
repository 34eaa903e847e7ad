//! The action's install and cache steps: `cargo install` of the action's own copy unless the
//! cache restored the binary, and a cache key that follows the sources it is built from.

use std::path::{Path, PathBuf};

use super::runner::{file_commands, Runner};
use crate::support::repo;

/// A `cargo` that records its arguments and "installs" the binary under test into `--root`.
fn fake_cargo(dir: &Path) -> PathBuf {
    let log = dir.join("cargo-args");
    let bin = env!("CARGO_BIN_EXE_mcp-budget");
    let script = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nroot=\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\nmkdir -p \"$root/bin\" && ln -sf '{bin}' \"$root/bin/mcp-budget\"\n",
        log.display()
    );
    let cargo = dir.join("bin/cargo");
    std::fs::create_dir_all(cargo.parent().unwrap()).unwrap();
    std::fs::write(&cargo, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    log
}

#[test]
fn install_builds_the_action_s_own_copy_unless_the_cache_restored_it() {
    let demo = repo().join("probes/demo.toml");
    for hit in [false, true] {
        let mut r = Runner::new(&[("probe", demo.to_str().unwrap()), ("args", "--no-charts")]);
        let log = fake_cargo(&r.temp);
        // no mcp-budget on the PATH but the one installed: the binary's folder is not on it
        r.path.remove(0);
        r.path.insert(0, r.temp.join("bin"));
        let installed = r.home.join(".cargo/bin/mcp-budget");
        if hit {
            std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_mcp-budget"), &installed).unwrap();
            r.uses_outputs.insert(
                "actions/cache/restore@".into(),
                [("cache-hit".to_string(), "true".to_string())].into(),
            );
        }
        let f = r.run();
        assert_eq!(f.status, 0, "{}", f.log());
        assert_eq!(f.outputs["verdict"], "passed");
        assert!(
            f.stdout
                .contains(&format!("mcp-budget: {} (mcp-budget ", installed.display())),
            "{}",
            f.stdout
        );
        // the cache saves what install wrote, under the key prepare computed
        let with = &f.with["cache"];
        assert_eq!(with["path"], "~/.cargo/bin/mcp-budget");
        let key = file_commands(&f.raw_outputs["prepare"]);
        assert_eq!(key[0].0, "key");
        assert_eq!(with["key"], key[0].1);
        // and saves it apart, right after install (not in a post step a failed gate skips)
        assert_eq!(f.with.contains_key("save"), !hit, "{:?}", f.with.keys());
        if !hit {
            assert_eq!(f.with["save"]["key"], key[0].1);
            assert_eq!(f.with["save"]["path"], "~/.cargo/bin/mcp-budget");
        }
        if hit {
            assert_eq!(f.ran, ["prepare", "run"]);
            assert!(!log.exists(), "cargo ran on a cache hit");
        } else {
            assert_eq!(f.ran, ["prepare", "install", "run"]);
            let args = std::fs::read_to_string(&log).unwrap();
            let root = r.action_path.display().to_string();
            let home = r.home.join(".cargo").display().to_string();
            assert_eq!(
                args.lines().collect::<Vec<_>>(),
                ["install", "--locked", "--force", "--path", &root, "--root", &home]
            );
        }
    }
}

/// `scripts/action.sh prepare` in a copy of the action whose files can change: its key.
fn key_of(action: &Path) -> String {
    key_on(action, "ubuntu24")
}

/// The same on a runner image (`ImageOS`).
fn key_on(action: &Path, image: &str) -> String {
    let home = action.join("home");
    let out = action.join("output");
    std::fs::write(&out, "").unwrap();
    let status = std::process::Command::new("bash")
        .arg(action.join("scripts/action.sh"))
        .arg("prepare")
        .env("GITHUB_ACTION_PATH", action)
        .env("GITHUB_OUTPUT", &out)
        .env("GITHUB_PATH", action.join("path"))
        .env("HOME", &home)
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("ImageOS", image)
        .status()
        .unwrap();
    assert!(status.success());
    let outputs = file_commands(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(outputs[0].0, "key");
    outputs[0].1.clone()
}

#[test]
fn the_cache_key_changes_with_the_sources_the_binary_is_built_from() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path();
    for (file, body) in [
        (
            "scripts/action.sh",
            std::fs::read_to_string(repo().join("scripts/action.sh")).unwrap(),
        ),
        ("src/main.rs", "fn main() {}\n".into()),
        ("probes/demo.toml", "[servers.demo]\n".into()),
        ("Cargo.toml", "[package]\n".into()),
        ("Cargo.lock", "version = 4\n".into()),
        ("build.rs", "fn main() {}\n".into()),
        ("README.md", "# read me\n".into()),
    ] {
        std::fs::create_dir_all(a.join(file).parent().unwrap()).unwrap();
        std::fs::write(a.join(file), body).unwrap();
    }
    let first = key_of(a);
    let hex = first
        .strip_prefix("mcp-budget-Linux-X64-ubuntu24-")
        .unwrap();
    assert!(
        hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()),
        "{first}"
    );
    assert_eq!(key_of(a), first, "the same sources, the same key");
    std::fs::write(a.join("README.md"), "# changed\n").unwrap();
    assert_eq!(key_of(a), first, "a file the binary is not built from");
    for file in ["src/main.rs", "probes/demo.toml", "Cargo.lock", "build.rs"] {
        let was = std::fs::read_to_string(a.join(file)).unwrap();
        std::fs::write(a.join(file), format!("{was}// changed\n")).unwrap();
        assert_ne!(key_of(a), first, "{file} changed");
        std::fs::write(a.join(file), was).unwrap();
    }
    assert_eq!(key_of(a), first);
    // a binary built on one runner image is not restored on another (glibc differs)
    assert_ne!(key_on(a, "ubuntu22"), first);
    // each run puts ~/.cargo/bin on the PATH of the steps after it
    let path = std::fs::read_to_string(a.join("path")).unwrap();
    let bin = a.join("home/.cargo/bin").display().to_string();
    assert!(path.lines().all(|l| l == bin), "{path}");
}
