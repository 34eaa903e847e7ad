//! Three servers of the survey (probes/survey/), audited from their own probe files as
//! scripts/survey.sh audits them: the reference everything, filesystem and memory servers, which
//! `.ci/run` installs at the survey's pinned versions into target/test-servers. The survey itself
//! (32+ servers, minutes and downloads) is not run here.

use std::process::Command;

use serde_json::Value;

use crate::support::{bin_path, real_server, repo};

#[test]
fn three_survey_servers_audit_from_their_probe_files() {
    for bin in [
        "mcp-server-everything",
        "mcp-server-filesystem",
        "mcp-server-memory",
    ] {
        if real_server(bin).is_none() {
            return;
        }
    }
    // the layout scripts/survey.sh makes: npm/<server>/node_modules/.bin and data/ with a repository
    let survey = tempfile::tempdir().unwrap();
    std::fs::create_dir(survey.path().join("npm")).unwrap();
    for name in ["everything", "filesystem", "memory"] {
        let link = survey.path().join("npm").join(name);
        std::os::unix::fs::symlink(repo().join("target/test-servers"), link).unwrap();
    }
    let data = survey.path().join("data/repo");
    std::fs::create_dir_all(data.join("src")).unwrap();
    // the README and every docs page as one text: the manual, as the README held it whole
    // before it was split into docs/ (the clone the survey reads has a short README)
    let mut manual = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut pages: Vec<_> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    for page in pages {
        manual.push_str(&std::fs::read_to_string(page).unwrap());
    }
    std::fs::write(data.join("README.md"), manual).unwrap();
    for f in ["lib.rs", "main.rs", "ground/text.rs", "ground/units.rs"] {
        let name = std::path::Path::new(f).file_name().unwrap();
        std::fs::copy(repo().join("src").join(f), data.join("src").join(name)).unwrap();
    }
    let out = survey.path().join("out");
    let status = Command::new(bin_path())
        .arg("audit")
        .args(
            ["everything", "filesystem", "memory"]
                .map(|s| repo().join(format!("probes/survey/{s}.toml"))),
        )
        .args(["--no-charts", "--client", "all", "--out"])
        .arg(&out)
        .env("SURVEY_DIR", survey.path())
        .env("SURVEY_WEB", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let report: Value =
        serde_json::from_slice(&std::fs::read(out.join("audit.json")).unwrap()).unwrap();
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 3);
    for s in servers {
        assert_eq!(s["status"], "ok", "{s}");
        assert!(
            s["tools_list"]["tool_count"].as_u64().unwrap() >= 9,
            "{}",
            s["name"]
        );
        assert!(s["schema_score"]["score"].as_u64().is_some());
        for p in s["probes"].as_array().unwrap() {
            assert_eq!(p["status"], "ok", "{}: {p}", s["name"]);
        }
    }
    let fs = servers.iter().find(|s| s["name"] == "filesystem").unwrap();
    let readme = fs["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["tool"] == "read_text_file")
        .unwrap();
    // the manual is well over the budget: measured raw, then cut by the engine
    assert!(readme["raw"]["model_tokens"].as_u64().unwrap() > 20_000);
    assert!(readme["budgeted"]["tokens"].as_u64().unwrap() <= 8_000);
    // and the analysis script reads the report
    let numbers = Command::new("python3")
        .arg(repo().join("scripts/survey-analysis.py"))
        .arg(out.join("audit.json"))
        .output()
        .unwrap();
    assert!(
        numbers.status.success(),
        "{}",
        String::from_utf8_lossy(&numbers.stderr)
    );
    let text = String::from_utf8(numbers.stdout).unwrap();
    assert!(text.contains("3 servers audited: 3 ok"), "{text}");
    assert!(text.contains("| filesystem | read_text_file |"), "{text}");
}
