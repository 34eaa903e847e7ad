//! Writing one plan: the backup first (beside the file, or in the state folder for a shared
//! file), then the record, then the file, only while it still holds the text the plan read.
//! The new text replaces the file whole (temp file, rename), except for a file with more than
//! one hard link: a rename would give this name a new file and leave the old text under the
//! others, splitting what the user linked. Such a file is written in place, as editors do
//! (vim's `backupcopy`, Emacs's `backup-by-copying-when-linked`): the backup first, the space
//! reserved before a byte changes, and on a failed write the old text put back.

use std::io::{Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{error, FileError, FilePlan, Store};

/// How a file was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrote {
    /// Replaced whole (temp file, rename).
    Replaced,
    /// Written in place: it has this many hard links, all kept.
    InPlace { links: u64 },
}

/// Write one plan: the backup first, then the record, then the file (whole, and only if it is
/// still the text the plan read); a refusal names the file and leaves it as it was.
pub fn write(plan: &FilePlan, store: &Store) -> Result<Wrote, FileError> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let path = &plan.target.path;
    let meta = std::fs::metadata(&plan.real).map_err(|e| error(path, e.to_string()))?;
    let mode = meta.permissions().mode() & 0o7777;
    let c_path = std::ffi::CString::new(plan.real.as_os_str().as_bytes())
        .map_err(|_| error(path, "a path with a NUL byte"))?;
    // SAFETY: access() reads a NUL-terminated path and nothing else
    let writable = unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } == 0;
    if mode & 0o222 == 0 || !writable {
        return Err(error(
            path,
            "no write permission (the file is read-only to you); nothing written",
        ));
    }
    let still = || -> std::io::Result<()> {
        let now = std::fs::read(&plan.real)?;
        if now != plan.before.as_bytes() {
            return Err(std::io::Error::other(
                "it changed while mcp-budget was editing it",
            ));
        }
        Ok(())
    };
    let failed =
        |what: &str, e: std::io::Error| error(path, format!("{what}: {e}; nothing written"));
    still().map_err(|e| failed("cannot edit it", e))?;
    let previous = store.load(&plan.real).map_err(|e| error(path, e))?;
    backup(plan, store, mode).map_err(|e| failed("cannot write its backup", e))?;
    store
        .save(&plan.real, &plan.record)
        .map_err(|e| failed("cannot write the record for unwrap", e))?;
    let links = meta.nlink();
    let written = if links > 1 {
        in_place(
            &plan.real,
            plan.after.as_bytes(),
            plan.before.as_bytes(),
            still,
        )
        .map(|()| Wrote::InPlace { links })
    } else {
        crate::ground::atomic::replace_file(&plan.real, plan.after.as_bytes(), Some(mode), still)
            .map(|()| Wrote::Replaced)
    };
    written.map_err(|e| {
        // the file is as it was: so is the record
        let _ = store.save(&plan.real, &previous);
        failed("cannot write it", e)
    })
}

/// The file as it was before this edit, at the plan's backup path: in the state folder for a
/// shared file (readable by the user only), else beside it with its permissions.
fn backup(plan: &FilePlan, store: &Store, mode: u32) -> std::io::Result<()> {
    if plan.target.shared.is_some() {
        return store.save_backup(&plan.backup, plan.before.as_bytes());
    }
    crate::ground::atomic::replace_file(&plan.backup, plan.before.as_bytes(), Some(mode), || Ok(()))
}

/// Write `bytes` over the file at `path` (the same inode: every hard link keeps it), after
/// `still` says it still holds `before`. The space is reserved first, so a full disk refuses
/// before a byte changes; a write that fails after that puts `before` back.
fn in_place(
    path: &Path,
    bytes: &[u8],
    before: &[u8],
    still: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    still()?;
    reserve(&file, bytes.len())?;
    let put = |file: &mut std::fs::File, text: &[u8]| -> std::io::Result<()> {
        file.rewind()?;
        file.write_all(text)?;
        file.set_len(text.len() as u64)?;
        file.sync_all()
    };
    if let Err(e) = put(&mut file, bytes) {
        return Err(match put(&mut file, before) {
            Ok(()) => e,
            Err(_) => std::io::Error::other(format!(
                "{e}, and putting the old text back failed too (the backup holds it)"
            )),
        });
    }
    Ok(())
}

/// Reserve `len` bytes for the file without changing its size, so that a full disk refuses
/// the write before it starts; a file system that cannot (EOPNOTSUPP) is written all the same.
#[cfg(target_os = "linux")]
fn reserve(file: &std::fs::File, len: usize) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let len = libc::off_t::try_from(len).map_err(std::io::Error::other)?;
    // SAFETY: fallocate on a descriptor open for writing; KEEP_SIZE leaves its length alone
    let done = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, len) };
    if done != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn reserve(_file: &std::fs::File, _len: usize) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_place_keeps_every_link_and_refuses_a_changed_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        let b = dir.path().join("b.json");
        std::fs::write(&a, "old text, longer than the new").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        in_place(&a, b"new", b"old text, longer than the new", || Ok(())).unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"new");
        let refused = in_place(&a, b"newer", b"new", || {
            Err(std::io::Error::other("it changed"))
        });
        assert!(refused.is_err());
        assert_eq!(std::fs::read(&b).unwrap(), b"new", "nothing written");
    }
}
