//! Shared files: a config inside a git work tree (a repository's `.mcp.json`, a dotfile kept in
//! a repository) goes to everyone who clones it, so `wrap` writes into it nothing that belongs
//! to this user or this machine. No secret value: each is a reference the client fills from
//! its own environment (`${VAR}`, `${env:VAR}`, Codex's `env_vars`), and where the client fills
//! none the file is refused. No absolute path to this binary: `mcp-budget`, as the PATH finds
//! it. No backup beside it (`git add .` would take it): the state folder holds it.
//!
//! What each client fills, from its code or its documentation:
//! - Claude Code (2.1.332): `${VAR}` and `${VAR:-default}` in `command`, `args`, `env`, `url`,
//!   `headers`; but every `OTEL_*` variable it has is withheld (read as empty) and not passed to
//!   its servers, so no reference can carry the OTLP settings.
//! - Gemini CLI (0.61.0): `$VAR`, `${VAR}` and `${VAR:-default}` in every string of
//!   `settings.json` (`resolveEnvVarsInObject` on the whole file as it is loaded).
//! - Cursor, Windsurf: `${env:VAR}` in `command`, `args`, `env`, `url`, `headers` (their docs).
//! - VS Code: `${env:VAR}` and `${input:ID}` anywhere in a server's launch (its configuration
//!   resolver, `mcpRegistry.ts`).
//! - Codex (0.171.0): no expansion (`env` values are literal); `env_vars` names variables it
//!   passes through from its own environment.
//! - Claude Desktop: none.

use std::path::{Path, PathBuf};

use super::argv::Options;
use crate::config::ClientKind;

/// The git work tree `path` is in: the nearest folder above it that has a `.git` (a folder, or
/// the file of a linked work tree or a submodule).
pub fn work_tree(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// How `client` fills a variable in a server's `env` from its own environment.
enum Fill {
    /// A reference in the file's text (`${VAR}`, `${env:VAR}`).
    Reference(String),
    /// Named in Codex's `env_vars`: passed through, never written.
    PassThrough,
}

fn client_name(client: ClientKind) -> &'static str {
    match client {
        ClientKind::ClaudeDesktop => "Claude Desktop",
        ClientKind::ClaudeCode => "Claude Code",
        ClientKind::Cursor => "Cursor",
        ClientKind::VsCode => "VS Code",
        ClientKind::Windsurf => "Windsurf",
        ClientKind::Gemini => "Gemini CLI",
        ClientKind::Codex => "Codex",
        ClientKind::Generic => "this client",
    }
}

/// How `client` can be told to fill `var`, or why it cannot.
fn fill(client: ClientKind, var: &str) -> Result<Fill, String> {
    match client {
        ClientKind::ClaudeCode if var.starts_with("OTEL_") => Err(
            "Claude Code withholds its OTEL_* variables from its servers and from ${VAR} in its \
             config, so no reference can carry it"
                .into(),
        ),
        ClientKind::ClaudeCode => Ok(Fill::Reference(format!("${{{var}}}"))),
        // an empty default: a teammate without the variable gets an empty value, not the text
        ClientKind::Gemini => Ok(Fill::Reference(format!("${{{var}:-}}"))),
        ClientKind::Cursor | ClientKind::VsCode | ClientKind::Windsurf => {
            Ok(Fill::Reference(format!("${{env:{var}}}")))
        }
        ClientKind::Codex => Ok(Fill::PassThrough),
        ClientKind::ClaudeDesktop | ClientKind::Generic => Err(format!(
            "{} fills no ${{VAR}} in its config",
            client_name(client)
        )),
    }
}

/// The options for one shared file: the binary by its bare name (unless `--bin` named one),
/// and each secret among the variables every proxy gets (`--otlp`'s) as a reference the client
/// fills; with what was done, in words, for the dry run. Err: the secret the file would
/// receive and why no reference can carry it (one line).
pub fn shared_options(
    options: &Options,
    client: ClientKind,
) -> Result<(Options, Vec<String>), String> {
    let mut out = options.clone();
    out.shared = Some(client);
    if !options.bin_given {
        out.bin = "mcp-budget".into();
    }
    let mut said = Vec::new();
    out.env.clear();
    for (name, value) in &options.env {
        if crate::config::env_secrets([(name, value)]).is_empty() {
            out.env.push((name.clone(), value.clone()));
            continue;
        }
        match fill(client, name) {
            Ok(Fill::Reference(r)) => {
                said.push(format!("{name} as {r}"));
                out.env.push((name.clone(), r));
            }
            Ok(Fill::PassThrough) => {
                said.push(format!("{name} passed through by env_vars"));
                out.pass.push(name.clone());
            }
            Err(why) => {
                return Err(format!(
                    "the secret value of {name} would be written into this file, which is in a \
                     git work tree, and {why}; nothing written (wrap without --otlp, or wrap a \
                     config outside the repository)"
                ))
            }
        }
    }
    Ok((out, said))
}

/// Why a header's value cannot move into a shared file's `env` as it is written, if it cannot:
/// only a value made of references the client fills (an auth scheme such as `Bearer` before
/// them) carries no secret. Every header value is a secret to the redactor.
pub fn header_refusal(client: ClientKind, header: &str, value: &str) -> Option<String> {
    if references_only(client, value) {
        return None;
    }
    let how = match fill(client, "TOKEN") {
        Ok(Fill::Reference(r)) => format!("write it as a variable the client fills ({r})"),
        Ok(Fill::PassThrough) => "name its variable in `env_http_headers`".into(),
        Err(_) => format!("{} fills no variable in it", client_name(client)),
    };
    Some(format!(
        "header `{header}` holds its value as written, and this file is in a git work tree: \
         wrapping would copy it into the entry's `env`; {how}, and wrap again"
    ))
}

/// Whether `value` is only references in `client`'s syntax, after at most an auth scheme word
/// (`Bearer ${env:TOKEN}`): nothing in it is a secret.
fn references_only(client: ClientKind, value: &str) -> bool {
    only_references(value, |inner| accepted(client, inner))
}

/// Whether `value` is an optional scheme word (`Bearer`, `Basic`, `token`) and then only
/// references that `keep` accepts, at least one.
fn only_references(value: &str, keep: impl Fn(&str) -> bool) -> bool {
    let value = value.trim();
    let body = match value.split_once(char::is_whitespace) {
        Some((word, body)) if word.chars().all(|c| c.is_ascii_alphabetic()) => body,
        _ => value,
    };
    body.contains("${") && without_references(body, keep).is_some_and(|r| r.trim().is_empty())
}

/// Whether `${inner}` is a reference `client` fills (with no default that could hold a value).
fn accepted(client: ClientKind, inner: &str) -> bool {
    let name = |s: &str| {
        !s.is_empty()
            && !s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    match client {
        ClientKind::ClaudeCode | ClientKind::Gemini => {
            name(inner.strip_suffix(":-").unwrap_or(inner))
        }
        ClientKind::Cursor | ClientKind::Windsurf => inner.strip_prefix("env:").is_some_and(name),
        ClientKind::VsCode => {
            inner.strip_prefix("env:").is_some_and(name)
                || inner
                    .strip_prefix("input:")
                    .is_some_and(|id| !id.is_empty())
        }
        ClientKind::Codex | ClientKind::ClaudeDesktop | ClientKind::Generic => false,
    }
}

/// `value` with every `${...}` that `keep` accepts removed; None when one is not accepted.
fn without_references(value: &str, keep: impl Fn(&str) -> bool) -> Option<String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}')? + at;
        if !keep(&rest[at + 2..end]) {
            return None;
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// Whether a value as written is only references of any client's syntax (after at most an
/// auth scheme word): the dry run shows it, since it holds no secret.
pub fn is_reference(value: &str) -> bool {
    only_references(value, |inner| {
        [ClientKind::ClaudeCode, ClientKind::VsCode]
            .iter()
            .any(|c| accepted(*c, inner))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn otlp() -> Options {
        Options {
            bin: "/home/u/.cargo/bin/mcp-budget".into(),
            otlp: true,
            env: vec![
                (
                    "OTEL_EXPORTER_OTLP_ENDPOINT".into(),
                    "https://otel.example".into(),
                ),
                ("OTEL_EXPORTER_OTLP_HEADERS".into(), "x-key=SECRET".into()),
            ],
            ..Options::default()
        }
    }

    #[test]
    fn a_shared_file_gets_references_and_the_bare_binary() {
        let (o, said) = shared_options(&otlp(), ClientKind::Cursor).unwrap();
        assert_eq!(o.bin, "mcp-budget");
        assert_eq!(o.env[0].1, "https://otel.example", "not a secret: kept");
        assert_eq!(o.env[1].1, "${env:OTEL_EXPORTER_OTLP_HEADERS}");
        assert_eq!(
            said,
            ["OTEL_EXPORTER_OTLP_HEADERS as ${env:OTEL_EXPORTER_OTLP_HEADERS}"]
        );
        let (g, _) = shared_options(&otlp(), ClientKind::Gemini).unwrap();
        assert_eq!(g.env[1].1, "${OTEL_EXPORTER_OTLP_HEADERS:-}");
        let (c, _) = shared_options(&otlp(), ClientKind::Codex).unwrap();
        assert_eq!(c.pass, ["OTEL_EXPORTER_OTLP_HEADERS"]);
        assert_eq!(c.env.len(), 1);
        for refused in [ClientKind::ClaudeCode, ClientKind::ClaudeDesktop] {
            let why = shared_options(&otlp(), refused).unwrap_err();
            assert!(why.contains("OTEL_EXPORTER_OTLP_HEADERS") && !why.contains("SECRET"));
        }
        let given = Options {
            bin_given: true,
            ..otlp()
        };
        let (o, _) = shared_options(&given, ClientKind::Gemini).unwrap();
        assert_eq!(
            o.bin, "/home/u/.cargo/bin/mcp-budget",
            "--bin is taken as given"
        );
    }

    #[test]
    fn only_references_the_client_fills_move_into_a_shared_file() {
        let ok = |c, v| header_refusal(c, "Authorization", v).is_none();
        assert!(ok(ClientKind::ClaudeCode, "Bearer ${GITHUB_TOKEN}"));
        assert!(ok(ClientKind::Cursor, "Bearer ${env:GITHUB_TOKEN}"));
        assert!(ok(ClientKind::VsCode, "Bearer ${input:token}"));
        assert!(ok(ClientKind::Gemini, "${KEY:-}"));
        assert!(
            !ok(ClientKind::Cursor, "Bearer ${GITHUB_TOKEN}"),
            "Cursor's form is env:"
        );
        assert!(!ok(ClientKind::ClaudeCode, "Bearer ghp_literal123"));
        assert!(!ok(ClientKind::ClaudeCode, "${KEY:-sk-default-secret}"));
        assert!(!ok(ClientKind::ClaudeCode, "sk-${PART}-literal"));
        assert!(!ok(ClientKind::Codex, "${KEY}"));
        assert!(!ok(ClientKind::ClaudeCode, "on"));
        assert!(!ok(ClientKind::ClaudeCode, "sk${PART}"));
        assert!(is_reference("Bearer ${env:TOKEN}") && is_reference("${X}"));
        assert!(!is_reference("Bearer abc") && !is_reference("${X:-abc}"));
    }

    #[test]
    fn the_work_tree_is_found_by_its_git_folder_or_file() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".cursor")).unwrap();
        assert_eq!(work_tree(&repo.join(".cursor/mcp.json")), None);
        std::fs::write(repo.join(".git"), "gitdir: /elsewhere\n").unwrap();
        assert_eq!(work_tree(&repo.join(".cursor/mcp.json")), Some(repo));
    }
}
