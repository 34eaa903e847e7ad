//! The formats drafts 4 to 7 assert (`uri`, `date-time`, `email`, ...).

use regex_automata::meta::Regex;

/// Whether `text` is of format `name` (draft 7's formats: `uuid` and the later ones are not
/// asserted there); a format it does not know is met.
pub(super) fn format_ok(name: &str, text: &str) -> bool {
    let digits = |t: &str, n: usize| t.len() == n && t.bytes().all(|b| b.is_ascii_digit());
    let date = |t: &str| {
        let p: Vec<&str> = t.split('-').collect();
        p.len() == 3
            && digits(p[0], 4)
            && digits(p[1], 2)
            && digits(p[2], 2)
            && (1..=12).contains(&p[1].parse::<u32>().unwrap_or(0))
            && (1..=31).contains(&p[2].parse::<u32>().unwrap_or(0))
    };
    let time = |t: &str| {
        let (clock, zone) = match t.find(['Z', 'z', '+', '-']) {
            Some(i) => t.split_at(i),
            None => return false,
        };
        let clock = clock.split('.').next().unwrap_or_default();
        let hms: Vec<&str> = clock.split(':').collect();
        let zone_ok = matches!(zone, "Z" | "z")
            || (zone.len() == 6
                && zone[1..3].bytes().all(|b| b.is_ascii_digit())
                && &zone[3..4] == ":");
        hms.len() == 3 && hms.iter().all(|x| digits(x, 2)) && zone_ok
    };
    match name {
        "uri" => uri(text, true),
        "uri-reference" => uri(text, false),
        "date" => date(text),
        "time" => time(text),
        "date-time" => match text.find(['T', 't']) {
            Some(i) => date(&text[..i]) && time(&text[i + 1..]),
            None => false,
        },
        "email" => text
            .split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty() && !b.contains('@')),
        "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        "regex" => Regex::new(text).is_ok(),
        _ => true,
    }
}

/// An RFC 3986 URI (with a scheme when `absolute`): every character one a URI may hold, and
/// `%` only before two hex digits.
fn uri(text: &str, absolute: bool) -> bool {
    let scheme_ok = match text.split_once(':') {
        Some((scheme, _)) => {
            scheme
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic())
                && scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        }
        None => false,
    };
    if absolute && !scheme_ok {
        return false;
    }
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
                {
                    return false;
                }
                i += 3;
                continue;
            }
            c if c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c) => {}
            _ => return false,
        }
        i += 1;
    }
    true
}
