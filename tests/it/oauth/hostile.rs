//! A careless server and a mistaken setup: a token the server quotes back in its 401 is
//! redacted in every message and file, and a pre-registered client whose redirect URI is not a
//! loopback one fails the login in one line that says so.

use super::{all_text, audit_with_token, browse, login_opening, oauth_server, probe_file};

#[test]
fn a_token_the_server_quotes_in_its_401_is_redacted_everywhere() {
    let Some((_server, port)) = oauth_server(&["--echo-token"]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    let token = "ci-token-5f1c2a9e7d3b4c6a8e0f";
    let out = home.path().join("out");
    let run = audit_with_token(token, &probes, &out);
    let said = String::from_utf8_lossy(&run.stderr);
    let line = said
        .lines()
        .find(|l| l.contains("`orders`"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        line.contains("HTTP 401") && line.contains("unknown token"),
        "{line}"
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    for text in [said.as_ref(), stdout.as_ref(), all_text(&out).as_str()] {
        assert!(!text.contains(token), "{text}");
        assert!(!text.contains(&token[..20]), "{text}");
    }
}

#[test]
fn a_pre_registered_client_whose_redirect_is_not_loopback_fails_in_one_line() {
    let Some((_server, port)) = oauth_server(&[
        "--no-dcr",
        "--client",
        "web-client:",
        "--redirect",
        "https://app.example.com/callback",
    ]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    let args = [
        "orders",
        "--wait",
        "3",
        "--client-id",
        "web-client",
        "--config",
        probes.to_str().unwrap(),
    ];
    let (code, said) = login_opening(home.path(), &args, |url, said| {
        // the authorization server refuses the loopback redirect the client was not
        // registered with: no redirect comes back
        assert_eq!(browse(url), 400, "{said}");
    });
    assert_ne!(code, 0);
    let failed = said
        .lines()
        .find(|l| l.contains("sign-in failed"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        failed.contains("no redirect from the browser within 3 s")
            && failed.contains("must be a loopback one"),
        "{failed}"
    );
}
