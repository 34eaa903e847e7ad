//! Signing in to a server, by the MCP authorization specification, through rmcp's OAuth
//! client (feature `auth`): the server's 401 challenge, protected resource metadata (RFC 9728)
//! and the authorization server's metadata (RFC 8414, OpenID Connect discovery); a
//! pre-registered client or dynamic registration (RFC 7591); the authorization code with PKCE
//! (S256 only: a server that does not advertise it is refused), `state` checked and the
//! `resource` parameter (RFC 8707) sent; the redirect to a loopback listener on 127.0.0.1 at a
//! random port. What the user does in the browser is theirs: this prints the URL (and opens a
//! browser where asked) and waits for the redirect.

use std::time::Duration;

use oauth2::TokenResponse;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationRequest, AuthorizationSession, OAuthClientConfig,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::store::{canonical, AuthDir, Registration, SignIn};
use super::{challenge, manager_for, AuthFailure};

/// What `login` needs besides the server's URL.
#[derive(Debug, Clone, Default)]
pub struct LoginOptions {
    /// A client the authorization server knows already (no dynamic registration).
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// Scopes to ask for (none: what the challenge or the metadata suggests).
    pub scopes: Vec<String>,
    /// How long to wait for the browser's redirect.
    pub wait: Duration,
    /// The redirect listener's port (0: one the system picks).
    pub redirect_port: u16,
    /// The https URL of a Client ID Metadata Document, used as the client's id where the
    /// authorization server advertises them (else the client is registered).
    pub client_metadata_url: Option<String>,
}

/// How the client that signed in is known to the authorization server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFrom {
    /// Given (`--client-id`).
    PreRegistered,
    /// Registered now (dynamic client registration, RFC 7591).
    Registered,
    /// Its Client ID Metadata Document's URL (the authorization server fetches it).
    MetadataDocument,
}

/// The outcome of a sign-in, safe to print.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub server_url: String,
    pub issuer: Option<String>,
    pub client_id: String,
    /// Where the client came from.
    pub client_from: ClientFrom,
    /// A metadata document was given but the authorization server does not advertise them
    /// (the client was registered instead).
    pub document_ignored: bool,
    pub scopes: Vec<String>,
    pub expires_in: Option<u64>,
}

/// Sign in to the server at `url`; `show_url` is given the authorization URL to open (the
/// caller prints it, opens a browser, or, in a test, follows it).
pub async fn login(
    dir: &AuthDir,
    url: &str,
    opts: &LoginOptions,
    show_url: impl FnOnce(&str),
) -> Result<SignedIn, AuthFailure> {
    let www = challenge(url).await?;
    let mut manager = manager_for(url).await?;
    let resolution = manager
        .resolve_metadata_from_challenge(www.as_deref())
        .await
        .map_err(|e| AuthFailure::Discovery(e.to_string()))?;
    let metadata = resolution.metadata;
    let s256 = metadata
        .code_challenge_methods_supported
        .as_ref()
        .is_some_and(|m| m.iter().any(|x| x == "S256"));
    if !s256 {
        return Err(AuthFailure::NoPkce(
            metadata
                .issuer
                .clone()
                .unwrap_or_else(|| metadata.authorization_endpoint.clone()),
        ));
    }
    let issuer = metadata.issuer.clone();
    let documents = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        == Some(true);
    manager.set_metadata(metadata);
    // the redirect: a loopback listener at a port of the system's choosing
    let listener = TcpListener::bind(("127.0.0.1", opts.redirect_port))
        .await
        .map_err(|e| AuthFailure::Io(format!("a loopback port for the redirect: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| AuthFailure::Io(e.to_string()))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let wanted = with_kept_scopes(dir, url, &opts.scopes);
    let scopes: Vec<&str> = wanted.iter().map(String::as_str).collect();
    let document = opts.client_metadata_url.as_ref().filter(|_| documents);
    let (client, how) = match (&opts.client_id, document) {
        (Some(id), _) => {
            let mut c = OAuthClientConfig::new(id.clone(), redirect.clone());
            if let Some(s) = &opts.client_secret {
                c = c.with_client_secret(s.clone());
            }
            (c, ClientFrom::PreRegistered)
        }
        // a Client ID Metadata Document: its URL is the client's id, nothing is registered
        (None, Some(doc)) => {
            metadata_document_url(doc)?;
            let c = OAuthClientConfig::new(doc.clone(), redirect.clone())
                .with_application_type("native");
            (c, ClientFrom::MetadataDocument)
        }
        (None, None) => {
            let c = manager
                .register_client("mcp-budget", &redirect, &scopes)
                .await
                .map_err(|e| AuthFailure::Registration(e.to_string()))?;
            (c, ClientFrom::Registered)
        }
    };
    let registration = Registration {
        client_id: client.client_id.clone(),
        client_secret: client.client_secret.clone(),
        redirect_uri: redirect.clone(),
        client_credentials: false,
    };
    // rmcp saves the token through the store as it gets it: the registration goes with it, so
    // a sign-in that fails leaves the one kept before as it was
    manager.set_credential_store(dir.pending_store(url, registration));
    let mut request = AuthorizationRequest::new(redirect.clone())
        .with_client_name("mcp-budget")
        .with_preregistered_client(client.client_id.clone());
    if let Some(s) = &client.client_secret {
        request = request.with_client_secret(s.clone());
    }
    if !wanted.is_empty() {
        request = request.with_scopes(wanted.iter().cloned());
    }
    if let Some(w) = &www {
        request = request.with_challenge(w.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| AuthFailure::Authorization(e.to_string()))?;
    show_url(session.get_authorization_url());
    let callback = tokio::time::timeout(opts.wait, redirected(&listener, port))
        .await
        .map_err(|_| AuthFailure::NoRedirect(opts.wait.as_secs()))??;
    let token = session
        .handle_callback_url(&callback)
        .await
        .map_err(|e| AuthFailure::Token(e.to_string()))?;
    let scopes = token
        .scopes()
        .map(|s| s.iter().map(|x| x.to_string()).collect())
        .unwrap_or_default();
    Ok(SignedIn {
        server_url: canonical(url),
        issuer,
        client_id: client.client_id,
        client_from: how,
        document_ignored: opts.client_metadata_url.is_some() && document.is_none(),
        scopes,
        expires_in: token.expires_in().map(|d| d.as_secs()),
    })
}

/// A Client ID Metadata Document's URL must be https with a path (the specification's rule).
fn metadata_document_url(doc: &str) -> Result<(), AuthFailure> {
    let ok = reqwest::Url::parse(doc)
        .is_ok_and(|u| u.scheme() == "https" && u.path() != "/" && u.fragment().is_none());
    if ok {
        Ok(())
    } else {
        Err(AuthFailure::Registration(format!(
            "a client metadata document's URL must be https with a path (and no fragment): {doc}"
        )))
    }
}

/// The scopes to ask for: those given and, when some are given (a step-up), those the kept
/// sign-in was granted, so signing in for more keeps what there was. None given: none (what
/// the challenge or the metadata suggests).
fn with_kept_scopes(dir: &AuthDir, url: &str, given: &[String]) -> Vec<String> {
    let mut all = given.to_vec();
    if given.is_empty() {
        return all;
    }
    let kept = dir.load(url).ok().flatten();
    let granted = kept
        .as_ref()
        .and_then(|k| {
            k.credentials
                .as_ref()?
                .token_response
                .as_ref()?
                .scopes()
                .cloned()
        })
        .unwrap_or_default();
    for s in granted {
        if !all.iter().any(|a| **a == **s) {
            all.push(s.to_string());
        }
    }
    all
}

/// Wait for the browser's redirect to `/callback` on the listener; answer it with a page that
/// says to go back to the terminal. Another request (a favicon) gets a 404 and is not the one.
async fn redirected(listener: &TcpListener, port: u16) -> Result<String, AuthFailure> {
    loop {
        let (mut conn, _) = listener
            .accept()
            .await
            .map_err(|e| AuthFailure::Io(format!("the redirect listener: {e}")))?;
        let mut buf = vec![0u8; 16 * 1024];
        let mut len = 0;
        // the request line and headers, at most 16 KiB
        while len < buf.len() {
            let n = conn.read(&mut buf[len..]).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            len += n;
            if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let head = String::from_utf8_lossy(&buf[..len]);
        let target = head
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("GET "))
            .and_then(|l| l.split(' ').next())
            .unwrap_or("");
        if !target.starts_with("/callback") {
            let _ = conn
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            continue;
        }
        let page = "<!doctype html><title>mcp-budget</title><p>Signed in: you can close this tab and go back to the terminal.</p>";
        let reply = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = conn.write_all(reply.as_bytes()).await;
        return Ok(format!("http://127.0.0.1:{port}{target}"));
    }
}

/// The sign-in kept for `url` as rmcp's manager, ready to hand out (and refresh) its token.
pub(super) async fn restored(
    dir: &AuthDir,
    url: &str,
    kept: &SignIn,
) -> Result<AuthorizationManager, AuthFailure> {
    let Some(reg) = &kept.registration else {
        return Err(AuthFailure::NotSignedIn);
    };
    let mut manager = manager_for(url).await?;
    let resolution = manager
        .resolve_metadata()
        .await
        .map_err(|e| AuthFailure::Discovery(e.to_string()))?;
    manager.set_metadata(resolution.metadata);
    manager.set_credential_store(dir.credential_store(url));
    let mut client = OAuthClientConfig::new(reg.client_id.clone(), reg.redirect_uri.clone());
    if let Some(s) = &reg.client_secret {
        client = client.with_client_secret(s.clone());
    }
    manager
        .configure_client(client)
        .map_err(|e| AuthFailure::Authorization(e.to_string()))?;
    Ok(manager)
}
