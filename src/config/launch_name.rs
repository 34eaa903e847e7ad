//! The name a server started from a command line goes by when nothing names it (`proxy --
//! COMMAND` without `--name`): the package a launcher runs, not the launcher. `npx -y
//! @modelcontextprotocol/server-filesystem /tmp` is `server-filesystem`, `uvx mcp-server-fetch`
//! is `mcp-server-fetch`, not `npx` or `uvx`: the name its spill folder, log lines and
//! telemetry carry.

use std::path::Path;

/// Launchers whose first argument that is not a flag is the package they run.
const RUNS_A_PACKAGE: &[&str] = &["npx", "pnpx", "bunx", "uvx"];
/// Launchers whose subcommand (`pnpm dlx PKG`) runs a package.
const SUBCOMMANDS: &[(&str, &str)] = &[
    ("pnpm", "dlx"),
    ("yarn", "dlx"),
    ("pipx", "run"),
    ("bun", "x"),
];
/// Flags of those launchers that take a value (skipped with it; npx's `--package` and uvx's
/// `--from` name the package themselves).
const WITH_VALUE: &[&str] = &[
    "-p",
    "--package",
    "--from",
    "--with",
    "--python",
    "--index-url",
    "--registry",
    "--cache",
    "--userconfig",
];

/// The name for the server `command args` starts: the package a launcher runs (without its
/// scope or version), else the command's file name without its extension.
pub fn launch_name(command: &str, args: &[String]) -> String {
    let stem = Path::new(command)
        .file_stem()
        .map_or("upstream".into(), |s| s.to_string_lossy().to_string());
    let launcher = stem.to_ascii_lowercase();
    let rest: &[String] = if RUNS_A_PACKAGE.contains(&launcher.as_str()) {
        args
    } else if let Some((_, sub)) = SUBCOMMANDS.iter().find(|(l, _)| *l == launcher) {
        match args.split_first() {
            Some((first, rest)) if first == sub => rest,
            _ => return stem,
        }
    } else {
        return stem;
    };
    package(rest)
        .map(bare)
        .filter(|n| !n.is_empty())
        .unwrap_or(stem)
}

/// The package among a launcher's arguments: `--package`/`-p`/`--from`'s value, else the first
/// argument that is not a flag.
fn package(args: &[String]) -> Option<&str> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if let Some(v) = ["--package=", "--from="]
            .iter()
            .find_map(|p| a.strip_prefix(p))
        {
            return Some(v);
        }
        if matches!(a, "-p" | "--package" | "--from") {
            return args.get(i + 1).map(String::as_str);
        }
        if WITH_VALUE.contains(&a) {
            i += 2;
            continue;
        }
        if a == "--" {
            return args.get(i + 1).map(String::as_str);
        }
        if !a.starts_with('-') {
            return Some(a);
        }
        i += 1;
    }
    None
}

/// A package's name without its scope, version or extras: `@scope/name@1.2` and
/// `name==1.2`, `name[extra]` are `name`; a scoped name that says nothing alone (`@playwright/mcp`)
/// keeps its scope (`playwright-mcp`).
fn bare(spec: &str) -> String {
    let (scope, unscoped) = match spec.strip_prefix('@') {
        Some(s) => s.split_once('/').map_or((None, s), |(sc, n)| (Some(sc), n)),
        None => (None, spec),
    };
    let name = unscoped.rsplit('/').next().unwrap_or(unscoped);
    let end = name
        .find(['@', '=', '<', '>', '~', '!', '[', ' '])
        .unwrap_or(name.len());
    let name = &name[..end];
    match scope {
        Some(sc) if matches!(name, "mcp" | "server" | "mcp-server" | "cli") => {
            format!("{sc}-{name}")
        }
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(line: &str) -> String {
        let mut words = line.split(' ').map(String::from);
        let command = words.next().unwrap();
        launch_name(&command, &words.collect::<Vec<_>>())
    }

    #[test]
    fn a_launcher_is_named_by_the_package_it_runs() {
        assert_eq!(
            name("npx -y @modelcontextprotocol/server-filesystem /tmp"),
            "server-filesystem"
        );
        assert_eq!(name("npx -y mcp-remote@latest https://h/mcp"), "mcp-remote");
        assert_eq!(
            name("/usr/local/bin/npx --yes @playwright/mcp@0.0.83"),
            "playwright-mcp"
        );
        assert_eq!(name("npx -p @scope/tools@2 tools-server"), "tools");
        assert_eq!(name("uvx mcp-server-fetch"), "mcp-server-fetch");
        assert_eq!(
            name("uvx --from mcp-server-git==1.0 mcp-server-git"),
            "mcp-server-git"
        );
        assert_eq!(
            name("uvx --python 3.12 markitdown-mcp[all]"),
            "markitdown-mcp"
        );
        assert_eq!(name("pnpm dlx @acme/weather"), "weather");
        assert_eq!(
            name("pipx run arxiv-mcp-server --storage /x"),
            "arxiv-mcp-server"
        );
        assert_eq!(name("bunx -- context7-mcp"), "context7-mcp");
        // not a launcher: the command's name
        assert_eq!(
            name("/opt/servers/github-mcp-server stdio"),
            "github-mcp-server"
        );
        assert_eq!(name("node build/index.js"), "node");
        assert_eq!(name("pnpm install"), "pnpm");
        // a launcher with nothing to run keeps its own name
        assert_eq!(name("npx -y"), "npx");
    }
}
