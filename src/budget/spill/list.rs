//! Listing the spill store: its own files only (regular files of the spill name pattern in a
//! real folder one level below the root), never a link or a foreign file.

use std::fs::Metadata;
use std::path::Path;

use super::files::{real_dir, regular_file};
use super::ids::{is_spill_name, sanitize, SPILL_URI_PREFIX};
use super::SpillStore;

/// One spill in the store, as [`SpillStore::list`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillEntry {
    pub id: String,
    pub bytes: u64,
}

impl SpillEntry {
    /// `mcp-budget://spill/<id>`.
    pub fn uri(&self) -> String {
        format!("{SPILL_URI_PREFIX}{}", self.id)
    }

    /// The MIME type its extension says: JSON for `.json`, else plain text.
    pub fn mime_type(&self) -> &'static str {
        if self.id.ends_with(".json") {
            "application/json"
        } else {
            "text/plain"
        }
    }
}

impl SpillStore {
    /// Every spill in the store (links and foreign files left out), sorted by id.
    pub fn list(&self) -> Vec<SpillEntry> {
        let mut out: Vec<SpillEntry> = spills(self.dir())
            .into_iter()
            .map(|(id, meta)| SpillEntry {
                id,
                bytes: meta.len(),
            })
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }
}

/// The store's own files under `root`: `(id, metadata)` of each regular file of the spill name
/// pattern in a real folder one level below the root.
pub(super) fn spills(root: &Path) -> Vec<(String, Metadata)> {
    let mut out = Vec::new();
    let Ok(servers) = std::fs::read_dir(root) else {
        return out;
    };
    for server in servers.flatten() {
        let server_name = server.file_name().to_string_lossy().to_string();
        if sanitize(&server_name) != server_name || !real_dir(&server.path()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(server.path()) else {
            continue;
        };
        for f in entries.flatten() {
            let name = f.file_name().to_string_lossy().to_string();
            if !is_spill_name(&name) {
                continue;
            }
            if let Some(meta) = regular_file(&f.path()) {
                out.push((format!("{server_name}/{name}"), meta));
            }
        }
    }
    out
}
