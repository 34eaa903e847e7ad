//! The spill store: full originals of reduced results, one file per distinct content
//! (`<server>/<tool>-<sha256(content)[..16]>.<ext>`), written through a unique temporary file and
//! renamed (files 0600, folders 0700), names sanitised so nothing can leave the store, and a size
//! cap enforced by evicting the oldest spills first. The store only ever deletes, reads or lists
//! regular files of its own name pattern inside its root, and never follows a symbolic link.

use std::fs::{File, Metadata};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// Default cap on the store's total size.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Hex digits of the content hash in a spill's name.
const HASH_CHARS: usize = 16;

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
        format!("mcp-budget://spill/{}", self.id)
    }
}

/// One spill in the store, as [`SpillStore::list`] finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillEntry {
    pub id: String,
    pub bytes: u64,
}

/// A directory of spilled originals.
#[derive(Debug, Clone)]
pub struct SpillStore {
    dir: PathBuf,
    max_bytes: u64,
}

impl SpillStore {
    pub fn new(dir: impl Into<PathBuf>, max_bytes: u64) -> Self {
        SpillStore {
            dir: dir.into(),
            max_bytes,
        }
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
        self.evict(path)?;
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
    /// name pattern, one folder below the root, with no link on the way.
    pub fn resolve(&self, id: &str) -> Option<PathBuf> {
        let id = id.strip_prefix("mcp-budget://spill/").unwrap_or(id);
        let mut parts = id.split('/');
        let (server, file) = (parts.next()?, parts.next()?);
        if parts.next().is_some() || sanitize(server) != server || !is_spill_name(file) {
            return None;
        }
        let folder = self.dir.join(server);
        if !real_dir(&folder) {
            return None;
        }
        let path = folder.join(file);
        regular_file(&path).map(|_| path)
    }

    /// Open a spill for reading, never through a link: the file is opened with `O_NOFOLLOW`
    /// and must still be a regular file inside the store once open.
    pub fn open(&self, id: &str) -> Option<File> {
        let file = open_no_follow(&self.resolve(id)?).ok()?;
        file.metadata().ok()?.is_file().then_some(file)
    }

    /// Every spill in the store (links and foreign files left out), sorted by id.
    pub fn list(&self) -> Vec<SpillEntry> {
        let mut out: Vec<SpillEntry> = self
            .spills()
            .into_iter()
            .map(|(id, meta)| SpillEntry {
                id,
                bytes: meta.len(),
            })
            .collect();
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }

    /// The store's own files: `(id, metadata)` of each regular file of the spill name pattern
    /// in a real folder one level below the root.
    fn spills(&self) -> Vec<(String, Metadata)> {
        let mut out = Vec::new();
        let Ok(servers) = std::fs::read_dir(&self.dir) else {
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

    /// Remove the oldest spills until the store is within its cap (never the one just
    /// written). Only the store's own files are candidates: regular files of its name pattern
    /// whose content still hashes to their name; nothing else is ever deleted.
    fn evict(&self, keep: &Path) -> std::io::Result<()> {
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = self
            .spills()
            .into_iter()
            .map(|(id, m)| {
                (
                    m.modified().unwrap_or(std::time::UNIX_EPOCH),
                    m.len(),
                    self.dir.join(id),
                )
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes {
                break;
            }
            if path != keep && holds_its_hash(&path) && std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
        Ok(())
    }
}

/// sha256 of the content, as hex.
pub fn content_hash(content: &[u8]) -> String {
    hex(&Sha256::digest(content))
}

/// Whether the file's content hashes to the hash in its name (so the store wrote it), read
/// in chunks without following a link.
fn holds_its_hash(path: &Path) -> bool {
    let Some((_, want)) = path
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.rsplit_once('-'))
    else {
        return false;
    };
    let mut h = Sha256::new();
    for_each_chunk(path, |chunk| {
        h.update(chunk);
        true
    }) && hex(&h.finalize()).starts_with(want)
}

/// Read the file at `path` (never through a link) in chunks while `f` says go on; true when
/// it was read to the end.
fn for_each_chunk(path: &Path, mut f: impl FnMut(&[u8]) -> bool) -> bool {
    use std::io::Read;
    let Ok(mut file) = open_no_follow(path) else {
        return false;
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return true,
            Ok(n) if f(&buf[..n]) => {}
            Ok(_) => return false,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

fn open_no_follow(path: &Path) -> std::io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    opts.open(path)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether `name` is of the store's pattern: `<sanitised tool>-<16 hex>.<sanitised ext>`.
fn is_spill_name(name: &str) -> bool {
    if sanitize(name) != name {
        return false;
    }
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let Some((tool, hash)) = stem.rsplit_once('-') else {
        return false;
    };
    !tool.is_empty()
        && !ext.is_empty()
        && hash.len() == HASH_CHARS
        && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Set a file's modification time to now (best effort).
fn touch(path: &Path) {
    if let Ok(f) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// A temporary name no other write uses: process id, a per-process counter and the clock.
fn temp_name(name: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(".{name}.tmp-{}-{n}-{nanos}", std::process::id())
}

/// The metadata of `path` when it is a regular file itself (not a link to one).
fn regular_file(path: &Path) -> Option<Metadata> {
    std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_file())
}

fn real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Create `dir` and its missing parents with mode 0700 (existing folders are left as they are).
fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

fn write_private(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let mut f = opts.open(path)?;
    // no fsync: a spill is a copy of what the server sent, and waiting for the disk would cost
    // every reduced result milliseconds; the rename still means no reader sees a half-written file
    f.write_all(content)?;
    f.flush()
}

/// A name safe as one path component: `[A-Za-z0-9._-]`, no leading dot, at most 64 chars.
pub fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    while s.starts_with('.') {
        s.replace_range(..1, "_");
    }
    if s.is_empty() {
        s.push('_');
    }
    s
}

/// Whether the regular file at `path` holds exactly `content`, read in chunks (not all at once).
fn same_content(path: &Path, content: &[u8]) -> bool {
    let mut at = 0;
    regular_file(path).is_some()
        && for_each_chunk(path, |chunk| {
            let same = content.get(at..at + chunk.len()) == Some(chunk);
            at += chunk.len();
            same
        })
        && at == content.len()
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

    #[test]
    fn evicts_oldest_first_over_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path(), 2500);
        let mut handles = Vec::new();
        for i in 0..4u8 {
            handles.push(store.save("s", "t", "txt", &[b'a' + i; 1000]).unwrap());
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let exists: Vec<bool> = handles.iter().map(|h| h.path.exists()).collect();
        assert_eq!(exists, [false, false, true, true]);
    }

    /// Issue 12, item 1: a store pointed at a folder that holds other files, or with a link
    /// to another folder planted in it, evicts only its own spills.
    #[cfg(unix)]
    #[test]
    fn eviction_deletes_only_the_stores_own_files_and_follows_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("user-folder");
        let victim = dir.path().join("victim");
        std::fs::create_dir_all(root.join("Photos")).unwrap();
        std::fs::create_dir_all(&victim).unwrap();
        std::fs::write(root.join("Photos/holiday.jpg"), vec![7u8; 5000]).unwrap();
        std::fs::write(root.join("Photos/t-0123456789abcdef.md"), b"foreign").unwrap();
        std::fs::write(victim.join("important.db"), vec![1u8; 5000]).unwrap();
        std::fs::write(victim.join("t-fedcba9876543210.md"), vec![2u8; 5000]).unwrap();
        std::os::unix::fs::symlink(&victim, root.join("link")).unwrap();
        std::fs::write(dir.path().join("outside.md"), b"x").unwrap();
        std::fs::create_dir_all(root.join("s")).unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("outside.md"),
            root.join("s/t-00000000000000aa.md"),
        )
        .unwrap();
        let store = SpillStore::new(&root, 1500);
        for i in 0..4u8 {
            store.save("s", "t", "md", &[b'a' + i; 1000]).unwrap();
        }
        assert_eq!(
            std::fs::read(root.join("Photos/holiday.jpg"))
                .unwrap()
                .len(),
            5000
        );
        assert!(root.join("Photos/t-0123456789abcdef.md").exists());
        assert!(victim.join("important.db").exists());
        assert!(victim.join("t-fedcba9876543210.md").exists());
        assert!(dir.path().join("outside.md").exists());
        let spills = store.list();
        let ours: Vec<&SpillEntry> = spills.iter().filter(|e| e.id.starts_with("s/")).collect();
        assert_eq!(ours.len(), 1, "only the newest spill is within the cap");
    }

    /// Issue 12, item 10: a link planted in the store is never read or listed.
    #[cfg(unix)]
    #[test]
    fn links_in_the_store_are_never_read_or_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("store");
        let store = SpillStore::new(&root, DEFAULT_MAX_BYTES);
        let real = store.save("srv", "t", "md", b"real spill").unwrap();
        let secret = dir.path().join("passwd");
        std::fs::write(&secret, b"root:x:0:0").unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("t-0123456789abcdef.md"), b"outside").unwrap();
        std::os::unix::fs::symlink(&secret, root.join("srv/t-00000000000000aa.md")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
        for id in ["srv/t-00000000000000aa.md", "linked/t-0123456789abcdef.md"] {
            assert_eq!(store.resolve(id), None, "{id}");
            assert!(store.open(id).is_none(), "{id}");
        }
        let ids: Vec<String> = store.list().into_iter().map(|e| e.id).collect();
        assert_eq!(ids, std::slice::from_ref(&real.id));
        let mut text = String::new();
        std::io::Read::read_to_string(&mut store.open(&real.uri()).unwrap(), &mut text).unwrap();
        assert_eq!(text, "real spill");
        // a linked server folder is refused for writing too
        std::os::unix::fs::symlink(&outside, root.join("evil")).unwrap();
        assert!(store.save("evil", "t", "md", b"x").is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
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

    /// Review of issue 12: a long tool name or a server's long MIME type still gives a spill
    /// the store can read, list and evict.
    #[test]
    fn long_names_stay_readable_and_evictable() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path(), 1500);
        let tool = "t".repeat(80);
        let a = store
            .save("s", &tool, &"x".repeat(50), &[b'a'; 1000])
            .unwrap();
        let name = a.id.rsplit('/').next().unwrap();
        assert!(name.len() <= 64, "{name}");
        assert_eq!(store.resolve(&a.id), Some(a.path.clone()));
        assert_eq!(store.list().len(), 1);
        let b = store.save("s", &tool, "md", &[b'b'; 1000]).unwrap();
        assert!(!a.path.exists(), "the older one is evicted");
        assert!(b.path.exists());
    }

    #[test]
    fn spill_names_are_recognised_and_nothing_else() {
        assert!(is_spill_name("browser_snapshot-0123456789abcdef.md"));
        for foreign in [
            "IMG_0001.jpg",
            "important.db",
            "t-0123456789abcdeg.md",
            "t-0123456789abcdef",
            "-0123456789abcdef.md",
            ".t-0123456789abcdef.md.tmp-1-2-3",
        ] {
            assert!(!is_spill_name(foreign), "{foreign}");
        }
    }
}
