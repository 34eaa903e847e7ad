//! The process groups of the stdio servers this process started and has not ended yet, so that
//! whatever ends the process (a signal, its client closing stdin, the end of the run) ends
//! them too. Each server leads a group of its own (see `process.rs`); ending a group sends it
//! SIGTERM, then SIGKILL to whatever of it is still running after [`GRACE`]. A grandchild that
//! leaves the group (`setsid`) is not followed.
//!
//! The set is process-wide because the groups are: they are this process's children, whichever
//! session holds them, and a signal ends them all.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a server's process group has, after SIGTERM, before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

static LIVE: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A group was started.
pub(super) fn register(pgid: i32) {
    live().insert(pgid);
}

/// Take a group off the set; true when it was there (no one has ended it yet).
pub(super) fn take(pgid: i32) -> bool {
    live().remove(&pgid)
}

/// Send `signal` to a group.
fn signal(pgid: i32, signal: i32) {
    #[cfg(unix)]
    // SAFETY: killpg only sends a signal; pgid is a group a child of this process leads.
    unsafe {
        libc::killpg(pgid, signal);
    }
}

/// Send SIGKILL to a group at once.
pub(super) fn kill(pgid: i32) {
    #[cfg(unix)]
    signal(pgid, libc::SIGKILL);
}

/// End every group this process started and has not ended: SIGTERM to all, then SIGKILL to
/// those with a process still running after `grace`. Returns when none is left running.
pub async fn end_all(grace: Duration) {
    let groups: Vec<i32> = std::mem::take(&mut *live()).into_iter().collect();
    end(&groups, grace, || {}).await;
}

/// End `groups`: SIGTERM, up to `grace` for them to go, then SIGKILL. `reap` is called while
/// waiting (a caller holding the leader reaps it, so the cheap check that the group is empty
/// sees it gone).
pub(super) async fn end(groups: &[i32], grace: Duration, mut reap: impl FnMut()) {
    #[cfg(unix)]
    {
        groups.iter().for_each(|g| signal(*g, libc::SIGTERM));
        let started = Instant::now();
        loop {
            reap();
            if !groups.iter().any(|g| running(*g)) || started.elapsed() >= grace {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // only a group that still has members: an empty one's number may be another's now
        groups.iter().filter(|g| probe(**g)).for_each(|g| kill(*g));
    }
}

/// Whether a process of group `pgid` is still running (an exited one waiting to be reaped,
/// a zombie, is not: it runs nothing). An empty group is told by one system call; /proc is
/// read only while the group has members.
#[cfg(target_os = "linux")]
fn running(pgid: i32) -> bool {
    if !probe(pgid) {
        return false;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .any(|stat| in_group_and_running(&stat, pgid))
}

/// Whether a `/proc/PID/stat` line is of a running (not zombie) process of group `pgid`:
/// `pid (comm) state ppid pgrp ...`, where comm may hold spaces and parentheses.
#[cfg(target_os = "linux")]
fn in_group_and_running(stat: &str, pgid: i32) -> bool {
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return false;
    };
    let mut fields = rest.split_whitespace();
    let state = fields.next();
    let pgrp = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
    pgrp == Some(pgid) && !matches!(state, Some("Z" | "X"))
}

#[cfg(all(unix, not(target_os = "linux")))]
fn running(pgid: i32) -> bool {
    probe(pgid)
}

/// Whether the group has a member (a zombie counts: without /proc it cannot be told apart).
#[cfg(unix)]
fn probe(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::killpg(pgid, 0) == 0 }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_past_a_command_with_spaces_and_parentheses() {
        let line = "4242 (a (b) c) S 1 4240 4240 0 -1 4194560";
        assert!(in_group_and_running(line, 4240));
        assert!(!in_group_and_running(line, 4242));
        assert!(!in_group_and_running("4242 (x) Z 1 4240 4240", 4240));
        assert!(!in_group_and_running("garbage", 4240));
    }
}
