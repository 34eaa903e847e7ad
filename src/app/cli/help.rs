//! The examples each command's `--help` ends with (and its man page's EXAMPLES section): one
//! table, so the two never say different things. Each is a command line and what it does.

/// (command, [(command line, what it does)]), in the order `--help` lists the commands.
pub const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "mcp-budget",
        &[
            ("mcp-budget audit", "audit the servers in your client configs (else the built-in demo)"),
            ("mcp-budget proxy --client claude-code -- npx -y @playwright/mcp", "serve a server with every result kept within Claude Code's limits"),
            ("mcp-budget wrap --dry-run", "show how wrap would put the proxy in front of your configured servers"),
        ],
    ),
    (
        "audit",
        &[
            ("mcp-budget audit", "every server in your client configs (the built-in demo when there is none)"),
            ("mcp-budget audit probes/demo.toml --width 80", "the demo's probe file, its tables fitted to 80 columns"),
            ("mcp-budget audit --server github --client claude-code,codex", "one configured server, as two clients see it"),
            ("mcp-budget audit mine.toml --baseline base.json --gate --fail-on error", "in CI: fail on growth past the thresholds, and on any error finding"),
            ("mcp-budget audit --explain list", "the design checks' rules; `--explain RULE` explains one"),
        ],
    ),
    (
        "replay",
        &[
            ("mcp-budget replay saved/github__search_code.json --client claude-code", "a saved result through the engine, within Claude Code's limits"),
            ("mcp-budget replay result.json --compare", "what each contender (the engine, the clients' own cuts) gives the model"),
        ],
    ),
    (
        "intercept",
        &[(
            "docker mcp gateway run \\\n    --interceptor 'after:exec:mcp-budget intercept --client claude-code'",
            "budget every result Docker's MCP gateway returns",
        )],
    ),
    (
        "servers",
        &[
            ("mcp-budget servers", "the servers your client configs mount, secrets redacted"),
            ("mcp-budget servers --trust-project --format json", "with the current project's servers, for a script"),
        ],
    ),
    (
        "login",
        &[
            ("mcp-budget login linear", "sign in to a configured server; audit, proxy and wrap then use the token"),
            ("mcp-budget login https://mcp.example.com/mcp --scope read --no-browser", "by URL, with a scope, printing the sign-in URL"),
        ],
    ),
    ("logout", &[("mcp-budget logout linear", "forget the sign-in (revoked at the server where it can be)")]),
    (
        "count",
        &[
            ("mcp-budget count README.md --tokenizer cl100k_base,o200k_base", "a file's tokens in two tokenizers"),
            ("curl -s https://example.com | mcp-budget count --plain", "the bare count of stdin, for a script"),
        ],
    ),
    ("demo-server", &[("mcp-budget proxy -- mcp-budget demo-server", "the built-in demo server, behind the proxy")]),
    (
        "wrap",
        &[
            ("mcp-budget wrap --dry-run", "the edits as a diff, nothing written"),
            ("mcp-budget wrap --client cursor --budget 8000", "Cursor's servers behind the proxy, 8,000 tokens per result"),
        ],
    ),
    ("unwrap", &[("mcp-budget unwrap", "every config entry back as it was before wrap")]),
    (
        "gate",
        &[
            ("mcp-budget gate head.json --baseline base.json --max-regression-pct 5", "fail when anything grew more than 5%"),
            ("mcp-budget gate audit.json --fail-on warning --format github", "annotate a pull request with every warning and error"),
        ],
    ),
    (
        "proxy",
        &[
            ("mcp-budget proxy --client claude-code -- npx -y @playwright/mcp", "a stdio server, every result within Claude Code's limits"),
            ("mcp-budget proxy --server github --lazy-tools", "a configured server behind two search-and-call tools"),
            ("mcp-budget proxy --listen 127.0.0.1:8808 \\\n    --upstream-url https://mcp.example.com/mcp", "a remote server, served over HTTP on port 8808"),
        ],
    ),
    ("stats", &[("mcp-budget stats calls.jsonl --chart p95.svg", "per-tool statistics of a proxy's --log, with a chart")]),
    (
        "serve-capture",
        &[("mcp-budget serve-capture rec/", "serve what `audit --record rec/` recorded, as the server it recorded")],
    ),
    (
        "lab",
        &[
            ("mcp-budget lab --client claude-code,codex", "run two installed clients on the demo: what reaches their model"),
            ("mcp-budget lab --derive --client codex", "find a client's rules by bisection"),
        ],
    ),
    (
        "completions",
        &[("source <(mcp-budget completions bash)", "bash completion in this shell (`--help` of completions: where to keep it)")],
    ),
    ("man", &[("mcp-budget man --out ~/.local/share/man/man1", "a man page per command")]),
    ("schema", &[("mcp-budget schema audit > audit.schema.json", "the JSON Schema of audit.json")]),
];

/// The examples of `command` (`mcp-budget` for the main page).
pub fn examples(command: &str) -> &'static [(&'static str, &'static str)] {
    EXAMPLES
        .iter()
        .find(|(c, _)| *c == command)
        .map_or(&[], |(_, e)| e)
}

/// The text `--help` ends with: each example's purpose as a comment, then the line to run.
pub fn after_help(command: &str) -> String {
    let mut out = String::from("Examples:\n");
    for (line, what) in examples(command) {
        out.push_str(&format!("  # {what}\n  {}\n", line.replace('\n', "\n  ")));
    }
    out.push_str("\nExit status: 0 ok, 1 a gate failed, 2 an error (docs/exit-codes.md).");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    /// The mcp-budget command of an example line: from `mcp-budget` to the end of the line's
    /// shell word or pipe stage (`source <(...)`, a gateway's quoted interceptor, `> file`).
    fn command_words(line: &str) -> Vec<String> {
        let joined = line.replace("\\\n", " ");
        let at = joined
            .match_indices("mcp-budget ")
            .map(|(i, _)| i)
            .next()
            .unwrap_or_else(|| panic!("no mcp-budget command in {line:?}"));
        let rest = &joined[at..];
        let end = rest.find([')', '\'', '|', '>']).unwrap_or(rest.len());
        rest[..end].split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_example_parses_and_fits_80_columns() {
        let cli = crate::app::cli::Cli::command();
        for (command, examples) in EXAMPLES {
            if *command != "mcp-budget" {
                assert!(
                    cli.find_subcommand(command).is_some(),
                    "examples for no command: {command}"
                );
            }
            assert!(!examples.is_empty(), "{command}");
            for (line, what) in *examples {
                let words = command_words(line);
                if let Err(e) = crate::app::cli::Cli::try_parse_from(&words) {
                    panic!("{command}: `{}` does not parse: {e}", words.join(" "));
                }
                for shown in after_help(command).lines() {
                    assert!(shown.chars().count() <= 80, "{command}: {shown:?} ({what})");
                }
            }
        }
    }

    #[test]
    fn every_visible_command_has_examples() {
        let cli = crate::app::cli::Cli::command();
        for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
            assert!(
                !examples(sub.get_name()).is_empty(),
                "{} has no examples in src/cli/help.rs",
                sub.get_name()
            );
        }
        assert!(examples("no-such-command").is_empty());
    }
}
