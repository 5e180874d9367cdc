//! The plausibility gate: which values each kind of parsed number can take. Run folders
//! come from other people's machines, so a `NaN` counter, a KV fraction of 1e308 or a
//! million-fold `running` gauge must never turn into a verdict. Parsers call [`check`] on
//! every number a check reads, record each refusal as an [`Implausible`] carried with the
//! parsed input (the value itself is then left out of the parsed data), and each check
//! that reads a field with a refused value says "can't tell", naming file, line and value.

use std::fmt;

/// 2^53: the largest integer an `f64` holds exactly, and so the largest count inferlint
/// accepts (a counter or a load tool's count past it has lost its last digits).
pub const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

/// Requests running, waiting or paused at once, when the engine's own limit is not known:
/// no engine runs a million requests at once on one server (vLLM's default limit is 256
/// to 1,024 sequences).
pub const MAX_REQUESTS: f64 = 1_000_000.0;

/// KV-cache usage is a fraction of the pool; this much above 1 is float rounding.
pub const KV_SLACK: f64 = 1e-9;

/// Wall-clock Unix seconds up to the year 2286: any later stamp is damage, not a time.
pub const MAX_WALL_S: f64 = 1e10;

/// 2^62 nanoseconds, 146 years: past it a monotonic stamp is damage (a float stamp too
/// large for an integer arrives saturated at 2^63 - 1).
pub const MAX_MONO_NS: f64 = 4_611_686_018_427_387_904.0;

/// A duration longer than a year is damage (a 7-day recording is the longest foreseen).
pub const MAX_SECONDS: f64 = 365.0 * 86_400.0;

/// A client's own clock in seconds (`vllm bench serve`'s `start_times` are Python's
/// `perf_counter`, seconds since boot; another client may use Unix time): 2^62 ns,
/// the monotonic bound, covers both (Unix time reaches it in 2116).
pub const MAX_CLIENT_CLOCK_S: f64 = MAX_MONO_NS / 1e9;

/// 10 GHz: today's fastest GPU boosts its SM clock to about 3.1 GHz, so a clock past
/// this is damage. A clock is also above zero: a card that answers is clocking.
pub const MAX_CLOCK_MHZ: f64 = 10_000.0;

/// 10 kW: the largest GPU module draws about 1.2 kW (a two-GPU superchip 2.7 kW), so a
/// card's power past this is damage.
pub const MAX_POWER_W: f64 = 10_000.0;

/// A card's temperature in °C: -40 °C is the coldest any electronics is rated to run
/// at, and past 150 °C silicon has long shut down (GPUs slow down near 90 °C and stop
/// near 105 °C).
pub const TEMP_RANGE_C: (f64, f64) = (-40.0, 150.0);

/// What a parsed number stands for, and so which values it can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// A cumulative counter (preemptions, tokens, finished requests, a histogram's sum
    /// or count): finite, not negative, at most 2^53.
    Counter,
    /// Requests running, waiting or paused right now: finite, not negative, at most
    /// [`MAX_REQUESTS`].
    Requests,
    /// KV-cache usage as a fraction: in [0, 1 + [`KV_SLACK`]].
    KvFraction,
    /// A duration in seconds: finite, not negative, at most [`MAX_SECONDS`].
    Seconds,
    /// Unix seconds of a wall clock: finite, in [0, [`MAX_WALL_S`]].
    WallClock,
    /// A monotonic clock in nanoseconds: not negative.
    MonoNs,
    /// A whole count in a load tool's result: finite, in [0, 2^53].
    Count,
    /// Another measurement that cannot be negative (a rate, milliseconds): finite, in
    /// [0, 2^53].
    Measure,
    /// A client's clock in seconds, its zero arbitrary: finite, in
    /// [0, [`MAX_CLIENT_CLOCK_S`]].
    ClientClock,
    /// A GPU clock in MHz: finite, above 0, at most [`MAX_CLOCK_MHZ`].
    ClockMhz,
    /// A GPU's power draw or limit in watts: finite, in [0, [`MAX_POWER_W`]].
    PowerW,
    /// A GPU's temperature in °C: finite, within [`TEMP_RANGE_C`].
    TempC,
    /// A utilization in percent: finite, in [0, 100].
    Percent,
}

/// Why a value was refused (said after the value: "kv_usage = 2.5 is above 1").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    NotANumber,
    Infinite,
    Negative,
    /// Past 2^53, where a float no longer holds every integer.
    PastExact,
    AboveOne,
    TooManyRequests,
    /// Above the engine's own limit on running requests (from its boot log).
    AboveEngineLimit(u64),
    TooLong,
    NotATime,
    /// Past 2^62 ns: no monotonic clock has run 146 years.
    NotAClock,
    /// Zero or below where the quantity is above zero (a running clock).
    NotPositive,
    /// Past [`MAX_CLOCK_MHZ`].
    TooFast,
    /// Past [`MAX_POWER_W`].
    TooMuchPower,
    /// Outside [`TEMP_RANGE_C`].
    NotATemperature,
    /// A percentage above 100.
    AboveHundred,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::NotANumber => f.write_str("is not a number"),
            Why::Infinite => f.write_str("is infinite"),
            Why::Negative => f.write_str("is negative where the quantity cannot be"),
            Why::PastExact => f.write_str("is past 2^53, beyond what inferlint can count exactly"),
            Why::AboveOne => f.write_str("is above 1, but it is a fraction of the cache"),
            Why::TooManyRequests => f.write_str("is more requests at once than any server runs"),
            Why::AboveEngineLimit(cap) => write!(
                f,
                "is above the {cap} requests the server's boot log says it runs at once"
            ),
            Why::TooLong => f.write_str("is longer than a year"),
            Why::NotATime => f.write_str("is not a Unix time between 1970 and 2286"),
            Why::NotAClock => f.write_str("is past any monotonic clock (146 years)"),
            Why::NotPositive => f.write_str("is not above zero, but a working card's clock is"),
            Why::TooFast => f.write_str("is above 10,000 MHz, faster than any GPU clock"),
            Why::TooMuchPower => f.write_str("is above 10,000 W, more than any GPU draws"),
            Why::NotATemperature => {
                f.write_str("is not a temperature a working card has (-40 to 150 °C)")
            }
            Why::AboveHundred => f.write_str("is above 100%"),
        }
    }
}

/// Checks one value; `Err` says why it cannot be that quantity.
pub fn check(q: Quantity, v: f64) -> Result<(), Why> {
    if v.is_nan() {
        return Err(Why::NotANumber);
    }
    if v.is_infinite() {
        return Err(Why::Infinite);
    }
    use Quantity as Q;
    let (min, max, below, above) = match q {
        Q::Counter | Q::Count | Q::Measure => (0.0, MAX_EXACT, Why::Negative, Why::PastExact),
        Q::Requests => (0.0, MAX_REQUESTS, Why::Negative, Why::TooManyRequests),
        Q::KvFraction => (0.0, 1.0 + KV_SLACK, Why::Negative, Why::AboveOne),
        Q::Seconds => (0.0, MAX_SECONDS, Why::Negative, Why::TooLong),
        Q::WallClock => (0.0, MAX_WALL_S, Why::NotATime, Why::NotATime),
        Q::MonoNs => (0.0, MAX_MONO_NS, Why::Negative, Why::NotAClock),
        Q::ClientClock => (0.0, MAX_CLIENT_CLOCK_S, Why::Negative, Why::NotAClock),
        Q::ClockMhz => (0.0, MAX_CLOCK_MHZ, Why::Negative, Why::TooFast),
        Q::PowerW => (0.0, MAX_POWER_W, Why::Negative, Why::TooMuchPower),
        Q::TempC => (
            TEMP_RANGE_C.0,
            TEMP_RANGE_C.1,
            Why::NotATemperature,
            Why::NotATemperature,
        ),
        Q::Percent => (0.0, 100.0, Why::Negative, Why::AboveHundred),
    };
    if v < min {
        return Err(below);
    }
    if v == 0.0 && q == Q::ClockMhz {
        return Err(Why::NotPositive);
    }
    if v > max {
        return Err(above);
    }
    Ok(())
}

/// A value the gate refused: where it was, which field, the value as shown, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Implausible {
    pub file: String,
    pub line: Option<usize>,
    /// The column, key or metric name.
    pub field: String,
    /// The value, shortened for people (never a 300-digit expansion).
    pub value: String,
    #[serde(serialize_with = "why_text")]
    pub why: Why,
    /// The part of the file `line` counts in, when not the file itself (a snapshot's
    /// Prometheus text sits in its `text` key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part: Option<&'static str>,
}

fn why_text<S: serde::Serializer>(w: &Why, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(w)
}

impl Implausible {
    pub fn new(file: &str, line: Option<usize>, field: &str, value: f64, why: Why) -> Self {
        Implausible {
            file: file.to_string(),
            line,
            field: field.to_string(),
            value: shown(value),
            why,
            part: None,
        }
    }
}

impl fmt::Display for Implausible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: ", self.file)?,
            None => write!(f, "{}: ", self.file)?,
        }
        write!(f, "{} = {} {}", self.field, self.value, self.why)?;
        match (self.part, self.line) {
            (Some(part), Some(l)) => write!(f, " (line {l} of {part})"),
            _ => Ok(()),
        }
    }
}

/// Records `v` in `out` when it is not a plausible `q`; true when it passed.
pub fn gate(
    q: Quantity,
    v: f64,
    at: (&str, Option<usize>),
    field: &str,
    out: &mut Vec<Implausible>,
) -> bool {
    match check(q, v) {
        Ok(()) => true,
        Err(why) => {
            out.push(Implausible::new(at.0, at.1, field, v, why));
            false
        }
    }
}

/// An optional value through the gate: kept when plausible, recorded and dropped if not.
/// A row's two clocks (wall seconds, monotonic nanoseconds, named by `keys`) through the
/// gate: none when `t_wall` is refused (the row is dropped), else the monotonic stamp,
/// absent when refused.
pub fn gate_clocks(
    t_wall: f64,
    t_mono_ns: Option<i64>,
    at: (&str, Option<usize>),
    keys: (&str, &str),
    out: &mut Vec<Implausible>,
) -> Option<Option<i64>> {
    if !gate(Quantity::WallClock, t_wall, at, keys.0, out) {
        return None;
    }
    Some(t_mono_ns.filter(|&n| gate(Quantity::MonoNs, n as f64, at, keys.1, out)))
}

pub fn keep(
    q: Quantity,
    v: Option<f64>,
    at: (&str, Option<usize>),
    field: &str,
    out: &mut Vec<Implausible>,
) -> Option<f64> {
    v.filter(|&x| gate(q, x, at, field, out))
}

/// The first refusal among `fields`, for a check about to read them.
pub fn first<'a>(found: &'a [Implausible], fields: &[&str]) -> Option<&'a Implausible> {
    found.iter().find(|i| fields.contains(&i.field.as_str()))
}

/// A number as people read it: `NaN`, `inf`, `1e308`, `-5`, `0.25`; never hundreds of
/// digits.
pub fn shown(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else if v != 0.0 && (v.abs() >= 1e16 || v.abs() < 1e-6) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The sentence a check gives when a value it needs was refused.
pub fn cannot_tell(i: &Implausible) -> String {
    format!("can't tell from an implausible value: {i}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_quantity_has_its_range() {
        use Quantity::*;
        for q in [
            Counter,
            Requests,
            KvFraction,
            Seconds,
            WallClock,
            MonoNs,
            Count,
            Measure,
            ClientClock,
            ClockMhz,
            PowerW,
            TempC,
            Percent,
        ] {
            let zero = if q == ClockMhz {
                Err(Why::NotPositive)
            } else {
                Ok(())
            };
            assert_eq!(check(q, 0.0), zero, "{q:?}");
            assert_eq!(check(q, f64::NAN), Err(Why::NotANumber), "{q:?}");
            assert_eq!(check(q, f64::INFINITY), Err(Why::Infinite), "{q:?}");
            assert!(check(q, 1e308).is_err(), "{q:?}");
            assert!(check(q, -50.0).is_err(), "{q:?}");
            if q != TempC {
                assert!(check(q, -5.0).is_err(), "{q:?}");
            }
        }
        assert_eq!(check(KvFraction, 1.0 + 5e-10), Ok(()));
        assert_eq!(check(KvFraction, 1e308), Err(Why::AboveOne));
        assert_eq!(check(Requests, 1e9), Err(Why::TooManyRequests));
        assert_eq!(check(Requests, 4096.0), Ok(()));
        assert_eq!(check(Counter, MAX_EXACT), Ok(()));
        assert_eq!(
            check(Counter, 9.223_372_036_854_776e18),
            Err(Why::PastExact)
        );
        assert_eq!(check(WallClock, 1.79e9), Ok(()));
        assert_eq!(check(WallClock, 1e308), Err(Why::NotATime));
        assert_eq!(check(Seconds, 4e7), Err(Why::TooLong));
        assert_eq!(check(MonoNs, i64::MAX as f64), Err(Why::NotAClock));
        assert_eq!(check(MonoNs, 3e15), Ok(()));
    }

    #[test]
    fn gpu_readings_and_client_clocks_have_their_ranges() {
        use Quantity::*;
        assert_eq!(check(ClockMhz, 3105.0), Ok(()));
        assert_eq!(check(ClockMhz, 210.0), Ok(()));
        assert_eq!(check(ClockMhz, -1.0), Err(Why::Negative));
        assert_eq!(check(ClockMhz, 1e6), Err(Why::TooFast));
        assert_eq!(check(PowerW, 449.6), Ok(()));
        assert_eq!(check(PowerW, 2e4), Err(Why::TooMuchPower));
        assert_eq!(check(TempC, 88.0), Ok(()));
        assert_eq!(check(TempC, -5.0), Ok(()));
        assert_eq!(check(TempC, -41.0), Err(Why::NotATemperature));
        assert_eq!(check(TempC, 151.0), Err(Why::NotATemperature));
        assert_eq!(check(Percent, 100.0), Ok(()));
        assert_eq!(check(Percent, 100.5), Err(Why::AboveHundred));
        // perf_counter seconds since boot, and Unix seconds, are both client clocks.
        assert_eq!(check(ClientClock, 12_345.6), Ok(()));
        assert_eq!(check(ClientClock, 1.79e9), Ok(()));
        assert_eq!(check(ClientClock, 9.3e18), Err(Why::NotAClock));
        assert_eq!(
            Implausible::new("g", Some(3), "sm_clock_mhz", 1e6, Why::TooFast).to_string(),
            "g:3: sm_clock_mhz = 1000000 is above 10,000 MHz, faster than any GPU clock"
        );
    }

    #[test]
    fn refusals_name_file_line_field_and_value() {
        let mut out = Vec::new();
        let kept = keep(
            Quantity::KvFraction,
            Some(1e308),
            ("run/run.series.jsonl", Some(7)),
            "kv_usage",
            &mut out,
        );
        assert_eq!(kept, None);
        assert_eq!(
            out[0].to_string(),
            "run/run.series.jsonl:7: kv_usage = 1e308 is above 1, but it is a fraction of the cache"
        );
        assert_eq!(first(&out, &["running", "kv_usage"]), Some(&out[0]));
        assert_eq!(first(&out, &["running"]), None);
        assert_eq!(
            keep(
                Quantity::Requests,
                Some(3.0),
                ("f", None),
                "running",
                &mut out
            ),
            Some(3.0)
        );
    }

    #[test]
    fn numbers_are_shown_short() {
        assert_eq!(shown(f64::NAN), "NaN");
        assert_eq!(shown(f64::NEG_INFINITY), "-inf");
        assert_eq!(shown(1e308), "1e308");
        assert_eq!(shown(9.223_372_036_854_776e18), "9.223372036854776e18");
        assert_eq!(shown(-5.0), "-5");
        assert_eq!(shown(0.25), "0.25");
        assert_eq!(shown(1e9), "1000000000");
    }
}
