//! The protocol era a client speaks, read from what it sent the server in a lab run: the first
//! request (`initialize`, the handshake era, or `server/discover`, the 2026-07-28 era), the
//! version it asked for, and, when the server refused `server/discover`, whether it fell back
//! to `initialize` (a client that does not cannot use a server of the handshake era).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a 2026-07-28 request carries its version.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// What a client spoke to one server in one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
pub struct ClientEra {
    /// The first request it sent: `initialize` or `server/discover`.
    pub opened_with: String,
    /// The protocol version that first request asked for.
    pub asked: Option<String>,
    /// The error code the server answered `server/discover` with (`null`: it was not refused,
    /// or not sent).
    pub discover_refused: Option<i64>,
    /// After a refused `server/discover`, whether the client sent `initialize` (`null`: no
    /// refusal to fall back from).
    pub fell_back: Option<bool>,
    /// The version the session settled on: the `initialize` result's, else the version the
    /// client's later requests carry.
    pub settled: Option<String>,
}

impl ClientEra {
    /// `2026-07-28 (server/discover)`, `2025-06-18 (initialize)`, with the fallback when
    /// there was one: `2026-07-28 (server/discover), refused -32022: fell back to 2025-06-18`.
    pub fn describe(&self) -> String {
        let asked = self.asked.as_deref().unwrap_or("no version");
        let mut s = format!("{asked} ({})", self.opened_with);
        if let Some(code) = self.discover_refused {
            s += &match self.fell_back {
                Some(true) => format!(
                    ", refused {code}: fell back to {}",
                    self.settled.as_deref().unwrap_or("initialize")
                ),
                _ => format!(", refused {code}: did not fall back to initialize"),
            };
        }
        s
    }
}

/// The era of a run from the client's requests (`sent`, parsed) and the server's lines
/// (`received`); `None` when the client sent no request.
pub fn read(sent: &[Value], received: &[String]) -> Option<ClientEra> {
    let requests: Vec<&Value> = sent
        .iter()
        .filter(|m| m["method"].is_string() && m.get("id").is_some())
        .collect();
    let first = requests.first()?;
    let opened_with = first["method"].as_str().unwrap_or("").to_string();
    let version_of = |m: &Value| -> Option<String> {
        m["params"]["protocolVersion"]
            .as_str()
            .or_else(|| m["params"]["_meta"][META_VERSION].as_str())
            .map(String::from)
    };
    let answer = |m: &Value| -> Option<Value> {
        received
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|a| a.get("id") == m.get("id") && a.get("method").is_none())
    };
    let discover = requests
        .iter()
        .position(|m| m["method"] == "server/discover");
    let discover_refused = discover
        .and_then(|i| answer(requests[i]))
        .and_then(|a| a["error"]["code"].as_i64());
    let initialize = requests.iter().position(|m| m["method"] == "initialize");
    let fell_back = discover_refused.map(|_| match (discover, initialize) {
        (Some(d), Some(i)) => i > d,
        _ => false,
    });
    let settled = match initialize {
        Some(i) => answer(requests[i])
            .and_then(|a| a["result"]["protocolVersion"].as_str().map(String::from)),
        None if discover.is_some() && discover_refused.is_none() => requests
            .iter()
            .skip(1)
            .find_map(|m| version_of(m))
            .or_else(|| version_of(first)),
        None => None,
    };
    Some(ClientEra {
        opened_with,
        asked: version_of(first),
        discover_refused,
        fell_back,
        settled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines(v: &[Value]) -> Vec<String> {
        v.iter().map(Value::to_string).collect()
    }

    #[test]
    fn a_handshake_client_opens_with_initialize_and_settles_on_the_servers_answer() {
        let sent = [
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        ];
        let received = lines(&[
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-03-26"}}),
        ]);
        let era = read(&sent, &received).unwrap();
        assert_eq!(era.opened_with, "initialize");
        assert_eq!(era.asked.as_deref(), Some("2025-06-18"));
        assert_eq!(era.settled.as_deref(), Some("2025-03-26"));
        assert_eq!((era.discover_refused, era.fell_back), (None, None));
        assert_eq!(era.describe(), "2025-06-18 (initialize)");
    }

    #[test]
    fn a_discovering_client_refused_falls_back_or_does_not() {
        let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {META_VERSION: "2026-07-28"}}});
        let refused =
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "unsupported"}});
        let init = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
        let inited =
            json!({"jsonrpc": "2.0", "id": 2, "result": {"protocolVersion": "2025-11-25"}});
        let era = read(
            &[discover.clone(), init.clone()],
            &lines(&[refused.clone(), inited]),
        )
        .unwrap();
        assert_eq!(era.opened_with, "server/discover");
        assert_eq!(era.asked.as_deref(), Some("2026-07-28"));
        assert_eq!(era.discover_refused, Some(-32022));
        assert_eq!(era.fell_back, Some(true));
        assert_eq!(
            era.describe(),
            "2026-07-28 (server/discover), refused -32022: fell back to 2025-11-25"
        );
        let stuck = read(std::slice::from_ref(&discover), &lines(&[refused])).unwrap();
        assert_eq!(stuck.fell_back, Some(false));
        assert_eq!(stuck.settled, None);
        assert!(stuck
            .describe()
            .ends_with("did not fall back to initialize"));
    }

    #[test]
    fn a_discover_answered_settles_on_the_version_the_next_requests_carry() {
        let sent = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {META_VERSION: "2026-07-28"}}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {META_VERSION: "2026-07-28"}}}),
        ];
        let received = lines(&[
            json!({"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": ["2026-07-28"]}}),
        ]);
        let era = read(&sent, &received).unwrap();
        assert_eq!(era.discover_refused, None);
        assert_eq!(era.settled.as_deref(), Some("2026-07-28"));
        // a server's own request with the same id is not the answer
        assert!(read(&[], &received).is_none());
    }
}
