//! What `wrap` remembers for `unwrap`, kept in mcp-budget's state folder, never in the client's
//! file (a client may refuse a key it does not know): per config file, the original text of
//! each entry it wrapped, the file as it was before the first wrap, and a hash of what it last
//! wrote. And each dry run's view of the files, so that `wrap --expect` can name the file that
//! changed since. Records are written whole (temp file, rename), readable by the user only:
//! an entry's original can hold a secret, as the config does.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One config file's record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub path: String,
    /// The original text of each wrapped entry, by key path (`mcpServers.github`); for Codex,
    /// the whole file the entry was wrapped in.
    pub originals: BTreeMap<String, String>,
    /// Each wrapped entry as `wrap` left it (canonical JSON), by key path: an entry that no
    /// longer matches was edited by hand, and is not replaced by its original.
    #[serde(default)]
    pub wrapped: BTreeMap<String, String>,
    /// The file before the first wrap, while every change since was mcp-budget's.
    pub before: Option<String>,
    /// The hash of the text mcp-budget last wrote.
    pub written: Option<String>,
}

/// The state folder (`$XDG_STATE_HOME/mcp-budget/wrap`, else `~/.local/state/mcp-budget/wrap`).
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// A short hash, in hex.
pub fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex()[..32].to_string()
}

impl Store {
    pub fn new(dir: PathBuf) -> Store {
        Store { dir }
    }

    fn record_path(&self, file: &Path) -> PathBuf {
        self.dir
            .join("records")
            .join(format!("{}.json", hash(file.as_os_str().as_bytes())))
    }

    /// The record of `file` (its real path); an empty one when there is none.
    pub fn load(&self, file: &Path) -> Result<Record, String> {
        let path = self.record_path(file);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| format!("its record {} cannot be read: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Record {
                path: file.display().to_string(),
                ..Record::default()
            }),
            Err(e) => Err(format!("its record {} cannot be read: {e}", path.display())),
        }
    }

    /// Write `record` (or remove it when it holds nothing).
    pub fn save(&self, file: &Path, record: &Record) -> std::io::Result<()> {
        let path = self.record_path(file);
        if record.originals.is_empty() {
            return match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        write_private(&path, &serde_json::to_vec_pretty(record)?)
    }

    /// Where the backup of a shared file goes (`backups/HASH-NAME.mcp-budget.bak`): never beside
    /// it in its repository, where `git add .` would take it.
    pub fn backup_path(&self, file: &Path) -> PathBuf {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let hash = hash(file.as_os_str().as_bytes());
        self.dir
            .join("backups")
            .join(format!("{}-{name}.mcp-budget.bak", &hash[..16]))
    }

    /// Write a backup into the state folder, readable by the user only.
    pub fn save_backup(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        write_private(path, bytes)
    }

    /// Remember a dry run's view: each file's hash, under the dry run's token.
    pub fn save_plan(&self, token: &str, files: &BTreeMap<String, String>) -> std::io::Result<()> {
        let path = self.dir.join("dry-runs").join(format!("{token}.json"));
        write_private(&path, &serde_json::to_vec_pretty(files)?)
    }

    /// A dry run's view, if it is remembered.
    pub fn load_plan(&self, token: &str) -> Option<BTreeMap<String, String>> {
        if !token.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let path = self.dir.join("dry-runs").join(format!("{token}.json"));
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    crate::ground::atomic::replace_file(path, bytes, Some(0o600), || Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_an_empty_one_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().join("state"));
        let file = Path::new("/home/u/.cursor/mcp.json");
        assert_eq!(store.load(file).unwrap().originals.len(), 0);
        let mut r = store.load(file).unwrap();
        r.originals
            .insert("mcpServers.a".into(), "{\"command\": \"x\"}".into());
        store.save(file, &r).unwrap();
        assert_eq!(store.load(file).unwrap(), r);
        let path = store.record_path(file);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        r.originals.clear();
        store.save(file, &r).unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn a_plan_token_must_be_hex() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path().to_path_buf());
        let files = BTreeMap::from([("/a".to_string(), "h".to_string())]);
        store.save_plan("abc123", &files).unwrap();
        assert_eq!(store.load_plan("abc123"), Some(files));
        assert_eq!(store.load_plan("../records/x"), None);
    }
}
