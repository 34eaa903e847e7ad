//! A sign-in in use: the proxy outlives its access token (refreshed when due, and once more
//! when the server refuses it before its time), a sign-in that cannot be renewed is one line
//! naming `mcp-budget login`, and a call that needs more scope (403 `insufficient_scope`) names
//! the scope and the `login` that grants it, which then keeps the scopes it had.

use std::io::{Read, Write};

use super::{audit, grants, kept, kept_token, login, mcp, oauth_server, probe_file};

/// POST to one of the fixture's admin routes.
fn admin(port: u16, path: &str) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut sink = String::new();
    s.read_to_string(&mut sink).unwrap();
    assert!(sink.starts_with("HTTP/1.1 200"), "{sink}");
}

fn orders(p: &mut crate::support::Pipelined, id: u64) -> serde_json::Value {
    p.call(
        id,
        "tools/call",
        serde_json::json!({"name": "list_orders", "arguments": {"limit": 1}}),
    )
}

#[test]
fn the_proxy_outlives_its_token_and_renews_one_the_server_refuses() {
    // tokens of 4 s, the refresh token rotated on every refresh
    let Some((_server, port)) = oauth_server(&["--ttl", "4", "--rotate"]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    let (code, said) = login(home.path(), &probes, "orders", &[]);
    assert_eq!(code, 0, "{said}");
    let first = kept_token(home.path());
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut cmd = mcp(home.path());
    cmd.args(["proxy", "--upstream-url", &url]);
    let mut p = crate::support::Pipelined::spawn(cmd, "oauth-renew-proxy");
    let ok = "order 1: 3 items, 42.50 EUR";
    assert_eq!(orders(&mut p, 1)["result"]["content"][0]["text"], ok);
    // past the token's lifetime: refreshed before the call, in the same session
    std::thread::sleep(std::time::Duration::from_secs(5));
    let called = orders(&mut p, 2);
    assert_eq!(called["result"]["content"][0]["text"], ok, "{called}");
    let refreshed = grants(port)["refresh_token"].as_u64().unwrap();
    assert!(refreshed >= 1, "{}", grants(port));
    let second = kept_token(home.path());
    assert_ne!(second, first);
    // the server ends every access token before its time: the 401 is answered by a refresh
    // and the call sent again
    admin(port, "/test/drop-access");
    let called = orders(&mut p, 3);
    assert_eq!(called["result"]["content"][0]["text"], ok, "{called}");
    assert_eq!(grants(port)["refresh_token"], refreshed + 1);
    assert_ne!(kept_token(home.path()), second);
    // revoked altogether: the call fails with one line naming the login to run
    admin(port, "/test/revoke-all");
    let refused = orders(&mut p, 4).to_string();
    assert!(
        refused.contains(&format!("run `mcp-budget login {url}`")),
        "{refused}"
    );
    let stderr = p.finish();
    for token in [first, second] {
        assert!(!stderr.contains(&token) && !refused.contains(&token));
    }
}

#[test]
fn a_call_that_needs_more_scope_names_it_and_login_adds_it_to_the_kept_scopes() {
    let Some((_server, port)) = oauth_server(&["--step-up", "reports:admin"]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = home.path().join("probes.toml");
    std::fs::write(
        &probes,
        format!(
            "[servers.orders]\nurl = \"http://127.0.0.1:{port}/mcp\"\n\n[[servers.orders.probes]]\ntool = \"admin_report\"\n"
        ),
    )
    .unwrap();
    let (code, said) = login(home.path(), &probes, "orders", &["--scope", "orders:read"]);
    assert_eq!(code, 0, "{said}");
    let out = home.path().join("one");
    let first = audit(home.path(), &probes, &out);
    let said = String::from_utf8_lossy(&first.stderr);
    assert!(
        said.contains(
            "the server asks for scope `reports:admin` (insufficient_scope): run `mcp-budget login orders --scope reports:admin`"
        ),
        "{said}"
    );
    // step-up: the login asked for, the scopes kept before and the new one granted together
    let (code, said) = login(
        home.path(),
        &probes,
        "orders",
        &["--scope", "reports:admin"],
    );
    assert_eq!(code, 0, "{said}");
    let scope = kept(home.path())["credentials"]["token_response"]["scope"].clone();
    let mut granted: Vec<&str> = scope.as_str().unwrap().split(' ').collect();
    granted.sort_unstable();
    assert_eq!(granted, ["orders:read", "reports:admin"]);
    let second = audit(home.path(), &probes, &home.path().join("two"));
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let report = std::fs::read_to_string(home.path().join("two/audit.json")).unwrap();
    assert!(report.contains("admin_report"), "{report}");
}
