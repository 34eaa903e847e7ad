//! Measured against modelled: what the client's profile in `clients.toml` predicts of a
//! result (the audit's "what each client sees"), beside what the lab measured, and whether
//! they agree: the same outcome, tokens within [`TOLERANCE_TOKENS`] or [`TOLERANCE_SHARE`]
//! (file paths and counts in a client's marker vary from run to run), and the note the profile
//! says goes beside each image there.

use serde_json::Value;

use super::probe::{note_first, Delivery, Modelled, ProbeOutcome};
use crate::config::profiles::{client_view, profile, Outcome};
use crate::ground::tokens::Tokenizer;

pub const TOLERANCE_TOKENS: usize = 100;
pub const TOLERANCE_SHARE: f64 = 0.03;

/// The profile's prediction for a result the lab measured, when the client has a profile.
pub fn modelled(
    profile_id: &str,
    result: &Value,
    measured: &ProbeOutcome,
    tokenizer: Tokenizer,
) -> Option<Modelled> {
    let p = profile(profile_id)?;
    let seen = client_view(p, result, tokenizer);
    let measured_outcome = outcome_of(measured);
    // the text measured and the images that arrived, as the profile counts both
    let tokens = measured.delivered.map_or(0, |d| d.tokens) + measured.image_tokens;
    let close = tokens.abs_diff(seen.tokens_to_model)
        <= TOLERANCE_TOKENS.max((seen.tokens_to_model as f64 * TOLERANCE_SHARE) as usize);
    // a note the profile says the client writes beside each image it sends: its fixed words
    // are there (the tolerance alone would let a note of tens of tokens come and go unseen)
    let noted = match (&p.images.note, measured.images_delivered) {
        (Some(note), 1..) => measured
            .added
            .contains(note.split('{').next().unwrap_or_default()),
        _ => true,
    };
    Some(Modelled {
        profile: p.id.clone(),
        profile_version: p.measured.as_ref().map(|m| m.version.clone()),
        tokens: seen.tokens_to_model,
        outcome: seen.outcome,
        measured_outcome,
        // nothing but a marker is what a cut that keeps nothing looks like
        agrees: close
            && noted
            && (seen.outcome == measured_outcome
                || (measured.delivery == Delivery::MarkerOnly && seen.kept_fraction == 0.0)),
    })
}

/// A measured delivery as the profile's outcome: a head-only cut with the whole saved to a
/// file and the note first is a spill (a preview); nothing kept is a refusal.
/// A file the note names that was gone by the end of the run counts as filed.
pub(super) fn outcome_of(o: &ProbeOutcome) -> Outcome {
    let filed = o.file.as_ref().is_some_and(|f| f.whole || f.gone);
    match o.delivery {
        Delivery::Whole => Outcome::Full,
        Delivery::Cut if filed && o.tail_chars == 0 && note_first(&o.added) => {
            Outcome::SpilledToFile
        }
        Delivery::Cut => Outcome::Truncated,
        Delivery::Error | Delivery::MarkerOnly | Delivery::NotDelivered => Outcome::Refused,
    }
}
