//! Child processes of stdio servers: spawned in their own process group so the whole tree
//! (an `npx` wrapper and the node process behind it) is killed and reaped on every exit path,
//! with the tail of their stderr kept for error messages.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, LazyLock, Mutex};

use regex::Regex;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::UpstreamError;
use crate::config::{sdk_default_env, Redactor, ServerEnv};

/// Marks the stderr pipe as read to its end when the reader task stops, however it stops.
struct CloseOnDrop(tokio::sync::watch::Sender<bool>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(true);
    }
}

/// What a child's environment is built from: this process's (whole, or the SDKs' default set),
/// without the variables of `remove`; the server's own `env` goes on top.
pub struct ChildEnv<'a> {
    pub base: ServerEnv,
    pub remove: &'a [String],
}

impl ChildEnv<'_> {
    fn apply(&self, cmd: &mut Command, own: &BTreeMap<String, String>) {
        if self.base == ServerEnv::SdkDefault {
            cmd.env_clear();
            cmd.envs(sdk_default_env());
        }
        for var in self.remove {
            cmd.env_remove(var);
        }
        cmd.envs(own);
    }
}

/// How much of a server's stderr is kept (the end of it).
const STDERR_TAIL_BYTES: usize = 16 * 1024;
/// Lines that look like an error, cut off the front of the kept stderr, kept besides: at most
/// this many, each whole and at most [`EARLY_LINE_BYTES`] long (a start-up error prints its
/// cause first and a long stack trace after it).
const EARLY_LINES: usize = 8;
const EARLY_LINE_BYTES: usize = 2 * 1024;

/// What is kept of a child's stderr: its end, and the error lines cut off before it.
#[derive(Default)]
struct StderrKept {
    tail: Vec<u8>,
    /// Whole lines, each ending in `\n`.
    early: Vec<u8>,
    early_lines: usize,
}

impl StderrKept {
    fn push(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > STDERR_TAIL_BYTES {
            self.drop_head();
        }
    }

    /// Cut the front of the tail to [`STDERR_TAIL_BYTES`] at a line break: the line the cut
    /// falls in goes whole, so no part of a secret (which only the whole line shows) is kept.
    /// The lines cut that look like an error are kept whole in `early`.
    fn drop_head(&mut self) {
        let cut = self.tail.len() - STDERR_TAIL_BYTES;
        let line_end =
            memchr::memchr(b'\n', &self.tail[cut..]).map_or(self.tail.len(), |i| cut + i + 1);
        if self.early_lines < EARLY_LINES {
            let gone = String::from_utf8_lossy(&self.tail[..line_end]);
            for line in stderr_lines(&gone)
                .into_iter()
                .filter(|l| l.error && l.text.len() <= EARLY_LINE_BYTES)
                .take(EARLY_LINES - self.early_lines)
            {
                self.early.extend_from_slice(line.text.as_bytes());
                self.early.push(b'\n');
                self.early_lines += 1;
            }
        }
        self.tail.drain(..line_end);
    }
}

/// A line that says what went wrong: an error or exception, a panic, a missing file, module or
/// command, a refused permission.
static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(errors?|exception)\b|\bpanic(ked)?\b|\bno such\b|\bnot found\b|\bcannot (find|open|load|read)\b|\bcan't (find|open|load|read)\b|\bunable to\b|\bpermission denied\b|\bfatal\b|\be(noent|acces|perm|addrinuse|connrefused)\b")
        .expect("static regex")
});
/// A stack frame, which names an error's type in passing (`at new NodeError (...)`): JavaScript
/// and Java (`at ...`), Python (`File "..."`), Rust (`12: ...`).
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^(at |File "|\d+: )"#).expect("static regex"));

/// One non-empty line of stderr, trimmed, and whether it looks like an error.
struct StderrLine<'a> {
    text: &'a str,
    error: bool,
}

/// What a server's stderr `text` says, on one line of at most `max_chars` characters: the
/// lines that look like an error first, then the last lines, redacted whole before any cut
/// (`audit` on a dead server, the lab's tap on a server that ended).
pub(crate) fn stderr_summary(text: &str, max_chars: usize, redactor: &Redactor) -> String {
    chosen_lines(&stderr_lines(&redactor.redact(text)), max_chars, redactor)
}

/// The non-empty lines of `text`. A Python traceback's frames are not errors and its last line
/// (the exception, back at the margin) is, whatever it is named.
fn stderr_lines(text: &str) -> Vec<StderrLine<'_>> {
    let mut out = Vec::new();
    let mut traceback = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let error = if line.starts_with("Traceback (most recent call last)") {
            traceback = true;
            false
        } else if traceback {
            traceback = raw.starts_with([' ', '\t']);
            !traceback
        } else {
            !FRAME.is_match(line) && ERROR_LINE.is_match(line)
        };
        out.push(StderrLine { text: line, error });
    }
    out
}

/// At most `max_chars` characters of `lines` on one line: the lines that look like an error
/// first (the first and the last of them, then the others; a line ending in `:` with the line
/// after it, as Rust's `panicked at src/main.rs:2:5:`), then as many of the last lines as fit,
/// in their order, ` | ` between lines and ` … ` where lines were left out.
fn chosen_lines(lines: &[StderrLine<'_>], max_chars: usize, redactor: &Redactor) -> String {
    let mut picked = vec![false; lines.len()];
    let mut used = 0;
    let mut take = |i: usize, picked: &mut Vec<bool>| {
        let cost = crate::ground::text::char_count(lines[i].text) + if used == 0 { 0 } else { 3 };
        let fits = picked[i] || used + cost <= max_chars;
        if !picked[i] && fits {
            picked[i] = true;
            used += cost;
        }
        fits
    };
    let errors: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].error).collect();
    let mut order: Vec<usize> = errors
        .first()
        .into_iter()
        .chain(errors.last())
        .copied()
        .collect();
    order.extend(errors.iter().skip(1).take(errors.len().saturating_sub(2)));
    for i in order {
        if take(i, &mut picked) && lines[i].text.ends_with(':') && i + 1 < lines.len() {
            take(i + 1, &mut picked);
        }
    }
    if let (false, Some(&first)) = (picked.contains(&true), errors.first()) {
        // the cause alone is longer than the room: its start (redacted whole, again)
        return redactor.preview(lines[first].text, max_chars.saturating_sub(3));
    }
    for i in (0..lines.len()).rev() {
        if !take(i, &mut picked) {
            break;
        }
    }
    let mut out = String::new();
    let mut last: Option<usize> = None;
    for i in (0..lines.len()).filter(|&i| picked[i]) {
        if let Some(prev) = last {
            out.push_str(if i == prev + 1 { " | " } else { " … " });
        }
        out.push_str(&crate::ground::text::one_line(lines[i].text));
        last = Some(i);
    }
    if out.is_empty() {
        // the last line alone is longer than the room: its end (redacted whole before)
        return lines.last().map_or(String::new(), |l| {
            crate::ground::text::tail(l.text, max_chars)
        });
    }
    out
}

/// A running child; dropping it kills its process group.
pub struct ChildGuard {
    child: Child,
    pgid: Option<i32>,
    stderr: Arc<Mutex<StderrKept>>,
    /// True once the stderr pipe has been read to its end.
    stderr_closed: tokio::sync::watch::Receiver<bool>,
}

impl ChildGuard {
    pub async fn spawn(
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        base: &ChildEnv<'_>,
        cwd: Option<&PathBuf>,
    ) -> Result<(ChildGuard, ChildStdout, ChildStdin), UpstreamError> {
        let mut cmd = Command::new(command);
        base.apply(&mut cmd, env);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|e| UpstreamError::Spawn {
            command: command.to_string(),
            message: e.to_string(),
        })?;
        let missing = |what: &str| UpstreamError::Spawn {
            command: command.to_string(),
            message: format!("no {what} pipe"),
        };
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stderr = Arc::new(Mutex::new(StderrKept::default()));
        let (closed_tx, stderr_closed) = tokio::sync::watch::channel(false);
        if let Some(mut pipe) = child.stderr.take() {
            let tail = stderr.clone();
            tokio::spawn(async move {
                let _closed = CloseOnDrop(closed_tx);
                let mut chunk = vec![0u8; 8192];
                while let Ok(n) = pipe.read(&mut chunk).await {
                    if n == 0 {
                        break;
                    }
                    tail.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push(&chunk[..n]);
                }
            });
        }
        let pgid = child.id().map(|id| id as i32);
        pgid.into_iter().for_each(super::groups::register);
        Ok((
            ChildGuard {
                child,
                pgid,
                stderr,
                stderr_closed,
            },
            stdout,
            stdin,
        ))
    }

    /// Wait (at most `within`) until stderr has been read to its end, so an exited server's
    /// last words are in [`Self::stderr_tail`].
    pub async fn stderr_drained(&mut self, within: std::time::Duration) {
        let mut rx = self.stderr_closed.clone();
        let _ = tokio::time::timeout(within, rx.wait_for(|closed| *closed)).await;
    }

    /// What stderr says, on one line of at most `max_chars` characters: the lines that look
    /// like an error first (even when a long stack trace after them pushed them out of the
    /// kept end), then the last lines (see [`chosen_lines`]). The text kept is redacted whole
    /// before any of it is cut (see [`Redactor::preview`]).
    pub fn stderr_tail(&self, max_chars: usize, redactor: &Redactor) -> String {
        let bytes = {
            let kept = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
            [kept.early.as_slice(), kept.tail.as_slice()].concat()
        };
        stderr_summary(&String::from_utf8_lossy(&bytes), max_chars, redactor)
    }

    /// The exit status, if the child has already exited.
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// End the process group (SIGTERM, then SIGKILL after [`super::groups::GRACE`]) and wait
    /// for the child.
    pub async fn shutdown(mut self) {
        if let Some(pgid) = self.pgid.take().filter(|g| super::groups::take(*g)) {
            let child = &mut self.child;
            super::groups::end(&[pgid], super::groups::GRACE, || {
                let _ = child.try_wait();
            })
            .await;
        }
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), self.child.wait()).await;
    }

    /// SIGKILL to the process group, unless it was ended already (by [`super::groups::end_all`]:
    /// its number may be another's by now).
    fn kill_group(&mut self) {
        if let Some(pgid) = self.pgid.take().filter(|g| super::groups::take(*g)) {
            super::groups::kill(pgid);
        }
        let _ = self.child.start_kill();
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill_group();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Node 20.20.2 prints for `node -e "require('node:sqlite')"` (the module came in
    /// Node 22.5).
    const NODE_SQLITE: &str = "node:internal/modules/cjs/loader:1031
      throw new ERR_UNKNOWN_BUILTIN_MODULE(request);
      ^

Error [ERR_UNKNOWN_BUILTIN_MODULE]: No such built-in module: node:sqlite
    at Module._load (node:internal/modules/cjs/loader:1031:13)
    at Module.require (node:internal/modules/cjs/loader:1289:19)
    at require (node:internal/modules/helpers:182:18)
    at [eval]:1:1
    at runScriptInThisContext (node:internal/vm:209:10)
    at node:internal/process/execution:118:14
    at [eval]-wrapper:6:24
    at runScript (node:internal/process/execution:101:62)
    at evalScript (node:internal/process/execution:133:3)
    at node:internal/main/eval_string:51:3 {
  code: 'ERR_UNKNOWN_BUILTIN_MODULE'
}

Node.js v20.20.2
";

    fn said(text: &str, max_chars: usize) -> String {
        chosen_lines(&stderr_lines(text), max_chars, &Redactor::default())
    }

    /// Issue 37: the last 300 characters were stack frames, and the cause was cut off.
    #[test]
    fn the_cause_comes_first_then_the_end() {
        let s = said(NODE_SQLITE, 300);
        assert!(
            s.starts_with(
                "Error [ERR_UNKNOWN_BUILTIN_MODULE]: No such built-in module: node:sqlite … "
            ),
            "{s}"
        );
        assert!(
            s.ends_with("code: 'ERR_UNKNOWN_BUILTIN_MODULE' | } | Node.js v20.20.2"),
            "{s}"
        );
        assert!(crate::ground::text::char_count(&s) <= 300, "{s}");
        // the frames name NodeError and friends in passing: they are not the cause
        assert!(!stderr_lines(NODE_SQLITE)
            .iter()
            .any(|l| l.error && l.text.starts_with("at ")));
    }

    #[test]
    fn a_traceback_gives_its_last_line_and_a_panic_its_message() {
        let py = "Traceback (most recent call last):\n  File \"/srv/server.py\", line 3, in <module>\n    import mcp_server_missing\nModuleNotFoundError: No module named 'mcp_server_missing'\n";
        let lines = stderr_lines(py);
        let errors: Vec<&str> = lines.iter().filter(|l| l.error).map(|l| l.text).collect();
        assert_eq!(
            errors,
            ["ModuleNotFoundError: No module named 'mcp_server_missing'"]
        );
        let rust = format!(
            "thread 'main' panicked at src/main.rs:2:5:\nno config at /etc/srv.toml\n{}",
            (0..40)
                .map(|i| format!("  {i}: std::rt::frame_{i}\n"))
                .collect::<String>()
        );
        let s = said(&rust, 200);
        assert!(
            s.starts_with(
                "thread 'main' panicked at src/main.rs:2:5: | no config at /etc/srv.toml … "
            ),
            "{s}"
        );
        // no error line: the end, as before; a last line over the room: its end
        assert_eq!(
            said("starting\nlistening on stdio\n", 300),
            "starting | listening on stdio"
        );
        assert_eq!(said(&"x".repeat(50), 10), format!("...{}", "x".repeat(10)));
        // an error line over the room: its start
        let long = format!("Error: {}", "y".repeat(400));
        assert!(said(&long, 100).starts_with("Error: yyy"));
    }

    /// A real process that prints its cause and a stack trace longer than the kept stderr,
    /// then exits: the cause, cut off the kept end, is still said first.
    #[tokio::test]
    async fn a_dead_servers_cause_survives_a_long_stack_trace() {
        if std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("SKIP: node is not installed");
            return;
        }
        // about 46 KB of frames: over the 16 KiB kept, under the 64 KiB pipe buffer (node
        // exits without waiting for a pipe to drain: past that, its end is lost)
        let script = "Error.stackTraceLimit = Infinity; (function f(n) { if (n) return f(n - 1); require('/nonexistent/mcp-server/index.js'); })(2000)";
        let base = ChildEnv {
            base: ServerEnv::Inherited,
            remove: &[],
        };
        let args = ["-e".to_string(), script.to_string()];
        let (mut child, _out, _in) =
            ChildGuard::spawn("node", &args, &BTreeMap::new(), &base, None)
                .await
                .unwrap();
        // the pipe closes when node exits (slowly, on a busy machine)
        child
            .stderr_drained(std::time::Duration::from_secs(120))
            .await;
        let kept = child.stderr.lock().unwrap().tail.clone();
        assert!(
            !String::from_utf8_lossy(&kept).contains("Cannot find module"),
            "the stack trace should be longer than the kept end"
        );
        let s = child.stderr_tail(300, &Redactor::default());
        assert!(
            s.starts_with("Error: Cannot find module '/nonexistent/mcp-server/index.js' … "),
            "{s}"
        );
        assert!(s.contains(" | Node.js v"), "{s}");
        child.shutdown().await;
    }
}
