//! The tokio runtime the async subcommands (and the sign-in prompts) run on.

/// A multi-threaded runtime for the async subcommands.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}
