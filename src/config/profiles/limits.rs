//! A client's result limits in its own units, for the budget engine (`proxy --client`, the
//! audit's `budgeted` client view): the tightest threshold in each unit of the rules that change
//! what the model is sent, and how the client measures (its JSON forms).

use super::result::result_rules;
use super::{ClientProfile, Sends};

/// A result's limits in a client's own units, for the engine (`proxy --client`): the tightest
/// threshold in each unit of the rules that change what is sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ResultLimits {
    pub tokens: Option<usize>,
    pub bytes: Option<usize>,
    pub chars: Option<usize>,
    pub lines: Option<usize>,
    /// The client keeps the head of what it cuts: the engine's note goes first.
    pub note_first: bool,
    /// The client sends an embedded resource as the block's JSON and holds that to its limits
    /// (Codex): a resource's text is measured escaped, inside its block.
    pub resources_json: bool,
}

impl ResultLimits {
    /// The tighter of two clients' limits in every unit (a proxy in front of both must meet
    /// each); the note goes first when either keeps only the head.
    pub fn tightest(self, other: ResultLimits) -> ResultLimits {
        let min = crate::ground::units::tighter;
        ResultLimits {
            tokens: min(self.tokens, other.tokens),
            bytes: min(self.bytes, other.bytes),
            chars: min(self.chars, other.chars),
            lines: min(self.lines, other.lines),
            note_first: self.note_first || other.note_first,
            resources_json: self.resources_json || other.resources_json,
        }
    }
}

/// The JSON around one text block of a result (`{"content":[{"type":"text","text":""}]}`)
/// and the engine's note block beside it, in characters.
const RESULT_JSON_WRAPPER: usize = 128;

pub fn engine_limits(profile: &ClientProfile) -> ResultLimits {
    let mut l = ResultLimits {
        resources_json: profile
            .resources
            .as_ref()
            .is_some_and(|r| r.mode == super::Resources::Json),
        ..ResultLimits::default()
    };
    // a rule on one kind of result (a JSON array, an error) is no size limit the engine can
    // meet: the engine budgets every result alike
    for r in result_rules(profile)
        .into_iter()
        .filter(|r| r.when.is_none() && !r.only_on_error)
    {
        // a cut that keeps the head (a cap, a spill's preview) keeps a note put first
        l.note_first |= r.effect == "cap" || (r.effect == "spill" && r.preview.unwrap_or(0) > 0);
        let slot = match r.unit.as_str() {
            "tokens" => &mut l.tokens,
            "bytes" => &mut l.bytes,
            "chars" => &mut l.chars,
            "lines" => &mut l.lines,
            _ => continue,
        };
        let mut t = r.threshold as usize;
        if profile.sends.mode == Sends::ResultJson && r.unit != "lines" {
            // the client counts the result's JSON: its wrapper, the structuredContent beside
            // the text and the escapes come out of the limit. A line break or a quote is two
            // characters, and the text and its structured copy are each held to the limit, so
            // a fifth of the rest holds any pair but one of control characters (`\u0001`)
            t = t.saturating_sub(RESULT_JSON_WRAPPER) / 5;
        } else if profile.sends.mode == Sends::ContentJson && r.unit != "lines" {
            // the content array's JSON: its wrapper comes out of the limit, and in characters
            // or bytes the escapes too (a line break or a quote is two); no structured copy
            t = t.saturating_sub(RESULT_JSON_WRAPPER);
            if r.unit != "tokens" {
                t /= 2;
            }
        }
        *slot = Some(slot.map_or(t, |v| v.min(t)));
    }
    l
}
