//! A stand-in for the GitHub Actions runner, enough to run a composite action's steps as the
//! runner does: inputs with their defaults, `${{ }}` expressions (only in `env:`, `if:` and the
//! outputs' `value:`), `if:` conditions (`&&` of `==`/`!=` against a quoted string, compared
//! without case as GitHub does), each `run:` step written to a file and run as `shell: bash`
//! runs it (`bash --noprofile --norc -eo pipefail {0}`), with GITHUB_OUTPUT, GITHUB_ENV and
//! GITHUB_PATH fresh for each step and read back after it, GITHUB_STEP_SUMMARY, RUNNER_TEMP,
//! GITHUB_WORKSPACE and GITHUB_ACTION_PATH set, the first failing step ending the run. `uses:`
//! steps are not run: a test gives their outputs (a cache hit, say).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use serde_yaml::Value;

type Outputs = BTreeMap<String, String>;

/// A runner for one run of the action, in a temporary home, workspace and RUNNER_TEMP.
pub struct Runner {
    pub action: Value,
    pub action_path: PathBuf,
    pub inputs: Outputs,
    /// Outputs of `uses:` steps, by the start of their `uses` (`actions/cache@`).
    pub uses_outputs: BTreeMap<String, Outputs>,
    /// The PATH the steps start with.
    pub path: Vec<PathBuf>,
    pub home: PathBuf,
    pub workspace: PathBuf,
    pub temp: PathBuf,
    files: PathBuf,
    _dir: tempfile::TempDir,
}

/// What a run left.
pub struct Finished {
    /// The exit status of the last step run (0 when all passed).
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    /// The action's outputs.
    pub outputs: Outputs,
    /// Each step's $GITHUB_OUTPUT as the step wrote it, by step id.
    pub raw_outputs: Outputs,
    /// The `with:` of each `uses:` step that would have run, expressions replaced, by step id.
    pub with: BTreeMap<String, Outputs>,
    pub summary: String,
    /// The ids of the `run:` steps that ran.
    pub ran: Vec<String>,
}

impl Finished {
    /// Both streams, for a failed assertion's message.
    pub fn log(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

/// The text of a YAML scalar (a string, a number or a boolean, as the runner reads an input).
pub fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `$GITHUB_OUTPUT`'s (and `$GITHUB_ENV`'s) format: `name=value` lines, or `name<<DELIMITER`, the
/// value's lines, and the delimiter alone on a line.
pub fn file_commands(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        let eq = line.find('=');
        match line.find("<<") {
            Some(h) if eq.is_none_or(|e| h < e) => {
                let (name, delimiter) = (&line[..h], &line[h + 2..]);
                let mut value = Vec::new();
                loop {
                    let next = lines.next().unwrap_or_else(|| {
                        panic!("no line `{delimiter}` ends `{name}` (the runner fails the step)")
                    });
                    if next == delimiter {
                        break;
                    }
                    value.push(next);
                }
                out.push((name.to_string(), value.join("\n")));
            }
            _ => {
                let e = eq.unwrap_or_else(|| panic!("not a file command: {line:?}"));
                out.push((line[..e].to_string(), line[e + 1..].to_string()));
            }
        }
    }
    out
}

impl Runner {
    /// A runner of this repository's action.yml with these inputs (the others take their
    /// defaults); `mcp-budget` (the binary under test) on its PATH.
    pub fn new(inputs: &[(&str, &str)]) -> Runner {
        let root = crate::support::repo();
        let yaml = std::fs::read_to_string(root.join("action.yml")).unwrap();
        let action: Value = serde_yaml::from_str(&yaml).expect("action.yml is YAML");
        let dir = tempfile::tempdir().unwrap();
        let sub = |name: &str| {
            let p = dir.path().join(name);
            std::fs::create_dir_all(&p).unwrap();
            p
        };
        let bin = PathBuf::from(env!("CARGO_BIN_EXE_mcp-budget"));
        let mut path = vec![bin.parent().unwrap().to_path_buf()];
        path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap()));
        Runner {
            action,
            action_path: root,
            inputs: inputs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            uses_outputs: BTreeMap::new(),
            path,
            home: sub("home"),
            workspace: sub("workspace"),
            temp: sub("runner-temp"),
            files: sub("files"),
            _dir: dir,
        }
    }

    /// The value of an input: given, else its default; an undeclared one is an error.
    fn input(&self, name: &str) -> String {
        let declared = &self.action["inputs"][name];
        assert!(declared.is_mapping(), "input `{name}` is not declared");
        if let Some(v) = self.inputs.get(name) {
            return v.clone();
        }
        assert!(
            declared["required"] != Value::Bool(true),
            "required input `{name}` not given"
        );
        text(&declared["default"]).unwrap_or_default()
    }

    /// One expression's value: the contexts this action may use, no other.
    fn resolve(&self, expr: &str, steps: &BTreeMap<String, Outputs>) -> String {
        let parts: Vec<&str> = expr.trim().split('.').collect();
        match parts.as_slice() {
            ["inputs", name] => self.input(name),
            ["github", "action_path"] => self.action_path.display().to_string(),
            ["runner", "temp"] => self.temp.display().to_string(),
            ["steps", id, "outputs", name] => steps
                .get(*id)
                .and_then(|o| o.get(*name))
                .cloned()
                .unwrap_or_default(),
            _ => panic!("an expression this stand-in does not know: `{expr}`"),
        }
    }

    /// A value with its `${{ }}` expressions replaced.
    fn expand(&self, value: &str, steps: &BTreeMap<String, Outputs>) -> String {
        let (mut out, mut rest) = (String::new(), value);
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("an unclosed ${{") + start;
            out.push_str(&self.resolve(&rest[start + 3..end], steps));
            rest = &rest[end + 2..];
        }
        out + rest
    }

    /// An `if:`: `A == 'x' && B != 'y'`, strings compared without case.
    fn condition(&self, cond: &str, steps: &BTreeMap<String, Outputs>) -> bool {
        let cond = cond.trim();
        let cond = cond
            .strip_prefix("${{")
            .and_then(|c| c.strip_suffix("}}"))
            .unwrap_or(cond);
        cond.split("&&").all(|term| {
            let (lhs, rhs, equal) = match term.split_once("!=") {
                Some((l, r)) => (l, r, false),
                None => {
                    let (l, r) = term
                        .split_once("==")
                        .unwrap_or_else(|| panic!("an `if:` this stand-in does not know: {cond}"));
                    (l, r, true)
                }
            };
            let literal = rhs
                .trim()
                .strip_prefix('\'')
                .and_then(|r| r.strip_suffix('\''))
                .unwrap_or_else(|| panic!("not a quoted string in `if: {cond}`"));
            self.resolve(lhs, steps).eq_ignore_ascii_case(literal) == equal
        })
    }

    /// The environment every step starts from: this process's, less what a runner sets itself
    /// and what would reach the binary as a flag (`MCP_BUDGET_*`).
    fn base_env(&self, cmd: &mut Command) {
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().into_owned();
            if k.starts_with("GITHUB_")
                || k.starts_with("RUNNER_")
                || k.starts_with("MCP_BUDGET_")
                || k.starts_with("XDG_")
            {
                cmd.env_remove(k);
            }
        }
        cmd.env("HOME", &self.home)
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", &self.workspace)
            .env("GITHUB_ACTION_PATH", &self.action_path)
            .env("RUNNER_TEMP", &self.temp)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64");
    }

    /// Run the action's steps in order; the first that fails ends the run.
    pub fn run(&self) -> Finished {
        assert_eq!(self.action["runs"]["using"], "composite");
        let steps = self.action["runs"]["steps"].as_sequence().unwrap();
        let summary = self.files.join("step-summary.md");
        std::fs::write(&summary, "").unwrap();
        let mut outputs: BTreeMap<String, Outputs> = BTreeMap::new();
        let (mut env, mut path) = (Outputs::new(), self.path.clone());
        let mut done = Finished {
            status: 0,
            stdout: String::new(),
            stderr: String::new(),
            outputs: Outputs::new(),
            raw_outputs: Outputs::new(),
            with: BTreeMap::new(),
            summary: String::new(),
            ran: Vec::new(),
        };
        for (i, step) in steps.iter().enumerate() {
            let id = text(&step["id"]).unwrap_or_else(|| format!("__{i}"));
            if let Some(cond) = text(&step["if"]) {
                if !self.condition(&cond, &outputs) {
                    continue;
                }
            }
            if let Some(uses) = text(&step["uses"]) {
                let with = self.expanded(&step["with"], &outputs);
                done.with.insert(id.clone(), with);
                let given = self.uses_outputs.iter().find(|(k, _)| uses.starts_with(*k));
                outputs.insert(id, given.map(|g| g.1.clone()).unwrap_or_default());
                continue;
            }
            let script = text(&step["run"]).expect("a step that neither runs nor uses");
            assert!(
                !script.contains("${{"),
                "step `{id}` writes an expression into shell code: map it through env:"
            );
            assert_eq!(text(&step["shell"]).as_deref(), Some("bash"), "step `{id}`");
            assert!(step["working-directory"].is_null(), "step `{id}`");
            let vars = self.expanded(&step["env"], &outputs);
            let files = |name: &str| {
                let p = self.files.join(format!("{i}-{name}"));
                std::fs::write(&p, "").unwrap();
                p
            };
            let (out_file, env_file, path_file) = (files("output"), files("env"), files("path"));
            let body = self.temp.join(format!("{i}.sh"));
            std::fs::write(&body, script).unwrap();
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&body)
                .current_dir(&self.workspace);
            self.base_env(&mut cmd);
            cmd.env("PATH", std::env::join_paths(path.iter()).unwrap())
                .env("GITHUB_OUTPUT", &out_file)
                .env("GITHUB_ENV", &env_file)
                .env("GITHUB_PATH", &path_file)
                .env("GITHUB_STEP_SUMMARY", &summary)
                .envs(env.iter())
                .envs(vars.iter());
            let out = cmd.output().unwrap();
            let raw = std::fs::read_to_string(&out_file).unwrap();
            env.extend(file_commands(&std::fs::read_to_string(&env_file).unwrap()));
            for added in std::fs::read_to_string(&path_file).unwrap().lines() {
                path.insert(0, PathBuf::from(added));
            }
            outputs.insert(id.clone(), file_commands(&raw).into_iter().collect());
            done.raw_outputs.insert(id.clone(), raw);
            done.stdout.push_str(&String::from_utf8_lossy(&out.stdout));
            done.stderr.push_str(&String::from_utf8_lossy(&out.stderr));
            done.ran.push(id);
            done.status = out.status.code().unwrap_or(-1);
            if done.status != 0 {
                break;
            }
        }
        if let Some(declared) = self.action["outputs"].as_mapping() {
            for (name, o) in declared {
                let value = self.expand(&text(&o["value"]).unwrap(), &outputs);
                done.outputs.insert(text(name).unwrap(), value);
            }
        }
        done.summary = std::fs::read_to_string(&summary).unwrap();
        done
    }

    /// An `env:` or `with:` mapping with its expressions replaced.
    fn expanded(&self, map: &Value, steps: &BTreeMap<String, Outputs>) -> Outputs {
        let Some(map) = map.as_mapping() else {
            return Outputs::new();
        };
        map.iter()
            .map(|(k, v)| {
                let v = text(v).unwrap_or_else(|| panic!("`{k:?}` is not a string"));
                (text(k).unwrap(), self.expand(&v, steps))
            })
            .collect()
    }
}
