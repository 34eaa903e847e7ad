//! The JSON stages: the policy's projection, then the fill that keeps as much whole JSON as
//! fits ([`super::fill_stage`]).

use std::borrow::Cow;

use serde_json::Value;

use super::super::parts::{compact, JsonValue, Part, Structured, Work, READ_SHRUNK_BYTES};
use super::fill_stage::{json_size, size_ratio, Filled, JsonFill, Try};
use crate::budget::engine::note::render;
use crate::budget::engine::{Budgeted, Engine, Run, Strategy};
use crate::budget::parts::prefix::Scan;
use crate::budget::shape::exact::has_f64;
use crate::budget::shape::toon::{decode, encode, encode_exact};

impl Engine {
    pub(super) fn json_stages(&self, run: &mut Run) -> Option<Budgeted> {
        let has_json = run.work.structured.is_some()
            || run
                .work
                .parts
                .iter()
                .any(|p| matches!(p, Part::Json { .. }));
        if !has_json {
            return None;
        }
        // when the prose alone is over the budget, no JSON cut can help: go to the preview
        let mut rest = run.work.clone();
        rest.parts.retain(|p| !matches!(p, Part::Json { .. }));
        rest.structured = None;
        rest.cost_up_to(&self.counter, run.limit)?;
        // a projection or TOON writes the JSON from its value: it must read back exactly (the
        // fill copies what it keeps from the text, so any JSON text is filled exactly)
        if run.policy.project.is_some() || run.policy.toon {
            keep_unexact(
                &mut run.work,
                &mut run.facts.cuts,
                run.policy.project.is_some(),
            );
        }
        let base_cuts = run.facts.cuts.clone();
        if run.policy.toon {
            if let Some(done) = self.toon_stage(run) {
                return Some(done);
            }
        }
        // a projection named by the tool's name is a guess: used only where the data has the
        // fields it names (and, built in, no field of another shape)
        let misfit = run.policy.project.as_ref().and_then(|p| {
            json_texts(&run.work)
                .iter()
                .find_map(|t| p.misfit(t))
                .map(|why| (p.is_builtin(), why))
        });
        if let Some((builtin, why)) = &misfit {
            let whose = match builtin {
                true => "the built-in projection for this tool's name",
                false => "the policy's projection",
            };
            run.facts.cuts.push(format!("{whose} not used: {why}"));
        }
        if let Some(projection) = run.policy.project.clone().filter(|_| misfit.is_none()) {
            let mut applied = false;
            for_each_json(&mut run.work, |json| {
                let out = match json {
                    Json::Text(text) => projection.apply_text(text),
                    Json::Value(v) => projection.apply(v),
                }?;
                applied = true;
                Some(out)
            });
            if applied {
                run.facts
                    .cuts
                    .push(format!("projected with `{}`", projection.expression));
                run.stage("project");
                if let Some(done) = self.try_finish(run, Strategy::Projected) {
                    return Some(done);
                }
            }
        }
        let projected = run.work.clone();
        let cuts = run.facts.cuts.clone();
        if let Some(filled) = self.fill_to(run, &projected, &cuts, run.limit, None) {
            run.work = filled.work;
            run.facts.cuts = cuts.clone();
            run.facts.cuts.extend(filled.cuts);
            run.list = filled.list;
            // the search counted this work with this note: it fits, and is not counted again
            if let Some(counted) = filled.json_tokens {
                run.facts.strategy = Strategy::Shrunk.name();
                let text = render(&run.facts);
                let note = self.counter.count(&text);
                debug_assert_eq!(counted, run.work.cost(&self.counter), "the search's count");
                if run.fits_size(&text) && counted + note <= run.limit {
                    return Some(self.finish(run, Strategy::Shrunk, counted + note));
                }
            }
            if let Some(done) = self.try_finish(run, Strategy::Shrunk) {
                return Some(done);
            }
            run.list = None;
        }
        run.work = projected;
        run.facts.cuts = if run.facts.cuts.is_empty() {
            base_cuts
        } else {
            cuts
        };
        run.stage("shrink");
        None
    }
}

impl Engine {
    /// Each JSON text that TOON writes in at least `toon_min_saving` fewer tokens, and that reads
    /// back to the same value, as TOON; done when that fits. Else the JSON is as it was.
    fn toon_stage(&self, run: &mut Run) -> Option<Budgeted> {
        let before = (run.work.clone(), run.facts.cuts.clone());
        let mut changed = false;
        for part in &mut run.work.parts {
            let Part::Json { text, value } = part else {
                continue;
            };
            let parsed = value.get(text);
            let toon = if has_f64(parsed) {
                value
                    .numbers(text)
                    .ok()
                    .and_then(|n| encode_exact(parsed, n))
            } else {
                encode(parsed)
            };
            let Some(toon) = toon else { continue };
            if decode(&toon).ok().as_ref() != Some(parsed) {
                continue;
            }
            // against the compact JSON, which the engine could send instead without losing
            // anything either (a pretty-printed text is no fair comparison)
            let json_tokens = self
                .counter
                .count(text)
                .min(self.counter.count(&compact(parsed)));
            let toon_tokens = self.counter.count(&toon);
            let saved = json_tokens.saturating_sub(toon_tokens);
            if (saved as f64) < run.policy.toon_min_saving * json_tokens as f64 || saved == 0 {
                continue;
            }
            run.facts.cuts.push(format!(
                "JSON written as TOON (the same value, tables of rows): {} -> {} tokens",
                crate::ground::units::thousands(json_tokens),
                crate::ground::units::thousands(toon_tokens)
            ));
            *part = Part::Prose {
                text: Cow::Owned(toon),
                scan: Default::default(),
            };
            changed = true;
        }
        if changed {
            run.stage("toon");
            if let Some(done) = self.try_finish(run, Strategy::Toon) {
                return Some(done);
            }
        }
        (run.work, run.facts.cuts) = before;
        None
    }
}

/// A JSON part as a stage is handed it: its text when its value has not been built.
enum Json<'v> {
    Text(&'v str),
    Value(&'v Value),
}

/// Replace each JSON part (and structuredContent) by `f`'s value, where it gives one.
fn for_each_json(work: &mut Work, mut f: impl FnMut(Json) -> Option<Value>) {
    for part in &mut work.parts {
        if let Part::Json { text, value } = part {
            let json = if value.is_parsed() {
                Json::Value(value.get(text))
            } else {
                Json::Text(text)
            };
            if let Some(new) = f(json) {
                // a number the projection passes through is written as the text had it; when
                // that cannot be told, the part is not projected
                if let Ok(written) = value.write(text, &new) {
                    *text = Cow::Owned(written);
                    *value = JsonValue::parsed(new);
                }
            }
        }
    }
    if let Some(s) = &mut work.structured {
        if let Some(new) = f(Json::Value(s.value())) {
            *s = Structured::owned(new);
        }
    }
}

/// The search's first guess aims at this share of the room: the sample's bytes per token are
/// within a few percent of the whole's (2-3% under on the corpus's lists, so the guess lands a
/// little under; about 1% over on the directory tree, so a guess at the whole room overshoots).
const AIM: f64 = 0.99;

impl Engine {
    /// `from`'s JSON filled to the most that fits `limit` tokens with the note (the cuts so
    /// far, then the fill's), the rest of the work as it is; with `json_only`, only the JSON
    /// and the note are held to `limit` and to that share of the size bounds (the spill
    /// stage's room for JSON beside a preview). `None` when not even the least of it fits.
    pub(super) fn fill_to<'a>(
        &self,
        run: &Run<'a>,
        from: &Work<'a>,
        cuts: &[String],
        limit: usize,
        json_only: Option<f64>,
    ) -> Option<Filled<'a>> {
        let structured_text = from.structured.as_ref().map(|s| compact(s.value()));
        let mut fill = JsonFill::new(from, structured_text.as_deref(), run.policy.fill_caps())?;
        // the tokens of what is not JSON, and the size bounds, stay the same in every try
        let mut rest = from.clone();
        rest.parts.retain(|p| !matches!(p, Part::Json { .. }));
        rest.structured = None;
        let rest_tokens = match json_only {
            Some(_) => 0,
            None => rest.cost(&self.counter),
        };
        let size = &run.policy.size;
        // each JSON text of the last try, with what counting it learnt: a try counts only
        // past the bytes it shares with the last one (a longer list repeats its head)
        let mut last: Vec<(String, Scan)> = Vec::new();
        // the note as the sample's cuts would write it: its fill lines name the same lists as
        // the whole's (only their counts differ)
        let mut facts = run.facts.clone();
        facts.cuts = cuts.to_vec();
        facts.strategy = Strategy::Shrunk.name();
        let per_token = match fill.sample() {
            Some((sample, lines)) => {
                let mut scan = Scan::default();
                let n = self.counter.count_scanned(&sample, usize::MAX, &mut scan);
                let per_token = sample.len() as f64 / n.unwrap_or(0).max(1) as f64;
                last.push((sample, scan));
                facts.cuts.extend(lines);
                per_token.clamp(1.0, 16.0)
            }
            None => 4.0,
        };
        let note = self.counter.count(&render(&facts));
        // the first guess aims just under the room that leaves, so most searches count once or twice
        let room = limit.saturating_sub(rest_tokens + note);
        let start = (room as f64 * per_token * AIM) as usize;
        let mut filled = fill.search(start, |f| {
            let mut facts = run.facts.clone();
            facts.cuts = cuts.to_vec();
            facts.cuts.extend(f.cuts.iter().cloned());
            facts.strategy = Strategy::Shrunk.name();
            let text = render(&facts);
            let note = self.counter.count(&text);
            let mut json_tokens = 0;
            for (i, t) in json_texts(&f.work).into_iter().enumerate() {
                let mut scan = match last.get(i) {
                    Some((old, scan)) => Scan::rebase(old, scan, &t),
                    None => Scan::default(),
                };
                json_tokens += self
                    .counter
                    .count_scanned(&t, usize::MAX, &mut scan)
                    .unwrap_or_default();
                let kept = (t.into_owned(), scan);
                match last.get_mut(i) {
                    Some(slot) => *slot = kept,
                    None => last.push(kept),
                }
            }
            let (sized, size_ratio) = match size.is_unbounded() {
                true => (true, f64::INFINITY),
                false => {
                    let (bounds, measured) = match json_only {
                        Some(share) => (size.share(share), json_size(&f.work, &text)),
                        None => (
                            *size,
                            f.work.size_as(
                                Some(&text),
                                run.policy.note_first,
                                run.policy.resources_json,
                            ),
                        ),
                    };
                    (bounds.fits(measured), size_ratio(&bounds, measured))
                }
            };
            let room = limit.saturating_sub(rest_tokens + note);
            Try {
                fits: sized && json_tokens <= room,
                json_tokens,
                room,
                size_ratio,
            }
        })?;
        filled.json_tokens = filled.json_tokens.map(|j| j + rest_tokens);
        Some(filled)
    }
}

pub(super) fn json_texts<'w>(work: &'w Work) -> Vec<Cow<'w, str>> {
    let mut out: Vec<Cow<str>> = work
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Json { text, .. } => Some(Cow::Borrowed(text.as_ref())),
            _ => None,
        })
        .collect();
    out.extend(
        work.structured
            .as_ref()
            .map(|s| Cow::Owned(compact(s.value()))),
    );
    out
}

/// Each JSON part a rewrite could not keep exactly (serde cannot read it, or an object repeats
/// a key, which serde resolves silently to the last value) becomes the text it is, and the
/// note says so. A large text a projection reads is checked by that read instead.
fn keep_unexact(work: &mut Work, cuts: &mut Vec<String>, projects: bool) {
    for p in &mut work.parts {
        let Part::Json { text, value } = p else {
            continue;
        };
        if projects && text.len() >= READ_SHRUNK_BYTES && !value.is_parsed() {
            continue;
        }
        let exact = value
            .rewritable(text)
            .and_then(|()| match value.is_parsed() {
                true if has_f64(value.get(text)) => value.numbers(text).map(|_| ()),
                _ => Ok(()),
            });
        if let Err(e) = exact {
            cuts.push(e.describe());
            *p = Part::Prose {
                text: text.clone(),
                scan: Default::default(),
            };
        }
    }
}
