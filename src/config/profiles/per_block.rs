//! The rules a client applies to each sent text alone (`per_block`: Qwen Code cuts a text over
//! 500,000 characters in the tool, before it budgets the joined result), and the room a
//! truncate rule leaves its head and tail (`keep`, `header`).

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::rule_match::applies;
use super::size::{measure, prefix, suffix_start, threshold};
use super::visible::{CountFn, Visible};
use super::{ClientProfile, Rule};
use crate::ground::units::thousands;

/// What the per-block rules did to a result's texts.
#[derive(Debug, Default)]
pub(super) struct BlockCuts {
    /// The rules that acted, described as the report lists them.
    pub acted: Vec<String>,
    /// Bytes of the texts no longer sent.
    pub removed: usize,
    /// Bytes the client's own words added (its header and marker).
    pub added: usize,
}

/// The per-block rules of a profile, in its order.
pub(super) fn block_rules(profile: &ClientProfile) -> impl Iterator<Item = &Rule> {
    profile.rules.iter().filter(|r| {
        r.applies == "result" && r.per_block && matches!(r.effect.as_str(), "truncate" | "cap")
    })
}

/// The size of head and tail together that a truncate or cap rule over `limit` keeps, in its
/// unit: the threshold, or its `keep` less the message (and the header when it counts).
pub(super) fn text_budget(
    rule: &Rule,
    limit: usize,
    header: &str,
    message: &str,
    count: CountFn,
) -> usize {
    match rule.keep {
        None => limit,
        Some(keep) => {
            let header = if rule.header_counts {
                measure(&rule.unit, header, 0, count)
            } else {
                0
            };
            (keep as usize).saturating_sub(measure(&rule.unit, message, 0, count) + header)
        }
    }
}

/// Cuts each of `v`'s texts that a per-block rule holds over its limit: its header, the head,
/// its message and the tail in place of the text.
pub(super) fn cut_blocks(
    profile: &ClientProfile,
    v: &mut Visible<'_>,
    meta: &BTreeMap<String, u64>,
    error: bool,
    file_path: &str,
    count: CountFn,
) -> BlockCuts {
    let mut done = BlockCuts::default();
    for rule in block_rules(profile) {
        let limit = threshold(rule, meta);
        for i in 0..v.texts.len() {
            let text = &v.texts[i];
            let marked = rule
                .unless_marked
                .as_deref()
                .is_some_and(|m| text.contains(m));
            let value = measure(&rule.unit, text, 0, count);
            if marked || value <= limit || !applies(rule, v, text, error) {
                continue;
            }
            let fill = |m: &str| {
                m.replace("{file}", file_path)
                    .replace("{total}", &thousands(value))
            };
            let header = rule.header.as_deref().map(fill).unwrap_or_default();
            let message = rule.message.as_deref().map(fill).unwrap_or_default();
            let budget = text_budget(rule, limit, &header, &message, count);
            let share = if rule.effect == "cap" {
                1.0
            } else {
                rule.head_share.unwrap_or(0.5)
            };
            let head_n = (budget as f64 * share) as usize;
            let head = prefix(text, &rule.unit, head_n, count);
            let mut tail = suffix_start(text, &rule.unit, budget - head_n, count).max(head);
            if rule.tail_after_head_line {
                tail = tail.max(
                    text[head..]
                        .find('\n')
                        .map_or(text.len(), |at| head + at + 1),
                );
            }
            let cut = format!("{header}{}{message}{}", &text[..head], &text[tail..]);
            done.removed += tail - head;
            done.added += header.len() + message.len();
            v.texts[i] = Cow::Owned(cut);
            v.cut_per_block = true;
            let described = format!(
                "{} {} per text ({})",
                thousands(limit),
                rule.unit,
                rule.effect
            );
            if !done.acted.contains(&described) {
                done.acted.push(described);
            }
        }
    }
    done
}
