//! The long-running verbs: `audit` (every server at once), `proxy` (the engine live), `wrap` (client configs routed through the proxy).

pub mod audit;
pub mod proxy;
pub mod wrap;
