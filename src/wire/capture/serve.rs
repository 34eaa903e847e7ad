//! `serve-capture`: a recording served as an MCP server over line-delimited JSON-RPC, on any
//! byte streams (stdin/stdout in the binary, in-memory pipes in tests).

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use super::{RecordedReply, Recording};

/// Answer every request read from `input` until it ends. Notifications and responses from the
/// client are ignored; a line that is not a JSON-RPC request gets an error with id `null`.
pub async fn serve<R, W>(recording: &mut Recording, input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(input);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).await? == 0 {
            break;
        }
        let Some(line) = respond(recording, &buf) else {
            continue;
        };
        output.write_all(line.as_bytes()).await?;
        output.write_all(b"\n").await?;
        output.flush().await?;
    }
    output.shutdown().await
}

/// The response line to one input line, if it needs one.
fn respond(recording: &mut Recording, bytes: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Request<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<String>,
        params: Option<Value>,
    }
    let text = std::str::from_utf8(bytes).unwrap_or("\u{fffd}").trim();
    if text.is_empty() {
        return None;
    }
    match serde_json::from_str::<Request>(text) {
        Ok(Request {
            id: Some(id),
            method: Some(method),
            params,
        }) => Some(recording.answer(&method, params.as_ref()).to_line(id.get())),
        Ok(_) => None,
        Err(e) => {
            let reply = if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
                RecordedReply::error(-32600, "invalid request: not a JSON-RPC message object")
            } else {
                RecordedReply::error(-32700, &format!("parse error: {e}"))
            };
            Some(reply.to_line("null"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::upstream::Direction::{Received, Sent};
    use tokio::io::AsyncReadExt;

    fn recording() -> Recording {
        let lines = [
            (
                Sent,
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
            ),
            (
                Received,
                r#"{"id":0,"jsonrpc":"2.0","result":{"protocolVersion":"2025-06-18", "z":1}}"#,
            ),
            (
                Received,
                r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#,
            ),
            (
                Sent,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            ),
            (
                Received,
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"p2"}}"#,
            ),
            (
                Sent,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"p2"}}"#,
            ),
            (
                Received,
                r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"}]}}"#,
            ),
            (
                Sent,
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a","arguments":{"x":1,"y":[true]}}}"#,
            ),
            (
                Received,
                r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"first"}]}}"#,
            ),
            (
                Sent,
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a","arguments":{"x":1,"y":[true]}}}"#,
            ),
            (
                Received,
                r#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"second"}]}}"#,
            ),
            (
                Sent,
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"b"}}"#,
            ),
            (
                Received,
                r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"boom","data":{"k":1}}}"#,
            ),
            (
                Sent,
                r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"lost"}}"#,
            ),
        ];
        Recording::from_events("rec", lines)
    }

    async fn exchange(recording: &mut Recording, input: &str) -> Vec<String> {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let (server_read, server_write) = tokio::io::split(server);
        let (mut client_read, mut client_write) = tokio::io::split(&mut client);
        client_write.write_all(input.as_bytes()).await.unwrap();
        client_write.shutdown().await.unwrap();
        serve(recording, server_read, server_write).await.unwrap();
        let mut out = String::new();
        client_read.read_to_string(&mut out).await.unwrap();
        out.lines().map(String::from).collect()
    }

    #[tokio::test]
    async fn answers_with_the_recorded_bytes_by_cursor_and_arguments() {
        let mut rec = recording();
        let input = [
            r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"p2"}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"y":[true],"x":1},"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"a","arguments":{"x":1,"y":[true]}}}"#,
            r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"a","arguments":{"x":1,"y":[true]}}}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"b","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":13,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":14,"method":"prompts/list","params":{}}"#,
        ]
        .join("\n");
        let out = exchange(&mut rec, &input).await;
        assert_eq!(
            out,
            [
                r#"{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"2025-06-18", "z":1}}"#,
                r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"b"}]}}"#,
                r#"{"jsonrpc":"2.0","id":8,"result":{"tools":[{"name":"a"}],"nextCursor":"p2"}}"#,
                r#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"first"}]}}"#,
                r#"{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"second"}]}}"#,
                r#"{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"second"}]}}"#,
                r#"{"jsonrpc":"2.0","id":12,"error":{"code":-32000,"message":"boom","data":{"k":1}}}"#,
                r#"{"jsonrpc":"2.0","id":13,"result":{}}"#,
                r#"{"jsonrpc":"2.0","id":14,"result":{"prompts":[]}}"#,
            ]
        );
    }

    #[tokio::test]
    async fn says_what_was_not_recorded() {
        let mut rec = recording();
        let input = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":2}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lost"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"zz"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}"#,
            "not json",
            "[1,2]",
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        ]
        .join("\n");
        let out = exchange(&mut rec, &input).await;
        let errors: Vec<serde_json::Value> = out
            .iter()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .collect();
        assert_eq!(errors.len(), 6, "{out:?}");
        assert_eq!(errors[0]["error"]["code"], -32602);
        assert_eq!(
            errors[0]["error"]["message"],
            r#"no recorded result for tool `a` with arguments {"x":2}"#
        );
        assert_eq!(
            errors[1]["error"]["message"], "no recorded result for tool `lost` with arguments {}",
            "a request whose response never came is not recorded"
        );
        assert_eq!(errors[2]["error"]["code"], -32602);
        assert!(errors[2]["error"]["message"]
            .as_str()
            .unwrap()
            .contains(r#"{"cursor":"zz"}"#));
        assert_eq!(errors[3]["error"]["code"], -32601);
        assert!(errors[3]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`sampling/createMessage`"));
        assert_eq!(errors[4]["error"]["code"], -32700);
        assert_eq!(errors[4]["id"], serde_json::Value::Null);
        assert_eq!(errors[5]["error"]["code"], -32600);
    }
}
