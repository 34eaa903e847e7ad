//! Files written whole or not at all: a temp file beside the target, then a rename, so a crash
//! or a full disk never leaves a half-written report behind. The temp file is created new
//! (`O_EXCL`, so never through a link planted at its name: a report folder may sit in a cloned
//! repository) under a name no other writer can predict.

use std::io::{BufWriter, Write};
use std::path::Path;

/// Write `path` through `fill`; the old file (if any) stays until the new one is complete.
pub fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    write_then(path, None, fill, || Ok(()))
}

/// Replace `path` with `bytes` the same way, the new file with `mode` (the old one's
/// permissions, for a file the user owns); `check` runs just before the rename and can still
/// refuse it (the file changed under us), leaving the old file as it was.
pub fn replace_file(
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
    check: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<()> {
    write_then(path, mode, |w| w.write_all(bytes), check)
}

fn write_then(
    path: &Path,
    mode: Option<u32>,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    check: impl FnOnce() -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let (file, tmp) = create_temp(dir, name, mode)?;
    let result = (|| {
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        if let Some(mode) = mode {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        file.sync_all()?;
        check()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A new file beside the target, created exclusively: an existing file or link at the name
/// (planted or left by a crash) is never opened, another name is tried instead.
/// With `mode`, the file is created with it (never readable by others for a moment, as a
/// record holding a secret would be).
fn create_temp(
    dir: &Path,
    name: &str,
    mode: Option<u32>,
) -> std::io::Result<(std::fs::File, std::path::PathBuf)> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut last = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(
            ".{name}.tmp-{}-{n}-{nanos:08x}",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode.map_or(0o666, |m| m & 0o777))
            .open(&tmp)
        {
            Ok(file) => return Ok((file, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free temp name")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, |w| w.write_all(b"old")).unwrap();
        let err = write_atomic(&p, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk full"))
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A link planted where the old code put its temp file (`.NAME.tmp-PID`, predictable in a
    /// report folder a cloned repository ships) is not written through.
    #[cfg(unix)]
    #[test]
    fn a_planted_link_at_the_temp_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, b"precious").unwrap();
        let planted = dir
            .path()
            .join(format!(".a.json.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, |w| w.write_all(b"report")).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&p).unwrap(), b"report");
        assert!(std::fs::symlink_metadata(&planted).unwrap().is_symlink());
    }
}
