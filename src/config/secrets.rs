//! Which values are secrets: environment variables whose names look secret (from a server's
//! config and from the environment every stdio server inherits), every configured header value,
//! URL passwords and secret-looking query values, the values of secret flags, and probe
//! arguments that came from `${VAR}`. Everything else (`LOG_LEVEL=warn`) is left alone.

use serde_json::Value;

use super::names::{is_header_flag, is_secret_name};
use super::urls::{url_secret_spans, userinfo_login};
use super::{Redactor, Secret, ServerSpec, TransportSpec};

/// The secrets among environment variables: values of secret-looking names, and passwords and
/// secret query values of URLs in any value (`DATABASE_URL=postgres://u:PASSWORD@h/db`).
pub fn env_secrets<I, K, V>(vars: I) -> Vec<Secret>
where
    I: IntoIterator<Item = (K, V)>,
    K: AsRef<str>,
    V: AsRef<str>,
{
    let mut out = Vec::new();
    for (name, value) in vars {
        let (name, value) = (name.as_ref(), value.as_ref());
        if is_secret_name(name) {
            out.push(Secret::new(name, value));
        }
        url_secrets(name, value, &mut out);
    }
    out
}

/// The secrets of this process's environment, which every stdio server inherits.
pub fn inherited_secrets() -> Vec<Secret> {
    env_secrets(
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
    )
}

/// Every secret a server's spec carries: its secret-looking env values, all header values, URL
/// credentials, secret flag values, and probe arguments taken from `${VAR}`.
pub fn spec_secrets(spec: &ServerSpec) -> Vec<Secret> {
    let mut out = Vec::new();
    match &spec.transport {
        TransportSpec::Stdio { env, args, .. } => {
            out.extend(env_secrets(env));
            arg_secrets(args, &mut out);
        }
        TransportSpec::Http { url, headers } | TransportSpec::Sse { url, headers } => {
            url_secrets("url", url, &mut out);
            out.extend(basic_auth_secret(url));
            for (k, v) in headers {
                out.push(Secret::new(format!("header {k}"), v));
                // `Bearer TOKEN`: the token alone too (a server may echo it without its scheme)
                if let Some((_, credential)) = v.split_once(' ').filter(|(s, c)| {
                    ["bearer", "basic", "token", "dpop"].contains(&s.to_ascii_lowercase().as_str())
                        && c.trim().len() >= 8
                }) {
                    out.push(Secret::new(format!("header {k}"), credential.trim()));
                }
            }
        }
        TransportSpec::Builtin { .. } | TransportSpec::Capture { .. } => {}
    }
    for probe in &spec.probes {
        let shown = Value::Object(probe.shown_arguments.clone());
        let actual = Value::Object(probe.arguments.clone());
        expanded_values(&shown, &actual, &mut out);
    }
    out
}

/// The `Authorization: Basic` credential an HTTP client makes of a URL's `user:password@`:
/// `base64(user:password)`, as a server that echoes its request headers shows it.
fn basic_auth_secret(url: &str) -> Option<Secret> {
    use base64::Engine;
    let (user, password) = userinfo_login(url)?;
    let login = format!("{user}:{}", password.unwrap_or_default());
    let encoded = base64::engine::general_purpose::STANDARD.encode(login);
    Some(Secret::new("url basic auth", encoded))
}

/// A redactor of the spec's secrets and of the inherited environment's.
pub fn redactor_for(spec: &ServerSpec) -> Redactor {
    let mut r = Redactor::of(spec_secrets(spec));
    r.add_secrets(inherited_secrets());
    r
}

/// `--api-key=VALUE`, `--token VALUE` and credentials of URLs among command-line arguments.
fn arg_secrets(args: &[String], out: &mut Vec<Secret>) {
    let mut flag: Option<&str> = None;
    for arg in args {
        if let Some(name) = flag.take() {
            if !arg.starts_with('-') {
                // a header line: its value is the secret (`Authorization: Bearer X`)
                let value = match arg.split_once(':') {
                    Some((_, v)) if is_header_flag(name) => v.trim(),
                    _ => arg.as_str(),
                };
                out.push(Secret::new(format!("arg {name}"), value));
                continue;
            }
        }
        if is_header_flag(arg) {
            flag = Some(arg);
            continue;
        }
        if arg.starts_with('-') {
            match arg.split_once('=') {
                Some((name, value)) if is_secret_name(name) => {
                    out.push(Secret::new(format!("arg {name}"), value));
                }
                Some(_) => {}
                None if is_secret_name(arg) => flag = Some(arg),
                None => {}
            }
        }
        url_secrets("arg", arg, out);
    }
}

/// The credentials of every URL in `text` (see [`super::urls`]), named after `label`
/// (`url password`, `url username`, `DATABASE_URL api_key`).
fn url_secrets(label: &str, text: &str, out: &mut Vec<Secret>) {
    for found in url_secret_spans(text) {
        out.push(Secret::new(
            format!("{label} {}", found.part.name()),
            &text[found.span],
        ));
    }
}

/// Strings of `actual` that came from expanding `${VAR}` in `shown`: the whole string, and the
/// variable's value alone when the string holds one `${...}`, named `${VAR}`.
fn expanded_values(shown: &Value, actual: &Value, out: &mut Vec<Secret>) {
    match (shown, actual) {
        (Value::String(s), Value::String(a)) if s.contains("${") && s != a => {
            // `${NAME}` ends at the first `}` (see config::expand_vars)
            let start = s.find("${").unwrap_or(0);
            let Some(len) = s[start..].find('}') else {
                out.push(Secret::new("probe argument", a));
                return;
            };
            let name = &s[start..start + len + 1];
            out.push(Secret::new(name, a));
            let (prefix, suffix) = (&s[..start], &s[start + len + 1..]);
            if !suffix.contains("${") {
                let value = a.strip_prefix(prefix).and_then(|r| r.strip_suffix(suffix));
                out.extend(value.map(|v| Secret::new(name, v)));
            }
        }
        (Value::Array(s), Value::Array(a)) => {
            for (s, a) in s.iter().zip(a) {
                expanded_values(s, a, out);
            }
        }
        (Value::Object(s), Value::Object(a)) => {
            for (key, s) in s {
                if let Some(a) = a.get(key) {
                    expanded_values(s, a, out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::names::secret_param;
    use super::*;

    /// Review of issue 12: query parameters are secret by whole parts of their names, and a
    /// header given on a command line is a secret.
    #[test]
    fn secret_params_by_parts_and_header_flags() {
        for p in [
            "api_key",
            "access_token",
            "X-Amz-Signature",
            "apikey",
            "sig",
            "code",
        ] {
            assert!(secret_param(p), "{p}");
        }
        for p in ["keyword", "author", "lang_code", "monkey", "q"] {
            assert!(!secret_param(p), "{p}");
        }
        let mut out = Vec::new();
        let args: Vec<String> = [
            "mcp-remote",
            "https://x.example/mcp",
            "--header",
            "Authorization: Bearer sk-live-123456",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        arg_secrets(&args, &mut out);
        assert!(
            out.iter()
                .any(|s| format!("{s:?}").contains("Bearer sk-live-123456")),
            "{out:?}"
        );
    }

    #[test]
    fn a_urls_login_is_a_secret_in_its_basic_auth_form() {
        assert_eq!(
            basic_auth_secret("http://bob:hunter2@127.0.0.1:1/mcp"),
            Some(Secret::new("url basic auth", "Ym9iOmh1bnRlcjI="))
        );
        assert_eq!(basic_auth_secret("http://127.0.0.1:1/mcp"), None);
    }

    #[test]
    fn env_secrets_are_secret_names_and_url_passwords() {
        let found = env_secrets([
            ("LOG_LEVEL", "warn"),
            ("FIELD_API_KEY", "sk-field-1"),
            (
                "DATABASE_URL",
                "postgres://app:pw-9876@db/x?sslmode=require",
            ),
        ]);
        assert_eq!(
            found,
            [
                Secret::new("FIELD_API_KEY", "sk-field-1"),
                Secret::new("DATABASE_URL password", "pw-9876"),
            ]
        );
    }

    #[test]
    fn args_give_flag_values_and_url_credentials() {
        let args: Vec<String> = [
            "--api-key=abc123",
            "--token",
            "xyz789",
            "--port",
            "8080",
            "https://u:pw1234@h.example/p?access_token=tok9&x=1",
            "https://ghp_tok0123456@github.com/o/r.git",
            "ssh://git@github.com/o/r.git",
        ]
        .map(String::from)
        .to_vec();
        let mut out = Vec::new();
        arg_secrets(&args, &mut out);
        let names: Vec<(&str, &str)> = out
            .iter()
            .map(|s| (s.name.as_str(), s.value.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("arg --api-key", "abc123"),
                ("arg --token", "xyz789"),
                ("arg password", "pw1234"),
                ("arg access_token", "tok9"),
                ("arg username", "ghp_tok0123456"),
            ]
        );
    }

    #[test]
    fn finds_the_values_that_came_from_variables() {
        let shown = serde_json::json!({"a": "id-${USER_ID}.json", "b": ["${X}", "plain"], "c": 5});
        let actual = serde_json::json!({"a": "id-u12345.json", "b": ["x-value", "plain"], "c": 5});
        let mut out = Vec::new();
        expanded_values(&shown, &actual, &mut out);
        let values: Vec<(&str, &str)> = out
            .iter()
            .map(|s| (s.name.as_str(), s.value.as_str()))
            .collect();
        assert_eq!(
            values,
            [
                ("${USER_ID}", "id-u12345.json"),
                ("${USER_ID}", "u12345"),
                ("${X}", "x-value"),
                ("${X}", "x-value"),
            ]
        );
    }
}
