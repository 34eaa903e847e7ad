//! Ending what a client leaves behind. A client run ends with its process group killed, but a
//! client may start a daemon in a session of its own (Cline's hub daemon, Node's `detached`),
//! out of the group's reach, which then outlives the lab. The lab adopts every orphan of its
//! descendants (`PR_SET_CHILD_SUBREAPER`), and after each run ends each descendant that left
//! the lab's session, then reaps it. The lab's own children stay in its session (a client is
//! started in a group of its own, never a session), so none of them is touched. Runs at once
//! (`--jobs`) each end only the daemons started with their own HOME.

use std::collections::HashMap;

/// Make this process the one that orphans of its descendants are handed to (Linux; elsewhere
/// a daemon cannot be found again once its parent ends, and nothing is done).
pub fn adopt_orphans() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// One process as /proc tells it.
#[derive(Debug, Clone, Copy)]
struct Proc {
    parent: i32,
    session: i32,
    zombie: bool,
}

/// Every process /proc shows, by pid.
fn processes() -> HashMap<i32, Proc> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // the name is in parentheses and may hold anything: the fields follow the last `)`
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let fields: Vec<&str> = rest.split(' ').collect();
        let num = |i: usize| fields.get(i).and_then(|f| f.parse::<i32>().ok());
        if let (Some(parent), Some(session)) = (num(1), num(3)) {
            let zombie = fields.first() == Some(&"Z");
            out.insert(
                pid,
                Proc {
                    parent,
                    session,
                    zombie,
                },
            );
        }
    }
    out
}

/// The descendants of `me` in `procs` that are in a session other than `session`, with
/// whether each is a child of `me`.
fn escaped(procs: &HashMap<i32, Proc>, me: i32, session: i32) -> Vec<(i32, bool)> {
    let mut out = Vec::new();
    for (&pid, p) in procs {
        if p.session == session || pid == me {
            continue;
        }
        // up the parents to `me` (bounded: a cycle cannot happen, but a racing /proc may lie)
        let mut at = p.parent;
        for _ in 0..64 {
            if at == me {
                out.push((pid, p.parent == me));
                break;
            }
            match procs.get(&at) {
                Some(up) if at > 1 => at = up.parent,
                _ => break,
            }
        }
    }
    out.sort_unstable();
    out
}

/// End every descendant of this process that left its session (a client's daemon), with
/// `home` its HOME where given (the run that started it: every client run has a HOME of its
/// own), and reap those that are its children.
pub fn end_escaped(home: Option<&std::path::Path>) {
    // SAFETY: getpid and getsid(0) only read this process's ids.
    let (me, session) = unsafe { (libc::getpid(), libc::getsid(0)) };
    let found = escaped(&processes(), me, session);
    let mut ended = Vec::new();
    let ours = |pid: i32| home.is_none_or(|h| home_of(pid).is_some_and(|x| x == h.as_os_str()));
    for &(pid, _) in found.iter().filter(|(pid, _)| ours(*pid)) {
        // SAFETY: a signal to a descendant that left the lab's session (found just above).
        if unsafe { libc::kill(pid, libc::SIGKILL) } == 0 {
            ended.push(pid);
        }
    }
    // reap what is now ours: the killed children, and zombies of earlier ones (never a child
    // in the lab's session: tokio waits for those)
    let procs = processes();
    for (pid, child) in escaped(&procs, me, session) {
        if child && (ended.contains(&pid) || procs.get(&pid).is_some_and(|p| p.zombie)) {
            let mut status = 0;
            // SAFETY: waits for one child of this process that the runtime does not own.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        }
    }
}

/// The HOME a process was started with (/proc/PID/environ), where it can be read.
fn home_of(pid: i32) -> Option<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    environ
        .split(|b| *b == 0)
        .find_map(|v| v.strip_prefix(b"HOME="))
        .map(|h| std::ffi::OsStr::from_bytes(h).to_os_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(parent: i32, session: i32) -> Proc {
        Proc {
            parent,
            session,
            zombie: false,
        }
    }

    #[test]
    fn only_descendants_outside_the_session_are_found() {
        let procs = HashMap::from([
            (10, p(1, 10)),  // the lab
            (11, p(10, 10)), // a client (own group, same session)
            (12, p(11, 10)), // its server
            (13, p(10, 13)), // a daemon handed to the lab
            (14, p(13, 13)), // the daemon's child
            (20, p(1, 20)),  // someone else's
            (21, p(20, 21)), // and their daemon
        ]);
        assert_eq!(escaped(&procs, 10, 10), [(13, true), (14, false)]);
    }

    #[test]
    fn a_process_is_known_by_the_home_it_was_started_with() {
        let home = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .env_clear()
            .env("HOME", home.path())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        assert_eq!(home_of(pid).as_deref(), Some(home.path().as_os_str()));
        // one with another HOME is not this run's to end
        let other = tempfile::tempdir().unwrap();
        assert_ne!(home_of(pid).as_deref(), Some(other.path().as_os_str()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(home_of(i32::MAX), None);
    }
}
