//! What each client's model is sent of one probe result: as the server sent it, and after the
//! engine run with that client's limits (what `proxy --client` would send it).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use crate::budget::{CallInfo, Engine};
use crate::config::profiles::{client_view_in, engine_limits, ClientProfile, ResultLimits};
use crate::ground::tokens::Tokenizer;
use crate::measure::facts::ClientResult;

/// One row per client; clients with the same limits share one engine run.
///
/// `meta`: the numbers in the tool definition's `_meta` (a client may read its limits there).
pub fn client_rows(
    clients: &[&ClientProfile],
    engine: Option<&Engine>,
    call: &CallInfo,
    result: &Value,
    meta: &BTreeMap<String, u64>,
    tokenizer: Tokenizer,
) -> Vec<ClientResult> {
    let mut runs: HashMap<ResultLimits, Value> = HashMap::new();
    // the clients show many of the same texts: each is counted once
    let memo: RefCell<HashMap<(&'static str, usize, u64), usize>> = RefCell::default();
    let count_in = |t: Tokenizer, text: &str| {
        let mut h = DefaultHasher::new();
        text.hash(&mut h);
        let key = (t.name(), text.len(), h.finish());
        if let Some(n) = memo.borrow().get(&key) {
            return *n;
        }
        let n = t.count(text);
        memo.borrow_mut().insert(key, n);
        n
    };
    let count = |text: &str| count_in(tokenizer, text);
    clients
        .iter()
        .map(|profile| {
            // what is shown, counted again in the client's model's tokenizer where it has one
            let model = profile
                .model_tokenizer()
                .filter(|m| m.name() != tokenizer.name());
            let recount = model.map(|m| move |text: &str| count_in(m, text));
            let again = recount.as_ref().map(|r| r as &dyn Fn(&str) -> usize);
            let budgeted = engine.map(|engine| {
                let limits = engine_limits(profile);
                let out = runs
                    .entry(limits)
                    .or_insert_with(|| engine.for_limits(limits).run(call, result).result);
                client_view_in(profile, out, meta, &count, again)
            });
            ClientResult {
                client: profile.id.clone(),
                raw: client_view_in(profile, result, meta, &count, again),
                model_tokenizer: model.map(|m| m.name().to_string()),
                budgeted,
                confirmed: profile.confirmed(),
                measured: None,
                measured_version: None,
                unlisted: false,
            }
        })
        .collect()
}
