//! The spill store: full originals of reduced results, one file per distinct content
//! (`<server>/<tool>-<blake3(content)[..16]>.<ext>`), written through a unique temporary file and
//! renamed (files 0600, folders 0700), names sanitised so nothing can leave the store, and a size
//! cap enforced by evicting the oldest spills first. The store only ever deletes, reads or lists
//! regular files of its own name pattern inside its root, and never follows a symbolic link.

mod evict;
mod files;
mod ids;
mod list;
mod read;

use std::path::{Path, PathBuf};

use files::{
    create_private_dirs, is_link, real_dir, regular_file, same_content, temp_name, touch,
    write_private,
};
use ids::{is_spill_name, HASH_CHARS};

pub use ids::{content_hash, sanitize, SPILL_URI_PREFIX};
pub use list::SpillEntry;
pub use read::{SpillLines, SpillReadError};

/// Default cap on the store's total size.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Characters of a spill's extension at most (it may come from a server's MIME type).
const MAX_EXT_CHARS: usize = 10;

/// Where a spilled original is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillHandle {
    /// `<server>/<tool>-<hash>.<ext>`, relative to the store.
    pub id: String,
    pub path: PathBuf,
    pub bytes: usize,
}

impl SpillHandle {
    /// `mcp-budget://spill/<id>`.
    pub fn uri(&self) -> String {
        format!("{SPILL_URI_PREFIX}{}", self.id)
    }
}

/// A directory of spilled originals.
#[derive(Debug, Clone)]
pub struct SpillStore {
    dir: PathBuf,
    max_bytes: u64,
    /// The one server folder reads and listings are confined to (see [`SpillStore::confined_to`]).
    scope: Option<String>,
}

impl SpillStore {
    pub fn new(dir: impl Into<PathBuf>, max_bytes: u64) -> Self {
        SpillStore {
            dir: dir.into(),
            max_bytes,
            scope: None,
        }
    }

    /// The same store, its reads and listings confined to `server`'s folder: what a proxy for
    /// that server may serve (several proxies share the default store, and one server's spills
    /// are no business of another's clients). Writes and eviction are unchanged.
    pub fn confined_to(&self, server: &str) -> SpillStore {
        SpillStore {
            scope: Some(sanitize(server)),
            ..self.clone()
        }
    }

    /// The server folder reads and listings are confined to, if any.
    pub fn scope(&self) -> Option<&str> {
        self.scope.as_deref()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Check that the store can be written: its folder exists or can be made, is a folder, and
    /// takes a file. Run once at start so a store that cannot hold a spill is an error before
    /// any result is cut, not a silent loss later.
    pub fn check_writable(&self) -> std::io::Result<()> {
        create_private_dirs(&self.dir)?;
        let meta = std::fs::metadata(&self.dir)?;
        if !meta.is_dir() {
            return Err(std::io::Error::other("not a directory"));
        }
        let probe = self.dir.join(temp_name("write-check"));
        write_private(&probe, b"ok")?;
        std::fs::remove_file(&probe)
    }

    /// Where `content` from this tool would be saved (nothing is written): the name holds a
    /// hash of the content, so the same content is one file and different content never shares
    /// one.
    pub fn plan(&self, server: &str, tool: &str, ext: &str, content: &[u8]) -> SpillHandle {
        let hash = content_hash(content);
        // the whole file name stays within one sanitised component (64 chars), so that every
        // spill written is one the store can read, list and evict
        let ext: String = sanitize(ext).chars().take(MAX_EXT_CHARS).collect();
        let room = 64 - HASH_CHARS - 2 - ext.len();
        let tool: String = sanitize(tool).chars().take(room).collect();
        let id = format!("{}/{tool}-{}.{ext}", sanitize(server), &hash[..HASH_CHARS],);
        SpillHandle {
            path: self.dir.join(&id),
            id,
            bytes: content.len(),
        }
    }

    /// Write `content` where `handle` says; a file already there with the same content is
    /// success (the name is the content's hash). Each write goes through a temporary file of
    /// its own, so concurrent writers of the same content never trip over each other.
    pub fn write(&self, handle: &SpillHandle, content: &[u8]) -> std::io::Result<SpillHandle> {
        let path = &handle.path;
        let done = SpillHandle {
            bytes: content.len(),
            ..handle.clone()
        };
        let dir = path.parent().expect("a spill path has a parent");
        create_private_dirs(dir)?;
        if is_link(dir) {
            return Err(std::io::Error::other(format!(
                "{} is a symbolic link; the spill store does not follow links",
                dir.display()
            )));
        }
        if regular_file(path).is_some_and(|m| m.len() == content.len() as u64)
            && same_content(path, content)
        {
            // the newest use: eviction, oldest first, must not take the handle just returned
            touch(path);
            return Ok(done);
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("spill");
        let tmp = dir.join(temp_name(name));
        let written = write_private(&tmp, content).and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            // another writer may have put the same content there meanwhile
            if same_content(path, content) {
                return Ok(done);
            }
            return Err(e);
        }
        evict::evict(&self.dir, self.max_bytes, path)?;
        Ok(done)
    }

    /// Plan and write in one go.
    pub fn save(
        &self,
        server: &str,
        tool: &str,
        ext: &str,
        content: &[u8],
    ) -> std::io::Result<SpillHandle> {
        self.write(&self.plan(server, tool, ext, content), content)
    }

    /// The file behind an id, if it names a spill of this store: a regular file of the store's
    /// name pattern, one folder below the root (the scope's, when confined), with no link on
    /// the way.
    pub fn resolve(&self, id: &str) -> Option<PathBuf> {
        let id = id.strip_prefix(SPILL_URI_PREFIX).unwrap_or(id);
        let mut parts = id.split('/');
        let (server, file) = (parts.next()?, parts.next()?);
        if parts.next().is_some() || sanitize(server) != server || !is_spill_name(file) {
            return None;
        }
        if self.scope.as_deref().is_some_and(|s| s != server) {
            return None;
        }
        let folder = self.dir.join(server);
        if !real_dir(&folder) {
            return None;
        }
        let path = folder.join(file);
        regular_file(&path).map(|_| path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_id_names_the_content_private_and_confined() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        let store = SpillStore::new(&root, DEFAULT_MAX_BYTES);
        let content = "héllo\r\n\0bytes".as_bytes();
        let a = store.save("../../etc", "to/ol", "md", content).unwrap();
        let b = store.save("../../etc", "to/ol", "md", content).unwrap();
        assert_eq!(a, b, "the same content is one file");
        let other = store.save("../../etc", "to/ol", "md", b"other").unwrap();
        assert_ne!(a.id, other.id, "different content never shares a file");
        assert!(a.path.starts_with(&root));
        assert_eq!(
            a.id,
            format!("_._.._etc/to_ol-{}.md", &content_hash(content)[..16])
        );
        assert_eq!(std::fs::read(&a.path).unwrap(), content);
        assert_eq!(std::fs::read(&other.path).unwrap(), b"other");
        #[cfg(unix)]
        {
            assert_eq!(mode(&a.path), 0o600);
            assert_eq!(mode(&root), 0o700);
            assert_eq!(mode(a.path.parent().unwrap()), 0o700);
        }
        assert_eq!(store.resolve(&a.uri()), Some(a.path.clone()));
        assert_eq!(store.resolve("../secret"), None);
        assert_eq!(store.resolve("a/../../b"), None);
    }

    /// Issue 12, item 3: identical writes at once all succeed, with one file and no temp left.
    #[test]
    fn concurrent_identical_writes_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path(), DEFAULT_MAX_BYTES);
        let content = vec![b'z'; 256 * 1024];
        let results: Vec<std::io::Result<SpillHandle>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..32)
                .map(|_| s.spawn(|| store.save("s", "t", "md", &content)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &results {
            assert_eq!(std::fs::read(&r.as_ref().unwrap().path).unwrap(), content);
        }
        let files: Vec<_> = std::fs::read_dir(dir.path().join("s")).unwrap().collect();
        assert_eq!(files.len(), 1, "one file, no temporary left behind");
    }

    /// Issue 12, item 4: a store that cannot hold a file says so at start.
    #[test]
    fn an_unwritable_store_is_an_error_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        assert!(SpillStore::new(&file, 1).check_writable().is_err());
        assert!(SpillStore::new(file.join("below"), 1)
            .check_writable()
            .is_err());
        let fresh = dir.path().join("new/store");
        SpillStore::new(&fresh, 1).check_writable().unwrap();
        assert_eq!(std::fs::read_dir(&fresh).unwrap().count(), 0);
    }
}
