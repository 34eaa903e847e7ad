//! A session's token from a kept sign-in, renewed while the session runs: refreshed before a
//! request once it is due, and once more when the server refuses it (401), so a long session
//! (the proxy's) outlives its access token. A server that wants more scope (403 with
//! `insufficient_scope`) is named with the scope and the `login` that grants it (step-up is
//! the user's consent in a browser: a session cannot do it alone).

use std::sync::Arc;
use std::time::SystemTime;

use reqwest::header::{HeaderMap, HeaderValue};

use crate::config::Redactor;
use crate::wire::auth::{self, InUse};

/// What the bridge does about signing in: renew the kept sign-in the token came from, and the
/// name `mcp-budget login` is given for the server.
pub(super) struct Signin {
    pub renewal: Option<Renewal>,
    pub login: Option<String>,
}

/// The kept sign-in a session's token came from, and the header it sends now.
pub(super) struct Renewal {
    kept: InUse,
    due: Option<SystemTime>,
    /// The header after a renewal; `None`: the client's own (the token the session opened
    /// with).
    header: Option<HeaderValue>,
}

impl Renewal {
    pub fn new(kept: InUse) -> Renewal {
        let due = auth::due(&kept.dir, &kept.url);
        Renewal {
            kept,
            due,
            header: None,
        }
    }

    /// The `Authorization` header of the next request: the kept token, refreshed first once it
    /// is due (a refresh that fails leaves the one there is: the server's 401 then says why).
    pub async fn before(&mut self, redactor: &mut Arc<Redactor>) -> Option<HeaderValue> {
        if self.due.is_some_and(|at| SystemTime::now() >= at) {
            if let Ok(token) = auth::bearer(&self.kept.dir, &self.kept.url).await {
                self.took(&token, redactor);
            }
        }
        self.header.clone()
    }

    /// The server refused the token (401): refresh the sign-in now, and the header to send the
    /// request with again; else the one line that says what to do.
    pub async fn refused(&mut self, redactor: &mut Arc<Redactor>) -> Result<HeaderValue, String> {
        match auth::refresh(&self.kept.dir, &self.kept.url).await {
            Ok(token) => {
                self.took(&token, redactor);
                self.header
                    .clone()
                    .ok_or_else(|| "the refreshed token is not a header value".to_string())
            }
            Err(e) => Err(format!(
                "the server refused the token (401) and its sign-in could not be renewed: {e}: \
                 run `mcp-budget login {}`",
                self.kept.name
            )),
        }
    }

    fn took(&mut self, token: &str, redactor: &mut Arc<Redactor>) {
        let mut with = (**redactor).clone();
        with.add_named("Authorization", token);
        *redactor = Arc::new(with);
        self.header = HeaderValue::from_str(&format!("Bearer {token}")).ok();
        self.due = auth::due(&self.kept.dir, &self.kept.url);
    }
}

/// The scope a 403 asks for, from its `WWW-Authenticate: Bearer error="insufficient_scope",
/// scope="..."` (an empty text when it names none); `None` when it is not that.
pub(super) fn scope_wanted(headers: &HeaderMap) -> Option<String> {
    let challenge = headers
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.to_ascii_lowercase().starts_with("bearer"))?;
    let params = parameters(&challenge[6..]);
    let error = params.iter().find(|(k, _)| k == "error")?;
    if error.1 != "insufficient_scope" {
        return None;
    }
    Some(
        params
            .into_iter()
            .find(|(k, _)| k == "scope")
            .map(|(_, v)| v)
            .unwrap_or_default(),
    )
}

/// The one line of a 403 that asks for more scope.
pub(super) fn step_up(scope: &str, login: Option<&str>) -> String {
    let name = login.unwrap_or("SERVER");
    if scope.is_empty() {
        format!(
            "HTTP 403: the token's scope is not enough (insufficient_scope): run `mcp-budget login {name}` with the --scope it needs"
        )
    } else {
        let flags: Vec<String> = scope
            .split_whitespace()
            .map(|s| format!("--scope {s}"))
            .collect();
        format!(
            "HTTP 403: the server asks for scope `{scope}` (insufficient_scope): run `mcp-budget login {name} {}`",
            flags.join(" ")
        )
    }
}

/// The `key=value` and `key="quoted value"` parameters of a challenge, keys in lower case.
fn parameters(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq]
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        rest = rest[eq + 1..].trim_start();
        let value;
        if let Some(quoted) = rest.strip_prefix('"') {
            let mut v = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            v.push(n);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => v.push(c),
                }
            }
            value = v;
            rest = &quoted[end.min(quoted.len())..];
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            value = rest[..end].trim().to_string();
            rest = &rest[end..];
        }
        out.push((key, value));
        rest = rest.trim_start().trim_start_matches(',');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("www-authenticate", HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn a_403_for_more_scope_names_the_scope_and_the_login_that_grants_it() {
        let h = challenge(
            r#"Bearer error="insufficient_scope", scope="orders:write admin", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource""#,
        );
        assert_eq!(scope_wanted(&h).as_deref(), Some("orders:write admin"));
        assert_eq!(
            step_up("orders:write admin", Some("orders")),
            "HTTP 403: the server asks for scope `orders:write admin` (insufficient_scope): run `mcp-budget login orders --scope orders:write --scope admin`"
        );
        // unquoted, and no scope named
        assert_eq!(
            scope_wanted(&challenge("Bearer error=insufficient_scope")).as_deref(),
            Some("")
        );
        assert!(step_up("", None).contains("mcp-budget login SERVER"));
        // another error, or no challenge: not a step-up
        assert_eq!(
            scope_wanted(&challenge(r#"Bearer error="invalid_token""#)),
            None
        );
        assert_eq!(scope_wanted(&HeaderMap::new()), None);
        assert_eq!(scope_wanted(&challenge(r#"Basic realm="x""#)), None);
        // an escaped quote inside a value
        let p = parameters(r#" realm="a \"b\"", error="insufficient_scope""#);
        assert_eq!(p[0], ("realm".to_string(), "a \"b\"".to_string()));
        assert_eq!(p[1].1, "insufficient_scope");
    }
}
