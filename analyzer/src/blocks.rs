//! Reading the KV gauge in blocks (docs/run-folder.md#kv-blocks): the gauge's denominator
//! inferred from its readings, and how many requests of one sample's size fit.

use crate::engine::Engine;
use crate::plausible::Implausible;
use crate::series::{column, Series};
use crate::snapshot::Snapshot;

/// The largest denominator considered (and so the largest block count inferred).
pub const MAX_DEN: u128 = 65_536;

/// What the readings say about the gauge's denominator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inference {
    /// The common denominator N, when the readings are clean multiples of 1/N.
    pub blocks: Option<u64>,
    pub distinct: usize,
    /// True with at least 5 distinct readings; fewer can fit a divisor of N by luck.
    pub trusted: bool,
    /// Why `blocks` is none: no readings, N out of range, or readings not clean.
    pub failure: Option<InferenceFailure>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InferenceFailure {
    NoReadings,
    TooLarge,
    NotClean,
}

/// The KV usage gauge's steps read against the block count the engine exported (vLLM's
/// `cache_config_info` series): the inputs of T14, and the cache's usable blocks that T9
/// and the report read. Read once per run, from the recording and the after snapshot.
#[derive(Debug, Clone, PartialEq)]
pub enum GaugeSteps {
    /// The after snapshot's engine exports no block count.
    NoInfoSeries(Engine),
    /// The info series has no usable `num_gpu_blocks` label.
    NoBlockCount { info: &'static str },
    /// A usage reading was refused by the plausibility gate.
    Refused { reported: u64, bad: Implausible },
    /// The readings' common denominator, inferred.
    Inferred { reported: u64, inference: Inference },
}

impl GaugeSteps {
    pub fn read(series: &Series, after: &Snapshot) -> GaugeSteps {
        let engine = Engine::from_metric_names(after.metrics.names()).unwrap_or(Engine::Vllm);
        let Some(info) = engine.metrics().cache_info else {
            return GaugeSteps::NoInfoSeries(engine);
        };
        let reported = after
            .metrics
            .info(info, &[])
            .and_then(|labels| labels.iter().find(|(k, _)| k == "num_gpu_blocks"))
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse::<u64>().ok());
        let Some(reported) = reported else {
            return GaugeSteps::NoBlockCount { info };
        };
        if let Some(bad) = series.implausible_in(&[column::KV_USAGE]) {
            return GaugeSteps::Refused {
                reported,
                bad: bad.clone(),
            };
        }
        GaugeSteps::Inferred {
            reported,
            inference: infer(series.usage_readings()),
        }
    }

    /// The usable blocks: the inferred denominator, when enough distinct readings show it
    /// and it is the exported count less the one reserved block.
    pub fn usable_blocks(&self) -> Option<u64> {
        match self {
            GaugeSteps::Inferred {
                reported,
                inference,
            } if inference.trusted => inference.blocks.filter(|n| n + 1 == *reported),
            _ => None,
        }
    }
}

/// Infers the denominator from KV readings (zeros, values above 1, NaN and infinities
/// drop out).
pub fn infer(readings: impl Iterator<Item = f64>) -> Inference {
    let mut values: Vec<f64> = readings.filter(|&v| v > 0.0 && v <= 1.0).collect();
    // A gauge repeats itself from one reading to the next: dropping runs of one value
    // first leaves a long recording's few changes to sort. Equal under `total_cmp` means
    // the same bits, so an unstable sort gives the same list.
    values.dedup();
    values.sort_unstable_by(f64::total_cmp);
    values.dedup();
    let distinct = values.len();
    let fail = |f| Inference {
        blocks: None,
        distinct,
        trusted: false,
        failure: Some(f),
    };
    if values.is_empty() {
        return fail(InferenceFailure::NoReadings);
    }
    let mut n: u128 = 1;
    for &v in &values {
        let d = best_denominator(v);
        n = lcm(n, d);
        if n > MAX_DEN {
            return fail(InferenceFailure::TooLarge);
        }
    }
    let nf = n as f64;
    let worst = values
        .iter()
        .map(|&v| (v * nf - (v * nf).round_ties_even()).abs())
        .fold(0.0, f64::max);
    if worst > 1e-6 * nf {
        return fail(InferenceFailure::NotClean);
    }
    Inference {
        blocks: Some(n as u64),
        distinct,
        trusted: distinct >= 5,
        failure: None,
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn lcm(a: u128, b: u128) -> u128 {
    a / gcd(a, b) * b
}

/// The denominator of the best rational approximation of `v`'s exact binary value with
/// denominator at most [`MAX_DEN`] (Python's `Fraction(v).limit_denominator(65536)`).
/// `v` is in (0, 1].
pub fn best_denominator(v: f64) -> u128 {
    // Below 2^-20 the best approximation is 0/1.
    if v < 2f64.powi(-20) {
        return 1;
    }
    let (num, den) = exact_fraction(v);
    if den <= MAX_DEN {
        return den;
    }
    // Continued-fraction convergents (Python's algorithm).
    let (mut p0, mut q0, mut p1, mut q1): (u128, u128, u128, u128) = (0, 1, 1, 0);
    let (mut n, mut d) = (num, den);
    loop {
        let a = n / d;
        let q2 = q0 + a * q1;
        if q2 > MAX_DEN {
            break;
        }
        (p0, q0, p1, q1) = (p1, q1, p0 + a * p1, q2);
        (n, d) = (d, n - a * d);
        if d == 0 {
            break;
        }
    }
    if q1 == 0 {
        return 1;
    }
    let k = (MAX_DEN - q0) / q1;
    let (sp, sq) = (p0 + k * p1, q0 + k * q1); // best semiconvergent
                                               // Closer of p1/q1 and sp/sq to num/den; the convergent wins a tie.
    let dist = |p: u128, q: u128| -> (u128, u128) {
        // |p/q - num/den| = |p*den - num*q| / (q*den); compare as fractions.
        let a = p * den;
        let b = num * q;
        (a.abs_diff(b), q)
    };
    let (e1, q1d) = dist(p1, q1);
    let (e2, q2d) = dist(sp, sq);
    // e1/q1d <= e2/q2d  <=>  e1*q2d <= e2*q1d (den cancels)
    if e1 * q2d <= e2 * q1d {
        q1
    } else {
        sq
    }
}

/// The exact value of a positive double as num/den in lowest terms (den a power of 2).
/// Requires v ≥ 2^-20 so den ≤ 2^72.
fn exact_fraction(v: f64) -> (u128, u128) {
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (mut m, mut e) = if exp == 0 {
        (frac as u128, -1074)
    } else {
        ((frac | (1u64 << 52)) as u128, exp - 1075)
    };
    while m & 1 == 0 && e < 0 {
        m >>= 1;
        e += 1;
    }
    if e >= 0 {
        (m << e, 1)
    } else {
        (m, 1u128 << (-e))
    }
}

/// Requests of this sample's size that fit in the whole pool: with the
/// block count known, in whole blocks; otherwise `floor(running / usage + 1e-9)`.
/// `None` when the sample cannot give one (no usage, or zero used blocks).
pub fn ceiling(running: f64, usage: f64, blocks: Option<u64>) -> Option<i64> {
    if !(running > 0.0 && usage > 0.0) {
        return None;
    }
    match blocks {
        Some(n) => {
            let used = (usage * n as f64).round_ties_even();
            if used <= 0.0 || !used.is_finite() {
                return None;
            }
            let r = running.trunc();
            // Most products fit in 64 bits, whose division is several times cheaper than
            // 128-bit division (this runs for every full-cache reading of a long run);
            // the quotient is the same either way.
            const TWO_64: f64 = 18_446_744_073_709_551_616.0;
            if r < TWO_64 && used < TWO_64 {
                if let Some(product) = n.checked_mul(r as u64) {
                    return Some((product / used as u64) as i64);
                }
            }
            Some(((n as u128 * r as u128) / used as u128) as i64)
        }
        None => {
            let c = (running / usage + 1e-9).floor();
            c.is_finite().then_some(c as i64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_fractions() {
        let readings = (1..=17).map(|k| k as f64 / 42.0);
        let inf = infer(readings);
        assert_eq!(inf.blocks, Some(42));
        assert!(inf.trusted);
        assert_eq!(inf.distinct, 17);
    }

    #[test]
    fn divisor_with_few_readings_is_not_trusted() {
        let inf = infer([2.0 / 52.0, 4.0 / 52.0, 0.0, 0.0].into_iter());
        assert_eq!(inf.blocks, Some(26));
        assert!(!inf.trusted);
    }

    #[test]
    fn dirty_readings() {
        // A reading too small to be a block of any pool up to the bound.
        let inf = infer([2e-6, 0.5].into_iter());
        assert_eq!(inf.blocks, None);
        assert_eq!(inf.failure, Some(InferenceFailure::NotClean));
        let inf = infer(
            [
                0.1,
                1.0 / 3.0,
                1.0 / 7.0,
                1.0 / 11.0,
                1.0 / 13.0,
                1.0 / 17.0,
            ]
            .into_iter(),
        );
        assert_eq!(inf.failure, Some(InferenceFailure::TooLarge));
        // 0.123456789 is closest to 10/81 under the bound, and close enough to count.
        assert_eq!(infer([0.123456789, 0.5].into_iter()).blocks, Some(162));
        assert_eq!(
            infer(std::iter::empty()).failure,
            Some(InferenceFailure::NoReadings)
        );
    }

    #[test]
    fn python_limit_denominator_agrees() {
        assert_eq!(best_denominator(0.1), 10);
        assert_eq!(best_denominator(1.0 / 3.0), 3);
        assert_eq!(best_denominator(1.0), 1);
        assert_eq!(best_denominator(std::f64::consts::PI - 3.0), 33215);
        assert_eq!(best_denominator(1e-9), 1);
    }

    #[test]
    fn whole_block_ceiling() {
        // 1/8 of the pool per request: exactly 8 fit, float error cannot make it 7.
        assert_eq!(ceiling(1.0, 0.125, Some(8)), Some(8));
        assert_eq!(ceiling(10.0, 40.0 / 42.0, Some(42)), Some(10));
        assert_eq!(ceiling(5.0, 0.93, None), Some(5));
        assert_eq!(ceiling(0.0, 0.5, None), None);
    }

    #[test]
    fn huge_readings_take_the_wide_division_and_agree_with_it() {
        let wide = |run: f64, u: f64, n: u64| {
            let used = (u * n as f64).round_ties_even();
            ((n as u128 * run.trunc() as u128) / used as u128) as i64
        };
        for (run, u, n) in [
            (3.0e19, 0.5, 4),
            (1.0e30, 1.0, 1),
            (7.0, 1.0, u64::MAX),
            (2.0, 0.9, 1 << 40),
        ] {
            assert_eq!(
                ceiling(run, u, Some(n)),
                Some(wide(run, u, n)),
                "{run} {u} {n}"
            );
        }
    }
}
