//! Reading a spill back, never through a link: the whole file, or a line at a time (streamed,
//! so a page of a 60 MB spill holds one line in memory, not the file).

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use super::files::open_no_follow;
use super::SpillStore;

/// A spill that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SpillReadError {
    /// No spill of this store has the id (or it is a link, or not of the store's pattern).
    #[error("no spill `{0}`")]
    Unknown(String),
    #[error("cannot read spill `{id}`: {source}")]
    Io {
        id: String,
        #[source]
        source: std::io::Error,
    },
}

impl SpillStore {
    /// Open a spill for reading, never through a link: the file is opened with `O_NOFOLLOW`
    /// and must still be a regular file inside the store once open.
    pub fn open(&self, id: &str) -> Option<File> {
        let file = open_no_follow(&self.resolve(id)?).ok()?;
        file.metadata().ok()?.is_file().then_some(file)
    }

    /// The whole spill behind an id or `mcp-budget://spill/` URI.
    pub fn read(&self, id: &str) -> Result<Vec<u8>, SpillReadError> {
        let mut file = self
            .open(id)
            .ok_or_else(|| SpillReadError::Unknown(id.to_string()))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|source| SpillReadError::Io {
                id: id.to_string(),
                source,
            })?;
        Ok(bytes)
    }

    /// The spill behind an id or URI, to be read a line at a time.
    pub fn lines(&self, id: &str) -> Option<SpillLines> {
        Some(SpillLines {
            reader: BufReader::with_capacity(64 * 1024, self.open(id)?),
            raw: Vec::new(),
        })
    }
}

/// A spill read a line at a time: lines skipped are not decoded, and only the current line is
/// held in memory.
pub struct SpillLines {
    reader: BufReader<File>,
    /// The current line's bytes.
    raw: Vec<u8>,
}

impl SpillLines {
    /// Skip up to `n` lines (a last line without `\n` counts); returns how many were skipped.
    pub fn skip(&mut self, n: usize) -> std::io::Result<usize> {
        let mut skipped = 0;
        let mut in_line = false;
        while skipped < n {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                return Ok(skipped + usize::from(in_line));
            }
            let (used, found) = match memchr::memchr(b'\n', buf) {
                Some(at) => (at + 1, true),
                None => (buf.len(), false),
            };
            self.reader.consume(used);
            if found {
                skipped += 1;
                in_line = false;
            } else {
                in_line = true;
            }
        }
        Ok(skipped)
    }

    /// Whether nothing is left to read.
    pub fn at_end(&mut self) -> std::io::Result<bool> {
        Ok(self.reader.fill_buf()?.is_empty())
    }

    /// The next line as `str::lines` gives it: without its `\n` or `\r\n`, invalid UTF-8
    /// replaced; `None` at the end.
    pub fn next_line(&mut self) -> std::io::Result<Option<Cow<'_, str>>> {
        self.raw.clear();
        if self.reader.read_until(b'\n', &mut self.raw)? == 0 {
            return Ok(None);
        }
        Ok(Some(line_text(&self.raw)))
    }

    /// How many lines are left (a last line without `\n` counts), read to the end.
    pub fn count_rest(&mut self) -> std::io::Result<usize> {
        let (mut lines, mut last) = (0, b'\n');
        loop {
            let buf = self.reader.fill_buf()?;
            let Some(&end) = buf.last() else {
                return Ok(lines + usize::from(last != b'\n'));
            };
            lines += memchr::memchr_iter(b'\n', buf).count();
            last = end;
            let n = buf.len();
            self.reader.consume(n);
        }
    }
}

/// One line as `str::lines` gives it: without its `\n` or `\r\n`, invalid UTF-8 replaced.
fn line_text(raw: &[u8]) -> Cow<'_, str> {
    let raw = match raw.strip_suffix(b"\n") {
        Some(r) => r.strip_suffix(b"\r").unwrap_or(r),
        None => raw,
    };
    String::from_utf8_lossy(raw)
}

#[cfg(test)]
mod tests {
    use super::SpillReadError;
    use crate::budget::spill::{SpillStore, DEFAULT_MAX_BYTES};

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

    #[test]
    fn lines_are_read_as_str_lines_gives_them_and_counted_to_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let store = SpillStore::new(dir.path(), DEFAULT_MAX_BYTES);
        let spill = store.save("s", "t", "md", b"a\r\nb\n\xffc\nlast").unwrap();
        assert_eq!(store.read(&spill.uri()).unwrap(), b"a\r\nb\n\xffc\nlast");
        assert!(matches!(
            store.read("s/nope.md"),
            Err(SpillReadError::Unknown(_))
        ));
        let mut lines = store.lines(&spill.id).unwrap();
        assert_eq!(lines.skip(1).unwrap(), 1);
        assert_eq!(lines.next_line().unwrap().as_deref(), Some("b"));
        assert_eq!(lines.next_line().unwrap().as_deref(), Some("\u{fffd}c"));
        assert!(!lines.at_end().unwrap());
        assert_eq!(lines.count_rest().unwrap(), 1);
        assert!(lines.at_end().unwrap());
        assert_eq!(lines.next_line().unwrap(), None);
        let mut all = store.lines(&spill.id).unwrap();
        assert_eq!(
            all.skip(10).unwrap(),
            4,
            "a last line without a newline counts"
        );
    }
}
