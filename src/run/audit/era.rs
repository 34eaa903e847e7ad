//! The 2026-07-28 era's rules, checked on what a session of that era received: `resultType` on
//! every result, `ttlMs` and `cacheScope` on every tools/list page, and a version the server
//! does not speak refused with -32022 and the versions it does (what lets a client of a newer
//! revision fall back to this one instead of to `initialize`).

use super::lists::{definitions, list_all};
use super::AuditOptions;
use crate::config::ServerSpec;
use crate::ground::tokens::TokenizerSet;
use crate::ground::units::thousands;
use crate::measure::facts::{EraConformance, EraListing, VersionRefusal};
use crate::measure::{capped_eras, era_marks, measure_tools_pages, InitInfo, MAX_ERAS};
use crate::wire::connect::connect;
use crate::wire::upstream::{Listed, Protocol, Session, SessionOptions, UpstreamError};

/// A version no server speaks, asked in to see the server refuse it.
pub(super) const UNKNOWN_VERSION: &str = "2099-01-01";

/// What the audit found of the eras a server speaks.
pub(super) struct Eras {
    /// Each version once, newest first, at most [`MAX_ERAS`].
    pub spoken: Vec<String>,
    /// A warning when the list was cut.
    pub cut: Option<String>,
    /// The handshake era's version and tools/list pages, from the second connection.
    pub handshake: Option<(String, Listed)>,
}

/// The protocol versions the server speaks, as far as this audit asked: the one the session
/// negotiated, the `server/discover` result's others, and, when `--protocol auto` found the
/// 2026-07-28 era, the handshake era's version from a second connection that only sends
/// `initialize` (a server of both eras answers either first request), with the tools that
/// connection lists (a client of that era is offered those). Each once, newest first, at
/// most [`MAX_ERAS`]; when the list was cut, a warning saying so.
pub(super) async fn eras(
    spec: &ServerSpec,
    opts: &AuditOptions,
    session: &Session,
    init: &InitInfo,
) -> Eras {
    let mut spoken: Vec<String> = session.protocol_version().into_iter().collect();
    let mut handshake = None;
    if opts.session.protocol == Protocol::Auto && session.handshake() == "server/discover" {
        let legacy = SessionOptions {
            protocol: Protocol::Legacy,
            record: false,
            ..opts.session.clone()
        };
        let probe =
            tokio::time::timeout(std::time::Duration::from_secs(10), connect(spec, &legacy));
        if let Ok(Ok(mut old)) = probe.await {
            spoken.extend(old.protocol_version());
            let version = old.protocol_version();
            let listing = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                list_all(&mut old, "tools/list"),
            );
            if let (Some(v), Ok(Ok(listed))) = (version, listing.await) {
                handshake = Some((v, listed));
            }
            old.close().await;
        }
    }
    let (eras, distinct) = capped_eras(&init.supported_versions, &spoken);
    let cut = (distinct > eras.len()).then(|| {
        format!(
            "server/discover listed {} protocol versions: `eras` keeps the newest {MAX_ERAS} of the {} distinct ones",
            thousands(init.supported_versions.len()),
            thousands(distinct)
        )
    });
    Eras {
        spoken: eras,
        cut,
        handshake,
    }
}

/// The handshake era's listing as a client of that era gets it, when its tool definitions
/// differ from the ones the audit's own era listed (`listed`); `None` when they are the same.
pub(super) fn handshake_listing(
    (version, listed): &(String, Listed),
    modern: &[&str],
    set: &TokenizerSet,
) -> Option<EraListing> {
    let texts: Vec<&str> = listed.pages.iter().map(String::as_str).collect();
    if definitions(&texts) == definitions(modern) {
        return None;
    }
    let measured = measure_tools_pages(&texts, set).ok()?;
    Some(EraListing {
        protocol_version: version.clone(),
        pages: measured.list.pages,
        tool_count: measured.list.tool_count,
        model_tokens: measured.list.model_tokens,
        first_page_tools: measured.list.first_page_tools,
        tools: measured.tools.iter().map(|t| t.name.clone()).collect(),
        tool_tokens: measured.tools.iter().map(|t| t.model_tokens).collect(),
    })
}

/// The checks on the handshake's result, the tools/list pages and the probes' results
/// (`probes`: each probe's tool and whether its result had a `resultType`), and one request in
/// an unknown version.
pub(super) async fn conformance(
    session: &Session,
    tools_pages: &[String],
    probes: &[(String, bool)],
) -> EraConformance {
    let mut c = EraConformance::default();
    if !era_marks(session.initialize_response().result_text()).result_type {
        c.without_result_type.push(session.handshake().to_string());
    }
    for (i, page) in tools_pages.iter().enumerate() {
        let marks = era_marks(page);
        if !marks.result_type {
            c.without_result_type
                .push(format!("tools/list page {}", i + 1));
        }
        c.tools_list_ttl_ms.push(marks.ttl_ms);
        c.tools_list_cache_scope.push(marks.cache_scope);
    }
    for (tool, typed) in probes {
        if !typed {
            c.without_result_type.push(format!("tools/call {tool}"));
        }
    }
    let asked = UNKNOWN_VERSION.to_string();
    c.unknown_version = match session.discover_at(UNKNOWN_VERSION).await {
        Ok(_) => Some(VersionRefusal {
            asked,
            code: None,
            lists_supported: false,
        }),
        Err(UpstreamError::Rpc { code, data, .. }) => Some(VersionRefusal {
            asked,
            code: Some(code),
            lists_supported: data
                .as_ref()
                .and_then(|d| d["supported"].as_array())
                .is_some_and(|v| !v.is_empty()),
        }),
        // no answer at all (a transport failure) says nothing about the rule
        Err(_) => None,
    };
    c
}
