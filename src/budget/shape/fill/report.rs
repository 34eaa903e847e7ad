//! What a fill cut, by path (`items[].labels`), for the note and the reports: per array how
//! many items were kept whole, cut inside or left out, per object how many keys were kept, and
//! how many strings were cut.

use std::collections::BTreeMap;

use crate::ground::units::thousands;

/// The arrays at one path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArrayCut {
    /// Arrays at this path that lost anything.
    pub arrays: usize,
    /// Items kept whole, all of them from the head of their array.
    pub whole: usize,
    /// Items kept, cut inside (they follow the whole ones).
    pub inside: usize,
    /// Items in the original arrays.
    pub total: usize,
}

/// What one fill cut.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FillReport {
    pub arrays: BTreeMap<String, ArrayCut>,
    /// Path -> (objects cut, keys kept, keys in total).
    pub objects: BTreeMap<String, (usize, usize, usize)>,
    pub strings_cut: usize,
    /// Containers kept empty at the policy's depth.
    pub emptied: usize,
}

impl FillReport {
    pub(super) fn array(&mut self, path: &str, whole: usize, inside: usize, total: usize) {
        if whole == total {
            return;
        }
        let e = self.arrays.entry(path.to_string()).or_default();
        e.arrays += 1;
        e.whole += whole;
        e.inside += inside;
        e.total += total;
    }

    pub(super) fn object(&mut self, path: &str, kept: usize, total: usize) {
        let e = self.objects.entry(path.to_string()).or_default();
        *e = (e.0 + 1, e.1 + kept, e.2 + total);
    }

    pub fn is_empty(&self) -> bool {
        self.arrays.is_empty()
            && self.objects.is_empty()
            && self.strings_cut == 0
            && self.emptied == 0
    }

    /// Add what a fill of another text cut.
    pub fn merge(&mut self, other: FillReport) {
        for (k, a) in other.arrays {
            let e = self.arrays.entry(k).or_default();
            e.arrays += a.arrays;
            e.whole += a.whole;
            e.inside += a.inside;
            e.total += a.total;
        }
        for (k, (o, kept, total)) in other.objects {
            let e = self.objects.entry(k).or_default();
            *e = (e.0 + o, e.1 + kept, e.2 + total);
        }
        self.strings_cut += other.strings_cut;
        self.emptied += other.emptied;
    }

    /// The largest list that was cut: its path and what of it was kept.
    pub fn main_list(&self) -> Option<(&str, ArrayCut)> {
        self.arrays
            .iter()
            .max_by_key(|(path, a)| (a.total, std::cmp::Reverse(path.len())))
            .map(|(p, a)| (p.as_str(), *a))
    }

    /// "(top level): items 1-280 of 60,000 kept whole, item 281 cut inside", ...
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .arrays
            .iter()
            .map(|(path, a)| {
                let path = if path.is_empty() { "(top level)" } else { path };
                let (n, total) = (thousands(a.whole + a.inside), thousands(a.total));
                match (a.arrays, a.whole + a.inside, a.inside) {
                    (1, 0, _) => format!("{path}: none of {total} items kept"),
                    (1, 1, 0) => format!("{path}: item 1 of {total} kept whole"),
                    (1, _, 0) => format!("{path}: items 1-{n} of {total} kept whole"),
                    (1, 1, _) => format!("{path}: item 1 of {total} kept, cut inside"),
                    // whole and cut ones are the first items, not always in that order
                    (1, _, i) => format!(
                        "{path}: items 1-{n} of {total} kept, {} of them cut inside",
                        thousands(i)
                    ),
                    (arrays, _, 0) => format!(
                        "{path}: {} arrays cut, the first {n} of {total} items kept whole",
                        thousands(arrays)
                    ),
                    (arrays, _, i) => format!(
                        "{path}: {} arrays cut, the first {n} of {total} items kept, {} cut inside",
                        thousands(arrays),
                        thousands(i)
                    ),
                }
            })
            .collect();
        for (path, (objects, kept, total)) in &self.objects {
            let path = if path.is_empty() { "(top level)" } else { path };
            let of = match objects {
                1 => String::new(),
                n => format!(" in {} objects", thousands(*n)),
            };
            out.push(format!(
                "{path}: the first {} of {} keys kept{of}",
                thousands(*kept),
                thousands(*total)
            ));
        }
        if self.emptied > 0 {
            out.push(format!(
                "{} objects or arrays at the policy's depth kept empty",
                thousands(self.emptied)
            ));
        }
        if self.strings_cut > 0 {
            out.push(format!(
                "{} strings cut between words, each marked with …",
                thousands(self.strings_cut)
            ));
        }
        out
    }
}
