//! `audit` at a terminal (a pseudo-terminal from util-linux's `script`) offers to sign in to a
//! server that needs it and has nothing kept; the answer `y` runs the browser's flow and the
//! audit goes on with the new sign-in; `n` leaves the server to fail in its one line. With no
//! terminal nothing is asked (every other test here).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use super::{browse, oauth_server, probe_file};
use crate::support::bin_path;

/// `mcp-budget audit PROBES --out OUT` under a pseudo-terminal, `answer` typed at the question:
/// the exit code and what the terminal showed.
fn audit_at_terminal(home: &Path, probes: &Path, out: &Path, answer: &str) -> (i32, String) {
    let line = format!(
        "'{}' audit '{}' --out '{}'",
        bin_path().display(),
        probes.display(),
        out.display()
    );
    let mut child = Command::new("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("CI")
        .env_remove("MCP_BUDGET_NO_PROMPT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = Some(child.stdin.take().unwrap());
    let mut shown = child.stdout.take().unwrap();
    let (mut said, mut buf) = (String::new(), [0u8; 4096]);
    let (mut browsed, mut open) = (false, None);
    loop {
        // what the terminal shows as it comes (the question ends without a newline)
        let n = shown.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        said.push_str(&String::from_utf8_lossy(&buf[..n]));
        if said.trim_end().ends_with("[Y/n]") {
            if let Some(mut input) = stdin.take() {
                writeln!(input, "{answer}").unwrap();
                // kept open: the pseudo-terminal would pass its end on as the input's end
                open = Some(input);
            }
        }
        if !browsed {
            if let Some((_, rest)) = said.rsplit_once("open this URL to sign in: ") {
                if let Some((url, _)) = rest.split_once(['\r', '\n']) {
                    browsed = true;
                    assert_eq!(browse(url.trim()), 200, "{said}");
                }
            }
        }
    }
    let code = child.wait().unwrap().code().unwrap_or(-1);
    drop(open);
    (code, said)
}

#[test]
fn audit_at_a_terminal_offers_to_sign_in_and_goes_on_with_the_sign_in() {
    let Some((_server, port)) = oauth_server(&[]) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let probes = probe_file(home.path(), port);
    // declined: asked once, and the server fails in its one line
    let (code, said) = audit_at_terminal(home.path(), &probes, &home.path().join("no"), "n");
    assert!(
        said.contains("orders: it signs in with OAuth and no sign-in is kept: sign in now"),
        "{said}"
    );
    assert_ne!(code, 0, "{said}");
    assert!(said.contains("run `mcp-budget login orders`"), "{said}");
    // accepted: the browser's flow, then the audit with the token
    let out = home.path().join("yes");
    let (code, said) = audit_at_terminal(home.path(), &probes, &out, "y");
    assert!(said.contains("orders: signed in at"), "{said}");
    assert_eq!(code, 0, "{said}");
    let report = std::fs::read_to_string(out.join("audit.json")).unwrap();
    assert!(report.contains("list_orders"), "{report}");
    // signed in now: not asked again
    let (code, said) = audit_at_terminal(home.path(), &probes, &home.path().join("again"), "n");
    assert_eq!(code, 0, "{said}");
    assert!(!said.contains("sign in now"), "{said}");
}
