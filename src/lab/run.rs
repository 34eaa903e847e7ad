//! One client run: a private HOME with the adapter's files, the scripted model on 127.0.0.1,
//! the server mounted behind the tap, the client started with a cleared environment in a
//! process group of its own, killed (the whole group) on timeout, and what it left behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;

use super::adapter::{Adapter, RunValues};
// how long a client that ignored SIGTERM has before SIGKILL: as long as a server has
use super::model::{FakeModel, Recorded, Script};
use super::tap::Transcript;
use super::{LabError, LabServer};
use crate::wire::upstream::GRACE;

/// What one run needs.
pub struct RunSpec<'a> {
    pub adapter: &'a Adapter,
    pub bin: &'a Path,
    pub server: &'a LabServer,
    pub tool: &'a str,
    pub arguments: &'a serde_json::Value,
    /// Further calls' arguments, made one after another in the same run (a derive's sizes).
    pub more: &'a [serde_json::Value],
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
        more: spec.more.to_vec(),
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
    let work = home.join("work");
    for step in &rendered.before {
        run_before(spec, step, &env, &work).await?;
    }
    let (exit_code, timed_out, output_tail) =
        run_client(spec, &rendered.args, &env, &work)
            .await
            .map_err(|e| io(&format!("starting {}", spec.bin.display()), e))?;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let requests = model.requests();
    model.stop().await;
    write_requests(&dir.path().join("model.jsonl"), &requests)
        .map_err(|e| io("writing model.jsonl", e))?;
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

/// One of the adapter's steps before the run; an error unless it exits 0 in time.
async fn run_before(
    spec: &RunSpec<'_>,
    step: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
) -> Result<(), LabError> {
    // the step's first word only: its other arguments may hold a key
    let what = format!(
        "`{} {}`",
        spec.bin.display(),
        step.first().map_or("", String::as_str)
    );
    let error = |message: String| LabError::Run {
        client: spec.adapter.id.clone(),
        message,
    };
    let (code, timed_out, tail) = run_client(spec, step, env, cwd)
        .await
        .map_err(|e| error(format!("starting {what}: {e}")))?;
    match (code, timed_out) {
        (Some(0), false) => Ok(()),
        (_, true) => Err(error(format!("{what} before the run timed out"))),
        (code, _) => {
            let exit = code.map_or("was killed by a signal".into(), |c| format!("exited {c}"));
            // the output's end, already one line
            let tail = crate::ground::text::tail(&tail, 300);
            Err(error(format!("{what} before the run {exit}: {tail}")))
        }
    }
}

/// The model's requests, one JSON line each (the run's folder: kept with `--keep`): seq, api,
/// method, path, headers (redacted), what the script replied, and the body as sent.
fn write_requests(path: &Path, requests: &[Recorded]) -> std::io::Result<()> {
    let mut text = String::new();
    for r in requests {
        let body = serde_json::from_slice(&r.body)
            .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(&r.body).into()));
        let line = serde_json::json!({"seq": r.seq, "api": r.api, "method": r.method, "path": r.path,
            "headers": r.headers, "reply": r.reply, "body": body});
        text += &line.to_string();
        text.push('\n');
    }
    std::fs::write(path, text)
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
    // and what it started outside its group (a daemon in a session of its own)
    // (with its HOME: another run's daemon is that run's to end; one with no HOME, the lab's at
    // its end)
    super::reap::end_escaped(Some(Path::new(env.get("HOME").map_or("", String::as_str))));
    // a client prints what its server said (its stderr): the server's variables are redacted,
    // whole, before the end is cut
    let redactor = super::tap::server_redactor(spec.server.env.values().map(String::as_str));
    let tail = |b: &[u8]| {
        let text = redactor.redact(&String::from_utf8_lossy(b));
        crate::ground::text::tail(&text, 2000).to_string()
    };
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
    /// Keep the run's folder on disk (`--keep`: HOME, the tap's transcript, `model.jsonl`);
    /// its path.
    pub fn keep(&mut self) -> Option<PathBuf> {
        self.dir.take().map(|d| d.keep())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that records each start (its arguments, $LAB_X, its folder) in `starts`, and
    /// fails when its first argument is `fail`.
    fn client(dir: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let bin = dir.join("client.sh");
        let script = "#!/bin/sh\necho \"$* x=$LAB_X cwd=$(pwd)\" >> \"$STARTS\"\n\
                      [ \"$1\" = fail ] && { echo 'no such provider' >&2; exit 3; }\nexit 0\n";
        std::fs::write(&bin, script).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        bin
    }

    #[tokio::test]
    async fn steps_before_the_run_get_its_environment_and_folder_and_a_failure_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let bin = client(dir.path());
        let adapter = Adapter::built_in().remove(0);
        let server = LabServer {
            name: "demo".into(),
            command: vec!["true".into()],
            env: BTreeMap::new(),
            probes: Vec::new(),
        };
        let base_env = BTreeMap::new();
        let spec = RunSpec {
            adapter: &adapter,
            bin: &bin,
            server: &server,
            tool: "get_forecast",
            arguments: &serde_json::json!({}),
            more: &[],
            timeout: Duration::from_secs(20),
            base_env: &base_env,
            exe: &bin,
        };
        let starts = dir.path().join("starts");
        let env = BTreeMap::from([
            ("LAB_X".to_string(), "1".to_string()),
            ("STARTS".to_string(), starts.display().to_string()),
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        ]);
        let step = ["auth".to_string(), "-k".into(), "key-123".into()];
        run_before(&spec, &step, &env, dir.path()).await.unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        assert_eq!(
            std::fs::read_to_string(&starts).unwrap(),
            format!("auth -k key-123 x=1 cwd={}\n", cwd.display())
        );
        let failing = ["fail".to_string(), "-k".into(), "key-123".into()];
        let e = run_before(&spec, &failing, &env, dir.path())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("client.sh fail` before the run exited 3: no such provider"),
            "{e}"
        );
        assert!(e.starts_with("lab run of claude-code"), "{e}");
        assert!(!e.contains("key-123"), "the step's arguments stay out: {e}");
    }
}
