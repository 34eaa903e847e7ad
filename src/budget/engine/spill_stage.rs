//! The spill stage: JSON filled to half the budget to leave room, extra blocks left out, and a preview of the text
//! that fills the rest of the budget exactly; plus what the spill file holds.

use std::borrow::Cow;

use serde_json::Value;

use super::super::parts::{block as part_block, compact, Part, Work};
use crate::budget::engine::note::render;
use crate::budget::engine::{Budgeted, Engine, Run, Strategy};
use crate::budget::strip::prefix_strip::original_offset;
use crate::budget::{Scan, SizeLimits};
use crate::ground::text::{boundary_before, line_count, Boundary};

impl Engine {
    pub(super) fn spill_stage(&self, run: &mut Run) -> Budgeted {
        let cuts = run.facts.cuts.clone();
        // JSON: as much as fits half the budget (and half the size bounds), beside the preview
        let projected = run.work.clone();
        if let Some(filled) = self.fill_to(run, &projected, &cuts, run.limit / 2, Some(0.5)) {
            run.work = filled.work;
            run.facts.cuts.extend(filled.cuts);
            run.list = filled.list;
        }
        self.drop_extras(run);
        run.facts.strategy = Strategy::Spilled.name();
        // the first prose-like part carries the preview; the rest is in the spilled original
        let preview_at = run
            .work
            .parts
            .iter()
            .position(|p| matches!(p, Part::Prose { .. } | Part::Resource { .. }));
        let (full, mut full_scan): (Cow<str>, Scan) = preview_at
            .map(|i| match &run.work.parts[i] {
                Part::Prose { text, scan } | Part::Resource { text, scan, .. } => {
                    (text.clone(), scan.clone())
                }
                _ => Default::default(),
            })
            .unwrap_or_default();
        // the original text behind the preview when the spill file is that text (lines of a
        // spilled whole result are not its lines); stripping changed it when the preview's
        // text is no longer its beginning, and then the preview's end is mapped back
        let original_text = preview_at
            .filter(|_| single_text(run.original).is_some())
            .and_then(|i| lone_text(&run.original.parts, i));
        let stripped = original_text.is_some_and(|o| !o.starts_with(full.as_ref()));
        let exact_lines = original_text.is_some();
        let total_lines = original_text.map_or(0, line_count);
        run.facts.preview_stripped = stripped;
        let mut shave = 0;
        for _ in 0..4 {
            if let Some(i) = preview_at {
                let (allowance, room) =
                    self.preview_allowance(run, i, &full, exact_lines.then_some(total_lines));
                let allowance = allowance.saturating_sub(shave);
                // a try that did not fit shaves the size bounds as it shaves the tokens
                let size_room = room.map(|r| SizeLimits {
                    bytes: r.bytes.map(|b| b.saturating_sub(shave)),
                    chars: r.chars.map(|c| c.saturating_sub(shave)),
                    lines: r.lines.map(|l| l.saturating_sub(shave / 32)),
                });
                let allowance = run
                    .policy
                    .preview_tokens
                    .map_or(allowance, |p| allowance.min(self.counter.bpe_budget(p)));
                let (mut len, mut n) =
                    self.counter
                        .prefix_scanned(&full, allowance, 0.1, &mut full_scan);
                // bytes, characters and lines: the longest prefix within what is left of them
                if let Some(room) = size_room {
                    // a resource a client sends as its block's JSON is measured escaped
                    let cut = match (&run.work.parts[i], run.policy.resources_json) {
                        (Part::Resource { .. }, true) => room.prefix_len_escaped(&full, len),
                        _ => room.prefix_len(&full, len),
                    };
                    if cut < len {
                        (len, n) = (cut, self.counter.count(&full[..cut]));
                    }
                }
                // never inside a value: back to a line end, a whole JSON element or a word
                let (at, end) = boundary_before(&full, len);
                if at < len {
                    (len, n) = (at, self.counter.count(&full[..at]));
                }
                run.facts.preview_end = Some(end);
                set_prose(
                    &mut run.work.parts[i],
                    prefix(&full, len),
                    Scan::known(len, n),
                );
                run.facts.preview_lines = None;
                run.facts.preview_resume_char = None;
                if let Some(original) = original_text {
                    let end = if stripped {
                        original_offset(original, &run.policy, len, &run.prose_chunks)
                    } else {
                        len
                    };
                    let (shown, resume) = lines_before(original, end);
                    run.facts.preview_lines = Some((shown, total_lines));
                    run.facts.preview_resume_char = resume;
                } else {
                    run.facts.cuts.retain(|c| !c.starts_with("preview:"));
                    let stops = match end {
                        Boundary::End | Boundary::Line => String::new(),
                        other => format!(", stopping {}", other.words()),
                    };
                    run.facts.cuts.push(format!(
                        "preview: the beginning of the text after stripping ({} of {} bytes{stops})",
                        len,
                        full.len()
                    ));
                }
            }
            run.stage("preview");
            match self.try_finish(run, Strategy::Spilled) {
                Some(done) => return done,
                None => shave = shave * 2 + 32,
            }
        }
        // nothing left fits beside the note: send a short note alone; all is in the spill
        run.work.parts.clear();
        run.work.structured = None;
        run.facts.cuts =
            vec!["every block left out: the budget leaves no room beside this note".into()];
        run.facts.preview_lines = None;
        run.facts.preview_resume_char = None;
        run.facts.preview_end = None;
        self.finish(run, Strategy::Spilled, usize::MAX)
    }

    /// Drop extra prose blocks and fixed blocks that crowd out the preview.
    fn drop_extras(&self, run: &mut Run) {
        let mut seen_prose = false;
        let before = run.work.parts.len();
        let mut dropped_fixed = 0;
        let fixed: usize = run
            .work
            .parts
            .iter()
            .map(|p| {
                if let Part::Fixed { tokens, .. } | Part::Image { tokens, .. } = p {
                    *tokens
                } else {
                    0
                }
            })
            .sum();
        let keep_fixed = fixed <= run.limit / 4;
        run.work.parts.retain(|p| match p {
            Part::Prose { .. } | Part::Resource { .. } => !std::mem::replace(&mut seen_prose, true),
            Part::Fixed { .. } | Part::Image { .. } if !keep_fixed => {
                dropped_fixed += 1;
                false
            }
            _ => true,
        });
        let dropped_prose = before - run.work.parts.len() - dropped_fixed;
        if dropped_prose > 0 {
            run.facts
                .cuts
                .push(format!("{dropped_prose} more text blocks left out"));
        }
        if dropped_fixed > 0 {
            run.facts.cuts.push(format!(
                "{dropped_fixed} links, images or binary blocks left out"
            ));
        }
    }

    /// Tokens left for the preview once everything else and a worst-case note are counted, and
    /// what is left of the size bounds (`None` when there are none).
    fn preview_allowance(
        &self,
        run: &mut Run,
        at: usize,
        full: &str,
        total_lines: Option<usize>,
    ) -> (usize, Option<SizeLimits>) {
        // a resource a client sends as its block's JSON: the block around an empty text is
        // paid beside the preview (which is measured escaped)
        let wrapper = match &run.work.parts[at] {
            Part::Resource { block, .. } if run.policy.resources_json => {
                let empty = Part::Resource {
                    block,
                    text: Cow::Borrowed(""),
                    scan: Scan::known(0, 0),
                };
                Some(crate::budget::policy::size::Size::of(&compact(
                    &part_block(&empty),
                )))
            }
            _ => None,
        };
        let saved = std::mem::replace(
            &mut run.work.parts[at],
            Part::Prose {
                text: Cow::Borrowed(""),
                scan: Scan::known(0, 0),
            },
        );
        let others = run.work.cost(&self.counter);
        let emptied = run.work.clone();
        run.work.parts[at] = saved;
        let mut facts = run.facts.clone();
        facts.preview_lines = total_lines.map(|t| (t, t));
        // the longest a note says of where a preview stops
        facts.preview_resume_char = total_lines.map(|_| full.len());
        facts.preview_end = Some(Boundary::Character);
        // a preview that ends inside a line makes the note longer: the fit check then shaves
        if total_lines.is_none() {
            facts.cuts.push(format!(
                "preview: the beginning of the text after stripping ({} of {} bytes, stopping {})",
                full.len(),
                full.len(),
                Boundary::Character.words()
            ));
        }
        let text = render(&facts);
        let note = self.counter.count(&text);
        let size = &run.policy.size;
        let room = (!size.is_unbounded()).then(|| {
            // everything but the preview (an empty text in its place, its line break counted),
            // and one line more: the preview ends the last line or starts a new one
            let mut used = emptied.size_as(
                Some(&text),
                run.policy.note_first,
                run.policy.resources_json,
            );
            used.lines += 1;
            if let Some(w) = wrapper {
                (used.bytes, used.chars) = (used.bytes + w.bytes, used.chars + w.chars);
            }
            // nothing left: an empty preview
            size.room(used).unwrap_or(SizeLimits {
                bytes: Some(0),
                chars: Some(0),
                lines: Some(0),
            })
        });
        (run.limit.saturating_sub(others + note + 1), room)
    }
}

/// The first `len` bytes of `text`: borrowed from the result when `text` is, copied when a
/// stage made it.
fn prefix<'a>(text: &Cow<'a, str>, len: usize) -> Cow<'a, str> {
    match text {
        Cow::Borrowed(t) => Cow::Borrowed(&t[..len]),
        Cow::Owned(t) => Cow::Owned(t[..len].to_string()),
    }
}

fn set_prose<'a>(p: &mut Part<'a>, new: Cow<'a, str>, counted: Scan) {
    if let Part::Prose { text, scan } | Part::Resource { text, scan, .. } = p {
        *text = new;
        *scan = counted;
    }
}

/// The one text of a result with a single prose or resource part.
fn lone_text<'w>(original: &'w [Part], at: usize) -> Option<&'w str> {
    match original {
        [Part::Prose { text, .. }] | [Part::Resource { text, .. }] if at == 0 => Some(text),
        _ => None,
    }
}

/// The whole lines of `text` before byte `end`, and the bytes of the next line before it when
/// `end` falls inside one (where a reader continues with `start_char`).
fn lines_before(text: &str, end: usize) -> (usize, Option<usize>) {
    if end >= text.len() {
        return (line_count(text), None);
    }
    let head = &text.as_bytes()[..end];
    let whole = memchr::memchr_iter(b'\n', head).count();
    let line_start = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
    (whole, (end > line_start).then_some(end - line_start))
}

/// What the spill file holds: a single text as it is, else the whole result exactly as the server
/// sent it when its bytes are known, else as compact JSON (every field kept, in the order
/// received).
pub(super) fn spill_content<'a>(
    original: &'a Work<'a>,
    result: &Value,
    raw: Option<&'a str>,
) -> Cow<'a, [u8]> {
    match (single_text(original), raw) {
        (Some(text), _) => Cow::Borrowed(text.as_bytes()),
        (None, Some(raw)) => Cow::Borrowed(raw.as_bytes()),
        // a null structuredContent says nothing: the spill leaves it out, as the engine does
        (None, None) if result.get("structuredContent").is_some_and(Value::is_null) => {
            let mut v = result.clone();
            if let Some(m) = v.as_object_mut() {
                m.shift_remove("structuredContent");
            }
            Cow::Owned(compact(&v).into_bytes())
        }
        (None, None) => Cow::Owned(compact(result).into_bytes()),
    }
}

/// The one text of a result that has a single text part (and at most a structuredContent that
/// repeats it).
fn single_text<'w>(original: &'w Work) -> Option<&'w str> {
    if original.structured.is_some() && !original.structured_duplicate {
        return None;
    }
    match original.parts.as_slice() {
        [Part::Prose { text, .. }] | [Part::Json { text, .. }] | [Part::Resource { text, .. }] => {
            Some(text)
        }
        _ => None,
    }
}

pub(super) fn spill_ext(original: &Work) -> &'static str {
    if single_text(original).is_none() {
        return "json";
    }
    match original.parts.as_slice() {
        [Part::Prose { .. }] => "md",
        [Part::Resource { block, .. }] => match block["resource"]["mimeType"].as_str() {
            Some(m) if m.contains("json") => "json",
            Some(m) if m.contains("markdown") => "md",
            _ => "txt",
        },
        _ => "json",
    }
}
