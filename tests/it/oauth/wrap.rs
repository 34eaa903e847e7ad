//! `wrap` of a remote entry that signs in: left as it is until `mcp-budget login` keeps a
//! sign-in for it, then wrapped (the client talks to a stdio proxy, which holds and renews the
//! tokens; none is written into the config), and `unwrap` gives the file back byte for byte.

use std::path::Path;

use super::{kept_token, login, mcp, oauth_server, probe_file};

fn run(home: &Path, args: &[&str]) -> (i32, String) {
    let out = mcp(home).current_dir(home).args(args).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_remote_entry_is_wrapped_once_signed_in_and_unwrapped_byte_for_byte() {
    let Some((_server, port)) = oauth_server(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".claude.json");
    let original = format!(
        "{{\n  \"mcpServers\": {{\n    \"orders\": {{ \"type\": \"http\", \"url\": \"http://127.0.0.1:{port}/mcp\" }}\n  }}\n}}\n"
    );
    std::fs::write(&config, &original).unwrap();
    // not signed in: left as it is, and the way to sign in said
    let (code, said) = run(home.path(), &["wrap"]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("orders: left as it is") && said.contains("mcp-budget login"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
    let probes = probe_file(home.path(), port);
    let (code, said) = login(home.path(), &probes, "orders", &[]);
    assert_eq!(code, 0, "{said}");
    let (code, said) = run(home.path(), &["wrap"]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("orders: wrapped"), "{said}");
    let wrapped = std::fs::read_to_string(&config).unwrap();
    assert!(!wrapped.contains(&kept_token(home.path())));
    let v: serde_json::Value = serde_json::from_str(&wrapped).unwrap();
    let entry = &v["mcpServers"]["orders"];
    let args: Vec<String> = entry["args"]
        .as_array()
        .unwrap_or_else(|| panic!("{wrapped}"))
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert!(
        args.contains(&format!("http://127.0.0.1:{port}/mcp")),
        "{args:?}"
    );
    // the client starts the entry: the proxy signs in with the kept sign-in
    let mut cmd = mcp(home.path());
    cmd.args(&args);
    let mut p = crate::support::Pipelined::spawn(cmd, "wrapped-oauth-proxy");
    let called = p.call(
        1,
        "tools/call",
        serde_json::json!({"name": "list_orders", "arguments": {"limit": 1}}),
    );
    assert_eq!(
        called["result"]["content"][0]["text"], "order 1: 3 items, 42.50 EUR",
        "{called}"
    );
    p.finish();
    let (code, said) = run(home.path(), &["unwrap"]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
}
