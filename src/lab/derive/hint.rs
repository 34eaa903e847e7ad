//! Where a client's profile says a shape stops coming back whole, and where what it does then
//! changes again: the sizes `lab --derive` tries first. A profile that still holds is then
//! confirmed in two runs per boundary instead of a search of a dozen; one that moved costs a
//! run or two more than the search alone. Found on the profile's own model of the client
//! (`profiles::client_view`), no client run.

use crate::config::profiles::{client_view, ClientProfile, Outcome};
use crate::ground::tokens::Tokenizer;
use crate::lab::shapes::{self, Shape};

/// What the profile predicts of one boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// The largest size (characters) on this side of the boundary, to within 0.5%.
    At(usize),
    /// No boundary up to the largest size searched.
    Never,
}

/// The profile's boundaries for `shape` within `[smallest, max]`: where it stops being shown
/// whole (`Full`), and past that, where its outcome changes again up to `top`.
pub fn hints(
    profile: &ClientProfile,
    shape: Shape,
    smallest: usize,
    max: usize,
    top: usize,
    tokenizer: Tokenizer,
) -> (Hint, Option<Hint>) {
    let outcome =
        |chars: usize| client_view(profile, &shapes::result(shape, chars), tokenizer).outcome;
    let least = outcome(smallest);
    if least != Outcome::Full {
        // never whole (an image a client drops): whether anything changes further up
        return (
            Hint::At(smallest),
            Some(last_where(smallest, top, |c| outcome(c) == least)),
        );
    }
    let first = last_where(smallest, max, |c| outcome(c) == Outcome::Full);
    let Hint::At(h) = first else {
        return (Hint::Never, None);
    };
    let past = (h + (h / 50).max(50)).min(max);
    let then = outcome(past);
    let second = last_where(past, top.max(past), |c| outcome(c) == then);
    (first, Some(second))
}

/// The largest size in `[lo, hi]` where `holds` (true at `lo`), to within 0.5%: `Never` when it
/// holds at `hi`.
fn last_where(lo: usize, hi: usize, holds: impl Fn(usize) -> bool) -> Hint {
    if holds(hi) {
        return Hint::Never;
    }
    let (mut l, mut h) = (lo, hi);
    while h - l > (l / 200).max(20) {
        let mid = l + (h - l) / 2;
        if holds(mid) {
            l = mid;
        } else {
            h = mid;
        }
    }
    Hint::At(l)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::profiles::profile;

    #[test]
    fn a_profiles_boundaries_are_where_its_model_says_the_shape_stops_coming_back_whole() {
        let lines = |id: &str| {
            let p = profile(id).unwrap();
            hints(
                p,
                Shape::Lines,
                125,
                4_000_000,
                1_000_000,
                Tokenizer::Cl100k,
            )
        };
        // Codex: 12,000 bytes, then the same cut however large
        let (first, second) = lines("codex");
        let Hint::At(h) = first else {
            panic!("{first:?}")
        };
        assert!((11_760..=12_000).contains(&h), "{h}");
        assert_eq!(second, Some(Hint::Never));
        // Claude Code: a file over 50,000 characters, then an error past 25,000 tokens
        let (first, second) = lines("claude-code");
        let Hint::At(h) = first else {
            panic!("{first:?}")
        };
        assert!((49_000..=50_000).contains(&h), "{h}");
        let Some(Hint::At(h2)) = second else {
            panic!("{second:?}")
        };
        assert!(h2 > 60_000 && h2 < 200_000, "{h2}");
        // Kilo drops an image at any size: the search past it is one run at the top
        let kilo = profile("kilo").unwrap();
        let image = hints(
            kilo,
            Shape::Image,
            125,
            4_000_000,
            1_000_000,
            Tokenizer::Cl100k,
        );
        assert_eq!(image, (Hint::At(125), Some(Hint::Never)));
        // opencode never cuts an error
        let oc = profile("opencode").unwrap();
        let (first, _) = hints(oc, Shape::Error, 125, 400_000, 400_000, Tokenizer::Cl100k);
        assert_eq!(first, Hint::Never);
    }
}
