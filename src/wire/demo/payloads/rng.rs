//! The seeded PRNG, hashing, timestamps and shared text helpers for the demo payloads.
//!
//! Every generator seeds an [`Rng`] (splitmix64) from an FNV-1a hash of its input, so the same
//! input yields the same bytes on every machine: no OS randomness, no clock.

use super::words::{
    ADJS, DOC_NOTES, DOC_SUBJECTS, DOC_VERBS, NOUNS, OBJECTS, OPENERS, SHOP, SW_OUTCOMES, SW_PARTS,
    SW_VERBS, TAILS, VERBS,
};

/// A splitmix64 generator: tiny, fast and identical on every platform.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    /// Seeds from an FNV-1a hash of `input`, mixed with a per-generator `salt`.
    pub(super) fn seeded(input: &str, salt: u64) -> Self {
        Rng(fnv1a(input) ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub(super) fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub(super) fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub(super) fn pick(&mut self, list: &'static str) -> &'static str {
        let n = list.split('|').count();
        list.split('|')
            .nth(self.below(n))
            .expect("index is below the item count")
    }

    /// `len` characters drawn from `alphabet` (ASCII only).
    pub(super) fn chars(&mut self, len: usize, alphabet: &[u8]) -> String {
        (0..len)
            .map(|_| char::from(alphabet[self.below(alphabet.len())]))
            .collect()
    }

    pub(super) fn hex(&mut self, len: usize) -> String {
        self.chars(len, b"0123456789abcdef")
    }

    /// URL-safe base64 alphabet, as used by signed URLs and click ids.
    pub(super) fn token(&mut self, len: usize) -> String {
        self.chars(
            len,
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        )
    }
}

pub(super) fn fnv1a(s: &str) -> u64 {
    let step = |h: u64, b: &u8| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    s.as_bytes().iter().fold(0xcbf2_9ce4_8422_2325, step)
}

/// Formats seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (Hinnant's civil-from-days).
pub(super) fn iso(secs: u64) -> String {
    let z = (secs / 86_400) as i64 + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (secs % 86_400 / 3_600, secs % 3_600 / 60, secs % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

pub(super) fn shop_sentence(rng: &mut Rng) -> String {
    let (adj, noun, verb) = (rng.pick(ADJS), rng.pick(NOUNS), rng.pick(VERBS));
    let (object, tail) = (rng.pick(OBJECTS), rng.pick(TAILS));
    let opener = rng.pick(OPENERS);
    match rng.below(3) {
        0 => format!("{opener}, the {adj} {noun} {verb} {object}{tail}."),
        1 => format!("Reviewers say the {noun} {verb} {object}{tail}."),
        _ => format!("The {noun} feels {adj} and {verb} {object}{tail}."),
    }
}

pub(super) fn sw_sentence(rng: &mut Rng) -> String {
    let (verb, part) = (rng.pick(SW_VERBS), rng.pick(SW_PARTS));
    let (outcome, kind) = (rng.pick(SW_OUTCOMES), rng.pick("change|PR|patch"));
    match rng.below(3) {
        0 => format!("This {kind} {verb} {part} so that {outcome}."),
        1 => format!("Previously {part} could fail silently; now {outcome}."),
        _ => format!("It also {verb} {part}, which means {outcome}."),
    }
}

/// A doc-comment style sentence for generated source code.
pub(super) fn doc_sentence(rng: &mut Rng) -> String {
    let (verb, subject, note) = (
        rng.pick(DOC_VERBS),
        rng.pick(DOC_SUBJECTS),
        rng.pick(DOC_NOTES),
    );
    match rng.below(3) {
        0 => format!("{verb} {subject}; {note}."),
        1 => format!("{verb} {subject} for the given id. Note that {note}."),
        _ => format!("{verb} {subject} in one round trip."),
    }
}

/// Between `min` and `max` sentences joined into one paragraph.
pub(super) fn paragraph(
    rng: &mut Rng,
    min: usize,
    max: usize,
    sentence: fn(&mut Rng) -> String,
) -> String {
    let sentences: Vec<String> = (0..rng.range(min, max)).map(|_| sentence(rng)).collect();
    sentences.join(" ")
}

pub(super) fn title_case(s: &str) -> String {
    let word = |w: &str| {
        let mut chars = w.chars();
        let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
        first.unwrap_or_default() + chars.as_str()
    };
    s.split_whitespace().map(word).collect::<Vec<_>>().join(" ")
}

pub(super) fn slug(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let words = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty());
    words.collect::<Vec<_>>().join("-")
}

/// Splits `fetchUser`, `fetch_user` or `fetch user` into lowercase words.
pub(super) fn identifier_words(s: &str) -> Vec<String> {
    let (mut words, mut prev_lower) = (vec![String::new()], false);
    for c in s.chars() {
        if !c.is_alphanumeric() || c.is_uppercase() && prev_lower {
            words.push(String::new());
        }
        if let (true, Some(last)) = (c.is_alphanumeric(), words.last_mut()) {
            last.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    words.retain(|w| !w.is_empty());
    if words.is_empty() {
        words.push("query".into());
    }
    words
}
/// A shop link carrying the usual pile of campaign and click-id parameters.
pub(super) fn tracked_url(rng: &mut Rng, path: &str) -> String {
    let source = rng.pick("newsletter|facebook|google|bing|instagram|tiktok|partner_feed");
    let medium = rng.pick("email|cpc|social|display|affiliate");
    let campaign = rng.pick("spring_sale_2025|back_to_school|prime_day_early|clearance_q2");
    let click = match rng.below(4) {
        0 => format!("fbclid=IwAR{}", rng.token(58)),
        1 => format!("gclid=Cj0KCQjw{}", rng.token(70)),
        2 => format!("mc_eid={}", rng.hex(10)),
        _ => format!("msclkid={}", rng.hex(32)),
    };
    let utm = format!("utm_source={source}&utm_medium={medium}&utm_campaign={campaign}");
    format!("{SHOP}{path}?{utm}&{click}")
}

/// A signed image CDN URL: always well over 200 characters.
pub(super) fn signed_cdn_url(rng: &mut Rng, slug: &str) -> String {
    let (id, origin, key) = (rng.token(11), rng.hex(32), rng.token(14));
    let (expires, signature) = (1_767_225_600 + rng.below(86_400), rng.token(172));
    let host = "https://images-cdn.shopnorth.example/images/I";
    let image_uri = format!("https%3A%2F%2Forigin.shopnorth.example%2F{origin}%2F{slug}.jpg");
    let query = format!("expires={expires}&image_uri={image_uri}&key_pair_id=APKA{key}");
    format!("{host}/{id}._AC_SL1500_.jpg?w=1500&q=85&{query}&signature={signature}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_salted() {
        let draw = |salt| {
            let mut rng = Rng::seeded("same input", salt);
            (rng.next_u64(), rng.hex(8), rng.token(6), rng.range(3, 5))
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        assert_eq!(fnv1a(""), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn helpers_behave() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(951_782_400 + 3_661), "2000-02-29T01:01:01Z");
        assert_eq!(identifier_words("fetchUser"), ["fetch", "user"]);
        assert_eq!(identifier_words("--"), ["query"]);
        assert_eq!(title_case("usb hub"), "Usb Hub");
        assert_eq!(slug("Home & Kitchen"), "home-kitchen");
    }
}
