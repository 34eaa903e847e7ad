//! The file operations of the spill store: private folders and files, writes through a
//! temporary name, and reads that never follow a symbolic link.

use std::fs::{File, Metadata};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Read the file at `path` (never through a link) in chunks while `f` says go on; true when
/// it was read to the end.
pub(super) fn for_each_chunk(path: &Path, mut f: impl FnMut(&[u8]) -> bool) -> bool {
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

pub(super) fn open_no_follow(path: &Path) -> std::io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    opts.open(path)
}

/// Set a file's modification time to now (best effort).
pub(super) fn touch(path: &Path) {
    if let Ok(f) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

/// A temporary name no other write uses: process id, a per-process counter and the clock.
pub(super) fn temp_name(name: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(".{name}.tmp-{}-{n}-{nanos}", std::process::id())
}

/// The metadata of `path` when it is a regular file itself (not a link to one).
pub(super) fn regular_file(path: &Path) -> Option<Metadata> {
    std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.file_type().is_file())
}

pub(super) fn real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

pub(super) fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Create `dir` and its missing parents with mode 0700 (existing folders are left as they are).
pub(super) fn create_private_dirs(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

pub(super) fn write_private(path: &Path, content: &[u8]) -> std::io::Result<()> {
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

/// Whether the regular file at `path` holds exactly `content`, read in chunks (not all at once).
pub(super) fn same_content(path: &Path, content: &[u8]) -> bool {
    let mut at = 0;
    regular_file(path).is_some()
        && for_each_chunk(path, |chunk| {
            let same = content.get(at..at + chunk.len()) == Some(chunk);
            at += chunk.len();
            same
        })
        && at == content.len()
}
