//! Issue 26, case 8: `proxy --listen` against slow and many clients: connections that never
//! finish their headers or bodies are closed, memory stays bounded under a flood of unfinished
//! 4 MiB bodies, normal requests are served meanwhile, and at the open-file limit the accept
//! loop pauses (no spin) and serves again once connections close.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{bin_path, free_port, Served};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// `[prefix...] mcp-budget proxy --listen 127.0.0.1:PORT -- mcp-budget demo-server` with the
/// limits set by their environment variables (so that a proxy without them still starts, and
/// fails the test on what it does), stderr into `stderr`, once it listens.
fn listening(prefix: &[&str], env: &[(&str, &str)], port: u16, stderr: &std::path::Path) -> Served {
    let bin = bin_path();
    let (program, rest) = match prefix.split_first() {
        Some((p, rest)) => (p.to_string(), rest.to_vec()),
        None => (bin.to_string_lossy().to_string(), vec![]),
    };
    let mut cmd = Command::new(program);
    cmd.args(rest);
    if !prefix.is_empty() {
        cmd.arg(&bin);
    }
    let spill = stderr.with_file_name("spill");
    cmd.args(["proxy", "--spill-dir", spill.to_str().unwrap()])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .envs(env.iter().copied())
        .arg("--")
        .arg(&bin)
        .arg("demo-server")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(stderr).unwrap());
    let served = Served(cmd.spawn().unwrap());
    let started = Instant::now();
    while !std::fs::read_to_string(stderr)
        .unwrap_or_default()
        .contains("listening on")
    {
        assert!(started.elapsed().as_secs() < 30, "the proxy did not listen");
        std::thread::sleep(Duration::from_millis(100));
    }
    served
}

/// An initialize over its own connection: the status code (0 when there is no answer within
/// 20 s).
fn initialize_status(port: u16) -> u16 {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return 0;
    };
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    if s.write_all(req.as_bytes()).is_err() {
        return 0;
    }
    let mut head = [0u8; 12];
    match s.read_exact(&mut head) {
        Ok(()) => String::from_utf8_lossy(&head[9..12]).parse().unwrap_or(0),
        Err(_) => 0,
    }
}

/// A field of /proc/PID/status in kB (VmHWM, VmRSS).
fn status_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .trim()
                .strip_suffix(" kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap()
}

/// User and system CPU time of a process so far, in clock ticks (/proc/PID/stat).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit_once(')').unwrap().1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    // after the name: state is field 3, utime 14 and stime 15
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Whether the proxy closed `s` (EOF or a reset, after whatever answer it sent) within `wait`.
fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    s.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 4096];
    let started = Instant::now();
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false
            }
            Err(_) => return true,
        }
        if started.elapsed() > wait {
            return false;
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn issue26_8_slow_headers_and_unfinished_bodies_are_cut_off_with_memory_bounded() {
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let stderr = home.path().join("stderr.txt");
    let proxy = listening(
        &[],
        &[
            ("MCP_BUDGET_HEADER_TIMEOUT_SECS", "2"),
            ("MCP_BUDGET_BODY_TIMEOUT_SECS", "3"),
        ],
        port,
        &stderr,
    );
    let pid = proxy.0.id();
    assert_eq!(initialize_status(port), 200);
    let before_kb = status_kb(pid, "VmRSS:");

    // 200 connections that never finish their headers
    let mut slow: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
                .unwrap();
            s
        })
        .collect();
    // 100 bodies of 4 MiB, each one byte short
    const BODY: usize = 4 * 1024 * 1024;
    let chunk = vec![b' '; 64 * 1024];
    let mut bodies: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
            let head = format!(
                "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {BODY}\r\n\r\n"
            );
            // the proxy may refuse it (503) and stop reading: then the writes fail
            let mut sent = s.write_all(head.as_bytes()).map_or(BODY, |()| 0);
            while sent + chunk.len() < BODY {
                if s.write_all(&chunk).is_err() {
                    sent = BODY;
                    break;
                }
                sent += chunk.len();
            }
            if sent < BODY {
                let _ = s.write_all(&chunk[..BODY - 1 - sent]);
            }
            s
        })
        .collect();
    // served meanwhile
    assert_eq!(
        initialize_status(port),
        200,
        "a normal request during the flood"
    );
    let peak_kb = status_kb(pid, "VmHWM:");
    let grown_mb = peak_kb.saturating_sub(before_kb) / 1024;
    eprintln!(
        "proxy VmRSS before the flood {} MB, VmHWM during it {} MB (+{grown_mb} MB)",
        before_kb / 1024,
        peak_kb / 1024
    );
    // the pool (32 MiB) and 64 KiB per connection, not 100 x 4 MiB
    assert!(grown_mb < 160, "memory grew by {grown_mb} MB");

    // every one of them is closed by the proxy, header and body timeouts past
    for (i, s) in slow.iter_mut().enumerate() {
        assert!(
            closed_within(s, Duration::from_secs(20)),
            "slow header connection {i} still open"
        );
    }
    for (i, s) in bodies.iter_mut().enumerate() {
        assert!(
            closed_within(s, Duration::from_secs(20)),
            "unfinished body {i} still open"
        );
    }
    assert_eq!(initialize_status(port), 200);
    eprintln!("proxy VmRSS after {} MB", status_kb(pid, "VmRSS:") / 1024);
}

/// Connections over `--max-connections` wait for a slot: served once one closes.
#[test]
fn issue26_8_connections_over_the_cap_wait_for_a_slot() {
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let stderr = home.path().join("stderr.txt");
    let _proxy = listening(
        &[],
        &[
            ("MCP_BUDGET_MAX_CONNECTIONS", "4"),
            ("MCP_BUDGET_HEADER_TIMEOUT_SECS", "60"),
        ],
        port,
        &stderr,
    );
    let idle: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let waiting = std::thread::spawn(move || initialize_status(port));
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        !waiting.is_finished(),
        "a fifth connection was served while four were open"
    );
    drop(idle);
    assert_eq!(
        waiting.join().unwrap(),
        200,
        "served once the others closed"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn issue26_8_at_the_open_file_limit_the_accept_loop_pauses_and_serves_again() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipping: no prlimit (util-linux)");
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let port = free_port();
    let stderr = home.path().join("stderr.txt");
    let proxy = listening(
        &["prlimit", "--nofile=48:48", "--"],
        &[
            ("MCP_BUDGET_MAX_CONNECTIONS", "1000"),
            ("MCP_BUDGET_HEADER_TIMEOUT_SECS", "120"),
        ],
        port,
        &stderr,
    );
    let pid = proxy.0.id();
    // more connections than the proxy has descriptors for: the kernel queues the rest
    let held: Vec<TcpStream> = (0..80)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(1000));
    // no spin: over 2 s the proxy takes a fraction of a second of CPU (a spinning accept loop
    // takes a core, whatever the machine's load lets it have)
    let (t0, w0) = (cpu_ticks(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let ticks_per_s = 100.0; // USER_HZ
    let cpu_s = (cpu_ticks(pid) - t0) as f64 / ticks_per_s;
    let wall_s = w0.elapsed().as_secs_f64();
    eprintln!("at the open-file limit: {cpu_s:.2} s of CPU in {wall_s:.2} s");
    assert!(
        cpu_s < 0.25 * wall_s,
        "{cpu_s} s of CPU in {wall_s} s: the accept loop spins"
    );
    let said = std::fs::read_to_string(&stderr).unwrap();
    assert!(said.contains("cannot accept a connection"), "{said}");
    drop(held);
    let started = Instant::now();
    let mut status = 0;
    while status != 200 && started.elapsed() < Duration::from_secs(30) {
        status = initialize_status(port);
        if status != 200 {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    assert_eq!(status, 200, "served again once the connections closed");
}
