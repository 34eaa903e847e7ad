//! The spill store: full originals of reduced results, one file per (server, tool, arguments),
//! written atomically with mode 0600, names sanitised so nothing can leave the store, and a size
//! cap enforced by evicting the oldest files first.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Default cap on the store's total size.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

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

    /// Where `content` for this call would be saved (nothing is written): the same (server,
    /// tool, arguments, part) always maps to the same file.
    pub fn plan(
        &self,
        server: &str,
        tool: &str,
        arguments: &Map<String, Value>,
        part: &str,
        ext: &str,
    ) -> SpillHandle {
        let key = spill_key(server, tool, arguments);
        let part = if part.is_empty() {
            String::new()
        } else {
            format!("-{}", sanitize(part))
        };
        let id = format!(
            "{}/{}-{}{part}.{}",
            sanitize(server),
            sanitize(tool),
            &key[..16],
            sanitize(ext)
        );
        SpillHandle {
            path: self.dir.join(&id),
            id,
            bytes: 0,
        }
    }

    /// Write `content` where `handle` says; an identical file already there is kept as is.
    pub fn write(&self, handle: &SpillHandle, content: &[u8]) -> std::io::Result<SpillHandle> {
        let path = &handle.path;
        let done = SpillHandle {
            bytes: content.len(),
            ..handle.clone()
        };
        if std::fs::metadata(path).is_ok_and(|m| m.len() == content.len() as u64)
            && same_content(path, content)
        {
            return Ok(done);
        }
        let dir = path.parent().expect("a spill path has a parent");
        std::fs::create_dir_all(dir)?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("spill");
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let written = write_private(&tmp, content).and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
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
        arguments: &Map<String, Value>,
        ext: &str,
        content: &[u8],
    ) -> std::io::Result<SpillHandle> {
        self.write(&self.plan(server, tool, arguments, "", ext), content)
    }

    /// The file behind an id, if it is inside the store and exists.
    pub fn resolve(&self, id: &str) -> Option<PathBuf> {
        let id = id.strip_prefix("mcp-budget://spill/").unwrap_or(id);
        let mut parts = id.split('/');
        let (server, file) = (parts.next()?, parts.next()?);
        if parts.next().is_some() || sanitize(server) != server || sanitize(file) != file {
            return None;
        }
        let path = self.dir.join(server).join(file);
        path.is_file().then_some(path)
    }

    /// Remove the oldest files until the store is within its cap (never the one just written).
    fn evict(&self, keep: &Path) -> std::io::Result<()> {
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = Vec::new();
        for server in std::fs::read_dir(&self.dir)?.flatten() {
            let Ok(entries) = std::fs::read_dir(server.path()) else {
                continue;
            };
            for f in entries.flatten() {
                if let Ok(m) = f.metadata() {
                    if m.is_file() {
                        files.push((
                            m.modified().unwrap_or(std::time::UNIX_EPOCH),
                            m.len(),
                            f.path(),
                        ));
                    }
                }
            }
        }
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes {
                break;
            }
            if path != keep && std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
        Ok(())
    }
}

fn write_private(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(content)?;
    f.flush()
}

/// sha256 over server, tool and the arguments with keys sorted, as hex.
pub fn spill_key(server: &str, tool: &str, arguments: &Map<String, Value>) -> String {
    let mut h = Sha256::new();
    h.update(server.as_bytes());
    h.update([0]);
    h.update(tool.as_bytes());
    h.update([0]);
    h.update(canonical(&Value::Object(arguments.clone())).as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&m[*k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
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

/// Whether the file at `path` holds exactly `content`, read in chunks (not all at once).
fn same_content(path: &Path, content: &[u8]) -> bool {
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = 0;
    loop {
        match file.read(&mut buf) {
            Ok(0) => return at == content.len(),
            Ok(n) => {
                if content.get(at..at + n) != Some(&buf[..n]) {
                    return false;
                }
                at += n;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn same_key_same_file_lossless_private_and_confined() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path(), DEFAULT_MAX_BYTES);
        let content = "héllo\r\n\0bytes".as_bytes();
        let a = store
            .save(
                "../../etc",
                "to/ol",
                &args(json!({"b": 1, "a": [1, {"y": 2, "x": 1}]})),
                "md",
                content,
            )
            .unwrap();
        let b = store
            .save(
                "../../etc",
                "to/ol",
                &args(json!({"a": [1, {"x": 1, "y": 2}], "b": 1})),
                "md",
                content,
            )
            .unwrap();
        assert_eq!(a, b, "argument key order does not matter");
        assert!(a.path.starts_with(dir.path()));
        assert!(a.id.starts_with("_._.._etc/to_ol-"), "{}", a.id);
        assert_eq!(std::fs::read(&a.path).unwrap(), content);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&a.path).unwrap().permissions().mode() & 0o777,
                0o600
            );
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
        for i in 0..4 {
            handles.push(
                store
                    .save("s", "t", &args(json!({"i": i})), "txt", &[b'x'; 1000])
                    .unwrap(),
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let exists: Vec<bool> = handles.iter().map(|h| h.path.exists()).collect();
        assert_eq!(exists, [false, false, true, true]);
    }
}
