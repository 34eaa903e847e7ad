//! Issue 31, part 1: `wrap`, `wrap --dry-run` and `unwrap` on real config files of the seven
//! clients in a test HOME (comments, trailing commas, tabs, CRLF, one-line files, headers, env,
//! a disabled entry, Codex's TOML in three table forms), and the refusals: a file changed since
//! the dry run, a read-only file, an unknown shape, text that is not UTF-8. `clients.rs` starts
//! clients on wrapped configs.

mod clients;
mod hostile;
mod shared;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{bin_path, mcp_budget};

/// Every secret in the configs: none may reach argv, a diff or a message.
pub const SECRETS: [&str; 8] = [
    "sk-demo-SECRET-000111",
    "tok-claude-SECRET-2222",
    "ghp_cursorSECRET3333",
    "cursorREMOTE-SECRET-3434",
    "vsc-SECRET-4444",
    "wind-SECRET-5555",
    "gem-SECRET-6666",
    "team-SECRET-7777",
];

/// The seven clients' user configs, as (path under HOME, client id, text).
pub fn configs(bin: &str, port: u16) -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            ".claude.json",
            "claude-code",
            // Claude Code writes this file itself: one line, no comments
            format!(
                r#"{{"numStartups":3,"mcpServers":{{"demo":{{"type":"stdio","command":"{bin}","args":["demo-server"],"env":{{"DEMO_API_KEY":"sk-demo-SECRET-000111"}}}},"api":{{"type":"http","url":"http://127.0.0.1:{port}/mcp","headers":{{"Authorization":"Bearer tok-claude-SECRET-2222"}}}}}},"projects":{{"/work/p":{{"allowedTools":[],"mcpServers":{{"local":{{"command":"node","args":["server.js"]}}}}}}}}}}"#
            ),
        ),
        (
            ".config/Claude/claude_desktop_config.json",
            "claude-desktop",
            // four spaces and CRLF line ends
            "{\r\n    \"mcpServers\": {\r\n        \"files\": {\r\n            \"command\": \"npx\",\r\n            \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/home/u/Documents\"]\r\n        }\r\n    },\r\n    \"globalShortcut\": \"Ctrl+Space\"\r\n}\r\n".into(),
        ),
        (
            ".cursor/mcp.json",
            "cursor",
            r#"{
  // Cursor: one local and one remote server
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": [
        "-y", // the package
        "@modelcontextprotocol/server-github",
      ],
      "env": { "GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_cursorSECRET3333" },
    },
    /* a hosted one */ "remote": { "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer cursorREMOTE-SECRET-3434" } },
  },
}
"#
            .into(),
        ),
        (
            ".config/Code/User/mcp.json",
            "vscode",
            "{\n\t// inputs VS Code asks for\n\t\"inputs\": [\n\t\t{ \"type\": \"promptString\", \"id\": \"token\", \"description\": \"API token\", \"password\": true }\n\t],\n\t\"servers\": {\n\t\t\"memory\": { \"type\": \"stdio\", \"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-memory\"] },\n\t\t\"api\": {\n\t\t\t\"type\": \"http\",\n\t\t\t\"url\": \"https://api.example.com/mcp\",\n\t\t\t\"headers\": { \"Authorization\": \"Bearer ${input:token}\", \"X-Key\": \"vsc-SECRET-4444\" }\n\t\t}\n\t}\n}\n".into(),
        ),
        (
            ".codeium/windsurf/mcp_config.json",
            "windsurf",
            r#"{"mcpServers": {
  "search": {"serverUrl": "https://search.example.com/mcp", "headers": {"X-Api-Key": "wind-SECRET-5555"}},
  "off": {"command": "uvx", "args": ["mcp-server-fetch"], "disabled": true}
}}
"#
            .into(),
        ),
        (
            ".gemini/settings.json",
            "gemini",
            r#"{
  "theme": "Default",
  "mcpServers": {
    "stream": { "httpUrl": "https://g.example.com/mcp", "headers": { "Authorization": "Bearer gem-SECRET-6666" }, "timeout": 30000 },
    "events": { "url": "https://g.example.com/sse", "headers": { "X-Trace": "on" } },
    "py": { "command": "python", "args": ["-m", "my_server"], "cwd": "./server", "env": { "API_KEY": "$MY_API_KEY" } }
  }
}
"#
            .into(),
        ),
        (
            ".codex/config.toml",
            "codex",
            r#"# Codex
model = "gpt-5"
mcp_servers.time = { command = "uvx", args = ["mcp-server-time"] }

[mcp_servers.fs]
command = "npx"  # the filesystem server
args = [
  "-y",
  "@modelcontextprotocol/server-filesystem",
]

[mcp_servers.fs.env]
LOG = "debug"

# a hosted one
[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
bearer_token_env_var = "LINEAR_TOKEN"
http_headers = { "X-Team" = "team-SECRET-7777" }
"#
            .into(),
        ),
    ]
}

/// A test HOME with the seven configs; the state folder beside it.
pub struct Home {
    pub dir: tempfile::TempDir,
    pub files: Vec<(PathBuf, &'static str, String)>,
}

impl Home {
    pub fn new(port: u16) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let bin = bin_path().display().to_string();
        let files = configs(&bin, port)
            .into_iter()
            .map(|(rel, client, text)| {
                let path = dir.path().join("home").join(rel);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &text).unwrap();
                (path, client, text)
            })
            .collect();
        Home { dir, files }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `mcp-budget ARGS` in this HOME, its state under the test folder.
    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        run_in(self.dir.path(), args, &[])
    }

    pub fn text(&self, client: &str) -> String {
        std::fs::read_to_string(&self.file(client).0).unwrap()
    }

    pub fn file(&self, client: &str) -> &(PathBuf, &'static str, String) {
        self.files.iter().find(|f| f.1 == client).unwrap()
    }

    /// Every file as it is now equals its original.
    pub fn assert_all_original(&self, except: &[&str]) {
        for (path, client, text) in &self.files {
            if !except.contains(client) {
                assert_eq!(
                    &std::fs::read_to_string(path).unwrap(),
                    text,
                    "{} changed",
                    path.display()
                );
            }
        }
    }
}

/// `mcp-budget ARGS` with HOME `dir/home`, its state in `dir/state` and these variables: exit
/// code, stdout, stderr.
pub fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = mcp_budget(&dir.join("home"), dir);
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

/// The lines of stderr but the warning every run from the test build gets: the binary it
/// writes is in a build folder (`target/`).
pub fn refusals(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| !l.contains("the binary written into the configs"))
        .collect()
}

/// The parsed config (Codex's TOML as JSON).
pub fn parsed(path: &Path, text: &str) -> Value {
    if path.extension().is_some_and(|e| e == "toml") {
        serde_json::to_value(toml::from_str::<toml::Value>(text).unwrap()).unwrap()
    } else {
        mcp_budget::config::parse_jsonc(text).unwrap()
    }
}

/// An entry's `args` as strings.
pub fn args_of(entry: &Value) -> Vec<String> {
    entry["args"]
        .as_array()
        .unwrap_or_else(|| panic!("no args: {entry}"))
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

fn token(stdout: &str) -> String {
    stdout
        .split("--expect ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or_else(|| panic!("no token in {stdout}"))
        .to_string()
}

#[test]
fn dry_run_wrap_and_unwrap_on_the_seven_clients_configs() {
    let h = Home::new(4321);
    let bin = bin_path().display().to_string();
    // the dry run: a diff per file, no secret, nothing written
    let (code, out, err) = h.run(&["wrap", "--dry-run", "--budget", "3000"]);
    assert_eq!(code, 0, "{err}");
    h.assert_all_original(&[]);
    for (path, _, _) in &h.files {
        assert!(out.contains(&format!("--- {}", path.display())), "{out}");
    }
    for s in SECRETS {
        assert!(
            !out.contains(s) && !err.contains(s),
            "{s} shown:\n{out}{err}"
        );
    }
    let t = token(&out);
    // the write, exactly as the dry run showed it
    let (code, out, err) = h.run(&["wrap", "--budget", "3000", "--expect", &t]);
    assert_eq!(code, 0, "{out}{err}");
    let wrapped: Vec<(String, String)> = h
        .files
        .iter()
        .map(|(p, c, _)| (c.to_string(), std::fs::read_to_string(p).unwrap()))
        .collect();
    for ((path, client, before), (_, after)) in h.files.iter().zip(&wrapped) {
        assert_ne!(before, after, "{client}: nothing wrapped");
        // the backup is the file as it was
        let mut backup = path.file_name().unwrap().to_os_string();
        backup.push(".mcp-budget.bak");
        assert_eq!(
            &std::fs::read_to_string(path.with_file_name(backup)).unwrap(),
            before
        );
        // every comment line and every other key stays
        for line in before.lines() {
            let keep = [
                "// ",
                "/* ",
                "# ",
                "\"theme\"",
                "\"inputs\"",
                "\"globalShortcut\"",
                "model =",
            ];
            let edited = ["\"remote\"", "command"];
            if keep.iter().any(|k| line.contains(k)) && !edited.iter().any(|e| line.contains(e)) {
                assert!(after.contains(line), "{client}: lost {line:?}:\n{after}");
            }
        }
        if *client == "claude-desktop" {
            assert_eq!(
                after.matches('\n').count(),
                after.matches("\r\n").count(),
                "CRLF kept"
            );
        }
        // no secret in any argv
        let v = parsed(path, after);
        for s in SECRETS {
            assert!(!argvs(&v).contains(s), "{client}: {s} in argv");
        }
    }
    let cc = parsed(&h.file("claude-code").0, &wrapped[0].1);
    let demo = &cc["mcpServers"]["demo"];
    assert_eq!(demo["command"], bin.as_str());
    assert_eq!(
        args_of(demo),
        [
            "proxy",
            "--client",
            "claude-code",
            "--name=demo",
            "--budget",
            "3000",
            "--",
            &bin,
            "demo-server"
        ]
    );
    assert_eq!(demo["env"]["DEMO_API_KEY"], "sk-demo-SECRET-000111");
    let api = &cc["mcpServers"]["api"];
    assert_eq!(api["type"], "stdio");
    assert!(
        api.get("url").is_none() && api.get("headers").is_none(),
        "{api}"
    );
    assert_eq!(
        args_of(api)[6..],
        [
            "--upstream-url",
            "http://127.0.0.1:4321/mcp",
            "--header-env",
            "Authorization: MCP_BUDGET_HEADER_AUTHORIZATION"
        ]
    );
    assert_eq!(
        api["env"]["MCP_BUDGET_HEADER_AUTHORIZATION"],
        "Bearer tok-claude-SECRET-2222"
    );
    assert_eq!(
        args_of(&cc["projects"]["/work/p"]["mcpServers"]["local"])[7..],
        ["node", "server.js"]
    );
    let vs = parsed(&h.file("vscode").0, &wrapped[3].1);
    assert_eq!(
        vs["servers"]["api"]["env"]["MCP_BUDGET_HEADER_AUTHORIZATION"],
        "Bearer ${input:token}"
    );
    assert_eq!(
        vs["servers"]["api"]["env"]["MCP_BUDGET_HEADER_X_KEY"],
        "vsc-SECRET-4444"
    );
    let ws = parsed(&h.file("windsurf").0, &wrapped[4].1);
    assert_eq!(
        args_of(&ws["mcpServers"]["search"])[..2],
        ["proxy", "--name=search"],
        "no profile"
    );
    assert_eq!(ws["mcpServers"]["off"]["disabled"], true);
    let gm = parsed(&h.file("gemini").0, &wrapped[5].1);
    assert!(args_of(&gm["mcpServers"]["events"]).contains(&"--sse".to_string()));
    assert!(!args_of(&gm["mcpServers"]["stream"]).contains(&"--sse".to_string()));
    assert_eq!(gm["mcpServers"]["stream"]["timeout"], 30000);
    assert_eq!(gm["mcpServers"]["py"]["cwd"], "./server");
    assert_eq!(args_of(&gm["mcpServers"]["py"])[2], "gemini-cli");
    let cx = parsed(&h.file("codex").0, &wrapped[6].1);
    let linear = &cx["mcp_servers"]["linear"];
    assert!(
        linear.get("url").is_none() && linear.get("http_headers").is_none(),
        "{linear}"
    );
    assert_eq!(
        linear["env"]["MCP_BUDGET_HEADER_X_TEAM"],
        "team-SECRET-7777"
    );
    assert_eq!(linear["env_vars"], serde_json::json!(["LINEAR_TOKEN"]));
    assert!(args_of(linear).ends_with(&["--upstream-bearer-env".into(), "LINEAR_TOKEN".into()]));
    assert_eq!(cx["mcp_servers"]["fs"]["env"]["LOG"], "debug");
    assert_eq!(
        args_of(&cx["mcp_servers"]["time"])[7..],
        ["uvx", "mcp-server-time"]
    );
    // the wrapped configs read back through mcp-budget's own loader, the moved header values
    // redacted there too
    let (code, out, err) = h.run(&["servers", "--format", "json"]);
    assert_eq!(code, 2, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    // 16 entries: Windsurf's disabled one is not listed, and VS Code's `${input:token}` is
    // VS Code's to fill
    assert_eq!(listed["servers"].as_array().unwrap().len(), 14, "{out}");
    assert!(out.contains("servers.api"), "{out}");
    for s in SECRETS {
        assert!(
            !out.contains(s) && !err.contains(s),
            "{s} listed by `servers`:\n{out}{err}"
        );
    }
    // wrapping twice changes nothing
    let (code, out, err) = h.run(&["wrap", "--budget", "3000"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("already wrapped").count(), 16, "{out}");
    for ((path, _, _), (_, after)) in h.files.iter().zip(&wrapped) {
        assert_eq!(&std::fs::read_to_string(path).unwrap(), after);
    }
    // unwrap gives every file back byte for byte
    let (code, out, err) = h.run(&["unwrap"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("restored as it was").count(), 16, "{out}");
    h.assert_all_original(&[]);
}

/// Every argv string of every entry, joined.
fn argvs(v: &Value) -> String {
    let mut out = String::new();
    let mut walk = vec![v];
    while let Some(x) = walk.pop() {
        match x {
            Value::Object(m) => {
                if let Some(Value::Array(a)) = m.get("args") {
                    out += &serde_json::to_string(a).unwrap();
                }
                walk.extend(m.values());
            }
            Value::Array(a) => walk.extend(a),
            _ => {}
        }
    }
    out
}

#[test]
fn unwrap_keeps_what_the_user_changed_elsewhere_and_picks_by_client_and_server() {
    let h = Home::new(4321);
    let (code, out, err) = h.run(&[
        "wrap",
        "--client",
        "gemini-cli,cursor",
        "--server",
        "py",
        "--server",
        "github",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    h.assert_all_original(&["gemini", "cursor"]);
    let gm = parsed(&h.file("gemini").0, &h.text("gemini"));
    assert_eq!(
        gm["mcpServers"]["py"]["command"],
        bin_path().display().to_string()
    );
    assert_eq!(
        gm["mcpServers"]["stream"]["httpUrl"],
        "https://g.example.com/mcp"
    );
    // the user edits the file elsewhere after the wrap
    let (path, _, original) = h.file("cursor").clone();
    let edit = |t: &str| {
        t.replacen(
            "  \"mcpServers\": {",
            "  \"mcpServers\": {\n    \"added\": { \"command\": \"x\" },",
            1,
        )
    };
    std::fs::write(&path, edit(&h.text("cursor"))).unwrap();
    let (code, out, err) = h.run(&["unwrap"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), edit(&original));
    h.assert_all_original(&["cursor"]);
    // an unknown client or server is a usage error
    let (code, _, err) = h.run(&["wrap", "--client", "emacs"]);
    assert_eq!(code, 2);
    assert!(err.contains("--client `emacs`"), "{err}");
    let (code, _, err) = h.run(&["wrap", "--server", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("--server nope"), "{err}");
    h.assert_all_original(&["cursor"]);
}

#[test]
fn a_file_changed_since_the_dry_run_is_refused_by_name_and_nothing_written() {
    let h = Home::new(4321);
    let (code, out, _) = h.run(&["wrap", "--dry-run"]);
    assert_eq!(code, 0);
    let t = token(&out);
    let (path, _, text) = h.file("gemini").clone();
    let changed = text.replace("\"Default\"", "\"Dark\"");
    std::fs::write(&path, &changed).unwrap();
    let (code, _, err) = h.run(&["wrap", "--expect", &t]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("{} changed since the dry run", path.display())),
        "{err}"
    );
    assert_eq!(refusals(&err).len(), 1, "{err}");
    h.assert_all_original(&["gemini"]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), changed);
    // other options than the dry run's: refused too
    let (code, out, _) = h.run(&["wrap", "--dry-run"]);
    assert_eq!(code, 0);
    let (code, _, err) = h.run(&["wrap", "--budget", "10", "--expect", &token(&out)]);
    assert_eq!(code, 2);
    assert!(err.contains("differ from those of the dry run"), "{err}");
    h.assert_all_original(&["gemini"]);
}

#[test]
fn files_that_cannot_be_edited_safely_are_refused_and_the_others_wrapped() {
    use std::os::unix::fs::PermissionsExt;
    let h = Home::new(4321);
    let desktop = h.file("claude-desktop").0.clone();
    std::fs::set_permissions(&desktop, std::fs::Permissions::from_mode(0o444)).unwrap();
    let cursor = h.file("cursor").0.clone();
    std::fs::write(&cursor, "{\"mcpServers\": [\"not\", \"a\", \"map\"]}").unwrap();
    let windsurf = h.file("windsurf").0.clone();
    std::fs::write(
        &windsurf,
        b"{\"mcpServers\": {\"a\": {\"command\": \"\xff\"}}}",
    )
    .unwrap();
    // a dotfile kept elsewhere and linked: it stays a link
    let gemini = h.file("gemini").0.clone();
    let kept = h.dir.path().join("dotfiles-gemini.json");
    std::fs::rename(&gemini, &kept).unwrap();
    std::os::unix::fs::symlink(&kept, &gemini).unwrap();
    let (code, out, err) = h.run(&["wrap"]);
    assert_eq!(code, 2, "{out}{err}");
    let lines = refusals(&err);
    assert_eq!(lines.len(), 3, "{err}");
    let said = |p: &Path, what: &str| {
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&p.display().to_string()) && l.contains(what)),
            "{what} for {}: {err}",
            p.display()
        )
    };
    said(&desktop, "no write permission");
    said(&cursor, "`mcpServers` is not an object");
    said(&windsurf, "not UTF-8");
    assert_eq!(
        std::fs::read_to_string(&desktop).unwrap(),
        h.file("claude-desktop").2
    );
    assert_eq!(
        std::fs::read(&cursor).unwrap(),
        b"{\"mcpServers\": [\"not\", \"a\", \"map\"]}"
    );
    assert!(std::fs::symlink_metadata(&gemini)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&kept)
        .unwrap()
        .contains("\"proxy\""));
    assert!(h.text("codex").contains("\"proxy\""));
    // nothing half-written: no temp file left beside any config
    for (path, _, _) in &h.files {
        for e in std::fs::read_dir(path.parent().unwrap()).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().to_string();
            assert!(!name.contains(".tmp-"), "{name} left in {}", path.display());
        }
    }
}
