//! The script's rules, the same for every API: the probe's result already in the conversation →
//! "done"; the probe's tool offered → call it; a discovery tool offered → drive it once; else
//! "done". Each API's file finds the tools and results in its own request shape and asks here
//! which offered name is the probe's tool.

use serde_json::{json, Map, Value};

use super::{Script, ScriptReply};

/// The id of the probe's (first) call (also of Codex's `exec` running it, and Qwen's bridge
/// call); a script of several calls gives the later ones `call_probe_target_2`, `_3`, ...
pub(super) const TARGET_ID: &str = "call_probe_target";
/// The id of the discovery call.
pub(super) const SEARCH_ID: &str = "call_probe_search";
/// The text answered when there is nothing (more) to call.
pub(super) const DONE: &str = "done";

/// How a call is shaped on the wire (only the Responses API has the last two).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A function call with JSON arguments.
    Function,
    /// A custom tool call whose input is a text (Codex's `exec`).
    Custom,
    /// A client-executed hosted `tool_search` call.
    ToolSearch,
}

/// A call the model makes.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Call {
    pub id: String,
    pub name: String,
    pub namespace: Option<String>,
    /// JSON arguments; for [`Kind::Custom`] a string, the tool's input text.
    pub arguments: Value,
    pub kind: Kind,
}

/// What the model answers one request.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Turn {
    Call(Call),
    /// Plain text; `result_seen` when the probe's result was in the request.
    Done {
        result_seen: bool,
    },
}

impl Turn {
    /// How this answer is recorded.
    pub(super) fn reply(&self) -> ScriptReply {
        match self {
            Turn::Call(c) if is_target(&c.id) => ScriptReply::CallTool {
                call_id: c.id.to_string(),
                name: c.name.clone(),
                namespace: c.namespace.clone(),
            },
            Turn::Call(c) => ScriptReply::Discover {
                tool: c.name.clone(),
            },
            Turn::Done { .. } => ScriptReply::Text,
        }
    }
}

/// A tool as offered: its name and, in a Codex namespace, the namespace's name.
#[derive(Debug, Clone, Copy)]
pub(super) struct Offer<'a> {
    pub name: &'a str,
    pub namespace: Option<&'a str>,
}

/// The id of the probe's call number `k` (0: the first, [`TARGET_ID`]).
pub fn target_id(k: usize) -> String {
    match k {
        0 => TARGET_ID.to_string(),
        k => format!("{TARGET_ID}_{}", k + 1),
    }
}

/// Whether `id` is one of the probe's calls ([`target_id`] of some `k`).
pub(super) fn is_target(id: &str) -> bool {
    match id.strip_prefix(TARGET_ID) {
        Some("") => true,
        Some(rest) => rest
            .strip_prefix('_')
            .is_some_and(|n| n.parse::<usize>().is_ok_and(|n| n >= 2)),
        None => false,
    }
}

impl Script {
    /// How many calls of the tool the script makes.
    pub(super) fn calls(&self) -> usize {
        1 + self.more.len()
    }

    /// The arguments of call `k`.
    fn arguments_of(&self, k: usize) -> &Value {
        match k {
            0 => &self.arguments,
            k => &self.more[k - 1],
        }
    }

    /// The call to make next, one after another: the first whose result `answered` (given its
    /// id) does not find in the request; `None` once every call has its result.
    pub(super) fn next_call(&self, answered: impl Fn(&str) -> bool) -> Option<usize> {
        (0..self.calls()).find(|k| !answered(&target_id(*k)))
    }

    /// How well `offer` names the probe's tool: `None` when it does not. A name is the tool
    /// when it equals it or ends in `__TOOL`, `_TOOL`, `.TOOL` or `-TOOL` (Copilot CLI's
    /// `demo-TOOL`); one that also names the server (`mcp__demo__TOOL`, `demo_TOOL`, namespace
    /// `mcp__demo`) ranks above a bare name
    /// (a built-in `read_file` loses to `mcp_demo_read_file`), and an exact name above a suffix.
    pub(super) fn rank(&self, offer: Offer<'_>) -> Option<u8> {
        let tool = self.tool.as_str();
        let (exact, prefix) = if offer.name == tool {
            (true, "")
        } else {
            let prefix = offer.name.strip_suffix(tool)?;
            let cut = prefix
                .strip_suffix("__")
                .or_else(|| prefix.strip_suffix('_'))
                .or_else(|| prefix.strip_suffix('.'))
                .or_else(|| prefix.strip_suffix('-'))?;
            (false, cut)
        };
        let names_server =
            self.names_server(prefix) || offer.namespace.is_some_and(|n| self.names_server(n));
        Some(u8::from(names_server) * 2 + u8::from(exact))
    }

    /// Whether `text` ends with the server's name after a separator (or is it).
    fn names_server(&self, text: &str) -> bool {
        !self.server.is_empty()
            && text.strip_suffix(self.server.as_str()).is_some_and(|rest| {
                rest.is_empty() || rest.ends_with('_') || rest.ends_with('.') || rest.ends_with('-')
            })
    }

    /// The offer that names the probe's tool best (the first of equals).
    pub(super) fn best<'a>(
        &self,
        offers: impl IntoIterator<Item = Offer<'a>>,
    ) -> Option<Offer<'a>> {
        let mut best: Option<(u8, Offer<'a>)> = None;
        for offer in offers {
            if let Some(rank) = self.rank(offer) {
                if best.is_none_or(|(b, _)| rank > b) {
                    best = Some((rank, offer));
                }
            }
        }
        best.map(|(_, o)| o)
    }

    /// The probe's call number `k` of `offer`.
    pub(super) fn call(&self, offer: Offer<'_>, k: usize) -> Turn {
        Turn::Call(Call {
            id: target_id(k),
            name: offer.name.to_string(),
            namespace: offer.namespace.map(String::from),
            arguments: self.arguments_of(k).clone(),
            kind: Kind::Function,
        })
    }

    /// A discovery call of `tool` with `arguments`.
    pub(super) fn discover(&self, tool: &str, arguments: Value, kind: Kind) -> Turn {
        Turn::Call(Call {
            id: SEARCH_ID.to_string(),
            name: tool.to_string(),
            namespace: None,
            arguments,
            kind,
        })
    }

    /// The name Claude Code and Qwen Code give the tool: `mcp__SERVER__TOOL`.
    pub(super) fn mcp_name(&self) -> String {
        format!("mcp__{}__{}", self.server, self.tool)
    }

    /// The arguments of a `select:` tool search (Claude Code's ToolSearch, Qwen's tool_search).
    pub(super) fn select_query(&self) -> Value {
        json!({"query": format!("select:{}", self.mcp_name()), "max_results": 5})
    }

    /// Codex code mode's `exec` script for call `k`: call the tool and print what it returned.
    pub(super) fn exec_code(&self, k: usize) -> String {
        format!(
            "const r = await tools.{}({});\ntext(typeof r === 'string' ? r : JSON.stringify(r));\n",
            self.mcp_name(),
            self.arguments_of(k)
        )
    }

    /// The arguments of Qwen Code's bridge for call `k` of the tool found as `name`.
    pub(super) fn bridged(&self, name: String, k: usize) -> Value {
        json!({"name": name, "arguments": self.arguments_of(k)})
    }
}

/// Every JSON object in `value`, depth first.
pub(super) fn objects(value: &Value) -> Vec<&Map<String, Value>> {
    let mut out = Vec::new();
    let mut todo = vec![value];
    while let Some(v) = todo.pop() {
        match v {
            Value::Object(m) => {
                out.push(m);
                todo.extend(m.values().rev());
            }
            Value::Array(a) => todo.extend(a.iter().rev()),
            _ => {}
        }
    }
    out
}

/// The string at `key` of `value`, or "".
pub(super) fn str_at<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The array at `key` of `value`, or an empty slice.
pub(super) fn list_at<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(tool: &str) -> Script {
        Script {
            tool: tool.into(),
            server: "demo".into(),
            arguments: json!({}),
            more: Vec::new(),
        }
    }

    fn offer(name: &str) -> Offer<'_> {
        Offer {
            name,
            namespace: None,
        }
    }

    #[test]
    fn names_of_the_tool_rank_by_server_then_exactness() {
        let s = script("read_file");
        assert_eq!(s.rank(offer("read_file")), Some(1));
        assert_eq!(s.rank(offer("mcp_demo_read_file")), Some(2));
        assert_eq!(s.rank(offer("mcp__demo__read_file")), Some(2));
        assert_eq!(s.rank(offer("demo.read_file")), Some(2));
        assert_eq!(s.rank(offer("other_read_file")), Some(0));
        assert_eq!(s.rank(offer("xread_file")), None);
        assert_eq!(s.rank(offer("read_files")), None);
        assert_eq!(s.rank(offer("nodemo_read_file")), Some(0));
        // Copilot CLI 1.0.102 names MCP tools SERVER-TOOL
        assert_eq!(s.rank(offer("demo-read_file")), Some(2));
        assert_eq!(s.rank(offer("x-read_file")), Some(0));
        let ns = Offer {
            name: "read_file",
            namespace: Some("mcp__demo"),
        };
        assert_eq!(s.rank(ns), Some(3));
        let names = ["read_file", "mcp_demo_read_file", "list"];
        let best = s.best(names.iter().map(|n| offer(n))).map(|o| o.name);
        assert_eq!(best, Some("mcp_demo_read_file"));
        assert!(s.best([offer("list"), offer("read")]).is_none());
    }

    #[test]
    fn the_calls_ids_are_numbered_from_the_second() {
        assert_eq!(target_id(0), "call_probe_target");
        assert_eq!(target_id(1), "call_probe_target_2");
        for id in [
            "call_probe_target",
            "call_probe_target_2",
            "call_probe_target_12",
        ] {
            assert!(is_target(id), "{id}");
        }
        for id in [
            "call_probe_target_1",
            "call_probe_target_",
            "call_probe_targetx",
            "call_probe_search",
            "x",
        ] {
            assert!(!is_target(id), "{id}");
        }
        let mut s = script("t");
        s.more = vec![json!({"chars": 2})];
        assert_eq!(s.calls(), 2);
        assert_eq!(s.next_call(|_| false), Some(0));
        assert_eq!(s.next_call(|id| id == TARGET_ID), Some(1));
        assert_eq!(s.next_call(|_| true), None);
    }

    #[test]
    fn the_exec_script_calls_the_tool_with_the_arguments() {
        let mut s = script("get_forecast");
        s.arguments = json!({"city": "Paris"});
        assert_eq!(
            s.exec_code(0),
            "const r = await tools.mcp__demo__get_forecast({\"city\":\"Paris\"});\ntext(typeof r === 'string' ? r : JSON.stringify(r));\n"
        );
        assert_eq!(
            s.select_query(),
            json!({"query": "select:mcp__demo__get_forecast", "max_results": 5})
        );
    }
}
