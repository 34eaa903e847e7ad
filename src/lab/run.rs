//! One client run: a private HOME with the adapter's files, the scripted model on 127.0.0.1,
//! the server mounted behind the tap, the client started with a cleared environment in a
//! process group of its own, killed (the whole group) on timeout, and what it left behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

use super::adapter::{Adapter, RunValues};
use super::model::{FakeModel, Recorded, Script};
use super::tap::Transcript;
use super::{LabError, LabServer};

/// How long a client that ignored SIGTERM has before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// What one run needs.
pub struct RunSpec<'a> {
    pub adapter: &'a Adapter,
    pub bin: &'a Path,
    pub server: &'a LabServer,
    pub tool: &'a str,
    pub arguments: &'a serde_json::Value,
    pub timeout: Duration,
    /// The environment every client gets before its adapter's variables (PATH, LANG).
    pub base_env: &'a BTreeMap<String, String>,
    /// This executable (the tap is `<exe> lab-tap`).
    pub exe: &'a Path,
}

/// What a run left: the model's requests, the server's traffic, the client's exit and files.
pub struct RunOutcome {
    pub requests: Vec<Recorded>,
    pub transcript: Transcript,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The end of the client's stderr and stdout (for a failed run's message).
    pub output_tail: String,
    pub elapsed_ms: u64,
    /// The files in the private HOME the client wrote, relative to it, with their sizes.
    pub files: Vec<(PathBuf, u64)>,
    pub home: PathBuf,
    /// The run's folder (HOME, the tap's transcript), removed on drop unless kept.
    pub dir: Option<tempfile::TempDir>,
}

/// Run the client once on one probe.
pub async fn run(spec: &RunSpec<'_>) -> Result<RunOutcome, LabError> {
    let io = |what: &str, e: std::io::Error| LabError::Run {
        client: spec.adapter.id.clone(),
        message: format!("{what}: {e}"),
    };
    let dir = tempfile::Builder::new()
        .prefix("mcp-budget-lab-")
        .tempdir()
        .map_err(|e| io("creating the run folder", e))?;
    let home = dir.path().join("home");
    for sub in ["work", "tmp"] {
        std::fs::create_dir_all(home.join(sub)).map_err(|e| io("creating HOME", e))?;
    }
    let tap = dir.path().join("tap.jsonl");
    let env_file = dir.path().join("server.env");
    write_env_file(&env_file, &spec.server.env).map_err(|e| io("writing server.env", e))?;
    let mut server_argv = vec![
        spec.exe.display().to_string(),
        "lab-tap".into(),
        "--out".into(),
        tap.display().to_string(),
        "--env-file".into(),
        env_file.display().to_string(),
        "--".into(),
    ];
    server_argv.extend(spec.server.command.iter().cloned());
    let model = FakeModel::start(Script {
        tool: spec.tool.into(),
        server: spec.server.name.clone(),
        arguments: spec.arguments.clone(),
    })
    .await
    .map_err(|e| io("starting the lab model", e))?;
    let rendered = spec.adapter.render(&RunValues {
        home: home.clone(),
        base_url: model.base_url(),
        server: spec.server.name.clone(),
        tool: spec.tool.into(),
        server_argv,
    })?;
    let written: Vec<PathBuf> = rendered.files.iter().map(|(p, _)| p.clone()).collect();
    for (path, text) in &rendered.files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("writing the adapter's files", e))?;
        }
        std::fs::write(path, text).map_err(|e| io("writing the adapter's files", e))?;
    }
    let mut env = spec.base_env.clone();
    env.insert("HOME".into(), home.display().to_string());
    env.insert("TMPDIR".into(), home.join("tmp").display().to_string());
    env.extend(rendered.env);
    let started = Instant::now();
    let (exit_code, timed_out, output_tail) =
        run_client(spec, &rendered.args, &env, &home.join("work"))
            .await
            .map_err(|e| io(&format!("starting {}", spec.bin.display()), e))?;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let requests = model.requests();
    model.stop().await;
    Ok(RunOutcome {
        requests,
        transcript: Transcript::read(&tap),
        exit_code,
        timed_out,
        output_tail,
        elapsed_ms,
        files: files_under(&home, &written),
        home,
        dir: Some(dir),
    })
}

/// The server's own variables for the tap, one `NAME=value` per line (outside the HOME).
fn write_env_file(path: &Path, env: &BTreeMap<String, String>) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let text: String = env
        .iter()
        .map(|(k, v)| format!("{k}={}\n", v.replace('\n', " ")))
        .collect();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    std::io::Write::write_all(&mut f, text.as_bytes())
}

/// Kills a client's whole process group when dropped (a run cancelled by a signal, or ended:
/// the servers it started must not outlive it).
struct Group(i32);

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: killpg only sends a signal to the group the client leads.
        unsafe { libc::killpg(self.0, libc::SIGKILL) };
    }
}

/// Start the client, wait for it at most the timeout (then SIGTERM to its group, SIGKILL after
/// [`GRACE`]): its exit code, whether it timed out, the end of its output.
async fn run_client(
    spec: &RunSpec<'_>,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
) -> std::io::Result<(Option<i32>, bool, String)> {
    let mut child = tokio::process::Command::new(spec.bin)
        .args(args)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()?;
    let group = Group(child.id().map_or(0, |p| p as i32));
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let read = async {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let _ = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
        (out, err)
    };
    let waited = tokio::time::timeout(spec.timeout, async {
        let (out, err) = read.await;
        (child.wait().await, out, err)
    })
    .await;
    let (code, timed_out, out, err) = match waited {
        Ok((status, out, err)) => (status?.code(), false, out, err),
        Err(_) => {
            // SAFETY: as in Group::drop, SIGTERM first.
            unsafe { libc::killpg(group.0, libc::SIGTERM) };
            let code = tokio::time::timeout(GRACE, child.wait())
                .await
                .ok()
                .and_then(|s| s.ok())
                .and_then(|s| s.code());
            (code, true, Vec::new(), Vec::new())
        }
    };
    drop(group);
    let tail = |b: &[u8]| crate::text::tail(&String::from_utf8_lossy(b), 2000).to_string();
    Ok((code, timed_out, format!("{}{}", tail(&err), tail(&out))))
}

/// The regular files under `home` (relative), except those the adapter wrote.
fn files_under(home: &Path, written: &[PathBuf]) -> Vec<(PathBuf, u64)> {
    let mut found = Vec::new();
    let mut stack = vec![home.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() && !written.contains(&path) {
                if let Ok(rel) = path.strip_prefix(home) {
                    found.push((rel.to_path_buf(), meta.len()));
                }
            }
        }
    }
    found.sort();
    found
}

impl RunOutcome {
    /// Keep the run's folder on disk (`--keep`), with every model request the client sent in
    /// `requests/NNN.json` (its path and headers in `NNN.meta.json`); the folder's path.
    pub fn keep(&mut self) -> Option<PathBuf> {
        let dir = self.dir.take()?.keep();
        let requests = dir.join("requests");
        if std::fs::create_dir_all(&requests).is_ok() {
            for r in &self.requests {
                let meta = serde_json::json!({"method": r.method, "path": r.path,
                    "headers": r.headers, "reply": r.reply});
                let _ = std::fs::write(requests.join(format!("{:03}.json", r.seq)), &r.body);
                let _ = std::fs::write(
                    requests.join(format!("{:03}.meta.json", r.seq)),
                    meta.to_string(),
                );
            }
        }
        Some(dir)
    }
}
