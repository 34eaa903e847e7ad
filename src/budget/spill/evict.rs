//! Keeping the spill store within its size cap: the oldest spills go first, and only the
//! store's own files (whose content still hashes to their name) are ever deleted.

use std::path::{Path, PathBuf};

use super::files::for_each_chunk;
use super::ids::hex;
use super::list::spills;

/// Remove the oldest spills under `root` until the store is within `max_bytes` (never `keep`,
/// the one just written). Only the store's own files are candidates: regular files of its
/// name pattern whose content still hashes to their name; nothing else is ever deleted.
pub(super) fn evict(root: &Path, max_bytes: u64, keep: &Path) -> std::io::Result<()> {
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = spills(root)
        .into_iter()
        .map(|(id, m)| {
            (
                m.modified().unwrap_or(std::time::UNIX_EPOCH),
                m.len(),
                root.join(id),
            )
        })
        .collect();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    files.sort();
    for (_, len, path) in files {
        if total <= max_bytes {
            break;
        }
        if path != keep && holds_its_hash(&path) && std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
    Ok(())
}

/// Whether the file's content hashes (BLAKE3) to the hash in its name (so the store wrote it),
/// read in chunks without following a link. (Spills named by sha256, before 2026-11, are no
/// longer taken for the store's: they are left where they are.)
fn holds_its_hash(path: &Path) -> bool {
    let Some((_, want)) = path
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.rsplit_once('-'))
    else {
        return false;
    };
    let mut blake = blake3::Hasher::new();
    for_each_chunk(path, |chunk| {
        blake.update(chunk);
        true
    }) && hex(blake.finalize().as_bytes()).starts_with(want)
}

#[cfg(test)]
mod tests {
    use crate::budget::spill::{SpillEntry, SpillStore};

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

    /// Only a file whose name is the BLAKE3 of its content is the store's: one named by the
    /// hash of other content, or by no hash, is never evicted, however old.
    #[test]
    fn only_a_file_named_by_its_own_hash_is_evicted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("s")).unwrap();
        let other = blake3::hash(b"other content").to_hex();
        let misnamed = dir.path().join(format!("s/t-{}.md", &other[..16]));
        std::fs::write(&misnamed, vec![b'm'; 1000]).unwrap();
        let forged = dir.path().join("s/t-00112233445566ff.md");
        std::fs::write(&forged, vec![b'f'; 1000]).unwrap();
        let old = vec![b'o'; 1000];
        let own = dir
            .path()
            .join(format!("s/t-{}.md", &blake3::hash(&old).to_hex()[..16]));
        std::fs::write(&own, &old).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let store = SpillStore::new(dir.path(), 1500);
        let new = store.save("s", "t", "md", &[b'n'; 1000]).unwrap();
        assert!(
            !own.exists(),
            "the store's own spill, the oldest, is evicted"
        );
        assert!(
            misnamed.exists(),
            "a hash of other content is not the store's"
        );
        assert!(forged.exists(), "a name that is no hash is not the store's");
        assert!(new.path.exists());
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
}
