//! Child processes of stdio servers: spawned in their own process group so the whole tree
//! (an `npx` wrapper and the node process behind it) is killed and reaped on every exit path,
//! with the tail of their stderr kept for error messages.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

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

/// Cut the front of the kept stderr to [`STDERR_TAIL_BYTES`] at a line break: the line the cut
/// falls in goes whole, so no part of a secret (which only the whole line shows) is kept.
fn drop_head(kept: &mut Vec<u8>) {
    let cut = kept.len() - STDERR_TAIL_BYTES;
    let line_end = memchr::memchr(b'\n', &kept[cut..]).map_or(kept.len(), |i| cut + i + 1);
    kept.drain(..line_end);
}

/// A running child; dropping it kills its process group.
pub struct ChildGuard {
    child: Child,
    pgid: Option<i32>,
    stderr: Arc<Mutex<Vec<u8>>>,
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
        let stderr = Arc::new(Mutex::new(Vec::new()));
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
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    t.extend_from_slice(&chunk[..n]);
                    if t.len() > STDERR_TAIL_BYTES {
                        drop_head(&mut t);
                    }
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

    /// The last non-empty lines of stderr, joined on one line, at most `max_chars` characters
    /// of them: the text kept is redacted whole before any of it is cut (see
    /// [`Redactor::preview`]), and a last line longer than that shows its end.
    pub fn stderr_tail(&self, max_chars: usize, redactor: &Redactor) -> String {
        let bytes = self
            .stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let text = redactor.redact(&String::from_utf8_lossy(&bytes));
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let mut out = String::new();
        for line in lines.iter().rev() {
            if crate::text::char_count(&out) + crate::text::char_count(line) > max_chars {
                if out.is_empty() {
                    // redacted whole above: the cut cannot leave part of a secret
                    return crate::text::tail(line, max_chars);
                }
                break;
            }
            out = if out.is_empty() {
                crate::text::one_line(line).into_owned()
            } else {
                format!("{} | {out}", crate::text::one_line(line))
            };
        }
        out
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
