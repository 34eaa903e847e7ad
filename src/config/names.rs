//! The rules that tell a secret by its name: environment variables and flags (`API_KEY`,
//! `--token`), URL query parameters (`api_key`, `sig`) and the flags that carry a header line.
//! A leaf: the spec's display, the secret finder and the redactor all ask it.

/// Values shorter than this are never replaced: no real credential is that short, and
/// replacing `true`, `user` or a port number everywhere would corrupt ordinary text.
pub const MIN_SECRET_CHARS: usize = 6;

/// Name parts that make a variable (or a flag) a secret.
const SECRET_PARTS: &[&str] = &[
    "KEY",
    "KEYS",
    "APIKEY",
    "ACCESSKEY",
    "SECRETKEY",
    "PRIVATEKEY",
    "TOKEN",
    "TOKENS",
    "ACCESSTOKEN",
    "AUTHTOKEN",
    "APITOKEN",
    "SECRET",
    "SECRETS",
    "CLIENTSECRET",
    "PASSWORD",
    "PASSWD",
    "PASS",
    "PASSPHRASE",
    "AUTH",
    "AUTHORIZATION",
    "CREDENTIAL",
    "CREDENTIALS",
    "CREDS",
    "COOKIE",
    "COOKIES",
    "SESSION",
    "PRIVATE",
    "PAT",
    "JWT",
    "BEARER",
    "SIG",
    "SIGNATURE",
];

/// Variables with a secret-looking part that hold no secret (a desktop's session names, agent
/// sockets, paths to files).
fn known_harmless(upper: &str) -> bool {
    upper.starts_with("XDG_")
        || ["DESKTOP_SESSION", "SESSION_MANAGER", "GPG_AGENT_INFO"].contains(&upper)
        || ["_SOCK", "_SOCKET", "_FILE", "_PATH", "_DIR"]
            .iter()
            .any(|s| upper.ends_with(s))
}

/// Whether a variable or flag name looks like it holds a secret: one of its parts (split at
/// `_`, `-`, `.` and camelCase humps, case-insensitive) is KEY, TOKEN, SECRET, PASSWORD, PASS,
/// AUTH, CREDENTIAL, COOKIE, SESSION, PRIVATE, ... (`API_KEY`, `GITHUB_TOKEN`, `apiKey`).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.trim_start_matches('-').to_ascii_uppercase();
    // a header's value that `mcp-budget wrap` moved into a proxy's environment
    // and headers as one variable (`OTEL_EXPORTER_OTLP_HEADERS=x-api-key=...`)
    if upper.starts_with("MCP_BUDGET_HEADER_") || upper.ends_with("_HEADERS") {
        return true;
    }
    if known_harmless(&upper) {
        return false;
    }
    let parts = name_parts(name.trim_start_matches('-'));
    if parts
        .iter()
        .any(|p| SECRET_PARTS.contains(&p.to_ascii_uppercase().as_str()))
    {
        return true;
    }
    // run-together names (`PGPASSWORD`, `GITHUBTOKEN`, `MYSQL_PWD`)
    let joined: String = upper.chars().filter(char::is_ascii_alphanumeric).collect();
    joined.contains("PASSWORD")
        || joined.contains("PASSWD")
        || ["TOKEN", "SECRET", "APIKEY", "PRIVATEKEY"]
            .iter()
            .any(|w| joined.ends_with(w))
        || (!matches!(upper.as_str(), "PWD" | "OLDPWD")
            && parts.iter().any(|p| p.eq_ignore_ascii_case("PWD")))
}

fn name_parts(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            parts.push(std::mem::take(&mut part));
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            parts.push(std::mem::take(&mut part));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        part.push(c);
    }
    parts.push(part);
    parts.retain(|p| !p.is_empty());
    parts
}

/// Whether a URL query parameter's value is a credential (`api_key`, `token`, `sig`, ...).
pub fn secret_param(name: &str) -> bool {
    // whole parts of the name (`api_key`, `access-token`, `X-Amz-Signature`), so that
    // `keyword`, `author` or `lang_code` stay ordinary parameters
    let n = name.to_ascii_lowercase();
    let joined: String = n.chars().filter(char::is_ascii_alphanumeric).collect();
    n.split(|c: char| !c.is_ascii_alphanumeric()).any(|part| {
        [
            "token",
            "key",
            "apikey",
            "secret",
            "password",
            "passwd",
            "auth",
            "sig",
            "signature",
            "session",
            "sessionid",
            "jsessionid",
            "phpsessid",
            "credential",
            "credentials",
            "jwt",
        ]
        .contains(&part)
    }) || n == "code" // an OAuth authorisation code
        || ["token", "secret", "apikey", "password"]
            .iter()
            .any(|w| joined.ends_with(w))
}

/// A name as part of an environment variable's: upper case, every character but ASCII
/// letters and digits `_` (`my-api.v2` is `MY_API_V2`).
pub fn variable_part(name: &str) -> String {
    name.chars()
        .map(|c| match c.is_ascii_alphanumeric() {
            true => c.to_ascii_uppercase(),
            false => '_',
        })
        .collect()
}

/// A flag whose value is a header line (`--header "Authorization: Bearer X"`).
pub fn is_header_flag(arg: &str) -> bool {
    matches!(arg, "--header" | "-H" | "--headers")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_told_by_their_parts() {
        for name in [
            "API_KEY",
            "GITHUB_TOKEN",
            "DB_PASSWORD",
            "FIELD_API_KEY",
            "apiKey",
            "OPENAI_APIKEY",
            "AWS_SECRET_ACCESS_KEY",
            "--api-key",
            "--token",
            "SLACK_COOKIE",
            "GITHUB_PAT",
            "PGPASSWORD",
            "MYSQL_PWD",
            "GITHUBTOKEN",
            "MCP_BUDGET_HEADER_X_TEAM",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "LOG_LEVEL",
            "PATH",
            "PWD",
            "HOME",
            "MONKEY",
            "KEYBOARD_LAYOUT",
            "PASSTHROUGH",
            "SSH_AUTH_SOCK",
            "XDG_SESSION_TYPE",
            "DESKTOP_SESSION",
            "GOOGLE_APPLICATION_CREDENTIALS_FILE",
            "--port",
            "OLDPWD",
            "MCP_BUDGET_TOKENIZER",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
