//! Secret redaction: every value that came from a config's env or headers, and credentials in
//! URLs, are replaced before anything reaches a report, a log or an error message.

use std::collections::BTreeSet;

/// What a redacted value is shown as.
pub const REDACTED: &str = "<redacted>";

/// Replaces known secret strings in free text (server stderr, error messages).
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: BTreeSet<String>,
}

impl Redactor {
    /// Remember secrets; values shorter than 4 characters are ignored (they would redact prose).
    pub fn add<I: IntoIterator<Item = String>>(&mut self, secrets: I) {
        for s in secrets {
            if s.len() >= 4 {
                // a header such as `Bearer abc...` also leaks as its bare token
                if let Some((_, token)) = s.split_once(' ') {
                    if token.len() >= 4 {
                        self.secrets.insert(token.to_string());
                    }
                }
                self.secrets.insert(s);
            }
        }
    }

    /// `text` with every known secret, and credentials in URLs, replaced.
    pub fn redact(&self, text: &str) -> String {
        self.redact_counted(text).0
    }

    /// `text` with every known secret replaced, and how many replacements were made.
    pub fn redact_counted(&self, text: &str) -> (String, usize) {
        let mut out = text.to_string();
        let mut replaced = 0;
        // longest first, so a secret that contains another is replaced whole
        let mut secrets: Vec<&String> = self.secrets.iter().collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for s in secrets {
            if out.contains(s.as_str()) {
                replaced += out.matches(s.as_str()).count();
                out = out.replace(s.as_str(), REDACTED);
            }
        }
        (out, replaced)
    }

    /// Whether no secret is known (nothing would be replaced).
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }
}

/// A URL with its password and secret-looking query values replaced.
pub fn redact_url(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut out = redact_userinfo(base);
    if let Some(q) = query {
        out.push('?');
        let parts: Vec<String> = q
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if secret_param(k) => format!("{k}={REDACTED}"),
                _ => pair.to_string(),
            })
            .collect();
        out.push_str(&parts.join("&"));
    }
    out
}

fn redact_userinfo(base: &str) -> String {
    let Some(scheme_end) = base.find("://") else {
        return base.to_string();
    };
    let rest = &base[scheme_end + 3..];
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or("");
            format!(
                "{}{}:{REDACTED}@{}",
                &base[..scheme_end + 3],
                user,
                &rest[at + 1..]
            )
        }
        None => base.to_string(),
    }
}

fn secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "token", "key", "secret", "password", "auth", "sig", "code", "session",
    ]
    .iter()
    .any(|w| n.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_known_secrets_and_bearer_tokens() {
        let mut r = Redactor::default();
        r.add(["Bearer abcd1234".to_string(), "xy".to_string()]);
        assert_eq!(
            r.redact("auth failed for abcd1234 (xy)"),
            "auth failed for <redacted> (xy)"
        );
        assert_eq!(
            r.redact_counted("abcd1234 Bearer abcd1234"),
            ("<redacted> <redacted>".to_string(), 2)
        );
    }

    #[test]
    fn redacts_url_credentials() {
        assert_eq!(
            redact_url("https://bob:hunter2@mcp.example.com/sse?apiKey=k1&page=2"),
            "https://bob:<redacted>@mcp.example.com/sse?apiKey=<redacted>&page=2"
        );
        assert_eq!(
            redact_url("http://localhost:3000/mcp"),
            "http://localhost:3000/mcp"
        );
    }
}
