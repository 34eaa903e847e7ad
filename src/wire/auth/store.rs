//! Where a sign-in is kept: one file per server (by its URL) in mcp-budget's state folder
//! (`$XDG_STATE_HOME/mcp-budget/auth`), the folder 0700 and each file 0600, written whole
//! (a temp file, then a rename) so a crash never leaves half a token. The file holds the
//! client's registration (its id, and the secret an authorization server gave it) and rmcp's
//! stored credentials (the token response). Nothing here is ever printed: [`SignIn`]'s
//! `Debug` says only what is there.

use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

/// A client registered with an authorization server (dynamically, or pre-registered).
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Registration {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The redirect URI the client was registered with (a loopback URL; none for a machine).
    pub redirect_uri: String,
    /// A machine's sign-in (the client credentials grant): a token is asked for again when
    /// the last one is due, with no refresh token and no user.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_credentials: bool,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("redirect_uri", &self.redirect_uri)
            .field("client_credentials", &self.client_credentials)
            .finish()
    }
}

/// What is kept for one server.
#[derive(Clone, Serialize, Deserialize, Default)]
pub struct SignIn {
    /// The server's URL (the resource).
    pub server_url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("server_url", &self.server_url)
            .field("registered", &self.registration.is_some())
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "[redacted]"),
            )
            .finish()
    }
}

/// The folder of sign-ins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthDir {
    dir: PathBuf,
}

impl AuthDir {
    pub fn new(dir: PathBuf) -> AuthDir {
        AuthDir { dir }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the server at `url` (a hash of the URL: a name that says nothing).
    pub fn path_of(&self, url: &str) -> PathBuf {
        let hash = blake3::hash(canonical(url).as_bytes()).to_hex();
        self.dir.join(format!("{}.json", &hash[..32]))
    }

    /// The sign-in kept for `url`, if any; a file that cannot be read is an error naming it.
    pub fn load(&self, url: &str) -> Result<Option<SignIn>, String> {
        let path = self.path_of(url);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| format!("{}: not a sign-in mcp-budget wrote: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Keep `sign_in`: the folder made 0700, the file written whole and 0600.
    pub fn save(&self, sign_in: &SignIn) -> Result<(), String> {
        let path = self.path_of(&sign_in.server_url);
        let bytes = serde_json::to_vec_pretty(sign_in).map_err(|e| e.to_string())?;
        private_dir(&self.dir).map_err(|e| format!("{}: {e}", self.dir.display()))?;
        crate::ground::atomic::replace_file(&path, &bytes, Some(0o600), || Ok(()))
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Forget the sign-in of `url`: whether there was one.
    pub fn remove(&self, url: &str) -> Result<bool, String> {
        let path = self.path_of(url);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// rmcp's credential store for the server at `url`, backed by its file.
    pub fn credential_store(&self, url: &str) -> FileStore {
        FileStore {
            dir: self.clone(),
            url: url.to_string(),
            pending: None,
        }
    }

    /// The store of a sign-in under way: `registration` is written with its first token, and
    /// not before (a sign-in that fails leaves the one kept before as it was).
    pub fn pending_store(&self, url: &str, registration: Registration) -> FileStore {
        FileStore {
            pending: Some(registration),
            ..self.credential_store(url)
        }
    }
}

/// The folder made (and kept) readable by the user alone.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// A URL as one server: no trailing slash, no fragment.
pub fn canonical(url: &str) -> String {
    let url = url.split('#').next().unwrap_or(url);
    url.trim_end_matches('/').to_string()
}

/// rmcp's [`CredentialStore`] on one server's file: the token response is kept beside the
/// registration, which rmcp does not know.
pub struct FileStore {
    dir: AuthDir,
    url: String,
    /// A new registration, kept with the first credentials saved.
    pending: Option<Registration>,
}

fn store_error(e: String) -> AuthError {
    AuthError::CredentialStoreError(e)
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let kept = self.dir.load(&self.url).map_err(store_error)?;
        Ok(kept.and_then(|s| s.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let mut kept = self
            .dir
            .load(&self.url)
            .map_err(store_error)?
            .unwrap_or_else(|| SignIn {
                server_url: canonical(&self.url),
                ..SignIn::default()
            });
        kept.credentials = Some(credentials);
        if let Some(reg) = &self.pending {
            kept.registration = Some(reg.clone());
        }
        self.dir.save(&kept).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        if let Some(mut kept) = self.dir.load(&self.url).map_err(store_error)? {
            kept.credentials = None;
            self.dir.save(&kept).map_err(store_error)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_sign_in_is_kept_private_and_whole_and_says_nothing_in_debug() {
        let root = tempfile::tempdir().unwrap();
        let dir = AuthDir::new(root.path().join("state/auth"));
        let s = SignIn {
            server_url: "http://127.0.0.1:9/mcp".into(),
            registration: Some(Registration {
                client_id: "c1".into(),
                client_secret: Some("s3cr3t-client".into()),
                redirect_uri: "http://127.0.0.1:5/callback".into(),
                client_credentials: false,
            }),
            ..SignIn::default()
        };
        dir.save(&s).unwrap();
        let path = dir.path_of("http://127.0.0.1:9/mcp/");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(dir.dir()), 0o700);
        // the file is named by a hash: the URL is not in its name
        assert!(!path.to_string_lossy().contains("127.0.0.1"));
        let back = dir.load("http://127.0.0.1:9/mcp").unwrap().unwrap();
        assert_eq!(back.registration, s.registration);
        assert!(!format!("{back:?}").contains("s3cr3t"));
        assert!(dir.remove("http://127.0.0.1:9/mcp").unwrap());
        assert!(!dir.remove("http://127.0.0.1:9/mcp").unwrap());
        assert!(dir.load("http://127.0.0.1:9/mcp").unwrap().is_none());
    }

    #[test]
    fn a_broken_file_is_an_error_that_names_it() {
        let root = tempfile::tempdir().unwrap();
        let dir = AuthDir::new(root.path().to_path_buf());
        std::fs::write(dir.path_of("http://x/mcp"), b"{not json").unwrap();
        let e = dir.load("http://x/mcp").unwrap_err();
        assert!(
            e.contains(&dir.path_of("http://x/mcp").display().to_string()),
            "{e}"
        );
    }
}
