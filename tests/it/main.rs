//! The one integration-test binary (rmcp generics cost a minute of codegen per test binary).

mod accounting;
mod architecture;
mod bad_input;
mod capture;
mod cli_trust;
mod client_configs;
mod client_views;
mod corpus;
mod corpus_expected;
mod demo_audit;
mod engine;
mod fail_fast;
mod gate;
mod github_projections;
mod html_browser;
mod proxy;
mod proxy_hostile;
mod real_servers;
mod renderers;
mod schema_lints;
mod secrets;
mod support;
mod survey;
mod tokens_exact;
mod transports;
mod trust;
