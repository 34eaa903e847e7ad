//! Shared helpers: the binary under test in an isolated home, the shared corpus, the real
//! third-party servers installed by `.ci/run`, and a hand-rolled JSON-RPC client used as an
//! independent check on mcp-budget's own capture.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use assert_cmd::cargo::CommandCargoExt;

/// The `mcp-budget` binary with HOME pointed at `home` (so discovery sees only the fixtures)
/// and the working directory set to `cwd`.
pub fn mcp_budget(home: &Path, cwd: &Path) -> assert_cmd::Command {
    let mut cmd = Command::cargo_bin("mcp-budget").expect("binary is built");
    cmd.env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .env_remove("SSL_CERT_FILE")
        .current_dir(cwd);
    for (k, _) in std::env::vars() {
        if k.starts_with("MCP_BUDGET_") {
            cmd.env_remove(k);
        }
    }
    assert_cmd::Command::from_std(cmd)
}

/// The path of the built binary.
pub fn bin_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("mcp-budget")
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A test that cannot run here says so and returns: `reason` goes to stderr and to the skip
/// ledger (`target/test-skips.log`, or `MCP_BUDGET_SKIP_LOG`), which `scripts/test.sh` reports
/// after libtest's summary (libtest has no skipped state: it counts the test as passed). Under
/// MCP_BUDGET_REQUIRE_REAL_SERVERS (CI), nothing may be skipped: a skip is a failure.
pub fn skip(reason: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed test)")
        .to_string();
    eprintln!("SKIP: {test}: {reason}");
    let ledger = std::env::var_os("MCP_BUDGET_SKIP_LOG")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/test-skips.log"));
    let line = format!("{test}\t{}\n", reason.replace(['\n', '\t'], " "));
    // one write of one line with O_APPEND: lines of tests running side by side never mix
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&ledger)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    assert!(
        std::env::var_os("MCP_BUDGET_REQUIRE_REAL_SERVERS").is_none(),
        "{test} cannot run: {reason}; MCP_BUDGET_REQUIRE_REAL_SERVERS is set, so nothing may be skipped"
    );
}

/// `../shared/corpus`, or `None` (with a message) when it is absent; absent under
/// MCP_BUDGET_REQUIRE_REAL_SERVERS (as in CI), a failure.
pub fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("MCP_BUDGET_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/corpus"));
    if dir.is_dir() {
        Some(dir)
    } else {
        // CI checks counts against tiktoken's on the corpus: a missing corpus there is a
        // failure, not a skip that passes
        skip(&format!(
            "corpus not found at {} (set MCP_BUDGET_CORPUS)",
            dir.display()
        ));
        None
    }
}

/// A real server's executable from `target/test-servers/node_modules/.bin` (installed by
/// `.ci/run`). Missing: skip with a message, or fail when MCP_BUDGET_REQUIRE_REAL_SERVERS is set.
pub fn real_server(bin: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("MCP_BUDGET_TEST_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/test-servers"));
    let path = dir.join("node_modules/.bin").join(bin);
    if path.exists() {
        return Some(path);
    }
    skip(&format!(
        "{} not installed (run .ci/run, or npm install into target/test-servers)",
        path.display()
    ));
    None
}

/// A minimal JSON-RPC-over-stdio client written without rmcp.
pub struct RawClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// The `_meta` every request carries (the 2026-07-28 era: version, client info and
    /// capabilities in each request, no handshake).
    meta: Option<serde_json::Value>,
}

impl RawClient {
    /// A client of the 2026-07-28 era: no handshake; every request names the version.
    pub fn spawn_modern(command: &Path, args: &[&str]) -> RawClient {
        let mut c = RawClient::start(command, args);
        c.meta = Some(serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw-test-client", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }));
        c
    }

    /// A client of the handshake era (`initialize` at 2025-06-18).
    pub fn spawn(command: &Path, args: &[&str]) -> RawClient {
        let mut c = RawClient::start(command, args);
        c.request(
            "initialize",
            serde_json::json!({
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw-test-client", "version": "0"}
            }),
        );
        c.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn start(command: &Path, args: &[&str]) -> RawClient {
        let mut child = Command::new(command)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        RawClient {
            child,
            stdin,
            stdout,
            next_id: 0,
            meta: None,
        }
    }

    fn send(&mut self, msg: &serde_json::Value) {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send a request and return the exact text of its `result`.
    pub fn request(&mut self, method: &str, params: serde_json::Value) -> String {
        let line = self.request_raw(method, params);
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON-RPC line");
        #[derive(serde::Deserialize)]
        struct Resp<'a> {
            #[serde(borrow)]
            result: Option<&'a serde_json::value::RawValue>,
        }
        let resp: Resp = serde_json::from_str(&line).expect("a JSON-RPC line");
        match resp.result {
            Some(r) => r.get().to_string(),
            None => panic!("a result, not {v}"),
        }
    }

    /// Send a request and return its whole response line (a result or an error).
    pub fn request_raw(&mut self, method: &str, mut params: serde_json::Value) -> String {
        let id = self.next_id;
        self.next_id += 1;
        if let (Some(meta), Some(p)) = (&self.meta, params.as_object_mut()) {
            p.insert("_meta".into(), meta.clone());
        }
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server closed stdout"
            );
            #[derive(serde::Deserialize)]
            struct Resp {
                id: Option<serde_json::Value>,
            }
            let Ok(resp) = serde_json::from_str::<Resp>(line.trim_end()) else {
                continue;
            };
            if resp.id == Some(serde_json::json!(id)) {
                return line.trim_end().to_string();
            }
        }
    }

    /// Every tools/list page's raw result.
    pub fn tools_pages(&mut self) -> Vec<String> {
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => serde_json::json!({"cursor": c}),
                None => serde_json::json!({}),
            };
            let page = self.request("tools/list", params);
            let v: serde_json::Value = serde_json::from_str(&page).unwrap();
            cursor = v["nextCursor"].as_str().map(String::from);
            pages.push(page);
            if cursor.is_none() {
                return pages;
            }
        }
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Read `reports/…/audit.json` as JSON.
pub fn read_report(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("audit.json")).expect("audit.json written");
    serde_json::from_str(&text).expect("audit.json is JSON")
}

/// Write `toml` as a probe file in `home`, run `audit` on it (JSON to stdout, no report files,
/// spills under `home`) with `args` and `envs`, check the exit code, and return the report and
/// stderr.
pub fn audit_probe(
    home: &Path,
    toml: &str,
    args: &[&str],
    envs: &[(&str, &str)],
    code: i32,
) -> (serde_json::Value, String) {
    let probe = home.join("probe.toml");
    std::fs::write(&probe, toml).expect("probe file written");
    let spill = home.join("spill");
    let mut cmd = mcp_budget(home, home);
    cmd.args([
        "audit",
        probe.to_str().unwrap(),
        "--no-write",
        "--format",
        "json",
    ])
    .args(["--spill-dir", spill.to_str().unwrap()])
    .args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let assert = cmd.assert().code(code);
    let out = assert.get_output();
    let report = serde_json::from_slice(&out.stdout).expect("a JSON report on stdout");
    (report, String::from_utf8_lossy(&out.stderr).to_string())
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process that is killed when dropped.
pub struct Served(pub Child);

impl Drop for Served {
    fn drop(&mut self) {
        // the whole group: a launcher (an npm `.bin` script) leaves its server running when
        // only it is killed (kubernetes-mcp-server's Go binary outlived the test run)
        // SAFETY: killpg only sends a signal to the group this child leads.
        unsafe { libc::killpg(self.0.id() as i32, libc::SIGKILL) };
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawn `cmd` (stdout and stderr discarded) and wait until it listens on `port`.
pub fn serve_on(mut cmd: Command, port: u16) -> Served {
    use std::os::unix::process::CommandExt;
    let child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let served = Served(child);
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed().as_secs() < 20,
            "{cmd:?} did not listen on {port} within 20 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    served
}

/// A proxy (or any stdio server) driven by hand: requests sent without waiting, messages read
/// one at a time, stderr kept for the end.
pub struct Pipelined {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Pipelined {
    /// Start `command args`, initialize as client `name`, and send `initialized`.
    pub fn start(command: &Path, args: &[&str], name: &str) -> Pipelined {
        let mut cmd = Command::new(command);
        cmd.args(args);
        Pipelined::spawn(cmd, name)
    }

    /// [`Pipelined::start`] of a command built by the caller (its environment, say).
    pub fn spawn(mut cmd: Command, name: &str) -> Pipelined {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("server starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout piped"));
        let mut p = Pipelined {
            child,
            stdin,
            stdout,
        };
        p.send(
            serde_json::json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}}),
        );
        while p.next()["id"] != "init" {}
        p.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        p
    }

    pub fn send(&mut self, msg: serde_json::Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message from the server.
    pub fn next(&mut self) -> serde_json::Value {
        let mut line = String::new();
        assert!(
            self.stdout.read_line(&mut line).unwrap() > 0,
            "the server closed stdout"
        );
        serde_json::from_str(&line).expect("a JSON-RPC line")
    }

    /// Send a request and wait for its answer (messages before it are skipped).
    pub fn call(&mut self, id: u64, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let msg = self.next();
            if msg["id"] == id {
                return msg;
            }
        }
    }

    /// Close stdin, wait for the end, and return what the server said on stderr.
    pub fn finish(mut self) -> String {
        drop(self.stdin.take());
        let mut err = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
        }
        let _ = self.child.wait();
        err
    }
}

/// target/test-venv's Python when it can `import module` (`.ci/run` installs the venv), or a
/// skip naming `what` (fatal under MCP_BUDGET_REQUIRE_REAL_SERVERS).
pub fn venv_python(module: &str, what: &str) -> Option<PathBuf> {
    let python = repo().join("target/test-venv/bin/python");
    let ok = python.exists()
        && Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .status()
            .is_ok_and(|s| s.success());
    if ok {
        return Some(python);
    }
    skip(&format!(
        "{what} is not installed in target/test-venv (run .ci/run)"
    ));
    None
}

/// Run `cmd` (a test fixture) to success and read its stdout as one JSON value; a failure shows
/// its stderr.
pub fn run_json(cmd: &mut std::process::Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Heads of the HTTP requests a [`head_server`] got, in order.
pub type Heads = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

/// A loopback HTTP server for up to `max` requests: it keeps each request's head and answers
/// with what `answer` makes of it (a whole HTTP response). Returns its port and the heads.
pub fn head_server(max: usize, answer: impl Fn(&str) -> String + Send + 'static) -> (u16, Heads) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Heads::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(max) {
            let Ok(mut s) = stream else { continue };
            let mut reader = BufReader::new(s.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            log.lock().unwrap().push(head.clone());
            let _ = s.write_all(answer(&head).as_bytes());
        }
    });
    (port, seen)
}
