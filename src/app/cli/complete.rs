//! Values the shells complete, asked of the binary on each Tab (clap_complete's dynamic
//! completion, registered by `mcp-budget completions SHELL`): the server names in the client
//! configs found, client ids and tokenizer names (comma-separated lists completed item by
//! item). A value from a config is offered only when it is safe to print in a terminal.

use std::ffi::OsStr;

use clap_complete::engine::CompletionCandidate;

/// The names of the servers in the client configs found from here (the user's and this
/// project's; listing a project's server starts nothing, so trust does not matter here).
pub fn servers(current: &OsStr) -> Vec<CompletionCandidate> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(std::path::PathBuf::from);
    // no variable is expanded: a name never needs one, and a value is never read
    let sources = mcp_budget::config::load_sources(&[], home.as_deref(), &cwd, &|_| None, false);
    let mut names: Vec<String> = sources
        .servers
        .servers
        .iter()
        .chain(&sources.untrusted)
        .map(|s| s.name.clone())
        .filter(|n| safe(n))
        .collect();
    names.sort();
    names.dedup();
    starting_with(current, names)
}

/// Client ids, a comma-separated list (`claude-code,co` offers `claude-code,codex`, ...).
pub fn clients(current: &OsStr) -> Vec<CompletionCandidate> {
    let mut ids: Vec<String> = mcp_budget::config::profiles::profiles()
        .iter()
        .map(|p| p.id.clone())
        .collect();
    ids.extend([
        "all".to_string(),
        mcp_budget::config::profiles::MEASURED.to_string(),
    ]);
    list(current, &ids)
}

/// Tokenizer names, a comma-separated list.
pub fn tokenizers(current: &OsStr) -> Vec<CompletionCandidate> {
    list(current, &tokenizer_names())
}

/// One tokenizer name.
pub fn tokenizer(current: &OsStr) -> Vec<CompletionCandidate> {
    starting_with(current, tokenizer_names())
}

fn tokenizer_names() -> Vec<String> {
    mcp_budget::ground::tokens::Tokenizer::NAMES
        .map(String::from)
        .to_vec()
}

/// The items of a comma-separated list: the part before the last comma kept, the last item
/// completed from `items` not already in the list.
fn list(current: &OsStr, items: &[String]) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    let (done, last) = match current.rfind(',') {
        Some(i) => (&current[..=i], &current[i + 1..]),
        None => ("", current.as_ref()),
    };
    let chosen: Vec<&str> = done.split(',').filter(|s| !s.is_empty()).collect();
    items
        .iter()
        .filter(|i| i.starts_with(last) && !chosen.contains(&i.as_str()))
        .map(|i| CompletionCandidate::new(format!("{done}{i}")))
        .collect()
}

fn starting_with(current: &OsStr, values: Vec<String>) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    values
        .into_iter()
        .filter(|v| v.starts_with(current.as_ref()))
        .map(CompletionCandidate::new)
        .collect()
}

/// A name a shell may print and insert as it is: no control or format characters, no
/// whitespace or shell metacharacters (a config is written by whoever wrote the project).
fn safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && name.chars().all(|c| {
            !c.is_control()
                && !c.is_whitespace()
                && !mcp_budget::ground::text::is_format(c)
                && !"'\"`$\\;&|<>(){}*?!#~".contains(c)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(c: Vec<CompletionCandidate>) -> Vec<String> {
        c.iter()
            .map(|c| c.get_value().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn lists_complete_their_last_item_once() {
        let ids = ["claude-code", "codex", "copilot-cli"].map(String::from);
        assert_eq!(
            values(list(OsStr::new("claude-code,co"), &ids)),
            ["claude-code,codex", "claude-code,copilot-cli"]
        );
        assert_eq!(
            values(list(OsStr::new("codex,"), &ids)),
            ["codex,claude-code", "codex,copilot-cli"]
        );
        assert_eq!(values(list(OsStr::new("cl"), &ids)), ["claude-code"]);
        assert!(values(tokenizer(OsStr::new("o2"))) == ["o200k_base"]);
        assert!(values(clients(OsStr::new(""))).contains(&"measured".to_string()));
    }

    #[test]
    fn names_that_could_drive_a_terminal_or_a_shell_are_not_offered() {
        assert!(safe("github") && safe("my.server-2") && safe("demo@claude-code"));
        for bad in [
            "",
            "a b",
            "x\u{1b}[31m",
            "rm$(id)",
            "a;b",
            "x\u{202e}y",
            "tab\tname",
        ] {
            assert!(!safe(bad), "{bad:?}");
        }
    }
}
