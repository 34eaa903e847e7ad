//! A server's listings: every page of a list through the shared page walker, and the tool
//! definitions its pages hold (the audit's server and era passes both read them).

use crate::wire::upstream::{Listed, PageWalker, Session, UpstreamError};

/// Every page of a list through the shared page walker; a listing the walker had to stop (a
/// cursor that repeats, or pages without end) fails the server, naming why.
pub(super) async fn list_all(session: &mut Session, method: &str) -> Result<Listed, UpstreamError> {
    let mut walker = PageWalker::default();
    while let Some(cursor) = walker.to_ask() {
        let (raw, ms) = session.list_page(method, cursor).await?;
        walker.page(raw.result_text(), ms);
    }
    let listed = walker.finish();
    match &listed.stopped {
        Some(stop) => Err(UpstreamError::Request {
            method: method.into(),
            message: stop.describe(session.redactor()),
        }),
        None => Ok(listed),
    }
}

/// Every tool definition of a listing's pages, as the server sent it.
pub(super) fn definitions(pages: &[&str]) -> Vec<serde_json::Map<String, serde_json::Value>> {
    pages
        .iter()
        .filter_map(|p| serde_json::from_str::<serde_json::Value>(p).ok())
        .flat_map(|v| match v.get("tools") {
            Some(serde_json::Value::Array(tools)) => tools.clone(),
            _ => Vec::new(),
        })
        .filter_map(|t| t.as_object().cloned())
        .collect()
}
