//! Servers that sign in with OAuth: `login` runs the MCP authorization flow through rmcp's
//! OAuth client and keeps the sign-in in the state folder ([`store`]); [`bearer`] hands out its
//! access token, refreshed before it expires, for `audit` and `proxy`; [`status`] says where a
//! server stands for `servers`; [`logout`] forgets it. A token never goes into a report, a
//! log, an error message or argv: the errors below name the server and the step, not the
//! token.

pub mod login;
pub mod machine;
pub mod store;

use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthError, AuthorizationManager};

pub use login::{login, ClientFrom, LoginOptions, SignedIn};
pub use store::{AuthDir, Registration, SignIn};

/// Why signing in, or using a sign-in, failed: one line each, naming the step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthFailure {
    /// No sign-in is kept for the server.
    NotSignedIn,
    /// The sign-in was refused (revoked, or its refresh token is no longer good).
    Expired,
    Discovery(String),
    /// The authorization server does not advertise PKCE with S256.
    NoPkce(String),
    Registration(String),
    Authorization(String),
    Token(String),
    /// No redirect came back within the wait (seconds).
    NoRedirect(u64),
    Store(String),
    Io(String),
}

impl std::fmt::Display for AuthFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuthFailure::NotSignedIn => write!(f, "not signed in"),
            AuthFailure::Expired => write!(f, "its sign-in was refused (expired or revoked)"),
            AuthFailure::Discovery(e) => write!(f, "finding its authorization server: {e}"),
            AuthFailure::NoPkce(by) => write!(
                f,
                "{by} does not advertise PKCE with S256 (code_challenge_methods_supported): refused"
            ),
            AuthFailure::Registration(e) => write!(f, "registering a client: {e}"),
            AuthFailure::Authorization(e) => write!(f, "the authorization request: {e}"),
            AuthFailure::Token(e) => write!(f, "the token exchange: {e}"),
            AuthFailure::NoRedirect(s) => write!(f, "no redirect from the browser within {s} s"),
            AuthFailure::Store(e) => write!(f, "the sign-in file: {e}"),
            AuthFailure::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AuthFailure {}

impl AuthFailure {
    /// Whether signing in again is the way out (the one line then says `mcp-budget login`).
    pub fn needs_login(&self) -> bool {
        matches!(self, AuthFailure::NotSignedIn | AuthFailure::Expired)
    }
}

/// The environment variable that holds a token for the server `name` in CI:
/// `MCP_BUDGET_TOKEN_` and the name as a variable's name writes it.
pub fn token_variable(name: &str) -> String {
    format!("MCP_BUDGET_TOKEN_{}", crate::config::variable_part(name))
}

/// The HTTP client of the sign-in's own requests: no redirects followed, 30 s at most.
fn http() -> Result<reqwest::Client, AuthFailure> {
    super::tls::client()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| AuthFailure::Io(e.to_string()))
}

/// reqwest's error as its causes, without its top line (it names the URL, which may carry a
/// token).
fn causes(e: &reqwest::Error) -> String {
    match crate::ground::text::error_causes(e).join(": ") {
        c if c.is_empty() => "the request failed".into(),
        c => c,
    }
}

/// rmcp's manager for `url`: loopback and private authorization servers are allowed only for
/// a server that is itself on one (rmcp's rule).
async fn manager_for(url: &str) -> Result<AuthorizationManager, AuthFailure> {
    super::tls::ready();
    AuthorizationManager::new(url)
        .await
        .map_err(|e| AuthFailure::Discovery(e.to_string()))
}

/// The server's `WWW-Authenticate` challenge to a request without a token, if it answers 401.
pub async fn challenge(url: &str) -> Result<Option<String>, AuthFailure> {
    let client = http()?;
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "mcp-budget", "version": env!("CARGO_PKG_VERSION")}}});
    let response = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(init.to_string())
        .send()
        .await
        .map_err(|e| AuthFailure::Discovery(format!("reaching it: {}", causes(&e))))?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok(None);
    }
    Ok(response
        .headers()
        .get_all("www-authenticate")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.to_ascii_lowercase().starts_with("bearer"))
        .map(str::to_string))
}

/// The access token of the sign-in kept for `url`, refreshed first when it is about to expire
/// (a rotated refresh token is kept); [`AuthFailure::NotSignedIn`] when there is none.
pub async fn bearer(dir: &AuthDir, url: &str) -> Result<String, AuthFailure> {
    let kept = dir.load(url).map_err(AuthFailure::Store)?;
    let Some(creds) = kept.as_ref().and_then(|k| k.credentials.as_ref()) else {
        return Err(AuthFailure::NotSignedIn);
    };
    // a token not yet due is read from the file: no discovery, nothing sent (each connection,
    // an audit's second era included, asks for it)
    if let Some(token) = &creds.token_response {
        let fresh = match (token.expires_in(), seconds_left(creds)) {
            // rmcp refreshes when fewer than min(30 s, half the lifetime) remain
            (Some(life), Some(left)) => left > 30.min(life.as_secs() / 2).max(1) as i64,
            _ => true,
        };
        if fresh {
            return Ok(token.access_token().secret().to_string());
        }
    }
    let kept = kept.expect("credentials were found in it");
    if let Some(reg) = kept.registration.as_ref().filter(|r| r.client_credentials) {
        return machine::again(dir, url, reg).await;
    }
    let manager = login::restored(dir, url, &kept).await?;
    manager.get_access_token().await.map_err(|e| match e {
        AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_) => {
            AuthFailure::Expired
        }
        other => AuthFailure::Token(other.to_string()),
    })
}

/// A kept sign-in a session's token came from: the bridge to the server renews it while the
/// session runs (upstream's `reauth`), and names the server in what it says.
#[derive(Debug, Clone)]
pub struct InUse {
    pub dir: AuthDir,
    pub url: String,
    /// The server's name (for `mcp-budget login NAME`).
    pub name: String,
}

/// When the kept access token of `url` is due for a refresh (the moment [`bearer`] would
/// refresh it), where its lifetime is known.
pub fn due(dir: &AuthDir, url: &str) -> Option<std::time::SystemTime> {
    let creds = dir.load(url).ok()??.credentials?;
    let life = creds.token_response.as_ref()?.expires_in()?.as_secs();
    let margin = 30.min(life / 2).max(1);
    let at = (creds.token_received_at? + life).saturating_sub(margin);
    Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs(at))
}

/// Refresh the sign-in of `url` now (after the server refused its token): the new token, or
/// why signing in again is needed.
pub async fn refresh(dir: &AuthDir, url: &str) -> Result<String, AuthFailure> {
    let kept = dir.load(url).map_err(AuthFailure::Store)?;
    let Some(kept) = kept.filter(|k| k.credentials.is_some()) else {
        return Err(AuthFailure::NotSignedIn);
    };
    if let Some(reg) = kept.registration.as_ref().filter(|r| r.client_credentials) {
        return machine::again(dir, url, reg).await;
    }
    let manager = login::restored(dir, url, &kept).await?;
    match manager.refresh_token().await {
        Ok(t) => Ok(t.access_token().secret().to_string()),
        Err(AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_)) => {
            Err(AuthFailure::Expired)
        }
        Err(e) => Err(AuthFailure::Token(e.to_string())),
    }
}

/// Where a server stands, for `servers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInStatus {
    /// Signed in; the token's seconds left where known.
    SignedIn {
        expires_in: Option<i64>,
        refreshable: bool,
    },
    NotSignedIn,
}

/// The sign-in state of `url`, from the file alone (nothing is sent).
pub fn status(dir: &AuthDir, url: &str) -> Result<SignInStatus, String> {
    let Some(kept) = dir.load(url)? else {
        return Ok(SignInStatus::NotSignedIn);
    };
    let Some(creds) = kept.credentials else {
        return Ok(SignInStatus::NotSignedIn);
    };
    let Some(token) = &creds.token_response else {
        return Ok(SignInStatus::NotSignedIn);
    };
    Ok(SignInStatus::SignedIn {
        expires_in: seconds_left(&creds),
        refreshable: token.refresh_token().is_some(),
    })
}

/// The seconds the kept access token has left (negative once expired), where its lifetime and
/// the time it came are known.
fn seconds_left(creds: &rmcp::transport::auth::StoredCredentials) -> Option<i64> {
    let life = creds.token_response.as_ref()?.expires_in()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Some(creds.token_received_at? as i64 + life.as_secs() as i64 - now as i64)
}

/// Forget the sign-in of `url` (its file): whether there was one. Revoking the token at the
/// authorization server, where it offers revocation, is the caller's first step ([`revoke`]).
pub fn logout(dir: &AuthDir, url: &str) -> Result<bool, String> {
    dir.remove(url)
}

/// What revoking a sign-in at its authorization server came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revoked {
    /// The refresh token and the access token were revoked (RFC 7009).
    Yes,
    /// The authorization server advertises no `revocation_endpoint`.
    NotOffered,
    /// No sign-in was kept.
    NothingKept,
}

/// Revoke the kept sign-in of `url` at its authorization server (RFC 7009: the refresh token,
/// then the access token, with the client's id and secret as the registration gave them).
pub async fn revoke(dir: &AuthDir, url: &str) -> Result<Revoked, AuthFailure> {
    let kept = dir.load(url).map_err(AuthFailure::Store)?;
    let Some((reg, token)) = kept.and_then(|k| {
        let token = k.credentials?.token_response?;
        Some((k.registration?, token))
    }) else {
        return Ok(Revoked::NothingKept);
    };
    let manager = manager_for(url).await?;
    let metadata = manager
        .resolve_metadata()
        .await
        .map_err(|e| AuthFailure::Discovery(e.to_string()))?
        .metadata;
    let Some(endpoint) = metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(|v| v.as_str())
    else {
        return Ok(Revoked::NotOffered);
    };
    let client = http()?;
    let mut tokens = Vec::new();
    if let Some(r) = token.refresh_token() {
        tokens.push((r.secret().to_string(), "refresh_token"));
    }
    tokens.push((token.access_token().secret().to_string(), "access_token"));
    for (value, hint) in tokens {
        let mut form = vec![
            ("token", value.as_str()),
            ("token_type_hint", hint),
            ("client_id", reg.client_id.as_str()),
        ];
        // a public client sends an empty secret (RFC 6749 2.3.1 lets it omit an empty one; the
        // Python SDK 2.3.0's revocation route refuses a form without the field)
        form.push(("client_secret", reg.client_secret.as_deref().unwrap_or("")));
        let body: String = form
            .iter()
            .map(|(k, v)| format!("{k}={}", form_escape(v)))
            .collect::<Vec<_>>()
            .join("&");
        let answer = client
            .post(endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|e| AuthFailure::Token(format!("revoking at {endpoint}: {}", causes(&e))))?;
        // RFC 7009: 200 whether or not the token was still good
        if !answer.status().is_success() {
            return Err(AuthFailure::Token(format!(
                "revoking at {endpoint}: HTTP {}",
                answer.status()
            )));
        }
    }
    Ok(Revoked::Yes)
}

/// `application/x-www-form-urlencoded` escaping of one value.
fn form_escape(v: &str) -> String {
    v.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
