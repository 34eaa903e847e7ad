//! Where servers come from: probe files (TOML), the MCP client configs users already have
//! (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, Codex), discovery of
//! those files in their standard places, `${VAR}` expansion and secret redaction.

mod clients;
mod discovery;
mod error;
mod expand;
mod jsonc;
mod launch_name;
mod names;
mod probe_file;
pub mod profiles;
mod redact;
mod secrets;
mod server_env;
mod sources;
mod spec;
mod trust;
mod urls;

pub use clients::{load_client_config, ClientKind};
pub use discovery::{discover, standard_places, Place};
pub use error::{ConfigError, EntryError};
pub use expand::expand_vars;
pub use jsonc::{dialect as jsonc_dialect, parse_jsonc};
pub use launch_name::launch_name;
pub use names::{is_secret_name, variable_part};
pub use probe_file::{load_config_file, parse_config_text, ConfigFile, Defaults, ProbeFile};
pub use redact::{redact_url, Redactor, Secret, REDACTED};
pub use secrets::{env_secrets, inherited_secrets, redactor_for, spec_secrets};
pub use server_env::{sdk_default_env, ServerEnv, SDK_DEFAULT_VARS};
pub use sources::{load_sources, Sources};
pub use spec::{Origin, Probe, ServerSet, ServerSpec, TransportSpec};
pub use trust::{assess, ClaudeRecords, Trust};
pub use urls::percent_decoded;
