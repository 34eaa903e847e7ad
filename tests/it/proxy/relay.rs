//! The upstream's requests of its client (sampling, elicitation, roots) relayed to the right
//! client of the proxy, over stdio and over HTTP.

use serde_json::json;

use crate::support::{bin_path, real_server};

use super::*;

#[test]
fn the_upstreams_requests_of_its_client_reach_the_client() {
    let (Some(python), Some(everything)) = (python_sdk(), real_server("mcp-server-everything"))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let spill = home.path().join("spill");
    let (bin, everything) = (bin_path(), everything.to_str().unwrap().to_string());
    let run = |offer: bool, tool: &str, args: &str| {
        let mut a = vec!["--args", args];
        if offer {
            a.push("--offer");
        }
        a.extend([
            tool,
            bin.to_str().unwrap(),
            "proxy",
            "--spill-dir",
            spill.to_str().unwrap(),
            "--",
            &everything,
            "stdio",
        ]);
        sdk(&python, &a)
    };

    // sampling: the server's request reaches the SDK client, and its reply the server
    let got = run(
        true,
        "trigger-sampling-request",
        r#"{"prompt": "name a colour", "maxTokens": 20}"#,
    );
    assert_eq!(got["is_error"], false, "{got}");
    assert_shown(&got, "a reply sampled by the test client");
    assert!(
        got["asked"].as_array().unwrap().contains(&json!([
            "sampling",
            "Resource trigger-sampling-request context: name a colour"
        ])),
        "{got}"
    );

    // elicitation: the user's answer reaches the server
    let got = run(true, "trigger-elicitation-request", "{}");
    assert_shown(&got, "- Name: Ada Lovelace");

    // roots: the server asks when the client connects and lists what the client gave
    let got = run(true, "get-roots-list", "{}");
    assert_shown(&got, "file:///tmp/mcp-budget-test-root");

    // a client that does not offer sampling: a clear error in the tool's result, no hang
    let got = run(
        false,
        "trigger-sampling-request",
        r#"{"prompt": "name a colour", "maxTokens": 20}"#,
    );
    assert_eq!(got["is_error"], true, "{got}");
    assert_shown(&got, "of the mcp-budget proxy does not support sampling");
}

#[test]
fn over_http_the_upstreams_requests_go_to_the_right_session() {
    let (Some(python), Some(everything)) = (python_sdk(), real_server("mcp-server-everything"))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let everything = everything.to_str().unwrap().to_string();
    let (url, _proxy) = proxy_on_http(&home.path().join("spill"), &[&everything, "stdio"]);
    let sampling = r#"{"prompt": "name a colour", "maxTokens": 20}"#;

    // an idle session beside the caller: sampling reaches the caller
    let got = sdk(
        &python,
        &[
            "--offer",
            "--watchers",
            "1",
            "--args",
            sampling,
            "--url",
            &url,
            "trigger-sampling-request",
        ],
    );
    assert_eq!(got["is_error"], false, "{got}");
    assert_shown(&got, "a reply sampled by the test client");

    // roots: a session without roots called first; the session with roots that connects
    // after it is the one whose roots the upstream sees
    let got = sdk(
        &python,
        &[
            "--offer",
            "--watchers",
            "1",
            "--watcher-first",
            "get-tiny-image",
            "--url",
            &url,
            "get-roots-list",
        ],
    );
    assert_shown(&got, "file:///tmp/mcp-budget-test-root");

    // two sessions with calls running: the proxy cannot tell whose sampling request it is, and
    // says so instead of asking the wrong user
    let got = sdk(
        &python,
        &[
            "--offer",
            "--watchers",
            "1",
            "--watcher-during",
            "trigger-long-running-operation",
            r#"{"duration": 5, "steps": 5}"#,
            "--args",
            sampling,
            "--url",
            &url,
            "trigger-sampling-request",
        ],
    );
    assert_eq!(got["is_error"], true, "{got}");
    assert_shown(&got, "2 clients have calls running");
    assert!(
        !got["asked"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a[0] == "sampling"),
        "{got}"
    );
    assert_eq!(got["watcher_calls"][0]["is_error"], false, "{got}");
}
