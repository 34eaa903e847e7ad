//! The client credentials grant (the MCP authorization specification's machine-to-machine
//! extension): a pre-registered client signs in with its id and secret, no user and no browser.
//! For CI, where `MCP_BUDGET_CLIENT_ID_<NAME>` and `MCP_BUDGET_CLIENT_SECRET_<NAME>` give them
//! (nothing is kept), and for `login --client-credentials`, which keeps the client so that a
//! token is asked for again when the last one is due (the grant gives no refresh token). The
//! `resource` (RFC 8707) names the server, as in the browser's flow.

use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthError, ClientCredentialsConfig};

use super::store::{canonical, AuthDir, FileStore, Registration};
use super::{challenge, manager_for, AuthFailure};

/// A client's id and secret.
#[derive(Clone)]
pub struct Client {
    pub id: String,
    pub secret: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("id", &self.id)
            .field("secret", &"[redacted]")
            .finish()
    }
}

/// The variables that give a server's client in CI: `MCP_BUDGET_CLIENT_ID_<NAME>` and
/// `MCP_BUDGET_CLIENT_SECRET_<NAME>`.
pub fn variables(name: &str) -> (String, String) {
    let part = crate::config::variable_part(name);
    (
        format!("MCP_BUDGET_CLIENT_ID_{part}"),
        format!("MCP_BUDGET_CLIENT_SECRET_{part}"),
    )
}

/// The client the environment gives for `name`, when both variables are set.
pub fn from_env(name: &str) -> Option<Client> {
    let (id, secret) = variables(name);
    let read = |v: &str| std::env::var(v).ok().filter(|s| !s.trim().is_empty());
    Some(Client {
        id: read(&id)?.trim().to_string(),
        secret: read(&secret)?,
    })
}

/// A token for the server at `url` by the client credentials grant; kept (with the client, to
/// ask again when due) when `keep` names the folder.
pub async fn token(
    url: &str,
    client: &Client,
    scopes: &[String],
    keep: Option<&AuthDir>,
) -> Result<(String, Option<u64>), AuthFailure> {
    let www = challenge(url).await?;
    let mut manager = manager_for(url).await?;
    let metadata = manager
        .resolve_metadata_from_challenge(www.as_deref())
        .await
        .map_err(|e| AuthFailure::Discovery(e.to_string()))?
        .metadata;
    let offered = metadata
        .additional_fields
        .get("grant_types_supported")
        .and_then(|v| v.as_array());
    if offered.is_some_and(|g| !g.iter().any(|x| x == "client_credentials")) {
        return Err(AuthFailure::Token(format!(
            "{} does not offer the client credentials grant (grant_types_supported)",
            metadata
                .issuer
                .as_deref()
                .unwrap_or(&metadata.token_endpoint)
        )));
    }
    manager.set_metadata(metadata);
    if let Some(dir) = keep {
        manager.set_credential_store(store(dir, url, client));
    }
    let config = ClientCredentialsConfig::ClientSecret {
        client_id: client.id.clone(),
        client_secret: client.secret.clone(),
        scopes: scopes.to_vec(),
        resource: Some(canonical(url)),
    };
    let failed = |e: AuthError| match e {
        AuthError::ClientCredentialsError(m) if m.contains("invalid_client") => AuthFailure::Token(
            "the authorization server refused the client (invalid_client)".into(),
        ),
        other => AuthFailure::Token(other.to_string()),
    };
    manager
        .validate_client_credentials_metadata(&config)
        .map_err(failed)?;
    manager
        .configure_client_credentials(&config)
        .map_err(failed)?;
    let token = manager
        .exchange_client_credentials(&config)
        .await
        .map_err(failed)?;
    Ok((
        token.access_token().secret().to_string(),
        token.expires_in().map(|d| d.as_secs()),
    ))
}

/// The store a kept machine sign-in is written through: the client with its first token.
fn store(dir: &AuthDir, url: &str, client: &Client) -> FileStore {
    dir.pending_store(
        url,
        Registration {
            client_id: client.id.clone(),
            client_secret: Some(client.secret.clone()),
            redirect_uri: String::new(),
            client_credentials: true,
        },
    )
}

/// A new token for a kept machine sign-in (its last one is due, or was refused).
pub(super) async fn again(
    dir: &AuthDir,
    url: &str,
    reg: &Registration,
) -> Result<String, AuthFailure> {
    let Some(secret) = &reg.client_secret else {
        return Err(AuthFailure::NotSignedIn);
    };
    let client = Client {
        id: reg.client_id.clone(),
        secret: secret.clone(),
    };
    token(url, &client, &[], Some(dir)).await.map(|(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_clients_variables_are_named_by_the_server_and_its_secret_never_shows() {
        assert_eq!(
            variables("my-api.v2"),
            (
                "MCP_BUDGET_CLIENT_ID_MY_API_V2".to_string(),
                "MCP_BUDGET_CLIENT_SECRET_MY_API_V2".to_string()
            )
        );
        let c = Client {
            id: "ci-bot".into(),
            secret: "hunter2-secret".into(),
        };
        let shown = format!("{c:?}");
        assert!(
            shown.contains("ci-bot") && !shown.contains("hunter2"),
            "{shown}"
        );
    }
}
