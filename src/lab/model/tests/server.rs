//! The listener: loopback only, 404s recorded, secrets redacted, limits, encodings,
//! concurrency, stop.

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{client, model, post, send};
use crate::lab::model::{Api, ScriptReply};

#[tokio::test]
async fn unknown_paths_and_other_methods_are_answered_404_and_recorded() {
    let m = model("t").await;
    let got = send(client().get(format!("{}/v1/models", m.base_url()))).await;
    assert_eq!(
        (got.status, got.content_type.as_str()),
        (404, "application/json")
    );
    assert!(got.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("GET /v1/models"));
    let got = post(&m, "/v2/complete?x=1", &json!({"a": 1})).await;
    assert_eq!(got.status, 404);
    let got = send(client().get(format!("{}/v1/messages", m.base_url()))).await;
    assert_eq!(got.status, 404);
    let r = m.requests();
    let seen: Vec<_> = r
        .iter()
        .map(|r| (r.seq, r.api, r.method.as_str(), r.path.as_str(), &r.reply))
        .collect();
    assert_eq!(
        seen,
        [
            (1, None, "GET", "/v1/models", &ScriptReply::NotFound),
            (2, None, "POST", "/v2/complete?x=1", &ScriptReply::NotFound),
            (
                3,
                Some(Api::AnthropicMessages),
                "GET",
                "/v1/messages",
                &ScriptReply::NotFound
            ),
        ]
    );
    assert_eq!(r[1].body, br#"{"a":1}"#);
}

#[tokio::test]
async fn credential_headers_are_redacted_in_the_record() {
    let m = model("t").await;
    let secrets = [
        "authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "cookie",
        "proxy-authorization",
    ];
    let mut req = client()
        .post(format!("{}/v1/chat/completions", m.base_url()))
        .body(json!({"messages": []}).to_string());
    for name in secrets {
        req = req.header(name, "sk-secret-123");
    }
    let got = send(req.header("user-agent", "codex_exec/0.171.0")).await;
    assert_eq!(got.status, 200);
    let headers = &m.requests()[0].headers;
    for name in secrets {
        let values: Vec<_> = headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(values, ["[redacted]"], "{name}");
    }
    assert!(headers.contains(&("user-agent".into(), "codex_exec/0.171.0".into())));
    assert!(!format!("{:?}", m.requests()).contains("sk-secret"));
}

#[tokio::test]
async fn the_listener_is_on_127_0_0_1_only_and_ends_with_stop() {
    let m = model("t").await;
    let port = m.port();
    assert_eq!(m.base_url(), format!("http://127.0.0.1:{port}"));
    assert!(tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_ok());
    // bound to 0.0.0.0 it would take 127.0.0.2 (and every other address) too
    let other = tokio::net::TcpStream::connect(("127.0.0.2", port)).await;
    assert_eq!(
        other.err().map(|e| e.kind()),
        Some(std::io::ErrorKind::ConnectionRefused)
    );
    m.stop().await;
    assert!(tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err());
}

/// Send `head` (and `body`) raw and read the status line of the answer.
async fn raw(port: u16, head: &str, body: &[u8]) -> String {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(body).await.unwrap();
    let mut got = vec![0u8; 4096];
    let n = s.read(&mut got).await.unwrap();
    String::from_utf8_lossy(&got[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_body_over_64_mib_is_refused_413_and_recorded_without_its_body() {
    let m = model("t").await;
    let head = format!("POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n", (64 << 20) + 1);
    assert_eq!(
        raw(m.port(), &head, b"{\"model\":").await,
        "HTTP/1.1 413 Payload Too Large"
    );
    // a chunked body that grows over the limit is refused the same
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", m.port()))
        .await
        .unwrap();
    s.write_all(b"POST /v1/responses HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n")
        .await
        .unwrap();
    let chunk = vec![b' '; 1 << 20];
    let mut answered = String::new();
    for _ in 0..70 {
        let mut frame = format!("{:x}\r\n", chunk.len()).into_bytes();
        frame.extend_from_slice(&chunk);
        frame.extend_from_slice(b"\r\n");
        if s.write_all(&frame).await.is_err() {
            break;
        }
    }
    // the server closes with our bytes unread, so the kernel may reset the connection before
    // its 413 is read: what did arrive must be the 413, and the record (below) tells the rest
    let mut got = vec![0u8; 4096];
    if let Ok(n) = s.read(&mut got).await {
        answered = String::from_utf8_lossy(&got[..n]).into_owned();
    }
    assert!(
        answered.is_empty() || answered.starts_with("HTTP/1.1 413"),
        "{answered:?}"
    );
    let r = m.requests();
    assert_eq!(
        r.iter()
            .map(|r| (&r.reply, r.body.len()))
            .collect::<Vec<_>>(),
        [
            (&ScriptReply::Refused { status: 413 }, 0),
            (&ScriptReply::Refused { status: 413 }, 0)
        ]
    );
    assert_eq!(r[1].api, Some(Api::Responses));
}

#[tokio::test]
async fn a_gzip_body_is_decoded_and_another_encoding_refused_415() {
    let m = model("scrape_as_markdown").await;
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "go"}],
                      "tools": [{"type": "function", "function": {"name": "demo_scrape_as_markdown"}}]});
    let text = body.to_string();
    let mut python = std::process::Command::new("python3")
        .args([
            "-c",
            "import gzip,sys; sys.stdout.buffer.write(gzip.compress(sys.stdin.buffer.read()))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    std::io::Write::write_all(&mut python.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let gz = python.wait_with_output().unwrap().stdout;
    assert_eq!(&gz[..2], [0x1f, 0x8b]);
    let url = format!("{}/v1/chat/completions", m.base_url());
    let got = send(
        client()
            .post(&url)
            .header("content-encoding", "gzip")
            .body(gz.clone()),
    )
    .await;
    assert_eq!(got.status, 200, "{}", got.text);
    assert_eq!(
        got.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "demo_scrape_as_markdown"
    );
    let mut damaged = gz.clone();
    let last = damaged.len() - 5;
    damaged[last] ^= 1; // the trailer's length
    let got = send(
        client()
            .post(&url)
            .header("content-encoding", "gzip")
            .body(damaged),
    )
    .await;
    assert_eq!(got.status, 400);
    let got = send(
        client()
            .post(&url)
            .header("content-encoding", "zstd")
            .body(gz.clone()),
    )
    .await;
    assert_eq!(got.status, 415);
    let r = m.requests();
    assert_eq!(
        r[0].body,
        text.as_bytes(),
        "the record holds the decoded JSON"
    );
    assert_eq!(
        (&r[1].reply, &r[2].reply),
        (
            &ScriptReply::Refused { status: 400 },
            &ScriptReply::Refused { status: 415 }
        )
    );
    assert_eq!(r[2].body, gz, "a body it cannot decode is kept as sent");
}

#[tokio::test]
async fn a_body_that_is_not_json_is_refused_400_and_recorded() {
    let m = model("t").await;
    let got = send(
        client()
            .post(format!("{}/v1/responses", m.base_url()))
            .body("{not json"),
    )
    .await;
    assert_eq!(got.status, 400);
    assert!(got.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not JSON"));
    let r = &m.requests()[0];
    assert_eq!(
        (r.api, &r.reply, r.body.as_slice()),
        (
            Some(Api::Responses),
            &ScriptReply::Refused { status: 400 },
            &b"{not json"[..]
        )
    );
}

#[tokio::test]
async fn a_request_is_answered_while_another_is_still_being_sent() {
    let m = model("t").await;
    let mut slow = tokio::net::TcpStream::connect(("127.0.0.1", m.port()))
        .await
        .unwrap();
    let body = br#"{"messages": []}"#;
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    slow.write_all(&body[..4]).await.unwrap();
    let got = post(&m, "/v1/messages", &json!({"messages": []})).await;
    assert_eq!(got.json()["content"][0]["text"], "done");
    slow.write_all(&body[4..]).await.unwrap();
    let mut got = vec![0u8; 4096];
    let n = slow.read(&mut got).await.unwrap();
    assert!(got[..n].starts_with(b"HTTP/1.1 200"));
    let order: Vec<_> = m.requests().iter().map(|r| r.api).collect();
    assert_eq!(
        order,
        [Some(Api::AnthropicMessages), Some(Api::ChatCompletions)]
    );
}
