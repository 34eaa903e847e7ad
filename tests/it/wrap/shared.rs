//! Issue 37, part 2: a project file (in a git work tree) goes to everyone who clones the
//! repository. `wrap --project --otlp` writes no secret value into one (a reference the client
//! fills, or a refusal that says why), names `mcp-budget` as the PATH finds it, and keeps its
//! backup in the state folder, out of `git add .`; `unwrap` gives every file back byte for
//! byte. Real files in a real git repository, the real binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{args_of, parsed, refusals, run_in};
use crate::support::bin_path;

const OTEL_KEY: &str = "otel-SECRET-honeycomb-42";
const LITERAL: &str = "lit-SECRET-cursor-77";

/// A test HOME with a repository under it (the current folder), four clients' project files
/// committed in it, and a PATH whose `mcp-budget` is the test build.
struct Repo {
    dir: tempfile::TempDir,
    files: Vec<(PathBuf, String)>,
}

impl Repo {
    /// `unwrap --project` puts every file back byte for byte and leaves nothing in the work tree.
    fn unwrap_restores_every_file(&self) {
        let (code, out, err) = self.run(&["unwrap", "--project"]);
        assert_eq!(code, 0, "{out}{err}");
        for (path, text) in &self.files {
            assert_eq!(&std::fs::read_to_string(path).unwrap(), text);
        }
        assert_eq!(
            git(
                &self.repo(),
                &["status", "--porcelain", "--untracked-files=all"]
            ),
            ""
        );
    }

    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("home/proj");
        std::fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q"]);
        let files: Vec<(PathBuf, String)> = [
            (
                ".mcp.json",
                "{\n  \"mcpServers\": {\n    \"local\": {\"command\": \"node\", \"args\": [\"server.js\"]},\n    \"api\": {\"type\": \"http\", \"url\": \"https://api.example.com/mcp\", \"headers\": {\"Authorization\": \"Bearer ${API_TOKEN}\"}}\n  }\n}\n",
            ),
            (
                ".cursor/mcp.json",
                "{\n  // the team's servers\n  \"mcpServers\": {\n    \"gh\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-github\"], \"env\": {\"GITHUB_TOKEN\": \"${env:GITHUB_TOKEN}\"}},\n    \"lit\": {\"url\": \"https://lit.example.com/mcp\", \"headers\": {\"X-Api-Key\": \"lit-SECRET-cursor-77\"}}\n  }\n}\n",
            ),
            (
                ".vscode/mcp.json",
                "{\n\t\"servers\": {\n\t\t\"memory\": {\"type\": \"stdio\", \"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"]}\n\t}\n}\n",
            ),
            (
                ".gemini/settings.json",
                "{\n  \"mcpServers\": {\n    \"py\": {\"command\": \"python\", \"args\": [\"-m\", \"my_server\"]}\n  }\n}\n",
            ),
        ]
        .into_iter()
        .map(|(rel, text)| {
            let path = repo.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            (path, text.to_string())
        })
        .collect();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-q", "-m", "the team's MCP servers"]);
        // the PATH's mcp-budget: the test build, through a link
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(bin_path(), bin.join("mcp-budget")).unwrap();
        Repo { dir, files }
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("home/proj")
    }

    /// `mcp-budget ARGS` in the repository, with the OTLP variables of a vendor set.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let headers = format!("x-honeycomb-team={OTEL_KEY}");
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let env = [
            ("OTEL_EXPORTER_OTLP_HEADERS", headers.as_str()),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://api.honeycomb.io"),
            ("PATH", path.as_str()),
        ];
        run_in_repo(self.dir.path(), &self.repo(), args, &env)
    }

    fn text(&self, rel: &str) -> String {
        std::fs::read_to_string(self.repo().join(rel)).unwrap()
    }

    /// Every file of the work tree (not `.git`), with its text.
    fn tree(&self) -> Vec<(PathBuf, String)> {
        let mut out = Vec::new();
        let mut walk = vec![self.repo()];
        while let Some(d) = walk.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() && p.file_name().unwrap() != ".git" {
                    walk.push(p);
                } else if p.is_file() {
                    out.push((p.clone(), std::fs::read_to_string(&p).unwrap_or_default()));
                }
            }
        }
        out
    }
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(repo)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// `run_in`, with the repository as the current folder.
fn run_in_repo(
    dir: &Path,
    repo: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let mut cmd = crate::support::mcp_budget(&dir.join("home"), repo);
    cmd.env("XDG_STATE_HOME", dir.join("state"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_project_file_gets_references_never_the_otlp_key_nor_a_literal_header() {
    let r = Repo::new();
    // the dry run: what each file gets, shown (a reference is no secret), nothing written
    let (code, out, err) = r.run(&["wrap", "--project", "--otlp", "--dry-run"]);
    assert!(
        !out.contains(OTEL_KEY) && !err.contains(OTEL_KEY),
        "{out}{err}"
    );
    assert_eq!(code, 2, "Claude Code's .mcp.json is refused: {out}{err}");
    let refused = refusals(&err);
    assert_eq!(refused.len(), 1, "{err}");
    assert!(
        refused[0].contains(".mcp.json:")
            && refused[0].contains("OTEL_EXPORTER_OTLP_HEADERS")
            && refused[0].contains("Claude Code withholds its OTEL_* variables"),
        "{err}"
    );
    assert!(
        out.contains("\"OTEL_EXPORTER_OTLP_HEADERS\": \"${env:OTEL_EXPORTER_OTLP_HEADERS}\""),
        "the reference is shown, not redacted: {out}"
    );
    assert!(
        out.contains("\"OTEL_EXPORTER_OTLP_HEADERS\": \"${OTEL_EXPORTER_OTLP_HEADERS:-}\""),
        "{out}"
    );
    assert!(
        out.contains("in the git work tree")
            && out.contains("no secret value written (OTEL_EXPORTER_OTLP_HEADERS as ${env:OTEL_EXPORTER_OTLP_HEADERS})"),
        "{out}"
    );
    assert!(
        out.contains("lit: left as it is: header `X-Api-Key` holds its value as written"),
        "{out}"
    );
    for (path, text) in &r.files {
        assert_eq!(&std::fs::read_to_string(path).unwrap(), text);
    }
    // the write: the three files whose clients fill a reference; .mcp.json left as it was
    let (code, out, err) = r.run(&["wrap", "--project", "--otlp"]);
    assert_eq!(code, 2, "{out}{err}");
    for secret in [OTEL_KEY, LITERAL] {
        assert!(!out.contains(secret) && !err.contains(secret), "{out}{err}");
    }
    assert_eq!(r.text(".mcp.json"), r.files[0].1);
    for (path, text) in r.tree() {
        assert!(
            !text.contains(OTEL_KEY),
            "{} holds the OTLP key:\n{text}",
            path.display()
        );
    }
    let cursor = parsed(Path::new("mcp.json"), &r.text(".cursor/mcp.json"));
    assert_eq!(
        cursor["mcpServers"]["gh"]["env"]["OTEL_EXPORTER_OTLP_HEADERS"],
        "${env:OTEL_EXPORTER_OTLP_HEADERS}"
    );
    assert_eq!(
        cursor["mcpServers"]["gh"]["env"]["GITHUB_TOKEN"],
        "${env:GITHUB_TOKEN}"
    );
    assert_eq!(
        cursor["mcpServers"]["lit"]["headers"]["X-Api-Key"], LITERAL,
        "left as it is"
    );
    let vscode = parsed(Path::new("mcp.json"), &r.text(".vscode/mcp.json"));
    assert_eq!(
        vscode["servers"]["memory"]["env"]["OTEL_EXPORTER_OTLP_HEADERS"],
        "${env:OTEL_EXPORTER_OTLP_HEADERS}"
    );
    let gemini = parsed(Path::new("settings.json"), &r.text(".gemini/settings.json"));
    assert_eq!(
        gemini["mcpServers"]["py"]["env"]["OTEL_EXPORTER_OTLP_HEADERS"],
        "${OTEL_EXPORTER_OTLP_HEADERS:-}"
    );
    // without --otlp Claude Code's file is wrapped too: its header a reference it fills
    let (code, out, err) = r.run(&["wrap", "--project", "--client", "claude-code"]);
    assert_eq!(code, 0, "{out}{err}");
    let claude = parsed(Path::new(".mcp.json"), &r.text(".mcp.json"));
    assert_eq!(
        claude["mcpServers"]["api"]["env"]["MCP_BUDGET_HEADER_AUTHORIZATION"],
        "Bearer ${API_TOKEN}"
    );
    // unwrap: every file byte for byte, and nothing left behind in the work tree
    r.unwrap_restores_every_file();
}

#[test]
fn a_project_file_names_mcp_budget_by_the_path_and_keeps_its_backup_out_of_the_tree() {
    let r = Repo::new();
    let (code, out, err) = r.run(&["wrap", "--project"]);
    assert_eq!(code, 0, "{out}{err}");
    for (rel, map, name) in [
        (".mcp.json", "mcpServers", "local"),
        (".cursor/mcp.json", "mcpServers", "gh"),
        (".vscode/mcp.json", "servers", "memory"),
        (".gemini/settings.json", "mcpServers", "py"),
    ] {
        let v = parsed(Path::new(rel), &r.text(rel));
        let entry = &v[map][name];
        assert_eq!(entry["command"], "mcp-budget", "{rel}: {entry}");
        assert_eq!(args_of(entry)[0], "proxy", "{rel}");
    }
    // `git add .` takes nothing new: the four files changed, no backup beside them
    let status = git(
        &r.repo(),
        &["status", "--porcelain", "--untracked-files=all"],
    );
    let mut lines: Vec<&str> = status.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            " M .cursor/mcp.json",
            " M .gemini/settings.json",
            " M .mcp.json",
            " M .vscode/mcp.json"
        ],
        "{status}"
    );
    // the backups are in the state folder, each the file as it was, and said so
    let backups = r.dir.path().join("state/mcp-budget/wrap/backups");
    let mut kept: Vec<String> = std::fs::read_dir(&backups)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    kept.sort();
    let mut originals: Vec<String> = r.files.iter().map(|f| f.1.clone()).collect();
    originals.sort();
    assert_eq!(kept, originals);
    assert!(
        out.contains(&format!("(backup: {}/", backups.display())),
        "{out}"
    );
    // the binary the PATH finds is the test build: under target/, which stderr says in one line
    let warned: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("is in a build folder (target/)"))
        .collect();
    assert_eq!(warned.len(), 1, "{err}");
    assert!(warned[0].contains("mcp-budget"), "{err}");
    // unwrap: byte for byte, the backups of the unwrap in the state folder too
    r.unwrap_restores_every_file();
}

#[test]
fn a_binary_in_a_temporary_folder_is_said_for_a_user_file_too() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("home/.cursor/mcp.json");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let text = "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}";
    std::fs::write(&config, text).unwrap();
    // an installed-looking launcher, left in a temporary folder
    let copy = dir.path().join("mcp-budget");
    std::fs::write(
        &copy,
        format!("#!/bin/sh\nexec {} \"$@\"\n", bin_path().display()),
    )
    .unwrap();
    let (code, out, err) = run_in(dir.path(), &["wrap", "--bin", copy.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let v = parsed(&config, &std::fs::read_to_string(&config).unwrap());
    assert_eq!(v["mcpServers"]["a"]["command"], copy.to_str().unwrap());
    assert!(
        err.lines()
            .any(|l| l.contains(copy.to_str().unwrap()) && l.contains("is in a temporary folder")),
        "{err}"
    );
}
