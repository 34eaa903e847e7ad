//! `completions` and `man`, generated from the clap definitions: the bash script completes in a
//! real bash, and the man pages render in `man` with every command's flags.

use std::process::Command;

use crate::support::mcp_budget;

fn out(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let o = mcp_budget(dir.path(), dir.path())
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// What bash completes for the words, with the script sourced, HOME and the current folder
/// at `home`.
fn complete_in_bash(script: &str, words: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    complete_in_bash_at(dir.path(), script, words)
}

fn complete_in_bash_at(home: &std::path::Path, script: &str, words: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp-budget.bash");
    std::fs::write(&path, script).unwrap();
    let line = words.join(" ");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; COMP_TYPE=9; _clap_complete_mcp_budget mcp-budget \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display(),
        quoted.join(" "),
        words.len() - 1,
        line.len()
    );
    let o = Command::new("bash")
        .args(["--norc", "-c", &program])
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .current_dir(home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The values the shell completes are what the configs and profiles hold, not file names: the
/// configured servers' names (one that could drive the terminal left out), client ids and
/// tokenizers item by item in a comma-separated list, the formats.
#[test]
fn values_complete_from_the_configs_and_the_profiles() {
    let script = out(&["completions", "bash"]);
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".cursor")).unwrap();
    std::fs::write(
        home.path().join(".cursor/mcp.json"),
        r#"{"mcpServers": {
            "github": {"command": "npx", "args": ["-y", "gh-mcp"], "env": {"TOKEN": "s3cret"}},
            "linear": {"url": "https://mcp.linear.app/mcp"},
            "evil\u001b]0;pwned\u0007": {"command": "true"},
            "a;rm -rf": {"command": "true"}
        }}"#,
    )
    .unwrap();
    let at = |words: &[&str]| {
        let mut v = complete_in_bash_at(home.path(), &script, words);
        v.sort();
        v
    };
    assert_eq!(
        at(&["mcp-budget", "audit", "--server", ""]),
        ["github", "linear"]
    );
    assert_eq!(at(&["mcp-budget", "proxy", "--server", "li"]), ["linear"]);
    assert_eq!(at(&["mcp-budget", "login", "g"]), ["github"]);
    assert_eq!(
        at(&["mcp-budget", "audit", "--client", "claude-code,co"]),
        [
            "claude-code,codex",
            "claude-code,continue-cli",
            "claude-code,copilot-cli"
        ]
    );
    assert_eq!(
        at(&["mcp-budget", "proxy", "--tokenizer", "o"]),
        ["o200k_base"]
    );
    assert_eq!(
        at(&["mcp-budget", "count", "--tokenizer", "cl100k_base,"]),
        ["cl100k_base,claude-estimate", "cl100k_base,o200k_base"]
    );
    assert_eq!(
        at(&["mcp-budget", "audit", "--format", ""]),
        ["csv", "json", "markdown", "table"]
    );
    assert_eq!(
        at(&["mcp-budget", "gate", "x.json", "--fail-on", ""]),
        ["error", "warning"]
    );
}

#[test]
fn bash_completes_commands_and_each_commands_flags() {
    let script = out(&["completions", "bash"]);
    assert_eq!(
        complete_in_bash(&script, &["mcp-budget", "au"]),
        ["audit"],
        "commands"
    );
    let mut flags = complete_in_bash(&script, &["mcp-budget", "audit", "--cl"]);
    flags.sort();
    assert_eq!(flags, ["--clean-env", "--client"]);
    // a value of an enum: the shells themselves
    let mut shells = complete_in_bash(&script, &["mcp-budget", "completions", ""]);
    shells.retain(|s| !s.starts_with('-'));
    shells.sort();
    assert_eq!(shells, ["bash", "elvish", "fish", "powershell", "zsh"]);
    // the lab's own plumbing is hidden
    let all = complete_in_bash(&script, &["mcp-budget", ""]);
    assert!(all.iter().any(|c| c == "lab"), "{all:?}");
    assert!(
        !all.iter().any(|c| c == "lab-tap" || c == "lab-server"),
        "{all:?}"
    );
}

#[test]
fn every_shells_script_asks_this_binary() {
    let exe = crate::support::bin_path().display().to_string();
    assert!(out(&["completions", "zsh"]).starts_with("#compdef mcp-budget"));
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = out(&["completions", shell]);
        assert!(script.contains("MCP_BUDGET_COMPLETE"), "{shell}: {script}");
        assert!(script.contains(&exe), "{shell}: {script}");
    }
}

#[test]
fn man_pages_render_with_every_commands_flags() {
    let main = out(&["man"]);
    assert!(main.contains(".TH mcp-budget 1"), "{main}");
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man");
    out(&["man", "--out", pages.to_str().unwrap()]);
    let mut names: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for want in [
        "mcp-budget.1",
        "mcp-budget-audit.1",
        "mcp-budget-lab.1",
        "mcp-budget-proxy.1",
    ] {
        assert!(names.iter().any(|n| n == want), "{names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("lab-tap")), "{names:?}");
    // clap's `help` command is `--help`, not a page
    assert!(!names.iter().any(|n| n == "mcp-budget-help.1"), "{names:?}");
    let roff = std::fs::read_to_string(pages.join("mcp-budget-audit.1")).unwrap();
    assert!(roff.contains(".TH mcp-budget-audit 1"), "{roff}");
    // every page has the sections a man page reader looks for, in this order
    for name in &names {
        let page = std::fs::read_to_string(pages.join(name)).unwrap();
        let at: Vec<usize> = [
            ".SH EXAMPLES",
            ".SH \"EXIT STATUS\"",
            ".SH ENVIRONMENT",
            ".SH FILES",
        ]
        .iter()
        .map(|s| page.find(s).unwrap_or_else(|| panic!("{name} has no {s}")))
        .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{name}: {at:?}");
        assert!(!page.contains(".SH EXTRA"), "{name}: the examples twice");
    }
    // a command's flags' variables are in its ENVIRONMENT, the ones read without a flag on the
    // main page
    let env = &roff[roff.find(".SH ENVIRONMENT").unwrap()..roff.find(".SH FILES").unwrap()];
    assert!(
        env.contains("MCP_BUDGET_TOKENIZER") && env.contains("\\-\\-tokenizer"),
        "{env}"
    );
    let main_page = std::fs::read_to_string(pages.join("mcp-budget.1")).unwrap();
    assert!(main_page.contains("MCP_BUDGET_NO_PROMPT"), "{main_page}");
    // FILES lists discovery's own places (macOS's too), not a copy of them
    let files = &main_page[main_page.find(".SH FILES").unwrap()..];
    for place in [
        "~/.claude.json",
        "Library/Application Support/Claude",
        "~/.codex/config.toml",
    ] {
        assert!(
            files.contains(&place.replace('-', "\\-")),
            "{place}: {files}"
        );
    }
    assert!(
        roff.contains("mcp\\-budget audit \\-\\-explain list"),
        "{roff}"
    );
    // rendered by man(1) where the machine has it
    if Command::new("man").arg("--version").output().is_err() {
        crate::support::skip("no man(1) to render the pages (Debian's man-db)");
        return;
    }
    let o = Command::new("man")
        .env("MANWIDTH", "100")
        .arg("-l")
        .arg(pages.join("mcp-budget-audit.1"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("mcp-budget audit"), "{text}");
    assert!(text.contains("--client"), "{text}");
}

/// `--help` groups the flags by topic and ends with examples; `-h` is the short form.
#[test]
fn help_groups_flags_and_gives_examples() {
    let long = out(&["audit", "--help"]);
    for heading in [
        "Servers:",
        "Counting:",
        "Output:",
        "Gate:",
        "Budget engine:",
        "Trust:",
    ] {
        assert!(long.lines().any(|l| l == heading), "{heading}\n{long}");
    }
    let gate = long.find("\nGate:").unwrap();
    assert!(long[gate..].contains("--fail-on"), "{long}");
    assert!(long.contains("Examples:\n  # "), "{long}");
    assert!(
        long.contains("\n  mcp-budget audit --explain list\n"),
        "{long}"
    );
    let short = out(&["audit", "-h"]);
    assert!(!short.contains("Examples:"), "{short}");
    assert!(short.contains("see more with '--help'"), "{short}");
    assert!(short.lines().count() < long.lines().count());
    let proxy = out(&["proxy", "--help"]);
    for heading in [
        "Upstream:",
        "Tools shown:",
        "Serving over HTTP:",
        "Telemetry and log:",
    ] {
        assert!(proxy.lines().any(|l| l == heading), "{heading}\n{proxy}");
    }
    assert!(out(&["--help"]).contains("Examples:"));
}
