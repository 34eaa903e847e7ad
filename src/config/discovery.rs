//! The standard places each MCP client keeps its config, on Linux and macOS.

use std::path::{Path, PathBuf};

use super::ClientKind;

/// A file where a client's config may be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub client: ClientKind,
    pub path: PathBuf,
    /// Under the current folder (a project's config, written by whoever wrote the project),
    /// not in the user's home.
    pub project: bool,
}

/// Every standard place, for the user's home and the project in `cwd` (existing or not).
pub fn standard_places(home: Option<&Path>, cwd: &Path) -> Vec<Place> {
    let mut places = Vec::new();
    let mut add = |client: ClientKind, path: PathBuf| {
        places.push(Place {
            client,
            path,
            project: false,
        })
    };
    if let Some(h) = home {
        let mac = h.join("Library/Application Support");
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| h.join(".config"));
        add(
            ClientKind::ClaudeDesktop,
            mac.join("Claude/claude_desktop_config.json"),
        );
        add(
            ClientKind::ClaudeDesktop,
            xdg.join("Claude/claude_desktop_config.json"),
        );
        add(ClientKind::ClaudeCode, h.join(".claude.json"));
        add(ClientKind::Cursor, h.join(".cursor/mcp.json"));
        add(ClientKind::VsCode, mac.join("Code/User/mcp.json"));
        add(ClientKind::VsCode, xdg.join("Code/User/mcp.json"));
        add(ClientKind::VsCode, mac.join("Code/User/settings.json"));
        add(ClientKind::VsCode, xdg.join("Code/User/settings.json"));
        add(
            ClientKind::Windsurf,
            h.join(".codeium/windsurf/mcp_config.json"),
        );
        add(ClientKind::Gemini, h.join(".gemini/settings.json"));
        let codex_home = std::env::var_os("CODEX_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| h.join(".codex"));
        add(ClientKind::Codex, codex_home.join("config.toml"));
    }
    for (client, path) in [
        (ClientKind::ClaudeCode, ".mcp.json"),
        (ClientKind::Cursor, ".cursor/mcp.json"),
        (ClientKind::VsCode, ".vscode/mcp.json"),
        (ClientKind::Gemini, ".gemini/settings.json"),
    ] {
        places.push(Place {
            client,
            path: cwd.join(path),
            project: true,
        });
    }
    places
}

/// The standard places that exist, in order (a file that is both a user and a project place,
/// as when the current folder is the home folder, is the user's).
pub fn discover(home: Option<&Path>, cwd: &Path) -> Vec<Place> {
    let mut seen = Vec::new();
    standard_places(home, cwd)
        .into_iter()
        .filter(|p| p.path.is_file())
        .filter(|p| {
            let canon = p.path.canonicalize().unwrap_or_else(|_| p.path.clone());
            let fresh = !seen.contains(&canon);
            seen.push(canon);
            fresh
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_existing_files_once() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        std::fs::create_dir_all(h.join(".cursor")).unwrap();
        std::fs::write(h.join(".cursor/mcp.json"), "{}").unwrap();
        std::fs::write(h.join(".claude.json"), "{}").unwrap();
        // cwd == home: .cursor/mcp.json is both a user and a project place
        let found = discover(Some(h), h);
        let clients: Vec<ClientKind> = found.iter().map(|p| p.client).collect();
        assert_eq!(clients, [ClientKind::ClaudeCode, ClientKind::Cursor]);
    }
}
