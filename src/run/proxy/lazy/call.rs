//! The lazy tools answered: a find returns definitions from the catalog, a call is checked
//! against the tool's schema and forwarded, and the tools found are exposed for a while when
//! `--lazy-expose` asks.

use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value};

use super::{bad_arguments_text, CALL_TOOL, DEFAULT_FIND_LIMIT, FIND_TOOL, MAX_FIND_LIMIT};
use crate::measure::schema_errors;
use crate::run::proxy::notify::tell_tools_changed;
use crate::run::proxy::reply::text_json;
use crate::run::proxy::server::Proxy;
use crate::run::proxy::state::Shared;

impl Proxy {
    /// A call of one of the lazy tools; `None` when `name` is not one of them (or the proxy is
    /// not lazy).
    pub(in crate::run::proxy) async fn lazy_call(
        &self,
        name: &str,
        args: &Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResult, ErrorData>> {
        if !self.shared.opts.lazy_tools {
            return None;
        }
        match name {
            FIND_TOOL => Some(self.own(FIND_TOOL, self.find(args)).await),
            CALL_TOOL => Some(self.call(args, context.clone()).await),
            _ => None,
        }
    }

    /// A find's result (before the engine): the definitions that match the query (its first
    /// [`crate::run::proxy::MAX_ECHO_CHARS`] characters), or why not.
    fn find(&self, args: &Map<String, Value>) -> Value {
        let Some(query) = args.get("query").and_then(Value::as_str) else {
            return error_json(&format!(
                "{FIND_TOOL} needs `query`: what you want to do, in plain words"
            ));
        };
        let limit = match args.get("limit") {
            None | Some(Value::Null) => DEFAULT_FIND_LIMIT,
            Some(v) => match v.as_u64() {
                Some(n @ 1..) => (n as usize).min(MAX_FIND_LIMIT),
                _ => {
                    return error_json(&format!(
                        "{FIND_TOOL}: `limit` must be a whole number from 1 to {MAX_FIND_LIMIT}"
                    ))
                }
            },
        };
        let (text, found) = self.shared.tools.catalog().find_text(query, limit);
        expose(&self.shared, &found);
        text_json(&text, false)
    }

    /// A call through `mcp_budget_call_tool`: forwarded when the tool exists and the arguments
    /// fit its schema, else an error (through the engine: it carries definitions).
    async fn call(
        &self,
        args: &Map<String, Value>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        match self.checked_call(args) {
            Ok((name, arguments)) => {
                expose(&self.shared, std::slice::from_ref(&name));
                self.forward(&name, arguments, context, Some(CALL_TOOL))
                    .await
            }
            Err(error) => self.own(CALL_TOOL, error).await,
        }
    }

    /// The tool and arguments of a call that may go upstream, or the error result it gets.
    fn checked_call(
        &self,
        args: &Map<String, Value>,
    ) -> Result<(String, Map<String, Value>), Value> {
        let Some(name) = args.get("name").and_then(Value::as_str) else {
            return Err(error_json(&format!(
                "{CALL_TOOL} needs `name`: a tool's name, as {FIND_TOOL} returned it"
            )));
        };
        let arguments = match args.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => {
                return Err(error_json(&format!(
                    "{CALL_TOOL}: `arguments` must be an object of the tool's arguments"
                )))
            }
        };
        let catalog = self.shared.tools.catalog();
        let Some(tool) = catalog.get(name) else {
            return Err(error_json(&catalog.unknown_text(name)));
        };
        let errors = schema_errors(tool.get("inputSchema"), &Value::Object(arguments.clone()));
        if !errors.is_empty() {
            return Err(error_json(&bad_arguments_text(tool, &errors)));
        }
        Ok((name.to_string(), arguments))
    }
}

/// A tool error with this text (the model reads it).
fn error_json(text: &str) -> Value {
    text_json(text, true)
}

/// Add tools to the client's list (`--lazy-expose`), or renew them; the clients are told when
/// the list changed.
fn expose(shared: &Shared, names: &[String]) {
    if shared.tools.expose(names, &shared.opts) {
        tell_tools_changed(shared);
    }
}
