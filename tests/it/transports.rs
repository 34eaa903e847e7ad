//! Every transport against the same real server: `server-everything` over stdio, streamable
//! HTTP (plain and over TLS) and legacy HTTP+SSE on loopback ports gives the same tools and the
//! same wire bytes;
//! a server that refuses or is not there is a clear error on that server only.

use std::net::TcpListener;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{free_port, mcp_budget, read_report, real_server, serve_on, Served};

const SECRET: &str = "sk-header-SECRET-777";

/// server-everything in `mode` on `port`, killed on drop.
fn serve(bin: &std::path::Path, mode: &str, port: u16) -> Served {
    let mut cmd = Command::new(bin);
    cmd.arg(mode).env("PORT", port.to_string());
    serve_on(cmd, port)
}

#[test]
fn stdio_streamable_http_and_sse_give_the_same_numbers() {
    let Some(bin) = real_server("mcp-server-everything") else {
        return;
    };
    let (http_port, sse_port) = (free_port(), free_port());
    let _http = serve(&bin, "streamableHttp", http_port);
    let _sse = serve(&bin, "sse", sse_port);
    // https: the same streamable HTTP server behind TLS with a private CA
    let (https_port, ca_pem) = tls_front(http_port);
    let home = tempfile::tempdir().unwrap();
    let ca = home.path().join("ca.pem");
    std::fs::write(&ca, ca_pem).unwrap();
    let probe = home.path().join("t.toml");
    let probes = "tool = \"get-tiny-image\"";
    std::fs::write(
        &probe,
        format!(
            "[servers.stdio]\ncommand = {:?}\nargs = [\"stdio\"]\n[[servers.stdio.probes]]\n{probes}\n\
             [servers.http]\nurl = \"http://127.0.0.1:{http_port}/mcp\"\nheaders = {{ Authorization = \"Bearer {SECRET}\" }}\n[[servers.http.probes]]\n{probes}\n\
             [servers.sse]\nurl = \"http://127.0.0.1:{sse_port}/sse\"\ntransport = \"sse\"\nheaders = {{ X-Api-Key = \"{SECRET}\" }}\n[[servers.sse.probes]]\n{probes}\n\
             [servers.https]\nurl = \"https://localhost:{https_port}/mcp\"\n[[servers.https.probes]]\n{probes}\n",
            bin.display().to_string()
        ),
    )
    .unwrap();
    let out = home.path().join("out");
    let assert = mcp_budget(home.path(), home.path())
        .args([
            "audit",
            probe.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
            "--ca-cert",
            ca.to_str().unwrap(),
        ])
        .assert()
        .code(0);
    let report = read_report(&out);
    let servers = report["servers"].as_array().unwrap();
    let pick = |name: &str| servers.iter().find(|s| s["name"] == name).unwrap();
    let (stdio, http, sse, https) = (pick("stdio"), pick("http"), pick("sse"), pick("https"));
    assert_eq!(
        (http["transport"].as_str(), sse["transport"].as_str()),
        (Some("http"), Some("sse"))
    );
    for remote in [http, sse, https] {
        assert_eq!(remote["status"], "ok", "{remote}");
        assert_eq!(
            remote["tools_list"]["tool_count"],
            stdio["tools_list"]["tool_count"]
        );
        assert_eq!(
            remote["tools_list"]["wire_tokens"],
            stdio["tools_list"]["wire_tokens"]
        );
        assert_eq!(
            remote["tools_list"]["wire_bytes"],
            stdio["tools_list"]["wire_bytes"]
        );
        assert_eq!(
            remote["probes"][0]["raw"]["wire_bytes"],
            stdio["probes"][0]["raw"]["wire_bytes"]
        );
    }
    let mut everything = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    everything.push_str(&String::from_utf8_lossy(&assert.get_output().stderr));
    everything.push_str(&std::fs::read_to_string(out.join("audit.json")).unwrap());
    assert!(!everything.contains(SECRET), "a header value leaked");
}

#[test]
fn refused_and_failing_http_servers_are_clear_errors() {
    // a port nobody listens on, and a plain HTTP server that answers every request with 401
    let closed = free_port();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let denied = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming().take(8) {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let body = "{\"error\":\"invalid token\"}";
            let _ = write!(s, "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
        }
    });
    let home = tempfile::tempdir().unwrap();
    let probe = home.path().join("t.toml");
    std::fs::write(
        &probe,
        format!(
            "[servers.closed]\nurl = \"http://127.0.0.1:{closed}/mcp\"\n[servers.denied]\nurl = \"http://127.0.0.1:{denied}/mcp?token={SECRET}\"\n\
             [servers.demo]\nbuiltin = \"demo\"\n"
        ),
    )
    .unwrap();
    let started = Instant::now();
    let assert = mcp_budget(home.path(), home.path())
        .args([
            "audit",
            probe.to_str().unwrap(),
            "--no-write",
            "--format",
            "json",
            "--timeout",
            "30",
        ])
        .assert()
        .code(2);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "an HTTP failure waited for the timeout"
    );
    let report: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    let servers = report["servers"].as_array().unwrap();
    let error = |n: &str| {
        servers.iter().find(|s| s["name"] == n).unwrap()["error"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(
        error("closed").contains("could not connect"),
        "{}",
        error("closed")
    );
    assert!(
        error("denied").contains("401") && error("denied").contains("invalid token"),
        "{}",
        error("denied")
    );
    assert_eq!(
        servers.iter().find(|s| s["name"] == "demo").unwrap()["status"],
        "ok"
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&assert.get_output().stdout),
        String::from_utf8_lossy(&assert.get_output().stderr)
    );
    assert!(!all.contains(SECRET), "a URL token leaked");
}

/// A minimal streamable-HTTP MCP server that answers every POST with a plain JSON body (not
/// SSE), as many servers do; notifications get 202.
fn json_reply_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Read, Write};
        for stream in listener.incoming().take(32) {
            let Ok(mut s) = stream else { continue };
            let mut reader = BufReader::new(s.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; len];
            let _ = reader.read_exact(&mut body);
            let msg: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let reply = match (msg["method"].as_str(), msg.get("id")) {
                (_, None) => None,
                (Some("initialize"), Some(id)) => Some(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"json-reply","version":"1"}}}}}}"#
                )),
                (Some("tools/list"), Some(id)) => Some(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"echo","description":"Echo it back, \u00e9","inputSchema":{{"type":"object"}},"execution":{{"taskSupport":"forbidden"}}}}]}}}}"#
                )),
                (Some("tools/call"), Some(id)) => Some(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
                )),
                (_, Some(id)) => Some(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"no"}}}}"#
                )),
            };
            let _ = match reply {
                Some(b) => write!(
                    s,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: abc\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{b}",
                    b.len()
                ),
                None => write!(s, "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"),
            };
        }
    });
    port
}

#[test]
fn plain_json_replies_are_captured_byte_for_byte() {
    let port = json_reply_server();
    let home = tempfile::tempdir().unwrap();
    let toml = format!("[servers.j]\nurl = \"http://127.0.0.1:{port}/mcp\"\n[[servers.j.probes]]\ntool = \"echo\"\n");
    let (report, _) = crate::support::audit_probe(home.path(), &toml, &["--timeout", "20"], &[], 0);
    let s = &report["servers"][0];
    let page = r#"{"tools":[{"name":"echo","description":"Echo it back, \u00e9","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}}]}"#;
    assert_eq!(
        s["tools_list"]["wire_bytes"],
        page.len(),
        "the escaped \\u00e9 and `execution` are kept as sent"
    );
    assert_eq!(
        s["tools"][0]["other_tokens"].as_u64().map(|n| n > 0),
        Some(true)
    );
    assert_eq!(s["probes"][0]["status"], "ok");
}

/// A machine whose certificate store is empty (a slim container; here an empty `SSL_CERT_DIR`):
/// the platform verifier would fail every client's build, plain http included ("builder error"
/// until 2026-12-05); an http server is audited as anywhere else.
#[test]
fn an_empty_certificate_store_does_not_stop_plain_http() {
    let port = json_reply_server();
    let home = tempfile::tempdir().unwrap();
    let empty = home.path().join("no-certs");
    std::fs::create_dir(&empty).unwrap();
    let toml = format!("[servers.j]\nurl = \"http://127.0.0.1:{port}/mcp\"\n[[servers.j.probes]]\ntool = \"echo\"\n");
    let dir = empty.to_str().unwrap();
    let (report, _) = crate::support::audit_probe(
        home.path(),
        &toml,
        &["--timeout", "20"],
        &[("SSL_CERT_DIR", dir)],
        0,
    );
    assert_eq!(
        report["servers"][0]["probes"][0]["status"], "ok",
        "{report}"
    );
}

/// A TLS front on a loopback port for the plain-HTTP server on `target`, with a certificate for
/// 127.0.0.1 and localhost issued by a fresh CA. Returns the port and the CA's PEM.
pub(crate) fn tls_front(target: u16) -> (u16, String) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    use std::sync::Arc;
    use tokio_rustls::rustls::{self, pki_types::PrivatePkcs8KeyDer};

    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "mcp-budget test CA");
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let issuer = Issuer::new(ca, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &issuer)
        .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![leaf.der().clone()],
        PrivatePkcs8KeyDer::from(leaf_key.serialize_der()).into(),
    )
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let Ok(mut up) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await
                    else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
                });
            }
        });
    });
    (port, ca_pem)
}

#[test]
fn https_with_a_private_ca_is_trusted_only_when_given() {
    let (port, ca_pem) = tls_front(json_reply_server());
    let home = tempfile::tempdir().unwrap();
    let ca = home.path().join("ca.pem");
    std::fs::write(&ca, &ca_pem).unwrap();
    let toml = format!(
        "[servers.tls]\nurl = \"https://127.0.0.1:{port}/mcp\"\n[[servers.tls.probes]]\ntool = \"echo\"\n"
    );
    let ca_arg = ca.to_str().unwrap();
    let (report, _) = crate::support::audit_probe(
        home.path(),
        &toml,
        &["--timeout", "20", "--ca-cert", ca_arg],
        &[],
        0,
    );
    let s = &report["servers"][0];
    assert_eq!(s["status"], "ok", "{s}");
    assert_eq!(s["tools_list"]["tool_count"], 1);
    assert_eq!(s["probes"][0]["status"], "ok");

    // the conventional SSL_CERT_FILE works the same
    let (report, _) = crate::support::audit_probe(
        home.path(),
        &toml,
        &["--timeout", "20"],
        &[("SSL_CERT_FILE", ca_arg)],
        0,
    );
    assert_eq!(report["servers"][0]["status"], "ok");

    // without the CA the server's certificate is refused, as a one-line error on that server
    let (report, _) = crate::support::audit_probe(home.path(), &toml, &["--timeout", "20"], &[], 2);
    let error = report["servers"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("UnknownIssuer") && error.contains("--ca-cert") && !error.contains('\n'),
        "{error}"
    );

    // a file that is not a certificate is a usage error naming it
    let bogus = home.path().join("bogus.pem");
    std::fs::write(&bogus, "not a certificate\n").unwrap();
    let probe = home.path().join("t.toml");
    std::fs::write(&probe, &toml).unwrap();
    mcp_budget(home.path(), home.path())
        .args(["audit", probe.to_str().unwrap(), "--no-write", "--ca-cert"])
        .arg(&bogus)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bogus.pem"));
}
