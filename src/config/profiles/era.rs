//! The protocol era a client speaks, as the lab measured it: what it opens a server with, the
//! version it asks for, and whether it falls back to the `initialize` handshake when a server
//! refuses `server/discover`.

use serde::{Deserialize, Serialize};

use super::Sourced;

/// How a client opens a session with a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct EraRule {
    /// Its first request: `initialize` (the handshake era) or `server/discover` (2026-07-28).
    pub opens_with: String,
    /// The protocol version that request asks for.
    pub version: String,
    /// Opening with `server/discover`: it goes on with `initialize` when a server refuses it
    /// (-32022 from a server of the handshake era, -32601 from one that does not know the
    /// method). Always true of a client that opens with `initialize`.
    pub falls_back: bool,
    #[serde(flatten)]
    pub sourced: Sourced,
}

impl EraRule {
    /// The client speaks the handshake era: a server lists it what it lists an `initialize`
    /// session.
    pub fn handshake(&self) -> bool {
        self.opens_with == "initialize"
    }
}
