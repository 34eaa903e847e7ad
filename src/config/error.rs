//! Errors of loading server specs: a whole file that cannot be read, or one entry that is broken.

use std::path::PathBuf;

/// A file that could not be used at all.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to parse {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: not a probe file or an MCP client config (no `servers`, `mcpServers`, `mcp_servers` or `projects` key)")]
    UnknownFormat { path: PathBuf },
}

/// One broken server entry: reported by file and key, and skipped.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EntryError {
    /// The file the entry is in.
    pub file: String,
    /// The key path of the entry, e.g. `mcpServers.github`.
    pub key: String,
    /// The server name when one is known.
    pub server: Option<String>,
    pub message: String,
}

impl std::fmt::Display for EntryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: `{}`: {}", self.file, self.key, self.message)
    }
}
