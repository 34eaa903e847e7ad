//! The wire: upstream sessions with exact byte capture, connecting from a spec (and signing in with OAuth), TLS, recording a run and serving it back, the embedded demo server.

pub mod auth;
pub mod capture;
pub mod connect;
pub mod demo;
pub mod tls;
pub mod upstream;
