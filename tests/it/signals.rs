//! SIGINT, SIGTERM and SIGHUP end `audit` and `proxy` (stdio and `--listen`) with 130, 143 and
//! 129, and end their servers' whole process groups (the server and the grandchild it started,
//! tests/fixtures/group_server.py), SIGKILL after the grace for one that ignores SIGTERM; the
//! proxy's client closing stdin ends it the same way; an audit ended mid-run leaves the last
//! report as it was.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{bin_path, free_port, repo};

const SIGNALS: [(i32, i32); 3] = [
    (libc::SIGTERM, 143),
    (libc::SIGHUP, 129),
    (libc::SIGINT, 130),
];

fn server_args(pidfile: &Path, stubborn: bool) -> Vec<String> {
    let mut args = vec![
        repo()
            .join("tests/fixtures/group_server.py")
            .to_string_lossy()
            .to_string(),
        pidfile.to_string_lossy().to_string(),
    ];
    if stubborn {
        args.push("--stubborn".into());
    }
    args
}

/// The server's and its child's pids, once the server has written them.
fn pids(pidfile: &Path) -> [i32; 2] {
    let started = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(pidfile) {
            let p: Vec<i32> = text.split(' ').map(|p| p.parse().unwrap()).collect();
            return [p[0], p[1]];
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no pidfile");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a process runs (an exited one nobody reaped, a zombie, does not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(')')
            .unwrap()
            .1
            .trim_start()
            .starts_with('Z')
    })
}

/// Every pid of `pids` stops running within `within` (a liveness bound, not a speed claim).
fn all_gone(pids: &[i32], within: Duration) -> bool {
    let started = Instant::now();
    while pids.iter().any(|p| running(*p)) {
        if started.elapsed() > within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

fn exit_code(child: &mut Child) -> i32 {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().expect("exited, not killed");
        }
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("mcp-budget did not end within 20 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn send(child: &Child, signal: i32) {
    // SAFETY: kill only sends a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// Kill what a failed test left running.
fn cleanup(pids: &[i32]) {
    for p in pids {
        // SAFETY: as above; a process that is gone already makes this a no-op.
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
}

fn audit(home: &Path, stubborn: bool) -> (Child, [i32; 2]) {
    let pidfile = home.join("pids");
    let _ = std::fs::remove_file(&pidfile);
    let probes = home.join("probes.toml");
    let toml = format!(
        "[servers.s]\ncommand = \"python3\"\nargs = {:?}\n\n[[servers.s.probes]]\ntool = \"wait\"\n",
        server_args(&pidfile, stubborn)
    );
    std::fs::write(&probes, toml).unwrap();
    let child = Command::new(bin_path())
        .args([
            "audit",
            probes.to_str().unwrap(),
            "--no-charts",
            "--timeout",
            "120",
        ])
        .arg("--out")
        .arg(home.join("out"))
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pids = pids(&pidfile);
    (child, pids)
}

#[test]
fn a_signal_ends_the_audit_and_its_servers_and_keeps_the_last_report() {
    for (signal, code) in SIGNALS {
        let home = tempfile::tempdir().unwrap();
        let out = home.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("audit.json"), "the last report").unwrap();
        let (mut child, pids) = audit(home.path(), false);
        // the probe of `wait` never gets an answer: the audit is mid-run
        std::thread::sleep(Duration::from_millis(500));
        send(&child, signal);
        assert_eq!(exit_code(&mut child), code, "signal {signal}");
        let gone = all_gone(&pids, Duration::from_secs(10));
        cleanup(&pids);
        assert!(gone, "signal {signal}: server or grandchild still running");
        assert_eq!(
            std::fs::read_to_string(out.join("audit.json")).unwrap(),
            "the last report"
        );
        // nothing half-written beside it (the spill store is outside the report folder)
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        names.sort();
        assert_eq!(names, ["audit.json"]);
    }
}

#[test]
fn a_server_that_ignores_sigterm_is_killed_after_the_grace() {
    let home = tempfile::tempdir().unwrap();
    let (mut child, pids) = audit(home.path(), true);
    std::thread::sleep(Duration::from_millis(500));
    send(&child, libc::SIGTERM);
    assert_eq!(exit_code(&mut child), 143);
    let gone = all_gone(&pids, Duration::from_secs(10));
    cleanup(&pids);
    assert!(gone, "the stubborn server or its child is still running");
}

/// `proxy [extra] -- python3 group_server.py`, initialized as a client would.
fn proxy(home: &Path, extra: &[&str]) -> (Child, [i32; 2]) {
    let pidfile = home.join("pids");
    let _ = std::fs::remove_file(&pidfile);
    let mut child = Command::new(bin_path())
        .arg("proxy")
        .args(extra)
        .args(["--", "python3"])
        .args(server_args(&pidfile, false))
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pids = pids(&pidfile);
    if extra.is_empty() {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        let stdin = child.stdin.as_mut().unwrap();
        writeln!(stdin, "{init}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.contains("group-server"), "{line}");
    }
    (child, pids)
}

#[test]
fn a_signal_ends_the_proxy_and_its_upstream_over_stdio_and_http() {
    for (signal, code) in SIGNALS {
        let home = tempfile::tempdir().unwrap();
        let listen = format!("127.0.0.1:{}", free_port());
        for extra in [&[][..], &["--listen", &listen][..]] {
            let (mut child, pids) = proxy(home.path(), extra);
            send(&child, signal);
            assert_eq!(exit_code(&mut child), code, "signal {signal} {extra:?}");
            let gone = all_gone(&pids, Duration::from_secs(10));
            cleanup(&pids);
            assert!(gone, "signal {signal} {extra:?}: upstream still running");
        }
    }
}

#[test]
fn the_client_closing_stdin_ends_the_proxy_and_its_upstream() {
    let home = tempfile::tempdir().unwrap();
    let (mut child, pids) = proxy(home.path(), &[]);
    drop(child.stdin.take());
    assert_eq!(exit_code(&mut child), 0);
    let gone = all_gone(&pids, Duration::from_secs(10));
    cleanup(&pids);
    assert!(gone, "the upstream or its child is still running");
}
