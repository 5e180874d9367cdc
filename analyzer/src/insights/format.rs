//! How the report writes durations, times and clock times.

use crate::num::fixed;

/// A duration: below 60 s as seconds with one decimal, else "M min S s" from the rounded
/// whole seconds (hours are written as minutes, as the report's other figures are).
pub fn duration(seconds: f64) -> String {
    if seconds < 60.0 {
        return format!("{} s", fixed(seconds, 1));
    }
    let whole = seconds.round_ties_even() as i64;
    let (m, s) = (whole / 60, whole % 60);
    format!("{m} min {s} s")
}

/// A waiting time given in milliseconds: below 1000 ms as whole ms, else seconds with one
/// decimal.
pub fn wait_ms(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{} ms", fixed(ms, 0))
    } else {
        format!("{} s", fixed(ms / 1000.0, 1))
    }
}

/// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `YYYY-MM-DD HH:MM:SS` and `HH:MM:SS` of a Unix time shifted by `offset_min`.
fn local_parts(unix: f64, offset_min: i32) -> (String, String) {
    let t = unix.floor() as i64 + i64::from(offset_min) * 60;
    let (days, secs) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let (y, m, d) = civil(days);
    let time = format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    );
    (format!("{y:04}-{m:02}-{d:02} {time}"), time)
}

/// "UTC+0", "UTC+5:30", "UTC-7".
pub fn utc_offset(offset_min: i32) -> String {
    let sign = if offset_min < 0 { '-' } else { '+' };
    let a = offset_min.unsigned_abs();
    if a.is_multiple_of(60) {
        format!("UTC{sign}{}", a / 60)
    } else {
        format!("UTC{sign}{}:{:02}", a / 60, a % 60)
    }
}

/// "2026-09-26 17:50:52 to 17:52:25 (UTC-7)"; the end keeps its date when the day
/// changes.
pub fn clock_span(start: f64, end: f64, offset_min: i32) -> String {
    let (s_full, _) = local_parts(start, offset_min);
    let (e_full, e_time) = local_parts(end, offset_min);
    let same_day = s_full[..10] == e_full[..10];
    format!(
        "{s_full} to {} ({})",
        if same_day { e_time } else { e_full },
        utc_offset(offset_min)
    )
}

/// "HH:MM" local date and time, for the footer.
pub fn minute(unix: f64, offset_min: i32) -> String {
    let (full, _) = local_parts(unix, offset_min);
    format!("{} ({})", &full[..16], utc_offset(offset_min))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_waits() {
        assert_eq!(duration(58.86), "58.9 s");
        assert_eq!(duration(93.72), "1 min 34 s");
        assert_eq!(duration(597.86), "9 min 58 s");
        assert_eq!(wait_ms(673.4), "673 ms");
        assert_eq!(wait_ms(28_213.0), "28.2 s");
    }

    #[test]
    fn clocks() {
        // 1790470252 is 2026-09-27 00:50:52 UTC.
        assert_eq!(
            clock_span(1_790_470_252.07, 1_790_470_345.8, -7 * 60),
            "2026-09-26 17:50:52 to 17:52:25 (UTC-7)"
        );
        assert_eq!(
            clock_span(1_790_470_252.07, 1_790_470_345.8, 0),
            "2026-09-27 00:50:52 to 00:52:25 (UTC+0)"
        );
        assert_eq!(utc_offset(330), "UTC+5:30");
        assert_eq!(utc_offset(0), "UTC+0");
        assert_eq!(minute(0.0, 0), "1970-01-01 00:00 (UTC+0)");
    }
}
