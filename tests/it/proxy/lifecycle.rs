//! The upstream's life under the proxy: a death mid-call is a clear error, a dead upstream is
//! restarted (and subscribed and levelled again), a client's cancellation reaches it.

use serde_json::{json, Value};

use crate::support::bin_path;

use super::*;

#[test]
fn an_upstream_that_dies_mid_call_is_a_clear_error_not_a_hang() {
    let home = tempfile::tempdir().unwrap();
    let hostile = crate::support::repo().join("tests/fixtures/hostile_server.py");
    let toml = format!(
        "[servers.p]\ncommand = {:?}\nargs = [\"proxy\", \"--spill-dir\", {:?}, \"--\", \"python3\", {:?}, \"crash-call\"]\n[[servers.p.probes]]\ntool = \"probe\"\n",
        bin_path().display().to_string(),
        home.path().join("spill").display().to_string(),
        hostile.display().to_string()
    );
    let started = std::time::Instant::now();
    // the failed probe exits 2, with the report still written
    let (report, _) = crate::support::audit_probe(home.path(), &toml, &["--timeout", "30"], &[], 2);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    let probe = &report["servers"][0]["probes"][0];
    assert_eq!(probe["status"], "error", "{probe}");
    let error = probe["error"].as_str().unwrap();
    assert!(error.contains("upstream server `python3`"), "{error}");
}

#[test]
fn a_dead_upstream_is_restarted_and_the_next_call_works() {
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("crashed-once");
    let mut p = HostileProxy::start(
        &home.path().join("spill"),
        "crash-once",
        &[("HOSTILE_MARKER", &marker)],
    );
    let first = p.call(1, "tools/call", json!({"name": "probe", "arguments": {}}));
    let error = first["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        error.contains("has stopped") && error.contains("restarting"),
        "{first}"
    );
    assert!(marker.exists());
    // the proxy starts the server again; a later call is answered by the new process
    let mut answered = None;
    for id in 2..40 {
        let msg = p.call(id, "tools/call", json!({"name": "probe", "arguments": {}}));
        if msg.get("result").is_some() {
            answered = Some(msg);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    let msg = answered.expect("the restarted upstream answers within 10 s");
    assert_eq!(msg["result"]["content"][0]["text"], "back up");
}

#[test]
fn a_clients_cancellation_reaches_the_upstream() {
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("cancelled.jsonl");
    let mut p = HostileProxy::start(
        &home.path().join("spill"),
        "hang-listen",
        &[("HOSTILE_MARKER", &marker)],
    );
    p.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "probe", "arguments": {}}}));
    std::thread::sleep(std::time::Duration::from_millis(300));
    p.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "user pressed stop"}}),
    );
    let started = std::time::Instant::now();
    let seen = loop {
        if let Ok(text) = std::fs::read_to_string(&marker) {
            if !text.is_empty() {
                break text;
            }
        }
        assert!(
            started.elapsed().as_secs() < 10,
            "the upstream never heard of the cancellation"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let note: Value = serde_json::from_str(seen.lines().next().unwrap()).unwrap();
    assert!(
        note["requestId"].is_number() || note["requestId"].is_string(),
        "{note}"
    );
    assert_eq!(note["reason"], "cancelled by the client");
}

#[test]
fn a_restarted_upstream_is_subscribed_and_levelled_again() {
    let home = tempfile::tempdir().unwrap();
    let marker = home.path().join("asked.jsonl");
    let mut p = HostileProxy::start(
        &home.path().join("spill"),
        "levels",
        &[("HOSTILE_MARKER", &marker)],
    );
    p.call(1, "logging/setLevel", json!({"level": "warning"}));
    p.call(2, "resources/subscribe", json!({"uri": "res://a"}));
    let asked = |n: usize| -> Vec<Value> {
        let text = std::fs::read_to_string(&marker).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), n, "{lines:?}");
        lines
    };
    asked(2);
    let crashed = p.call(3, "tools/call", json!({"name": "crash", "arguments": {}}));
    assert!(crashed.get("error").is_some(), "{crashed}");
    // once the server is back, it has been told again what the client wants
    let mut back = false;
    for id in 4..40 {
        let msg = p.call(id, "tools/call", json!({"name": "probe", "arguments": {}}));
        if msg.get("result").is_some() {
            back = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert!(back, "the restarted upstream answers within 10 s");
    let again = asked(4);
    assert_eq!(
        again[2..],
        [
            json!(["resources/subscribe", {"uri": "res://a"}]),
            json!(["logging/setLevel", {"level": "warning"}])
        ]
    );
    // and the client's level still filters: the warning reached it, the info line did not
    let logs: Vec<&str> = p
        .notes
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .filter_map(|n| n["params"]["data"].as_str())
        .collect();
    assert!(logs.contains(&"a warning line"), "{:?}", p.notes);
    assert!(!logs.contains(&"a info line"), "{:?}", p.notes);
}
