//! Finding a client's executable (`--client-bin ID=PATH`, then `node_modules/.bin` of the npm
//! folders, or a path inside them for a name with a slash, then PATH) and reading its version, which is recorded with every number.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::adapter::Adapter;

/// Where a client was found, or where it was looked for.
#[derive(Debug, Clone)]
pub enum Located {
    At(PathBuf),
    Missing { looked_in: Vec<PathBuf> },
}

/// The npm folders searched by default: `./node_modules`, the global folder next to `node`
/// (`PREFIX/lib/node_modules`), `~/.npm-global/lib/node_modules`, and `MCP_BUDGET_LAB_NPM`
/// (the caller passes it in `extra`).
pub fn npm_folders(extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = extra.to_vec();
    dirs.push(PathBuf::from("node_modules"));
    // a client runs in a folder of its own: a relative folder would name nothing there
    for d in &mut dirs {
        if let Ok(abs) = std::path::absolute(&*d) {
            *d = abs;
        }
    }
    if let Some(node) = on_path("node") {
        let node = node.canonicalize().unwrap_or(node);
        if let Some(prefix) = node.parent().and_then(Path::parent) {
            dirs.push(prefix.join("lib/node_modules"));
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".npm-global/lib/node_modules"));
    }
    dirs
}

/// The first file called `name` in a PATH folder.
pub fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Find the adapter's executable.
pub fn find(adapter: &Adapter, given: &BTreeMap<String, PathBuf>, npm: &[PathBuf]) -> Located {
    if let Some(p) = given.get(&adapter.id) {
        return if is_executable(p) {
            Located::At(p.clone())
        } else {
            Located::Missing {
                looked_in: vec![p.clone()],
            }
        };
    }
    let mut looked_in = Vec::new();
    for dir in npm {
        for name in &adapter.binaries {
            // a name with a slash is a path inside the npm folder (a platform package's binary
            // that npm links nowhere, as Kilo's)
            let p = match name.contains('/') {
                true => dir.join(name),
                false => dir.join(".bin").join(name),
            };
            if is_executable(&p) {
                return Located::At(p);
            }
            looked_in.push(p);
        }
    }
    for name in adapter.binaries.iter().filter(|n| !n.contains('/')) {
        if let Some(p) = on_path(name) {
            return Located::At(p);
        }
    }
    looked_in.push(PathBuf::from("$PATH"));
    Located::Missing { looked_in }
}

/// The client's version: the first word of its version output that starts with a digit and
/// holds a dot (`2.1.332 (Claude Code)`, `codex-cli 0.171.0`). Run with the cleared environment
/// the lab runs it in; at most 20 s.
pub async fn version(
    bin: &Path,
    adapter: &Adapter,
    env: &BTreeMap<String, String>,
) -> Option<String> {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(&adapter.version_args)
        .env_clear()
        .envs(env)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(20), cmd.output())
        .await
        .ok()?
        .ok()?;
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    version_in(&text)
}

/// The version number in a version line.
pub fn version_in(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .map(|w| w.trim_start_matches('v'))
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.'))
        .map(|w| w.trim_end_matches('.').to_string())
}

/// The version of the built-in client `id` installed where the lab would find it (the npm
/// folders of `MCP_BUDGET_LAB_NPM`, `./node_modules`, the global one, then PATH), read as the
/// lab reads it (a cleared environment, a private HOME); `None` when it is not installed or
/// says no version. What `audit --client` compares with the profile's.
pub async fn installed_version(id: &str) -> Option<String> {
    let adapter = Adapter::built_in().into_iter().find(|a| a.id == id)?;
    let extra: Vec<PathBuf> = std::env::var_os("MCP_BUDGET_LAB_NPM")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    let Located::At(bin) = find(&adapter, &BTreeMap::new(), &npm_folders(&extra)) else {
        return None;
    };
    let home = tempfile::tempdir().ok()?;
    let mut env = base_env();
    env.insert("HOME".into(), home.path().display().to_string());
    version(&bin, &adapter, &env).await
}

/// The environment every client starts from: PATH (the system's folders and node's), LANG.
pub(super) fn base_env() -> BTreeMap<String, String> {
    let mut dirs = vec![
        "/usr/local/bin".to_string(),
        "/usr/bin".into(),
        "/bin".into(),
    ];
    if let Some(node_dir) = on_path("node").as_deref().and_then(Path::parent) {
        let d = node_dir.display().to_string();
        if !dirs.contains(&d) {
            dirs.insert(0, d);
        }
    }
    BTreeMap::from([
        ("PATH".to_string(), dirs.join(":")),
        ("LANG".to_string(), "C.UTF-8".to_string()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_npm_folders_are_made_absolute() {
        // the client is started in its own folder: `--npm-dir target/x` must still find it
        let dirs = npm_folders(&[PathBuf::from("target/lab-clients/node_modules")]);
        assert!(dirs.iter().all(|d| d.is_absolute()), "{dirs:?}");
        let here = std::env::current_dir().unwrap();
        assert_eq!(dirs[0], here.join("target/lab-clients/node_modules"));
        assert_eq!(dirs[1], here.join("node_modules"));
    }

    #[test]
    fn versions_are_read_from_each_clients_own_line() {
        assert_eq!(
            version_in("2.1.332 (Claude Code)\n").as_deref(),
            Some("2.1.332")
        );
        assert_eq!(
            version_in("codex-cli 0.171.0\n").as_deref(),
            Some("0.171.0")
        );
        assert_eq!(version_in("0.61.0\n").as_deref(), Some("0.61.0"));
        assert_eq!(
            version_in("GitHub Copilot CLI v1.0.102.\n").as_deref(),
            Some("1.0.102")
        );
        assert_eq!(version_in("no version here"), None);
    }

    #[test]
    fn a_given_binary_wins_and_a_missing_one_says_where_it_was_looked_for() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("node_modules/.bin/lab-test-client");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(&bin, "#!/bin/sh\n").unwrap();
        let mut claude = Adapter::built_in().remove(0);
        claude.binaries = vec!["lab-test-client".into()];
        let npm = [dir.path().join("node_modules")];
        match find(&claude, &BTreeMap::new(), &npm) {
            Located::Missing { .. } => {}
            Located::At(p) => panic!("not executable yet, found {}", p.display()),
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(find(&claude, &BTreeMap::new(), &npm), Located::At(p) if p == bin));
        // a name with a slash: a path inside the npm folder, never looked up on PATH
        let inside = dir.path().join("node_modules/@x/cli-linux-x64/bin/x");
        std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
        std::fs::write(&inside, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut kilo = claude.clone();
        kilo.binaries = vec!["@x/cli-linux-x64/bin/x".into()];
        assert!(matches!(find(&kilo, &BTreeMap::new(), &npm), Located::At(p) if p == inside));
        kilo.binaries = vec!["@x/cli-linux-x64/bin/nope".into()];
        match find(&kilo, &BTreeMap::new(), &npm) {
            Located::Missing { looked_in } => assert_eq!(
                looked_in,
                [
                    npm[0].join("@x/cli-linux-x64/bin/nope"),
                    PathBuf::from("$PATH")
                ]
            ),
            Located::At(p) => panic!("{}", p.display()),
        }
        let given = BTreeMap::from([("claude-code".to_string(), dir.path().join("nope"))]);
        match find(&claude, &given, &npm) {
            Located::Missing { looked_in } => assert_eq!(looked_in, [dir.path().join("nope")]),
            Located::At(p) => panic!("{}", p.display()),
        }
    }
}
