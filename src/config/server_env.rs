//! The environment a stdio server starts with: this process's whole environment (what MCP
//! clients do), or, to audit a config one does not trust, only the variables the official MCP
//! SDKs pass by default, plus the server's own configured `env`.

use std::ffi::OsString;

/// What the official SDKs' stdio clients pass by default (`DEFAULT_INHERITED_ENV_VARS` in the
/// Python SDK 2.3.0's `mcp/client/stdio.py` and in the TypeScript SDK 1.32.2's
/// `dist/*/client/stdio.js`, `getDefaultEnvironment`): the same six names on POSIX.
#[cfg(not(windows))]
pub const SDK_DEFAULT_VARS: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// On Windows the two SDKs differ (Python adds PATHEXT, TypeScript PROGRAMFILES): both.
#[cfg(windows)]
pub const SDK_DEFAULT_VARS: &[&str] = &[
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
];

/// Which environment a stdio server gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ServerEnv {
    /// This process's whole environment, as clients pass it.
    #[default]
    Inherited,
    /// [`SDK_DEFAULT_VARS`] only (`--clean-env`); `${VAR}` in configs reads only those too.
    SdkDefault,
}

impl ServerEnv {
    /// A short id for machine outputs.
    pub fn id(&self) -> &'static str {
        match self {
            ServerEnv::Inherited => "inherited",
            ServerEnv::SdkDefault => "sdk-default",
        }
    }

    /// In words, for tables and error messages.
    pub fn describe(&self) -> String {
        match self {
            ServerEnv::Inherited => "the whole environment (inherited)".into(),
            ServerEnv::SdkDefault => format!(
                "only {} and its own env (--clean-env)",
                SDK_DEFAULT_VARS.join(", ")
            ),
        }
    }

    /// A failed server's error, with the environment it got when that was the SDKs' default
    /// (a token it lacks is a likely cause); other errors as they are.
    pub fn explain(&self, spec: &super::ServerSpec, error: String) -> String {
        match spec.transport {
            super::TransportSpec::Stdio { .. } if *self == ServerEnv::SdkDefault => {
                format!("{error} (environment: {})", self.describe())
            }
            _ => error,
        }
    }

    /// Whether a `${VAR}` in a config may read the variable `name`.
    pub fn passes(&self, name: &str) -> bool {
        *self == ServerEnv::Inherited || SDK_DEFAULT_VARS.contains(&name)
    }
}

/// The SDK-default variables that are set here, as the SDKs take them: a value that starts
/// with `()` (an exported shell function) is left out.
pub fn sdk_default_env() -> Vec<(&'static str, OsString)> {
    sdk_default_of(|name| std::env::var_os(name))
}

/// [`sdk_default_env`] over any environment.
fn sdk_default_of(var: impl Fn(&str) -> Option<OsString>) -> Vec<(&'static str, OsString)> {
    SDK_DEFAULT_VARS
        .iter()
        .filter_map(|name| Some((*name, var(name)?)))
        .filter(|(_, v)| !v.as_encoded_bytes().starts_with(b"()"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clean_environment_passes_only_the_sdk_names() {
        let clean = ServerEnv::SdkDefault;
        assert!(clean.passes("PATH") && clean.passes("HOME"));
        assert!(!clean.passes("GITHUB_TOKEN") && !clean.passes("AWS_SECRET_ACCESS_KEY"));
        assert!(ServerEnv::Inherited.passes("GITHUB_TOKEN"));
    }

    /// What the SDKs take: only their names, unset ones left out, a shell function dropped.
    #[test]
    fn the_sdk_default_takes_set_names_and_drops_shell_functions() {
        let env = |name: &str| match name {
            "PATH" => Some(OsString::from("/usr/bin")),
            "SHELL" => Some(OsString::from("() { echo pwned; }")),
            "GITHUB_TOKEN" => Some(OsString::from("ghp_x")),
            _ => None,
        };
        assert_eq!(sdk_default_of(env), [("PATH", OsString::from("/usr/bin"))]);
    }
}
