//! The labels a request is counted under, bounded so that no client can grow the metrics
//! without end (issue 37): a tool keeps its name only when the upstream listed it (or it is the
//! proxy's own), any other name is `unknown`; the first [`MAX_CLIENT_NAMES`] client names keep
//! theirs, later ones are `other`; and all the label sets together make at most [`MAX_SERIES`]
//! Prometheus series: a request whose labels would make a new series past it is counted with
//! `other` in every label it chose. What is folded is counted by reason
//! (`mcp_budget.labels.folded`), and the first fold by the cap is said once.
//!
//! One lock per request, as before (it replaces the two of the per-label caps); a label set
//! already admitted is found by a 64-bit fingerprint, with no allocation.

// a build without the `telemetry` feature lists tools but bounds no label
#![cfg_attr(not(feature = "telemetry"), allow(dead_code))]

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;

use super::names::{DURATION_BUCKETS, ENGINE_BUCKETS, TOKEN_BUCKETS};

/// Distinct client names kept as labels at most; the rest count as `other` (a client names
/// itself, and a name per request must not take every series).
pub const MAX_CLIENT_NAMES: usize = 64;
/// A label's characters at most.
pub const MAX_LABEL_CHARS: usize = 64;

/// The Prometheus series one proxy's metrics make at most. A series costs its scraper a few KB
/// of memory and the scrape about 200 bytes of text, so 10,000 keep one proxy's `/metrics`
/// under 2 MB and its share of a Prometheus in the tens of MB. They hold about 150 (tool,
/// client, strategy) sets with their request durations (66 series each), more than a proxy in
/// front of one upstream is called with in practice: the demo's 13 tools from 8 clients, one
/// strategy each, make 6,864.
pub const MAX_SERIES: usize = 10_000;

/// The series of one request's labels (method, tool, `error.type`, client, transport): the
/// duration histogram's buckets, `+Inf`, `_sum` and `_count`.
const OPERATION_SERIES: usize = DURATION_BUCKETS.len() + 3;
/// The series of one result's labels (tool, client, strategy): the raw and budgeted token
/// histograms, the engine's, the max gauge and the spill counter.
const RESULT_SERIES: usize = 2 * (TOKEN_BUCKETS.len() + 3) + ENGINE_BUCKETS.len() + 3 + 2;
/// The series of one (tool, `--client` profile) over-limit counter.
const PROFILE_SERIES: usize = 1;
/// Kept aside within [`MAX_SERIES`] for the folded label sets, which are admitted always: the
/// three methods by `error.type` (none or `other`) by transport (`pipe`, `tcp`), one result
/// set, the over-limit counter of up to 64 profiles and the fold counter's reasons.
const FOLDED_SERIES: usize =
    3 * 2 * 2 * OPERATION_SERIES + RESULT_SERIES + 64 * PROFILE_SERIES + Fold::ALL.len();

/// The label of a tool the upstream did not list.
pub const UNKNOWN: &str = "unknown";
/// The label of what a cap folded.
pub const OTHER: &str = "other";

/// Why a label was folded: the value of `mcp_budget.fold.reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// A tool the upstream did not list: `unknown`.
    UnlistedTool,
    /// A client name past [`MAX_CLIENT_NAMES`]: `other`.
    ClientNames,
    /// Labels that would have made a series past [`MAX_SERIES`]: `other` in every label.
    Series,
}

impl Fold {
    pub const ALL: [Fold; 3] = [Fold::UnlistedTool, Fold::ClientNames, Fold::Series];

    pub fn name(self) -> &'static str {
        match self {
            Fold::UnlistedTool => "unlisted_tool",
            Fold::ClientNames => "client_names",
            Fold::Series => "series",
        }
    }
}

/// A request's labels as it came.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    pub method: &'static str,
    pub tool: Option<&'a str>,
    pub client: &'a str,
    pub transport: &'static str,
    pub error: Option<&'a str>,
    /// A result's strategy and the `--client` profiles whose limit it breaks.
    pub result: Option<(&'a str, &'a [String])>,
}

/// A request's labels as they are counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bounded {
    pub tool: Option<String>,
    pub client: String,
    pub error: Option<String>,
    /// The strategy: `Some` when the series cap folded it to `other`.
    pub strategy: Option<String>,
    pub folded: Vec<Fold>,
    /// The first fold by the series cap (to be said once).
    pub first_series_fold: bool,
}

/// The labels seen, under one lock.
pub struct Labels {
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    /// The tools the upstream listed and the proxy's own: each name and its label.
    listed: HashMap<String, String>,
    clients: HashSet<String>,
    /// Fingerprints of the label sets admitted (request, result, profile).
    sets: HashSet<u64>,
    series: usize,
    folded_once: bool,
    hasher: RandomState,
}

impl Default for Labels {
    fn default() -> Self {
        Labels {
            seen: Mutex::new(Seen::default()),
        }
    }
}

impl Labels {
    /// The tools that keep their name from now on (the upstream's list, read again when it
    /// changes, and the proxy's own).
    pub fn list_tools<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        let listed = names
            .into_iter()
            .map(|n| (n.to_string(), n.chars().take(MAX_LABEL_CHARS).collect()))
            .collect();
        self.lock().listed = listed;
    }

    /// The labels `asked` is counted under.
    pub fn bound(&self, asked: &Asked<'_>) -> Bounded {
        let mut seen = self.lock();
        let mut folded = Vec::new();
        let tool = asked.tool.map(|t| match seen.listed.get(t) {
            Some(label) => label.clone(),
            None => {
                folded.push(Fold::UnlistedTool);
                UNKNOWN.to_string()
            }
        });
        let client = seen.client(asked.client, &mut folded);
        let named = Bounded {
            tool,
            client,
            error: asked.error.map(String::from),
            strategy: None,
            folded,
            first_series_fold: false,
        };
        let strategy = asked.result.map(|(s, _)| s);
        let profiles = asked.result.map_or(&[][..], |(_, p)| p);
        if seen.admit(
            asked,
            &named,
            strategy,
            profiles,
            MAX_SERIES - FOLDED_SERIES,
        ) {
            return named;
        }
        let mut other = Bounded {
            tool: named.tool.map(|_| OTHER.to_string()),
            client: OTHER.into(),
            error: named.error.map(|_| OTHER.to_string()),
            strategy: strategy.map(|_| OTHER.to_string()),
            folded: named.folded,
            first_series_fold: !seen.folded_once,
        };
        other.folded.push(Fold::Series);
        seen.folded_once = true;
        seen.admit(
            asked,
            &other,
            other.strategy.as_deref(),
            profiles,
            MAX_SERIES,
        );
        other
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Seen {
    /// `name` as a label: at most [`MAX_LABEL_CHARS`] characters, and one of the first
    /// [`MAX_CLIENT_NAMES`] distinct names, else `other`.
    fn client(&mut self, name: &str, folded: &mut Vec<Fold>) -> String {
        let name: String = name.chars().take(MAX_LABEL_CHARS).collect();
        if self.clients.contains(&name) {
            return name;
        }
        if self.clients.len() >= MAX_CLIENT_NAMES {
            folded.push(Fold::ClientNames);
            return OTHER.into();
        }
        self.clients.insert(name.clone());
        name
    }

    /// Admit the label sets of `b` (and of its result's `strategy`, when there is a result)
    /// when the new series they make keep the total within `limit`; whether they were. Each set
    /// is known by a fingerprint of its values, its kind first, so two kinds never share one.
    fn admit(
        &mut self,
        asked: &Asked<'_>,
        b: &Bounded,
        strategy: Option<&str>,
        profiles: &[String],
        limit: usize,
    ) -> bool {
        let (tool, client) = (b.tool.as_deref(), b.client.as_str());
        let operation = self.hasher.hash_one((
            0u8,
            asked.method,
            tool,
            b.error.as_deref(),
            client,
            asked.transport,
        ));
        let mut new = Vec::new();
        let mut cost = 0;
        let mut add = |sets: &HashSet<u64>, key: u64, series: usize| {
            if !sets.contains(&key) {
                new.push(key);
                cost += series;
            }
        };
        add(&self.sets, operation, OPERATION_SERIES);
        if let (Some(tool), Some(strategy)) = (tool, strategy) {
            add(
                &self.sets,
                self.hasher.hash_one((1u8, tool, client, strategy)),
                RESULT_SERIES,
            );
            for p in profiles {
                add(
                    &self.sets,
                    self.hasher.hash_one((2u8, tool, p)),
                    PROFILE_SERIES,
                );
            }
        }
        if cost == 0 {
            return true;
        }
        if self.series + cost > limit {
            return false;
        }
        self.series += cost;
        self.sets.extend(new);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call<'a>(tool: &'a str, client: &'a str) -> Asked<'a> {
        Asked {
            method: "tools/call",
            tool: Some(tool),
            client,
            transport: "pipe",
            error: None,
            result: Some(("passthrough", &[])),
        }
    }

    #[test]
    fn a_tool_keeps_its_name_only_when_listed_and_client_names_are_capped() {
        let labels = Labels::default();
        labels.list_tools(["search", "mcp_budget_read"]);
        let b = labels.bound(&call("search", "claude-code"));
        assert_eq!(b.tool.as_deref(), Some("search"));
        assert_eq!(b.client, "claude-code");
        assert!(b.folded.is_empty());
        let b = labels.bound(&call("made-up-1", "claude-code"));
        assert_eq!(b.tool.as_deref(), Some(UNKNOWN));
        assert_eq!(b.folded, [Fold::UnlistedTool]);
        for i in 1..MAX_CLIENT_NAMES {
            assert_eq!(
                labels.bound(&call("search", &format!("c{i}"))).client,
                format!("c{i}")
            );
        }
        let b = labels.bound(&call("search", "one-too-many"));
        assert_eq!(
            (b.client.as_str(), b.folded.as_slice()),
            (OTHER, &[Fold::ClientNames][..])
        );
        assert_eq!(
            labels.bound(&call("search", "claude-code")).client,
            "claude-code"
        );
        assert_eq!(
            labels.bound(&call("search", &"x".repeat(500))).client,
            OTHER
        );
        // a label is at most 64 characters
        labels.list_tools([&*"t".repeat(100)]);
        let long = "t".repeat(100);
        assert_eq!(
            labels.bound(&call(&long, "c1")).tool.unwrap().len(),
            MAX_LABEL_CHARS
        );
    }

    #[test]
    fn the_series_stay_within_the_cap_and_what_is_folded_is_said_once() {
        let labels = Labels::default();
        let tools: Vec<String> = (0..2_000).map(|i| format!("tool-{i}")).collect();
        labels.list_tools(tools.iter().map(String::as_str));
        let mut first = 0;
        let mut folded = 0;
        for (i, t) in tools.iter().enumerate() {
            let b = labels.bound(&call(t, &format!("c{}", i % 8)));
            first += usize::from(b.first_series_fold);
            if b.folded.contains(&Fold::Series) {
                folded += 1;
                assert_eq!((b.tool.as_deref(), b.client.as_str()), (Some(OTHER), OTHER));
                assert_eq!(b.strategy.as_deref(), Some(OTHER));
            }
        }
        assert_eq!(first, 1);
        let kept = (MAX_SERIES - FOLDED_SERIES) / (OPERATION_SERIES + RESULT_SERIES);
        assert_eq!(folded, 2_000 - kept);
        let series = labels.lock().series;
        assert!(series <= MAX_SERIES, "{series}");
        // a label set admitted before the cap is still counted under its own name
        let b = labels.bound(&call("tool-0", "c0"));
        assert_eq!((b.tool.as_deref(), b.folded.len()), (Some("tool-0"), 0));
    }
}
