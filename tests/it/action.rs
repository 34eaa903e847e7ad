//! The GitHub Action (action.yml, scripts/action.sh) run as a runner runs it (`runner.rs`): a
//! passing and a failing gate with their outputs, annotations and job summary, report-only,
//! usage errors, and the workflows docs/ci.md shows; the install and cache steps in `install.rs`.

mod install;
mod release;
mod runner;

use std::path::{Path, PathBuf};

use runner::{file_commands, text, Finished, Runner};
use serde_json::Value;

use crate::support::repo;

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The workflow commands the runner reads from a step's stdout: every `::` line outside a
/// `::stop-commands::TOKEN` ... `::TOKEN::` stretch.
fn commands(stdout: &str) -> Vec<&str> {
    let (mut out, mut stopped) = (Vec::new(), None::<String>);
    for line in stdout.lines() {
        if let Some(token) = &stopped {
            if line == format!("::{token}::") {
                stopped = None;
            }
        } else if let Some(token) = line.strip_prefix("::stop-commands::") {
            stopped = Some(token.to_string());
        } else if line.starts_with("::") {
            out.push(line);
        }
    }
    assert!(stopped.is_none(), "commands left stopped:\n{stdout}");
    out
}

/// The schema tax of the first server of a report.
fn tax(report: &Value) -> u64 {
    report["servers"][0]["tools_list"]["model_tokens"]
        .as_u64()
        .unwrap()
}

/// A copy of the committed example report in which `list_docs` (and so its server) costs `by`
/// tokens less: the demo grows against it.
fn shrunk_baseline(dir: &Path, by: u64) -> PathBuf {
    let mut r = read_json(&repo().join("reports/example/audit.json"));
    let s = &mut r["servers"][0];
    let t = s["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == "list_docs")
        .unwrap();
    t["model_tokens"] = (t["model_tokens"].as_u64().unwrap() - by).into();
    s["tools_list"]["model_tokens"] =
        (s["tools_list"]["model_tokens"].as_u64().unwrap() - by).into();
    let path = dir.join("baseline.json");
    std::fs::write(&path, serde_json::to_string(&r).unwrap()).unwrap();
    path
}

/// The `deltas` output is each server's change in gate.json, which is the baseline's and the
/// report's schema tax.
fn check_deltas(f: &Finished, baseline: &Path) {
    let deltas: Value = serde_json::from_str(&f.outputs["deltas"]).expect("deltas is JSON");
    let gate = read_json(Path::new(&f.outputs["gate-json"]));
    let change = gate["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["subject"] == "server" && c["server"] == "demo")
        .unwrap();
    let d = &deltas["demo"];
    assert_eq!(deltas.as_object().unwrap().len(), 1, "{deltas}");
    for k in ["before", "after", "delta", "pct"] {
        assert_eq!(
            d[k].as_f64(),
            change[k].as_f64(),
            "{k}: {deltas} vs {change}"
        );
    }
    let (before, after) = (
        tax(&read_json(baseline)),
        tax(&read_json(Path::new(&f.outputs["report"]))),
    );
    assert_eq!(d["before"].as_u64(), Some(before));
    assert_eq!(d["after"].as_u64(), Some(after));
    assert_eq!(d["delta"].as_i64(), Some(after as i64 - before as i64));
}

#[test]
fn the_scripts_take_every_input_through_env_and_write_every_output() {
    let r = Runner::new(&[]);
    let script = std::fs::read_to_string(repo().join("scripts/action.sh")).unwrap();
    let steps = r.action["runs"]["steps"].as_sequence().unwrap();
    let mut mapped = Vec::new();
    for step in steps {
        if let Some(run) = text(&step["run"]) {
            let sub = run
                .strip_prefix("bash \"$GITHUB_ACTION_PATH/scripts/action.sh\" ")
                .unwrap_or_else(|| panic!("a step that is not scripts/action.sh: {run}"));
            assert!(["prepare", "install", "run"].contains(&sub.trim()), "{run}");
        }
        for (k, v) in step["env"].as_mapping().into_iter().flatten() {
            let (k, v) = (text(k).unwrap(), text(v).unwrap());
            assert!(
                script.contains(&format!("${{{k}")),
                "the script never reads {k}"
            );
            mapped.push(v);
        }
    }
    for (name, _) in r.action["inputs"].as_mapping().unwrap() {
        let name = text(name).unwrap();
        let used = format!("${{{{ inputs.{name} }}}}");
        if name != "install" {
            assert!(
                mapped.contains(&used),
                "input `{name}` is not mapped to the script"
            );
        }
    }
    for (name, o) in r.action["outputs"].as_mapping().unwrap() {
        let name = text(name).unwrap();
        assert_eq!(
            text(&o["value"]).unwrap(),
            format!("${{{{ steps.run.outputs.{name} }}}}")
        );
        assert!(
            script.contains(&format!("output {name} ")),
            "`{name}` is never written"
        );
    }
}

#[test]
fn a_passing_gate_sets_the_outputs_and_writes_the_job_summary() {
    let root = repo().display().to_string();
    let r = Runner::new(&[
        ("probe", "probes/demo.toml"),
        ("baseline", "reports/example/audit.json"),
        ("args", "--no-charts"),
        ("working-directory", &root),
        ("install", "false"),
    ]);
    let f = r.run();
    assert_eq!(f.status, 0, "{}", f.log());
    assert_eq!(f.ran, ["run"], "install: false runs no install step");
    assert_eq!(f.outputs["verdict"], "passed");
    assert_eq!(f.outputs["exit-code"], "0");
    let out = r.temp.join("mcp-budget");
    for (name, file) in [
        ("report", "audit.json"),
        ("gate-markdown", "gate.md"),
        ("gate-json", "gate.json"),
    ] {
        assert_eq!(Path::new(&f.outputs[name]), out.join(file), "{name}");
    }
    let gate = read_json(&out.join("gate.json"));
    assert_eq!(gate["passed"], true);
    let md = std::fs::read_to_string(out.join("gate.md")).unwrap();
    assert!(md.starts_with("### ✅ mcp-budget gate passed"), "{md}");
    assert!(md.contains("Against `reports/example/audit.json`"), "{md}");
    assert_eq!(f.outputs["markdown"], md.trim_end());
    // the summary is gate.md, once (the gate command's own append is not made twice)
    assert_eq!(f.summary.trim_end(), md.trim_end());
    check_deltas(&f, &repo().join("reports/example/audit.json"));
    assert_eq!(
        commands(&f.stdout),
        [
            "::group::mcp-budget audit",
            "::endgroup::",
            "::notice title=mcp-budget::mcp-budget gate passed"
        ]
    );
    // the audit's output (its tables hold the servers' names) is where no command is read
    let token = f
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("::stop-commands::"))
        .expect("the audit's output is not fenced");
    assert!(
        token.len() == 32 && token.chars().all(|c| c.is_ascii_hexdigit()),
        "{token}"
    );
    let fenced = f.stdout.split(&format!("::{token}::")).next().unwrap();
    assert!(fenced.contains("Schema tax per server"), "{}", f.stdout);
    // every output in the multiline form, each with a delimiter of its own that is random
    let raw = &f.raw_outputs["run"];
    let delimiters: Vec<&str> = raw
        .lines()
        .filter_map(|l| l.split_once("<<").map(|d| d.1))
        .collect();
    assert_eq!(delimiters.len(), file_commands(raw).len(), "{raw}");
    assert_eq!(delimiters.len(), 7, "{raw}");
    for d in &delimiters {
        let hex = d.strip_prefix("MCP_BUDGET_").unwrap();
        assert!(
            hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()),
            "{d}"
        );
    }
    let mut unique = delimiters.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), delimiters.len(), "{raw}");
}

/// The action on the demo against a baseline it grew 16 tokens from, `max_regression_pct` 1.
fn failing(extra: &[(&str, &str)]) -> (Runner, PathBuf) {
    let mut r = Runner::new(extra);
    let baseline = shrunk_baseline(&r.workspace, 16);
    let demo = repo().join("probes/demo.toml");
    for (k, v) in [
        ("probe", demo.to_str().unwrap()),
        ("baseline", "baseline.json"),
        ("thresholds", "--max-regression-pct 1"),
        ("args", "--no-charts"),
        ("install", "false"),
    ] {
        r.inputs.insert(k.into(), v.into());
    }
    (r, baseline)
}

/// What a failed gate leaves, whatever the step's status: verdict, annotations, summary, deltas.
fn check_failed(f: &Finished, baseline: &Path) {
    assert_eq!(f.outputs["verdict"], "failed", "{}", f.log());
    assert_eq!(f.outputs["exit-code"], "1");
    let gate = read_json(Path::new(&f.outputs["gate-json"]));
    assert_eq!(gate["passed"], false);
    let errors: Vec<&str> = commands(&f.stdout)
        .into_iter()
        .filter(|c| c.starts_with("::error "))
        .collect();
    // one annotation for each violation in gate.json: the server's +1.5% and the tool's +50%
    assert_eq!(
        errors.len(),
        gate["violations"].as_array().unwrap().len(),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with(
            "::error title=mcp-budget max_regression_pct%3A demo/list_docs::tool `list_docs` grew "
        )),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("::error title=mcp-budget max_regression_pct%3A demo::")),
        "{errors:?}"
    );
    assert!(
        f.summary
            .starts_with("### ❌ mcp-budget gate failed: 2 thresholds broken"),
        "{}",
        f.summary
    );
    assert!(
        f.summary
            .contains("| 🔺 grown | tool | demo | `list_docs` |"),
        "{}",
        f.summary
    );
    check_deltas(f, baseline);
    let deltas: Value = serde_json::from_str(&f.outputs["deltas"]).unwrap();
    assert_eq!(deltas["demo"]["delta"], 16, "{deltas}");
}

#[test]
fn a_failing_gate_fails_the_step_annotates_and_gives_the_server_delta() {
    let (r, baseline) = failing(&[]);
    let f = r.run();
    assert_eq!(f.status, 1, "{}", f.log());
    check_failed(&f, &baseline);
}

#[test]
fn fail_on_error_fails_the_step_on_each_error_finding_annotated() {
    let demo = repo().join("probes/demo.toml");
    let r = Runner::new(&[
        ("probe", demo.to_str().unwrap()),
        ("fail-on", "error"),
        ("args", "--no-charts"),
        ("install", "false"),
    ]);
    let f = r.run();
    assert_eq!(f.status, 1, "{}", f.log());
    let report = read_json(Path::new(&f.outputs["report"]));
    let errors_found = report["servers"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["severity"] == "error")
        .count();
    let gate = read_json(Path::new(&f.outputs["gate-json"]));
    assert_eq!(gate["violations"].as_array().unwrap().len(), errors_found);
    let annotations: Vec<&str> = commands(&f.stdout)
        .into_iter()
        .filter(|c| c.starts_with("::error "))
        .collect();
    assert_eq!(annotations.len(), errors_found, "{annotations:?}");
    assert!(
        annotations
            .iter()
            .all(|a| a.starts_with("::error title=mcp-budget fail_on%3A demo")),
        "{annotations:?}"
    );
}

#[test]
fn report_only_passes_the_step_and_still_says_the_gate_failed() {
    let (r, baseline) = failing(&[("report-only", "true")]);
    let f = r.run();
    assert_eq!(f.status, 0, "{}", f.log());
    check_failed(&f, &baseline);
}

#[test]
fn without_jq_the_deltas_come_from_python() {
    let (mut r, baseline) = failing(&[]);
    // a runner image without jq: the PATH's folders that hold one are mirrored without it
    let mirrors = r.temp.join("no-jq");
    r.path = r
        .path
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            if !dir.join("jq").exists() {
                return dir.clone();
            }
            let mirror = mirrors.join(i.to_string());
            std::fs::create_dir_all(&mirror).unwrap();
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                if entry.file_name() != "jq" {
                    let _ =
                        std::os::unix::fs::symlink(entry.path(), mirror.join(entry.file_name()));
                }
            }
            mirror
        })
        .collect();
    let jq = std::process::Command::new("bash")
        .args(["-c", "command -v jq"])
        .env("PATH", std::env::join_paths(&r.path).unwrap())
        .output()
        .unwrap();
    assert!(!jq.status.success(), "jq is still on the PATH");
    let f = r.run();
    assert_eq!(f.status, 1, "{}", f.log());
    assert!(!f.stderr.contains("jq"), "{}", f.stderr);
    check_failed(&f, &baseline);
}

#[test]
fn an_audit_error_fails_the_step_even_report_only_and_keeps_the_verdict() {
    let mut r = Runner::new(&[
        ("probe", "bad.toml"),
        ("report-only", "true"),
        ("install", "false"),
    ]);
    r.workspace = r.temp.clone();
    std::fs::write(
        r.workspace.join("bad.toml"),
        "[servers.demo]\nbuiltin = \"demo\"\n\n[[servers.demo.probes]]\ntool = \"no_such_tool\"\n",
    )
    .unwrap();
    let f = r.run();
    assert_eq!(f.status, 2, "{}", f.log());
    assert_eq!(f.outputs["exit-code"], "2");
    // the gate judged what was measured (no threshold: passed); the probe's failure is the error
    assert_eq!(f.outputs["verdict"], "passed");
    assert!(
        f.stderr.contains("unknown tool `no_such_tool`"),
        "{}",
        f.stderr
    );
    let errors: Vec<&str> = commands(&f.stdout)
        .into_iter()
        .filter(|c| c.starts_with("::error "))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("mcp-budget audit exited 2"),
        "{errors:?}"
    );
    assert_eq!(f.outputs["deltas"], "{}", "no baseline, no deltas");
}

#[test]
fn usage_errors_exit_2_with_one_clear_line() {
    let shared = Runner::new(&[]);
    let ws = shared.workspace.display().to_string();
    let cases: [(&[(&str, &str)], String); 6] = [
        (
            &[("probe", "missing.toml")],
            format!("probe file not found: missing.toml (in {ws})"),
        ),
        (
            &[("probe", "p.toml"), ("baseline", "gone/audit.json")],
            format!("baseline not found: gone/audit.json (in {ws})"),
        ),
        (
            &[("probe", "p.toml"), ("args", "--max-tool-tokens 10")],
            "args: --max-tool-tokens is a threshold: give it in the thresholds input".into(),
        ),
        (
            &[("probe", "p.toml"), ("report-only", "maybe")],
            "report-only must be true or false, not 'maybe'".into(),
        ),
        (
            &[("probe", "p.toml"), ("fail-on", "info")],
            "fail-on must be error, warning or empty, not 'info'".into(),
        ),
        (
            &[("probe", "p.toml"), ("args", "--fail-on=warning")],
            "args: --fail-on=warning is a threshold: give it in the fail-on input".into(),
        ),
    ];
    for (inputs, message) in cases {
        let mut inputs = inputs.to_vec();
        inputs.push(("install", "false"));
        let mut r = Runner::new(&inputs);
        r.workspace = PathBuf::from(&ws);
        std::fs::write(r.workspace.join("p.toml"), "").unwrap();
        let f = r.run();
        assert_eq!(f.status, 2, "{inputs:?}: {}", f.log());
        let expected = format!("::error title=mcp-budget::{message}");
        assert_eq!(commands(&f.stdout), [expected.as_str()], "{inputs:?}");
        assert_eq!(f.outputs["verdict"], "error");
        assert_eq!(f.outputs["exit-code"], "2");
        assert_eq!(f.outputs["report"], "", "no audit ran");
        assert!(f.summary.contains(&message), "{}", f.summary);
    }
}

#[test]
fn the_workflows_docs_ci_md_shows_use_the_action_s_inputs_and_outputs() {
    let r = Runner::new(&[]);
    let doc = std::fs::read_to_string(repo().join("docs/ci.md")).unwrap();
    let section = doc
        .split("\n## The GitHub Action\n")
        .nth(1)
        .expect("the section");
    let section = section.split("\n## ").next().unwrap();
    let blocks: Vec<&str> = section
        .split("```yaml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert!(
        blocks.len() >= 3,
        "a usage example and the two PR-comment workflows"
    );
    let (inputs, outputs) = (
        r.action["inputs"].as_mapping().unwrap(),
        r.action["outputs"].as_mapping().unwrap(),
    );
    let (mut uses, mut commented) = (0, false);
    for block in &blocks {
        let w: serde_yaml::Value =
            serde_yaml::from_str(block).unwrap_or_else(|e| panic!("{e}:\n{block}"));
        for (_, job) in w["jobs"].as_mapping().expect("a workflow").iter() {
            let steps = job["steps"].as_sequence().unwrap();
            for step in steps {
                let run = text(&step["run"]).unwrap_or_default();
                assert!(!run.contains("${{"), "an expression in shell code:\n{run}");
                let Some(u) = text(&step["uses"]).filter(|u| u.starts_with("OWNER/mcp-budget@"))
                else {
                    continue;
                };
                uses += 1;
                for (k, _) in step["with"].as_mapping().into_iter().flatten() {
                    assert!(inputs.contains_key(k), "{u}: no input {k:?}");
                }
                assert!(step["with"]["probe"].is_string(), "{u}: probe is required");
                if let Some(id) = text(&step["id"]) {
                    for used in block.split(&format!("steps.{id}.outputs.")).skip(1) {
                        let name: String = used
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '-')
                            .collect();
                        assert!(outputs.contains_key(name.as_str()), "no output `{name}`");
                    }
                }
            }
            if w["on"]["workflow_run"].is_mapping() {
                commented = true;
                // the privileged workflow never checks out or runs the pull request's code
                assert!(
                    !block.contains("actions/checkout") && !block.contains("OWNER/mcp-budget@"),
                    "{block}"
                );
            }
        }
    }
    assert!(
        uses >= 2 && commented,
        "{uses} uses of the action; a workflow_run comment: {commented}"
    );
}
