//! What the proxy's clones share: the upstream (`upstream.rs`), what lives per downstream client
//! (`clients.rs`), what the tool list shows (`tools.rs`), and the proxy's own: its options, the
//! server info its clients get, its spill store, and what the operator should hear of.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::Value;

use super::clients::Clients;
use super::options::ProxyOptions;
use super::tools::ToolView;
use super::upstream::Upstream;
use super::warnings::Warnings;

/// Everything the proxy's clones share, each part with its owner's methods beside it.
pub(super) struct Shared {
    pub(super) upstream: Arc<Upstream>,
    pub(super) clients: Arc<Clients>,
    pub(super) tools: ToolView,
    pub(super) opts: ProxyOptions,
    /// What the operator should hear of, each message once (the binary prints them).
    pub(super) warnings: Warnings,
    pub(super) info: Value,
    /// The engine's spill store confined to this upstream's folder: what `mcp_budget_read`
    /// and the spill resources serve (a shared store holds other servers' spills too).
    pub(super) spills: crate::budget::SpillStore,
    /// A call log line failed to be written (said once).
    log_broken: AtomicBool,
}

impl Shared {
    /// The state at start: the upstream's session, its clients (none yet), the tools shown and
    /// the server info the clients get.
    pub(super) fn new(
        upstream: Arc<Upstream>,
        clients: Arc<Clients>,
        tools: ToolView,
        opts: ProxyOptions,
        info: Value,
    ) -> Shared {
        Shared {
            upstream,
            clients,
            tools,
            warnings: Warnings::default(),
            info,
            spills: opts.engine.store().confined_to(&opts.server),
            log_broken: AtomicBool::new(false),
            opts,
        }
    }

    pub(super) fn warn(&self, message: String) {
        self.warnings.warn(message);
    }

    /// Append a call log line; a line that cannot be written is said once (the calls go on,
    /// and their results are not held up by a log).
    pub(super) fn append_log(
        &self,
        log: &crate::ground::calllog::CallLog,
        record: &crate::ground::calllog::CallRecord,
    ) {
        if let Err(e) = log.append(record) {
            if !self.log_broken.swap(true, Ordering::SeqCst) {
                self.warn(format!(
                    "the call log {} cannot be written ({e}); calls go on, and lines that fail are not said again",
                    log.path().display()
                ));
            }
        }
    }
}
