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
    /// Every spill in the store (links and foreign files left out), sorted by id; only the
    /// scope's folder when the store is confined ([`SpillStore::confined_to`]).
    pub fn list(&self) -> Vec<SpillEntry> {
        let found = match self.scope() {
            Some(server) => server_spills(self.dir(), server),
            None => spills(self.dir()),
        };
        let mut out: Vec<SpillEntry> = found
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
        out.extend(server_spills(root, &server_name));
    }
    out
}

/// The store's own files in one server's folder (none when the name is not a sanitised one, or
/// the folder is a link or no folder).
fn server_spills(root: &Path, server_name: &str) -> Vec<(String, Metadata)> {
    let folder = root.join(server_name);
    if sanitize(server_name) != server_name || !real_dir(&folder) {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for f in entries.flatten() {
        let name = f.file_name().to_string_lossy().to_string();
        if !is_spill_name(&name) {
            continue;
        }
        if let Some(meta) = regular_file(&f.path()) {
            out.push((format!("{server_name}/{name}"), meta));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::budget::spill::{SpillStore, DEFAULT_MAX_BYTES};

    /// Issue 26, case 9: a store confined to one server lists and reads only its spills.
    #[test]
    fn a_confined_store_lists_and_reads_only_its_servers_spills() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path(), DEFAULT_MAX_BYTES);
        let mine = store.save("mine", "t", "md", b"my spill").unwrap();
        let theirs = store.save("theirs", "t", "md", b"their spill").unwrap();
        assert_eq!(store.list().len(), 2);
        let confined = store.confined_to("mine");
        let ids: Vec<String> = confined.list().into_iter().map(|e| e.id).collect();
        assert_eq!(ids, std::slice::from_ref(&mine.id));
        assert_eq!(confined.read(&mine.uri()).unwrap(), b"my spill");
        assert!(confined.read(&theirs.uri()).is_err());
        assert!(confined.lines(&theirs.id).is_none());
        assert_eq!(store.read(&theirs.id).unwrap(), b"their spill");
        // a name is confined as the store writes it: sanitised
        let odd = store.save("a b", "t", "md", b"odd").unwrap();
        assert_eq!(store.confined_to("a b").list()[0].id, odd.id);
    }
}
