//! Line pumps between a server's byte streams and rmcp: each JSON-RPC line is recorded
//! verbatim in the [`Wire`]; lines that are not JSON (a server's log output on stdout) are
//! dropped with a warning instead of breaking the session.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::dropped::{
    answer_dropped, answer_with_error, discover_stand_in, nesting_depth, response_id, MAX_DEPTH,
};
use super::{Line, Wire};
use crate::config::Redactor;

/// Buffer of the in-memory pipes between the pumps and rmcp.
const PIPE_BYTES: usize = 256 * 1024;

/// Tool results larger than this reach rmcp as an empty stub (the wire keeps the original).
const STUB_OVER: usize = 1 << 20;

/// The two ends rmcp talks to, and the pump tasks behind them.
pub struct Pumps {
    pub rmcp_read: DuplexStream,
    pub rmcp_write: DuplexStream,
    pub tasks: Vec<JoinHandle<()>>,
    /// What `--protocol auto`'s negotiation needs of the pumps (`super::negotiate`).
    pub link: NegotiationLink,
}

/// The pumps' side of the era negotiation that runs before rmcp: the answers to its own
/// requests (ids that begin `mcp-budget:`) come here and never reach rmcp, however late, and
/// rmcp's own first request can be kept from the server when the negotiation already has its
/// answer.
pub struct NegotiationLink {
    /// Each answer to a request of the negotiation's own, as the server sent it (the wire
    /// records it too). Closed when the server's stream ends.
    pub replies: mpsc::UnboundedReceiver<Line>,
    /// Set: rmcp's next `initialize` or `server/discover` is not sent (its answer is given to
    /// rmcp from the negotiation's).
    pub swallow_handshake: Arc<AtomicBool>,
}

/// The ids the negotiation gives its own requests begin with this (as JSON text, after `"`).
pub const OWN_ID_PREFIX: &str = "mcp-budget:";

/// Start pumping between a server's output/input and a pair of pipes for rmcp.
pub fn start<R, W>(
    server_out: R,
    server_in: W,
    wire: Wire,
    max_line_bytes: usize,
    redactor: Arc<Redactor>,
) -> Pumps
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_read, inbound_tx) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_write, outbound_rx) = tokio::io::duplex(PIPE_BYTES);
    let (replies_tx, replies) = mpsc::unbounded_channel();
    let swallow_handshake = Arc::new(AtomicBool::new(false));
    let inbound = tokio::spawn(inbound(
        server_out,
        inbound_tx,
        wire.clone(),
        max_line_bytes,
        redactor,
        replies_tx,
    ));
    let outbound = tokio::spawn(outbound(
        outbound_rx,
        server_in,
        wire,
        swallow_handshake.clone(),
    ));
    Pumps {
        rmcp_read,
        rmcp_write,
        tasks: vec![inbound, outbound],
        link: NegotiationLink {
            replies,
            swallow_handshake,
        },
    }
}

/// Server -> rmcp.
async fn inbound<R: AsyncRead + Unpin>(
    server_out: R,
    mut to_rmcp: DuplexStream,
    wire: Wire,
    max_line_bytes: usize,
    redactor: Arc<Redactor>,
    own_replies: mpsc::UnboundedSender<Line>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, server_out);
    let mut buf = Vec::new();
    loop {
        // do not keep a huge message's buffer around for the small ones after it
        if buf.capacity() > 1 << 20 {
            buf = Vec::new();
        }
        buf.clear();
        match read_line_capped(&mut reader, &mut buf, max_line_bytes).await {
            Ok(LineRead::Eof) | Err(_) => break,
            Ok(LineRead::TooLong { head, tail }) => {
                let what =
                    format!("a response of over {max_line_bytes} bytes (--max-response-bytes)");
                wire.warn(format!("dropped {what}"));
                if !answer_dropped(&mut to_rmcp, &wire, &head, &tail, &what).await {
                    break;
                }
                continue;
            }
            Ok(LineRead::Line) => {}
        }
        let trimmed = trim_eol(&buf);
        if trimmed.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(trimmed) else {
            wire.warn(format!(
                "dropped a line of {} bytes that is not valid UTF-8",
                trimmed.len()
            ));
            let reason = "a response that is not valid UTF-8";
            if !answer_dropped(&mut to_rmcp, &wire, trimmed, trimmed, reason).await {
                break;
            }
            continue;
        };
        if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
            wire.warn(format!(
                "skipped non-JSON output on stdout: {}",
                redactor.preview(text, 80)
            ));
            // a line that looks like a response but is not JSON would leave its request waiting
            if text.starts_with('{')
                && !answer_dropped(
                    &mut to_rmcp,
                    &wire,
                    trimmed,
                    trimmed,
                    "a response that is not valid JSON",
                )
                .await
            {
                break;
            }
            continue;
        }
        // each level takes two bytes at least, so a short message needs no second scan
        if trimmed.len() > 2 * MAX_DEPTH && nesting_depth(trimmed) > MAX_DEPTH {
            // rmcp cannot parse it (serde_json stops at this depth) and would drop it
            // silently, leaving its request waiting: fail that request now
            let what = format!("a message nested deeper than {MAX_DEPTH} levels");
            wire.warn(format!("dropped {what}"));
            if let Some(id) = response_id(text) {
                let reason = format!("a response nested deeper than {MAX_DEPTH} levels");
                if !answer_with_error(&mut to_rmcp, &wire, &id, &reason).await {
                    break;
                }
            }
            continue;
        }
        let line: Line = if trimmed.len() > 1 << 20 {
            // a large line becomes the shared line without a copy of its bytes
            let len = trimmed.len();
            let mut owned = std::mem::take(&mut buf);
            owned.truncate(len);
            Arc::new(String::from_utf8(owned).expect("checked to be UTF-8 above"))
        } else {
            Arc::new(text.to_string())
        };
        let answered = wire.received(line.clone());
        // the negotiation's own requests are answered to it alone, however late the answer
        if answered.as_ref().is_some_and(|a| is_own_id(&a.id)) {
            let _ = own_replies.send(line);
            continue;
        }
        // rmcp's typed copy of a large tool result is never used (measurement reads the
        // wire), so it gets a stub: its buffer and parse would double the peak memory
        let stub = match answered {
            Some(a) if a.error => None,
            Some(a) if a.method == "tools/call" && line.len() > STUB_OVER => Some(format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[]}}}}"#,
                a.id
            )),
            // rmcp cannot fall back from a discover result it cannot type: it gets an error
            Some(a) if a.method == "server/discover" => discover_stand_in(&a.id, &line, &redactor),
            _ => None,
        };
        let to_send: &str = stub.as_deref().unwrap_or(&line);
        if to_rmcp.write_all(to_send.as_bytes()).await.is_err()
            || to_rmcp.write_all(b"\n").await.is_err()
        {
            break;
        }
    }
    let _ = to_rmcp.shutdown().await;
}

/// Whether a response's id (its JSON text) is one the negotiation gave its own request.
fn is_own_id(id: &str) -> bool {
    id.strip_prefix('"')
        .is_some_and(|rest| rest.starts_with(OWN_ID_PREFIX))
}

/// Whether a line rmcp sent is its handshake request (`initialize` or `server/discover`).
fn is_handshake_request(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Req<'a> {
        #[serde(borrow)]
        method: Option<&'a str>,
        id: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Req>(line)
        .is_ok_and(|r| r.id.is_some() && matches!(r.method, Some("initialize" | "server/discover")))
}

/// rmcp -> server.
async fn outbound<W: AsyncWrite + Unpin>(
    from_rmcp: DuplexStream,
    mut server_in: W,
    wire: Wire,
    swallow_handshake: Arc<AtomicBool>,
) {
    let mut reader = BufReader::new(from_rmcp);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // the negotiation has the server's answer to this one already: rmcp is given it
        if swallow_handshake.load(Ordering::Acquire) && is_handshake_request(trim_eol(&buf)) {
            swallow_handshake.store(false, Ordering::Release);
            continue;
        }
        if let Ok(text) = std::str::from_utf8(trim_eol(&buf)) {
            wire.sent(Arc::new(text.to_string()));
        }
        if server_in.write_all(&buf).await.is_err() || server_in.flush().await.is_err() {
            break;
        }
    }
    let _ = server_in.shutdown().await;
}

enum LineRead {
    Line,
    Eof,
    /// A line over the cap: its first and last bytes (to find the JSON-RPC id).
    TooLong {
        head: Vec<u8>,
        tail: Vec<u8>,
    },
}

/// Read one line into `buf`; a line longer than `max` is consumed and reported, not kept.
async fn read_line_capped<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    const KEEP: usize = 512;
    let mut over: Option<(Vec<u8>, Vec<u8>)> = None;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(match over {
                Some((head, tail)) => LineRead::TooLong { head, tail },
                None if buf.is_empty() => LineRead::Eof,
                None => LineRead::Line,
            });
        }
        let (take, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        match &mut over {
            None if buf.len() + take > max => {
                // the head holds the id: it may be all in this chunk (a whole message read at
                // once, as from an in-process server), with nothing in `buf` yet
                let mut head = buf[..buf.len().min(KEEP)].to_vec();
                let more = KEEP.saturating_sub(head.len()).min(take);
                head.extend_from_slice(&chunk[..more]);
                buf.clear();
                over = Some((head, Vec::new()));
            }
            None => buf.extend_from_slice(&chunk[..take]),
            Some(_) => {}
        }
        if let Some((_, tail)) = &mut over {
            tail.extend_from_slice(&chunk[..take]);
            if tail.len() > KEEP {
                tail.drain(..tail.len() - KEEP);
            }
        }
        reader.consume(take);
        if done {
            return Ok(match over {
                Some((head, tail)) => LineRead::TooLong { head, tail },
                None => LineRead::Line,
            });
        }
    }
}

fn trim_eol(buf: &[u8]) -> &[u8] {
    let mut end = buf.len();
    while end > 0 && (buf[end - 1] == b'\n' || buf[end - 1] == b'\r') {
        end -= 1;
    }
    &buf[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn an_oversized_message_read_in_one_chunk_is_answered_with_an_error() {
        let wire = Wire::new(false);
        let (mut server_side, server_out) = tokio::io::duplex(64 * 1024);
        let (server_in, _server_reads) = tokio::io::duplex(1024);
        let mut p = start(server_out, server_in, wire.clone(), 100, Arc::default());
        p.rmcp_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}\n")
            .await
            .unwrap();
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"tools\":\"{}\"}}}}\n",
            "x".repeat(300)
        );
        // one write, read as one chunk: nothing of the line is buffered before it overflows
        server_side.write_all(big.as_bytes()).await.unwrap();
        drop(server_side);
        let mut got = String::new();
        p.rmcp_read.read_to_string(&mut got).await.unwrap();
        let answer: serde_json::Value = serde_json::from_str(got.trim_end()).unwrap();
        assert_eq!(answer["id"], 4);
        assert_eq!(
            answer["error"]["message"],
            "the server sent a response of over 100 bytes (--max-response-bytes)"
        );
    }

    #[tokio::test]
    async fn forwards_json_drops_junk_and_records_both_ways() {
        let wire = Wire::new(true);
        let (mut server_side, server_out) = tokio::io::duplex(1024);
        let (server_in, mut server_reads) = tokio::io::duplex(1024);
        let mut p = start(server_out, server_in, wire.clone(), 64, Arc::default());
        // the request first: an answer to nothing asked is not kept
        p.rmcp_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n")
            .await
            .unwrap();
        drop(p.rmcp_write);
        let mut sent = String::new();
        server_reads.read_to_string(&mut sent).await.unwrap();
        assert!(sent.contains("\"ping\""));
        server_side
            .write_all(
                b"starting up...\n{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\r\n\xff\xfe\n",
            )
            .await
            .unwrap();
        server_side.write_all(&[b'{'; 100]).await.unwrap();
        server_side.write_all(b"\n").await.unwrap();
        drop(server_side);
        let mut got = String::new();
        p.rmcp_read.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n");

        let w = wire.warnings();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("starting up"));
        assert!(w[1].contains("UTF-8"));
        assert!(w[2].contains("over 64 bytes"), "{w:?}");
        assert!(wire.take_response("ping").is_some());
    }
}
