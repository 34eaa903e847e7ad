//! Number and time formatting for every layer: thousands separators, dollars, milliseconds,
//! signed changes, the current time as RFC 3339.

/// `12345` as `12,345`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `-1234` as `-1,234`, `1234` as `+1,234`, `0` as `0`.
pub fn signed_thousands(n: i64) -> String {
    let s = thousands(n.unsigned_abs() as usize);
    match n {
        n if n > 0 => format!("+{s}"),
        n if n < 0 => format!("-{s}"),
        _ => s,
    }
}

/// Dollars: `$0`, `$0.0042` under a cent, `$12.34` under a hundred, `$1,235` above.
pub fn usd(x: f64) -> String {
    if x == 0.0 {
        "$0".into()
    } else if x < 0.01 {
        format!("${x:.4}")
    } else if x < 100.0 {
        format!("${x:.2}")
    } else {
        format!("${}", thousands(x.round() as usize))
    }
}

/// `1234.5` as `1,235`, `12.34` as `12.3`, `0.0423` as `0.042`: two or three significant digits.
pub fn millis(v: f64) -> String {
    if v >= 100.0 {
        return thousands(v.round() as usize);
    }
    let decimals = match v {
        v if v >= 10.0 => 1,
        v if v >= 0.1 => 2,
        _ => 3,
    };
    let s = format!("{v:.decimals$}");
    // Every format has a digit before the point, so trimming never leaves "".
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Microseconds as milliseconds with two decimals: `1500` as `1.50 ms`.
pub fn micros_as_ms(us: u64) -> String {
    format!("{:.2} ms", us as f64 / 1000.0)
}

/// A relative change with its sign and one decimal: `12.345` as `+12.3%`.
pub fn percent_change(pct: f64) -> String {
    format!("{pct:+.1}%")
}

/// The current UTC time as RFC 3339 (`2026-11-30T20:41:07.123456789Z`), as reports, recordings
/// and call logs stamp it.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// A span of seconds in the largest whole unit: "45 s", "54 min", "3 h", "2 days".
pub fn duration_words(secs: u64) -> String {
    match secs {
        0..120 => format!("{secs} s"),
        120..7_200 => format!("{} min", secs / 60),
        7_200..172_800 => format!("{} h", secs / 3_600),
        _ => format!("{} days", secs / 86_400),
    }
}

/// The tighter of two optional limits: the smaller when both are set, else the one that is.
pub fn tighter(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_is_said_in_its_largest_whole_unit() {
        assert_eq!(duration_words(45), "45 s");
        assert_eq!(duration_words(3_599), "59 min");
        assert_eq!(duration_words(7_200), "2 h");
        assert_eq!(duration_words(3 * 86_400 + 5), "3 days");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn millis_keeps_about_three_digits() {
        assert_eq!(millis(1234.5), "1,235");
        assert_eq!(millis(12.34), "12.3");
        assert_eq!(millis(1.0), "1");
        assert_eq!(millis(0.85), "0.85");
        assert_eq!(millis(0.0423), "0.042");
        assert_eq!(millis(0.001), "0.001");
        assert_eq!(millis(0.0), "0");
    }

    #[test]
    fn signed_dollars_and_percentages() {
        assert_eq!(signed_thousands(-1234), "-1,234");
        assert_eq!(signed_thousands(1234), "+1,234");
        assert_eq!(signed_thousands(0), "0");
        assert_eq!(usd(0.0), "$0");
        assert_eq!(usd(0.0042), "$0.0042");
        assert_eq!(usd(12.5), "$12.50");
        assert_eq!(usd(1234.5), "$1,235");
        assert_eq!(micros_as_ms(1500), "1.50 ms");
        assert_eq!(percent_change(12.34), "+12.3%");
        assert_eq!(percent_change(-5.0), "-5.0%");
    }
}
