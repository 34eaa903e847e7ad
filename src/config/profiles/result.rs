//! What reaches the model of one tool result in one client: the parts it sends
//! (`[client.sends]`), then its result rules in order of force (refuse, spill, truncate, cap),
//! each cutting the text as the profile says, with the client's own message in place of the cut.
//!
//! The model-visible text is the sent parts' texts joined by line breaks (text blocks, embedded
//! resource text, links and unknown blocks as compact JSON, structuredContent as compact JSON);
//! images are counted at their pixel cost and are not text. Where a client cuts several text
//! blocks one by one, this cuts them as one text: exact for one-text results, close otherwise.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use super::per_block::{block_rules, cut_blocks, text_budget};
use super::rule_match::applies;
pub use super::rule_match::{is_json_array_result, misstated_by, stated_cut};
use super::size::{measure, prefix, suffix_start, threshold};
use super::visible::{visible, CountFn};
use super::{Break, ClientProfile, ClientSeen, Outcome, Rule};
use crate::ground::text::{char_count, line_count};
use crate::ground::tokens::Tokenizer;
use crate::ground::units::thousands;

/// The result rules that change what the model is sent, strongest first.
pub(super) fn result_rules(profile: &ClientProfile) -> Vec<&Rule> {
    let force = |e: &str| match e {
        "refuse" => 0,
        "spill" => 1,
        "truncate" => 2,
        "cap" => 3,
        _ => 4,
    };
    let mut rules: Vec<&Rule> = profile
        .rules
        .iter()
        .filter(|r| r.applies == "result" && !r.per_block && force(&r.effect) < 4)
        .collect();
    rules.sort_by_key(|r| force(&r.effect));
    rules
}

/// What `profile`'s client shows the model of `result`, counted in `tokenizer`.
pub fn client_view(profile: &ClientProfile, result: &Value, tokenizer: Tokenizer) -> ClientSeen {
    client_view_counted(profile, result, &BTreeMap::new(), &|t| tokenizer.count(t))
}

/// Whether `profile`'s client would not show `result` whole (cut, filed away or refused: what
/// [`client_view`]'s outcome says), answered by the first rule over its limit, without
/// cutting or wording anything: the proxy asks this of every call its telemetry counts.
pub fn breaks_limit(profile: &ClientProfile, result: &Value, tokenizer: Tokenizer) -> bool {
    let count: CountFn = &|t| tokenizer.count(t);
    let v = visible(profile, result, count);
    let whole = join(&v.texts);
    let meta = BTreeMap::new();
    let error = result["isError"] == true;
    if v.only_dropped_images() {
        return true;
    }
    let over = |r: &Rule, t: &str| {
        applies(r, &v, t, error) && measure(&r.unit, t, 0, count) > threshold(r, &meta)
    };
    if block_rules(profile).any(|r| v.texts.iter().any(|t| over(r, t))) {
        return true;
    }
    result_rules(profile).into_iter().any(|rule| {
        applies(rule, &v, &whole, error)
            && measure(&rule.unit, &whole, v.image_tokens, count) > threshold(rule, &meta)
    })
}

/// [`client_view`] with a counter of its own. A result shown whole costs the sum of its texts'
/// counts, each text counted alone (as the audit's `model_tokens` counts blocks); a cut one, the
/// count of what is shown.
///
/// `meta`: the numbers in the tool definition's `_meta`, which may raise a rule's threshold.
pub fn client_view_counted(
    profile: &ClientProfile,
    result: &Value,
    meta: &BTreeMap<String, u64>,
    count: CountFn,
) -> ClientSeen {
    client_view_in(profile, result, meta, count, None)
}

/// [`client_view_counted`], and what is shown counted again by `model` (the client's model's
/// tokenizer) into `model_tokens`: the rules act on `count`'s numbers either way.
pub fn client_view_in(
    profile: &ClientProfile,
    result: &Value,
    meta: &BTreeMap<String, u64>,
    count: CountFn,
    model: Option<CountFn>,
) -> ClientSeen {
    let mut v = visible(profile, result, count);
    let file_path = profile
        .file_path
        .clone()
        .unwrap_or_else(|| format!("<{} file>", profile.id));
    let error = result["isError"] == true;
    // the texts as received, then as each per-block rule left them
    let received = v
        .texts
        .iter()
        .map(|t| t.len() + 1)
        .sum::<usize>()
        .saturating_sub(1);
    let blocks = cut_blocks(profile, &mut v, meta, error, &file_path, count);
    let whole = join(&v.texts);
    let total = whole.len();
    // what is kept: `whole[..head]` and `whole[tail..]` once something was cut
    let mut cut: Option<(usize, usize)> = None;
    let mut outcome = match blocks.acted.is_empty() {
        true => Outcome::Full,
        false => Outcome::Truncated,
    };
    let mut shown: Option<String> = None;
    let mut acted = blocks.acted.clone();
    let mut breaks = None;
    for rule in result_rules(profile) {
        if !applies(rule, &v, &whole, error) {
            continue;
        }
        let limit = threshold(rule, meta);
        let kept = kept_text(&whole, cut);
        let value = measure(&rule.unit, &kept, v.image_tokens, count);
        if value <= limit {
            continue;
        }
        acted.push(describe(rule, limit));
        let fill = |m: &str, head_n: usize, tail_n: usize, removed: usize| {
            m.replace("{total}", &thousands(value))
                .replace("{removed}", &thousands(removed))
                .replace("{head}", &thousands(head_n))
                .replace("{tail}", &thousands(tail_n))
                .replace("{kb}", &format!("{:.1}", total as f64 / 1024.0))
                .replace("{chars}", &thousands(char_count(&whole)))
                .replace("{lines}", &thousands(line_count(&whole)))
                .replace("{file}", &file_path)
        };
        let message = rule.message.as_deref().unwrap_or("");
        let (head_src, tail_src) = cut.unwrap_or((total, 0));
        // images are kept whole or not at all: over a limit in tokens by themselves, refused
        let images_over = rule.unit == "tokens" && v.image_tokens > limit;
        match rule.effect.as_str() {
            _ if images_over || rule.effect == "refuse" => {
                outcome = Outcome::Refused;
                cut = Some((0, total));
                shown = Some(fill(message, 0, 0, value));
                breaks = Some(match rule.when.as_deref() {
                    Some("json_array") => Break::JsonArrayError,
                    _ => Break::CapNoPreview {
                        cap: limit,
                        unit: rule.unit.clone(),
                    },
                });
                break;
            }
            "spill" => {
                outcome = Outcome::SpilledToFile;
                let n = rule.preview.unwrap_or(0) as usize;
                let unit = rule.preview_unit.as_deref().unwrap_or(&rule.unit);
                let end = prefix(&whole[..head_src], unit, n, count);
                cut = Some((end, total));
                shown = Some(format!("{}{}", fill(message, n, 0, value), &whole[..end]));
                break;
            }
            _ => {
                // truncate (a head and a tail) or cap (the head only)
                outcome = Outcome::Truncated;
                let share = if rule.effect == "cap" {
                    1.0
                } else {
                    rule.head_share.unwrap_or(0.5)
                };
                // images are kept whole: a limit in tokens leaves the text what they do not take
                let text_limit = match rule.unit.as_str() {
                    "tokens" => limit.saturating_sub(v.image_tokens),
                    _ => limit,
                };
                let header = rule.header.as_deref().map(|h| fill(h, 0, 0, 0));
                let header = header.unwrap_or_default();
                let text_limit = text_budget(rule, text_limit, &header, message, count);
                let head_n = (text_limit as f64 * share) as usize;
                let tail_n = text_limit - head_n;
                let mut head = prefix(&whole[..head_src], &rule.unit, head_n, count);
                if rule.cut_at_line {
                    head = whole[..head].rfind('\n').map_or(0, |at| at + 1);
                }
                let tail = tail_src + suffix_start(&whole[tail_src..], &rule.unit, tail_n, count);
                let tail = tail.max(head);
                cut = Some((head, tail));
                let left = kept_text(&whole, cut);
                let removed = value.saturating_sub(measure(&rule.unit, &left, 0, count));
                breaks = if head == 0 && tail == total {
                    Some(Break::MarkerOnly)
                } else {
                    misstated(message, &whole, &left, count)
                };
                shown = Some(format!(
                    "{header}{}{}{}",
                    &whole[..head],
                    fill(message, head_n, tail_n, removed),
                    &whole[tail..]
                ));
            }
        }
    }
    let wrap = |t: &str| match &profile.wrap {
        Some(w) if !t.is_empty() => w.replace("{text}", t),
        _ => t.to_string(),
    };
    let seen_text = match &shown {
        Some(text) => wrap(text),
        None => v
            .texts
            .iter()
            .filter(|t| !t.is_empty())
            .map(|t| wrap(t))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    // shown whole: each text counted alone, with the wrapper it gets
    let tally = |count: CountFn| -> usize {
        match shown {
            Some(_) => count(&seen_text),
            None => {
                let extra = match &profile.wrap {
                    Some(_) => count(&wrap("\u{0}").replace('\u{0}', "")),
                    None => 0,
                };
                let texts = v.texts.iter().filter(|t| !t.is_empty());
                texts.map(|x| count(x) + extra).sum()
            }
        }
    };
    let (tokens, model_tokens) = (tally(count), model.map(tally));
    let bytes = match shown {
        Some(_) => seen_text.len(),
        None => {
            let extra_bytes = wrap("\u{0}").len().saturating_sub(1);
            whole.len() + extra_bytes * v.texts.iter().filter(|t| !t.is_empty()).count()
        }
    };
    // images the client drops: said, and a result of nothing else reaches the model as nothing
    if v.images_dropped > 0 {
        breaks = breaks.or(Some(Break::ImagesDropped {
            images: v.images_dropped,
        }));
        if v.only_dropped_images() && outcome == Outcome::Full {
            outcome = Outcome::Refused;
        }
    }
    // blobs the client sends a note for, or nothing at all of a result that had content (a
    // blob the client leaves out): nothing of the result reaches the model
    let any_content = result["content"].as_array().is_some_and(|c| !c.is_empty());
    // (said only where a profile measured how it sends resources: `[client.resources]`)
    let nothing =
        any_content && profile.resources.is_some() && v.image_tokens == 0 && v.texts.is_empty();
    let noted = (v.only_notes() || (nothing && v.images_dropped == 0)) && outcome == Outcome::Full;
    if noted {
        outcome = Outcome::Refused;
    }
    // of the texts as received: what the rules on the whole kept, less the per-block words
    let kept = cut.map_or(total, |(h, t)| h + (total - t));
    let (kept, total) = match blocks.acted.is_empty() {
        true => (kept, total),
        false => (kept.saturating_sub(blocks.added), received),
    };
    // the images, and the notes the client writes beside them, in a counter's tokens
    let refused = outcome == Outcome::Refused;
    let images = |count: CountFn| -> usize {
        match refused {
            true => 0,
            false => v.image_tokens + v.image_notes.iter().map(|n| count(n)).sum::<usize>(),
        }
    };
    let mut seen_text = seen_text;
    let before = seen_text.len();
    for n in v.image_notes.iter().filter(|_| !refused) {
        if !seen_text.is_empty() {
            seen_text.push('\n');
        }
        seen_text.push_str(n);
    }
    let note_bytes = seen_text.len() - before;
    ClientSeen {
        tokens_to_model: tokens + images(count),
        model_tokens: model_tokens.zip(model).map(|(t, m)| t + images(m)),
        bytes_to_model: bytes + note_bytes,
        outcome,
        kept_fraction: match (total, outcome) {
            _ if noted => 0.0,
            (0, Outcome::Refused) => 0.0,
            (0, _) => 1.0,
            _ => kept as f64 / total as f64,
        },
        sent: v.sent,
        rules: acted,
        breaks,
        text: seen_text,
    }
}

/// A marker that states a fixed amount cut (no `{removed}` in it) where that amount is off by
/// more than a tenth from what was cut, in the marker's own unit.
fn misstated(message: &str, whole: &str, kept: &str, count: CountFn) -> Option<Break> {
    let (stated, unit) = stated_cut(message)?;
    let cut = measure(unit, whole, 0, count).saturating_sub(measure(unit, kept, 0, count));
    misstated_by(stated, cut, unit)
}

/// "40,000 chars (truncate)", or "… (truncate, unconfirmed)".
fn describe(r: &Rule, threshold: usize) -> String {
    let unconfirmed = if r.sourced.confirmed {
        ""
    } else {
        ", unconfirmed"
    };
    format!(
        "{} {} ({}{unconfirmed})",
        thousands(threshold),
        r.unit,
        r.effect
    )
}

/// The texts as one, joined by line breaks as a client that joins them does.
fn join<'a>(texts: &[Cow<'a, str>]) -> Cow<'a, str> {
    match texts {
        [one] => one.clone(),
        many => Cow::Owned(many.join("\n")),
    }
}

/// The kept text: all of `whole`, or its head and tail once cut.
fn kept_text(whole: &str, cut: Option<(usize, usize)>) -> Cow<'_, str> {
    match cut {
        None => Cow::Borrowed(whole),
        Some((head, tail)) => Cow::Owned(format!("{}{}", &whole[..head], &whole[tail..])),
    }
}
