//! A man page: clap_mangen's sections (name, synopsis, description, options, commands,
//! version), then EXAMPLES (the table `--help` ends with), EXIT STATUS, ENVIRONMENT (the
//! variables the command's flags read, and those read without a flag) and FILES.

use std::fmt::Write as _;

/// Variables read without a flag: (name, what for); the main page lists them all.
const ENVIRONMENT: &[(&str, &str)] = &[
    ("HOME", "the home folder: client configs, the state and cache folders"),
    ("XDG_CONFIG_HOME", "where Claude Desktop's and VS Code's configs are looked for (else ~/.config)"),
    ("XDG_STATE_HOME", "sign-ins and wrap's records (else ~/.local/state)"),
    ("XDG_CACHE_HOME", "the spill store (else ~/.cache)"),
    ("CODEX_HOME", "Codex's config folder (else ~/.codex)"),
    ("MCP_BUDGET_HEADER_<NAME>", "a header for remote servers of a client config, by name (MCP_BUDGET_HEADER_AUTHORIZATION)"),
    ("MCP_BUDGET_CLIENT_ID_<NAME>, MCP_BUDGET_CLIENT_SECRET_<NAME>", "a machine sign-in (client credentials) for server NAME, nothing kept"),
    ("MCP_BUDGET_NO_PROMPT, CI", "set: audit never offers to sign in at the terminal"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS", "where --otlp sends (else http://localhost:4318), with which headers; the other OTEL_* variables of the OpenTelemetry specification are read too"),
];

/// (path, what): the files mcp-budget writes, beside the client configs it reads
/// ([`client_configs`]).
const FILES: &[(&str, &str)] = &[
    (
        "reports/latest/",
        "audit's report folder (--out): audit.json, the CSV files, report.md, report.html, charts",
    ),
    (
        "~/.cache/mcp-budget/spill/",
        "spilled originals (--spill-dir), a handle to each in the result",
    ),
    (
        "~/.local/state/mcp-budget/auth/",
        "sign-ins kept by login, the folder 0700 and each file 0600",
    ),
    (
        "~/.local/state/mcp-budget/wrap/",
        "wrap's records of each config entry, for unwrap",
    ),
];

/// The sections after clap_mangen's for the page of `command` (`mcp-budget` for the main
/// page), which lists every variable; `flags_env` holds the variables its flags read.
pub fn extra_sections(command: &str, flags_env: &[(String, String)]) -> String {
    let mut roff = String::new();
    let examples = crate::app::cli::help::examples(command);
    if !examples.is_empty() {
        roff.push_str(".SH EXAMPLES\n");
        for (line, what) in examples {
            let _ = writeln!(roff, ".TP\n\\fB{}\\fR\n{}", escape(line), escape(what));
        }
    }
    roff.push_str(".SH \"EXIT STATUS\"\n");
    for (code, what) in EXIT {
        let _ = writeln!(roff, ".TP\n\\fB{code}\\fR\n{}", escape(what));
    }
    roff.push_str(".SH ENVIRONMENT\n");
    let general = command == "mcp-budget";
    for (name, what) in flags_env
        .iter()
        .map(|(n, w)| (n.as_str(), w.as_str()))
        .chain(ENVIRONMENT.iter().copied().filter(|_| general))
    {
        let _ = writeln!(roff, ".TP\n\\fB{}\\fR\n{}", escape(name), escape(what));
    }
    if flags_env.is_empty() && !general {
        roff.push_str("None of its own; see \\fBmcp-budget\\fR(1).\n");
    }
    roff.push_str(".SH FILES\n");
    let configs = client_configs();
    let configs = configs.iter().map(|(p, w)| (p.as_str(), w.as_str()));
    for (path, what) in configs.chain(FILES.iter().copied()) {
        let _ = writeln!(roff, ".TP\n\\fI{}\\fR\n{}", escape(path), escape(what));
    }
    roff
}

/// The client configs discovery reads (`config::standard_places`, the one list), one entry
/// per client: its user and project paths, the home folder written `~`.
fn client_configs() -> Vec<(String, String)> {
    let places = mcp_budget::config::standard_places(
        Some(std::path::Path::new("~")),
        std::path::Path::new("."),
    );
    let mut out: Vec<(String, String)> = Vec::new();
    for place in places {
        let what = format!(
            "{}'s MCP config, read when no file is given",
            place.client.id()
        );
        let path = place.path.display().to_string();
        match out.iter_mut().find(|(_, w)| *w == what) {
            Some((paths, _)) => {
                paths.push_str(", ");
                paths.push_str(&path);
            }
            None => out.push((path, what)),
        }
    }
    out
}

/// The exit statuses (`src/exit.rs`, docs/exit-codes.md).
const EXIT: &[(&str, &str)] = &[
    ("0", "everything was measured (and every gate passed)"),
    ("1", "a gate failed: a threshold, a regression against the baseline, or a finding under --fail-on (--exit-zero makes it 0); lab --check found a client that moved"),
    ("2", "a usage, config or I/O error, or a server that could not be audited (the report is still written for the others)"),
    ("129, 130, 143", "ended by SIGHUP, SIGINT (Ctrl-C) or SIGTERM; the servers it started were stopped"),
];

/// Every variable the flags of `cmd` (not its subcommands) read, with the flag's first line.
pub fn flags_env(cmd: &clap::Command) -> Vec<(String, String)> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| {
            let env = a.get_env()?.to_string_lossy().into_owned();
            let flag = a
                .get_long()
                .map_or(a.get_id().to_string(), |l| format!("--{l}"));
            Some((env, format!("the default of {flag}")))
        })
        .collect()
}

/// Text for a roff line: backslashes written as `\e`, a leading `.` or `'` made literal,
/// hyphens as minus signs (so an option can be copied from the page).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push_str("\n.br\n");
        }
        if line.starts_with(['.', '\'']) {
            out.push_str("\\&");
        }
        out.push_str(&line.replace('\\', "\\e").replace('-', "\\-"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roff_text_is_escaped() {
        assert_eq!(escape(".hidden"), "\\&.hidden");
        assert_eq!(escape("a \\ b --x"), "a \\e b \\-\\-x");
        assert_eq!(escape("one \\\n  two"), "one \\e\n.br\n  two");
    }
}
