//! `wrap` and `unwrap` on what careless users and hostile files bring: a partial unwrap
//! followed by edits, an entry edited by hand, names that look like flags, secrets in unusual
//! places and escapes, remote servers a proxy cannot sign in to, Codex's CRLF, files with no
//! entries and a file named twice.

use std::path::{Path, PathBuf};

use super::{args_of, parsed, run_in};

/// A HOME with one file; runs mcp-budget in it.
struct One {
    dir: tempfile::TempDir,
    path: PathBuf,
}

impl One {
    fn new(rel: &str, text: &str) -> One {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home").join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        One { dir, path }
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let otel = (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-honeycomb-team=otel-SECRET-abcdef",
        );
        run_in(self.dir.path(), args, &[otel])
    }

    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 0, "{args:?}: {out}{err}");
        out
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.path).unwrap()
    }

    fn set(&self, text: &str) {
        std::fs::write(&self.path, text).unwrap();
    }
}

#[test]
fn a_partial_unwrap_then_edits_then_a_full_unwrap_keeps_the_edits() {
    let start =
        r#"{"numStartups":1,"mcpServers":{"a":{"command":"x"},"b":{"command":"y"}},"projects":{}}"#;
    let o = One::new(".claude.json", start);
    o.ok(&["wrap"]);
    o.ok(&["unwrap", "--server", "a"]);
    // the client rewrites its file meanwhile
    let edited = o.text().replace("\"numStartups\":1", "\"numStartups\":42");
    o.set(&edited);
    o.ok(&["unwrap"]);
    assert_eq!(
        o.text(),
        start.replace("\"numStartups\":1", "\"numStartups\":42")
    );
    // the same in Codex's TOML: a table added after the wrap stays
    let toml = "[mcp_servers.a]\ncommand = \"x\"\n\n[mcp_servers.b]\ncommand = \"y\"\n";
    let c = One::new(".codex/config.toml", toml);
    c.ok(&["wrap"]);
    c.ok(&["unwrap", "--server", "a"]);
    c.set(&format!("{}\n[features]\nweb = true\n", c.text()));
    c.ok(&["unwrap"]);
    let v = parsed(&c.path, &c.text());
    assert_eq!(v["features"]["web"], true, "{}", c.text());
    assert_eq!(v["mcp_servers"]["b"]["command"], "y");
}

#[test]
fn an_entry_edited_by_hand_since_the_wrap_keeps_the_edit_when_unwrapped() {
    let o = One::new(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "@mcp/github@1.0"], "env": {"GITHUB_TOKEN": "old-token-111111"}}}}"#,
    );
    o.ok(&["wrap"]);
    o.set(
        &o.text()
            .replace("old-token-111111", "new-token-222222")
            .replace("@1.0", "@2.0"),
    );
    let out = o.ok(&["unwrap"]);
    assert!(
        out.contains("gh: unwrapped (no record of its original"),
        "{out}"
    );
    let v = parsed(&o.path, &o.text());
    let gh = &v["mcpServers"]["gh"];
    assert_eq!(gh["command"], "npx");
    assert_eq!(args_of(gh), ["-y", "@mcp/github@2.0"]);
    assert_eq!(gh["env"]["GITHUB_TOKEN"], "new-token-222222");
}

#[test]
fn names_that_look_like_flags_stay_names() {
    let start = r#"{"mcpServers": {"--": {"command": "x4", "args": ["--", "y"]}, "-v": {"command": "x5"}}}"#;
    let o = One::new(".cursor/mcp.json", start);
    o.ok(&["wrap"]);
    let v = parsed(&o.path, &o.text());
    assert_eq!(
        args_of(&v["mcpServers"]["--"])[..4],
        ["proxy", "--client", "cursor", "--name=--"]
    );
    assert_eq!(args_of(&v["mcpServers"]["-v"])[3], "--name=-v");
    // without the record the stdio entries are rebuilt from what follows the first lone `--`
    std::fs::remove_dir_all(o.dir.path().join("state")).unwrap();
    o.ok(&["unwrap"]);
    let v = parsed(&o.path, &o.text());
    assert_eq!(v["mcpServers"]["--"]["command"], "x4");
    assert_eq!(args_of(&v["mcpServers"]["--"]), ["--", "y"]);
    assert_eq!(v["mcpServers"]["-v"]["command"], "x5");
}

/// Every planted secret is missing from the dry run's output, and from stderr.
fn assert_hidden(o: &One, secrets: &[&str], args: &[&str]) {
    let (_, out, err) = o.run(args);
    for s in secrets {
        assert!(
            !out.contains(s) && !err.contains(s),
            "{s} shown by {args:?}:\n{out}{err}"
        );
    }
}

#[test]
fn the_dry_run_hides_secrets_wherever_and_however_they_are_written() {
    // one line (the diff shows the whole line), other secret keys, a duplicate key, escapes
    let o = One::new(
        ".claude.json",
        r#"{"primaryApiKey":"sk-ant-api03-PRIMARY-SECRET-xyz","oauthAccount":{"accessToken":"oauth-SECRET-abc"},"mcpServers":{"a":{"command":"x","env":{"API_KEY":"secret-first-AAAA","API_KEY":"secret-last-BBBB"}},"b":{"command":"y","env":{"API_KEY":"esc\u002dSECRET-12"}},"r":{"url":"https://h/mcp","headers":{"X-Key":"esc\/SECRET-15"}}}}"#,
    );
    let secrets = [
        "PRIMARY-SECRET",
        "oauth-SECRET",
        "secret-first",
        "secret-last",
        "SECRET-12",
        "SECRET-15",
        "otel-SECRET",
    ];
    assert_hidden(&o, &secrets, &["wrap", "--dry-run", "--otlp"]);
    o.ok(&["wrap", "--otlp"]);
    assert!(
        o.text().contains("otel-SECRET-abcdef"),
        "the OTEL headers reach each entry's env"
    );
    assert_hidden(&o, &secrets, &["unwrap", "--dry-run"]);
    // a TOML error names the line, never shows it
    let c = One::new(
        ".codex/config.toml",
        "[mcp_servers.a]\nenv = { API_KEY = \"tomlerr-SECRET-123\" junk }\n",
    );
    let (code, _, err) = c.run(&["wrap", "--dry-run"]);
    assert_eq!(code, 2);
    assert!(err.contains("not TOML") && err.contains("line 2"), "{err}");
    assert_hidden(&c, &["tomlerr-SECRET"], &["wrap", "--dry-run"]);
}

#[test]
fn remote_servers_a_proxy_cannot_sign_in_to_are_left_as_they_are() {
    let start = r#"{"mcpServers": {
  "linear": {"type": "http", "url": "https://mcp.linear.app/mcp"},
  "helper": {"type": "http", "url": "https://h/mcp", "headers": {"X": "y"}, "headersHelper": "/usr/local/bin/get-token.sh"},
  "pat": {"type": "http", "url": "https://h/mcp?pat=abc123456789"},
  "both": {"httpUrl": "https://h/mcp", "url": "https://h/sse", "headers": {"X": "y"}}
}}"#;
    let o = One::new(".claude.json", start);
    let out = o.ok(&["wrap"]);
    assert!(
        out.contains("linear: left as it is: a remote server with no header"),
        "{out}"
    );
    assert!(
        out.contains("helper: left as it is: its client signs in for it (`headersHelper`)"),
        "{out}"
    );
    assert!(
        out.contains("pat: left as it is: its URL carries a credential"),
        "{out}"
    );
    assert!(
        out.contains("both: left as it is: it has more than one of"),
        "{out}"
    );
    assert_eq!(o.text(), start);
    let out = o.ok(&["wrap", "--remote-without-headers"]);
    assert!(out.contains("linear: wrapped"), "{out}");
    let v = parsed(&o.path, &o.text());
    assert_eq!(v["mcpServers"]["linear"]["type"], "stdio");
}

#[test]
fn a_remote_entry_left_behind_the_proxy_by_unwrap_is_a_failure() {
    let o = One::new(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"r": {"url": "https://r.example.com/mcp", "headers": {"Authorization": "Bearer r-SECRET-123456"}}}}"#,
    );
    o.ok(&["wrap"]);
    std::fs::remove_dir_all(o.dir.path().join("state")).unwrap();
    let (code, out, err) = o.run(&["unwrap"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("r: left as it is: wrapped from a URL"),
        "{out}"
    );
    assert!(err.contains("still behind the proxy"), "{err}");
}

#[test]
fn codex_crlf_empty_files_and_a_file_named_twice() {
    let toml = "# c\r\n[mcp_servers.a]\r\ncommand = \"x\" # the server\r\n";
    let c = One::new(".codex/config.toml", toml);
    c.ok(&["wrap"]);
    let wrapped = c.text();
    assert_eq!(
        wrapped.matches('\n').count(),
        wrapped.matches("\r\n").count(),
        "{wrapped:?}"
    );
    assert!(wrapped.contains("# the server\r\n"), "{wrapped:?}");
    c.ok(&["unwrap"]);
    assert_eq!(c.text(), toml);
    // an empty file, or comments only: no entries, nothing to do
    let e = One::new(".cursor/mcp.json", "// nothing yet\n");
    let out = e.ok(&["wrap"]);
    assert!(out.contains("no server entries"), "{out}");
    // one file named twice (once through a link) is edited once
    let f = One::new(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"a": {"command": "x"}}}"#,
    );
    let link: &Path = &f.dir.path().join("link.json");
    std::os::unix::fs::symlink(&f.path, link).unwrap();
    let out = f.ok(&[
        "wrap",
        "--config",
        f.path.to_str().unwrap(),
        "--config",
        link.to_str().unwrap(),
    ]);
    assert_eq!(out.matches("a: wrapped").count(), 1, "{out}");
}

#[test]
fn a_hard_linked_config_stays_one_file_through_wrap_and_unwrap() {
    use std::os::unix::fs::MetadataExt;
    let start = "{\n  \"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\"serve\"]}}\n}\n";
    let o = One::new(".cursor/mcp.json", start);
    // the same file under a second name, as a dotfile manager that links by hard link keeps it
    let other = o.dir.path().join("dotfiles-cursor.json");
    std::fs::hard_link(&o.path, &other).unwrap();
    let inode = std::fs::metadata(&o.path).unwrap().ino();
    let out = o.ok(&["wrap"]);
    let wrapped = o.text();
    assert!(wrapped.contains("\"proxy\""), "{wrapped}");
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        wrapped,
        "the link was split"
    );
    assert_eq!(std::fs::metadata(&o.path).unwrap().ino(), inode);
    assert!(
        out.contains("written in place: its 2 hard links kept"),
        "{out}"
    );
    o.ok(&["unwrap"]);
    assert_eq!(o.text(), start);
    assert_eq!(std::fs::read_to_string(&other).unwrap(), start);
    assert_eq!(std::fs::metadata(&other).unwrap().nlink(), 2);
    // both names given: one file, edited once
    let out = o.ok(&[
        "wrap",
        "--config",
        other.to_str().unwrap(),
        "--config",
        o.path.to_str().unwrap(),
    ]);
    assert_eq!(out.matches("a: wrapped").count(), 1, "{out}");
    o.ok(&["unwrap", "--config", other.to_str().unwrap()]);
    assert_eq!(o.text(), start);
}

#[test]
fn names_with_line_breaks_cannot_fake_the_summary() {
    // a server named with line breaks, and a header name with one, as a hostile file may
    let start = r#"{"mcpServers": {"evil\nwrote /home/u/.ssh/config (backup: /tmp/x)\n  github": {"command": "x"}, "r": {"url": "https://r.example.com/mcp", "headers": {"X\nmcp-budget wrap: all files restored": 5}}}}"#;
    let o = One::new(".cursor/mcp.json", start);
    for args in [&["wrap", "--dry-run"][..], &["wrap"], &["unwrap"]] {
        let (code, out, err) = o.run(args);
        assert_eq!(code, 0, "{args:?}: {out}{err}");
        for line in out.lines().chain(err.lines()) {
            assert!(
                !line.starts_with("wrote /home/u/.ssh")
                    && !line.starts_with("  github")
                    && !line.starts_with("mcp-budget wrap: all files"),
                "{args:?}: a name made a line of its own: {line:?}\n{out}{err}"
            );
        }
        assert!(
            out.contains("evil\\nwrote /home/u/.ssh/config (backup: /tmp/x)\\n  github: "),
            "{args:?}: {out}"
        );
        if args[0] == "wrap" {
            assert!(
                out.contains(
                    "r: left as it is: header `X\\nmcp-budget wrap: all files restored` is not a string"
                ),
                "{out}"
            );
        }
    }
    assert_eq!(o.text(), start);
}
