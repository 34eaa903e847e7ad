//! The lab (`mcp-budget lab`): real coding clients run headless against fake model endpoints on
//! 127.0.0.1, and every request they send their model is recorded. `model/` is the endpoint.

pub mod model;
