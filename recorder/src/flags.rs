//! Value parsers for every numeric flag, so clap refuses a value the commands cannot use
//! before anything runs (exit 2): `NaN`, infinities, zero where something must happen,
//! and seconds so large that `Duration::from_secs_f64` would panic.

/// The longest wait or recording any flag accepts: a year, far past a 7-day recording
/// and far below where a `Duration` of float seconds overflows.
pub const MAX_SECONDS: f64 = 365.0 * 86_400.0;

fn number(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !v.is_finite() {
        return Err(format!("`{s}` is not a finite number"));
    }
    Ok(v)
}

/// Seconds above 0, at most a year (intervals, durations, readiness).
pub fn positive_seconds(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v <= 0.0 {
        return Err("must be a number of seconds above 0".into());
    }
    if v > MAX_SECONDS {
        return Err("must be at most a year (31536000 seconds)".into());
    }
    Ok(v)
}

/// Seconds from 0 (one reading) to a year (the clear-card timeouts).
pub fn seconds(s: &str) -> Result<f64, String> {
    let v = number(s)?;
    if v < 0.0 {
        return Err("must be a number of seconds, 0 or more".into());
    }
    if v > MAX_SECONDS {
        return Err("must be at most a year (31536000 seconds)".into());
    }
    Ok(v)
}

/// A whole number in `lo..=hi`.
fn whole<T: TryFrom<u64>>(s: &str, lo: u64, hi: u64) -> Result<T, String> {
    let v: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number from {lo} to {hi}"))?;
    if !(lo..=hi).contains(&v) {
        return Err(format!("must be from {lo} to {hi}"));
    }
    T::try_from(v).map_err(|_| format!("must be from {lo} to {hi}"))
}

/// Concurrent probe requests: 1 to 1,024.
pub fn concurrency(s: &str) -> Result<usize, String> {
    whole(s, 1, 1024)
}

/// Tokens per probe answer: 1 to 1,000,000.
pub fn max_tokens(s: &str) -> Result<u32, String> {
    whole(s, 1, 1_000_000)
}

/// Clear readings in a row: 1 to 1,000.
pub fn consecutive(s: &str) -> Result<u32, String> {
    whole(s, 1, 1000)
}

/// A memory threshold in MiB: 0 to 16,777,216 (16 TiB).
pub fn mib(s: &str) -> Result<i64, String> {
    whole(s, 0, 1 << 24)
}

/// Requested concurrency: 1 to 1,000,000.
pub fn requested(s: &str) -> Result<i64, String> {
    whole(s, 1, 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals() {
        for bad in ["NaN", "inf", "-1", "0", "1e308", "x", ""] {
            assert!(positive_seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(positive_seconds("0.25"), Ok(0.25));
        assert_eq!(seconds("0"), Ok(0.0));
        assert!(seconds("NaN").is_err());
        assert!(concurrency("0").is_err());
        assert_eq!(concurrency("8"), Ok(8));
        assert!(consecutive("0").is_err());
        assert!(mib("-5").is_err());
        assert!(requested("0").is_err());
        assert!(max_tokens("99999999999").is_err());
        // Every accepted number of seconds makes a Duration without panicking.
        let _ = std::time::Duration::from_secs_f64(positive_seconds("31536000").unwrap());
    }
}
