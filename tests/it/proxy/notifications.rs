//! The upstream's notifications through the proxy: progress to its caller under its own token
//! and before the result, log messages by each session's level, list changes refreshing the tools.

use serde_json::{json, Value};

use crate::support::{bin_path, real_server};

use super::*;

#[test]
fn upstream_notifications_reach_the_client_and_list_changes_refresh_the_tools() {
    let home = tempfile::tempdir().unwrap();
    let mut p = HostileProxy::start(&home.path().join("spill"), "notify", &[]);
    let tools = |v: &Value| -> Vec<String> {
        v["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let before = p.call(1, "tools/list", json!({}));
    assert_eq!(tools(&before), vec!["probe", "mcp_budget_read"]);
    p.call(2, "tools/call", json!({"name": "probe", "arguments": {}}));
    // the notifications may trail the result: wait for them with pings
    for id in 3..50 {
        if p.notes.len() >= 2 {
            break;
        }
        p.call(id, "ping", json!({}));
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let notes = &p.notes;
    let methods: Vec<&str> = notes
        .iter()
        .map(|n| n["method"].as_str().unwrap())
        .collect();
    assert!(methods.contains(&"notifications/message"), "{notes:?}");
    assert!(
        methods.contains(&"notifications/tools/list_changed"),
        "{notes:?}"
    );
    let log = notes
        .iter()
        .find(|n| n["method"] == "notifications/message")
        .unwrap();
    assert_eq!(log["params"]["data"], "disk almost full");
    let after = p.call(60, "tools/list", json!({}));
    assert_eq!(tools(&after), vec!["probe", "probe2", "mcp_budget_read"]);
}

#[test]
fn progress_reaches_the_client_that_asked_under_its_own_token() {
    let (Some(python), Some(everything)) = (python_sdk(), real_server("mcp-server-everything"))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let (bin, everything) = (bin_path(), everything.to_str().unwrap().to_string());
    let done = "Long running operation completed. Duration: 0.4 seconds, Steps: 4.";

    // stdio: the SDK only calls back for its own token, so every step arriving shows the proxy
    // put the client's token back; logging/setLevel is forwarded too (the SDK fails otherwise)
    let got = sdk(
        &python,
        &[
            "--args",
            LONG_RUN,
            "--log-level",
            "debug",
            "trigger-long-running-operation",
            bin.to_str().unwrap(),
            "proxy",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--",
            &everything,
            "stdio",
        ],
    );
    assert_eq!(got["shown"], done);
    assert_eq!(progress(&got), four_steps());

    // streamable HTTP: the same, and another session on the proxy is not sent the progress
    let (url, _proxy) = proxy_on_http(&spill, &[&everything, "stdio"]);
    let got = sdk(
        &python,
        &[
            "--args",
            LONG_RUN,
            "--watchers",
            "1",
            "--url",
            &url,
            "trigger-long-running-operation",
        ],
    );
    assert_eq!(got["shown"], done);
    assert_eq!(progress(&got), four_steps());
    assert!(
        !methods(&got["watchers"][0]).contains(&"notifications/progress"),
        "{}",
        got["watchers"]
    );
}

#[test]
fn over_http_every_session_gets_the_upstreams_notifications() {
    let Some(python) = python_sdk() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
    let (url, _proxy) = proxy_on_http(
        &home.path().join("spill"),
        &["python3", hostile.to_str().unwrap(), "notify"],
    );
    let got = sdk(
        &python,
        &["--watchers", "2", "--settle", "1.5", "--url", &url, "probe"],
    );
    assert_eq!(got["is_error"], false);
    let sessions = [&got["notes"], &got["watchers"][0], &got["watchers"][1]];
    for notes in sessions {
        let m = methods(notes);
        assert!(m.contains(&"notifications/message"), "{notes}");
        assert!(m.contains(&"notifications/tools/list_changed"), "{notes}");
        let log = notes
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["method"] == "notifications/message")
            .unwrap();
        assert_eq!(log["params"]["data"], "disk almost full");
    }
}

#[test]
fn progress_comes_before_the_result_and_only_to_its_caller() {
    // stdio: the upstream sends three progress notes and a log line right before its result;
    // all of them reach the client before the result, under the client's own token
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let mut p = HostileProxy::start(&spill, "progress", &[]);
    let answer = p.call(
        1,
        "tools/call",
        json!({"name": "probe", "arguments": {}, "_meta": {"progressToken": "tok-7"}}),
    );
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    let steps: Vec<(Value, f64)> = p
        .notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            (
                n["params"]["progressToken"].clone(),
                n["params"]["progress"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [1.0, 2.0, 3.0].map(|i| (json!("tok-7"), i)),
        "{:?}",
        p.notes
    );
    assert!(methods(&json!(p.notes)).contains(&"notifications/message"));

    // HTTP: the caller gets its progress, another session only the log line
    let Some(python) = python_sdk() else {
        return;
    };
    let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
    let (url, _proxy) = proxy_on_http(&spill, &["python3", hostile.to_str().unwrap(), "progress"]);
    let got = sdk(
        &python,
        &["--watchers", "1", "--settle", "1", "--url", &url, "probe"],
    );
    assert_eq!(
        progress(&got),
        [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)],
        "{got}"
    );
    let watcher = methods(&got["watchers"][0]);
    assert!(watcher.contains(&"notifications/message"), "{watcher:?}");
    assert!(!watcher.contains(&"notifications/progress"), "{watcher:?}");
}

#[test]
fn progress_sent_at_once_by_a_fast_upstream_is_never_lost() {
    // the upstream writes its progress right after reading the call, before the proxy has
    // written the call's route: over many calls, every note still reaches the caller
    let home = tempfile::tempdir().unwrap();
    let mut p = HostileProxy::start(&home.path().join("spill"), "progress", &[]);
    for id in 1..=300u64 {
        let token = format!("tok-{id}");
        let answer = p.call(
            id,
            "tools/call",
            json!({"name": "probe", "arguments": {}, "_meta": {"progressToken": token}}),
        );
        assert_eq!(answer["result"]["content"][0]["text"], "done");
        let seen = p
            .notes
            .drain(..)
            .filter(|n| n["method"] == "notifications/progress")
            .map(|n| n["params"]["progress"].as_f64().unwrap())
            .collect::<Vec<_>>();
        assert_eq!(seen, [1.0, 2.0, 3.0], "call {id}");
    }
}

#[test]
fn over_http_each_session_gets_its_own_log_level_and_subscriptions() {
    let Some(python) = python_sdk() else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("asked.jsonl");
    let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
    let (url, _proxy) = proxy_on_http_with(
        &home.path().join("spill"),
        &["python3", hostile.to_str().unwrap(), "levels"],
        &[("HOSTILE_MARKER", &marker)],
    );
    // the caller wants warnings and up, and res://a; the other session set neither
    let got = sdk(
        &python,
        &[
            "--log-level",
            "warning",
            "--subscribe",
            "res://a",
            "--watchers",
            "1",
            "--settle",
            "1",
            "--url",
            &url,
            "probe",
        ],
    );
    let logs = |notes: &Value| -> Vec<String> {
        notes
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["method"] == "notifications/message")
            .map(|n| n["params"]["data"].as_str().unwrap().to_string())
            .collect()
    };
    let updated = |notes: &Value| methods(notes).contains(&"notifications/resources/updated");
    assert_eq!(logs(&got["notes"]), ["a warning line"], "{got}");
    assert!(updated(&got["notes"]), "{got}");
    assert_eq!(
        logs(&got["watchers"][0]),
        ["a info line", "a warning line"],
        "{got}"
    );
    assert!(!updated(&got["watchers"][0]), "{got}");
    // the upstream was asked once for each
    let asked = std::fs::read_to_string(&marker).unwrap();
    let asked: Vec<Value> = asked
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        asked,
        [
            json!(["logging/setLevel", {"level": "warning"}]),
            json!(["resources/subscribe", {"uri": "res://a"}])
        ]
    );
}
