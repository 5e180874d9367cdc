//! The two clocks every timed reading stores (docs/run-folder.md#clocks): the wall clock,
//! and the raw `CLOCK_MONOTONIC` in nanoseconds, which is comparable between separate
//! processes of one host boot (a process-relative `Instant` would not be).

use std::time::{SystemTime, UNIX_EPOCH};

/// Unix seconds from the wall clock.
pub fn wall() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `CLOCK_MONOTONIC` in nanoseconds.
pub fn mono_ns() -> i64 {
    match nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC) {
        Ok(ts) => ts.tv_sec() * 1_000_000_000 + ts.tv_nsec(),
        Err(_) => 0,
    }
}

/// One pair of readings taken together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamp {
    pub wall: f64,
    pub mono_ns: i64,
}

impl Stamp {
    pub fn now() -> Stamp {
        Stamp {
            wall: wall(),
            mono_ns: mono_ns(),
        }
    }
}

/// Midpoint clocks and latency of a request bracketed by `before` and `after`
/// (docs/run-folder.md#clocks): `(t_wall, t_mono_ns, latency_s)`.
pub fn midpoint(before: Stamp, after: Stamp) -> (f64, i64, f64) {
    let t_wall = (before.wall + after.wall) / 2.0;
    // floor((m0 + m1) / 2) without overflow for any realistic clock value.
    let sum = i128::from(before.mono_ns) + i128::from(after.mono_ns);
    let t_mono = sum.div_euclid(2) as i64;
    let latency = (after.mono_ns - before.mono_ns) as f64 / 1e9;
    (t_wall, t_mono, latency)
}

/// Seconds since a monotonic start, for elapsed times in documents.
pub fn since(start_ns: i64) -> f64 {
    (mono_ns() - start_ns) as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midpoints_of_injected_clocks() {
        // Injected clocks: the midpoint is exact, the latency the monotonic difference.
        let (w, m, l) = midpoint(
            Stamp {
                wall: 100.0,
                mono_ns: 1_000_000_000,
            },
            Stamp {
                wall: 100.4,
                mono_ns: 1_400_000_000,
            },
        );
        assert!((w - 100.2).abs() < 1e-9);
        assert_eq!(m, 1_200_000_000);
        assert!((l - 0.4).abs() < 1e-12);
    }

    #[test]
    fn monotonic_is_raw_and_moves() {
        let a = mono_ns();
        let b = mono_ns();
        assert!(a > 0 && b >= a);
    }
}
