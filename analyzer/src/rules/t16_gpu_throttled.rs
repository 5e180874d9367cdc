//! T16: the GPU was throttled during the run. A card at its power cap or a thermal limit
//! lowers its SM clock and tokens per second fall, with no log line anywhere. Decided
//! from the recorder's GPU samples (`docs::gpu`), per card.
//!
//! The rule (spelled out in docs/tripwires.md#t16):
//! - a sample is *busy* when the card's utilization is at least [`BUSY_UTIL_PCT`] (when
//!   no utilization is reported: when `gpu_idle` is not among its reasons);
//! - a busy sample is *throttled* when a power or thermal reason ([`LIMITING`]) is active
//!   and the SM clock is below [`DEPTH`] of the card's maximum (`clocks.max.sm`); a card
//!   riding its power cap a little below its top boost clock is normal, not throttled;
//! - each sample stands for the time to the card's next sample (at most three intervals,
//!   so a gap in the samples is not counted as either);
//! - a card **fails** when throttled time is at least [`FAIL_SHARE`] of its busy time,
//!   **warns** when it had a throttled episode of at least [`MIN_EPISODE_SAMPLES`]
//!   samples in a row but less time than that, and **passes** otherwise;
//! - **can't tell** without samples (old folders, a recorder on another box than the
//!   server, no `nvidia-smi`), for a card without a maximum clock, without a busy sample,
//!   or without reasons in its busy samples: never a pass by default; and when the
//!   plausibility gate refused any number of the file (`plausible`), naming it.
//!
//! The run's verdict is the worst card's (fail, then warn, then can't tell, then pass).
//! Evidence: `gpus` (one object per card: `gpu`, `name`, `samples`, `busy_s`,
//! `throttled_s`, `throttled_share`, `longest_episode_s`, `min_clock_mhz`,
//! `max_sm_clock_mhz`, `max_power_w`, `power_limit_w`, `max_temp_c`, `reasons`), and the
//! deciding card's `gpu`, `busy_s`, `throttled_s` and `throttled_share`.

use serde::Serialize;

use crate::docs::gpu::{GpuCard, GpuRow};
use crate::docs::GPU_SAMPLES;
use crate::gpu_samples::{seconds_since, GpuSamples};
use crate::num::{fixed, round_dp, thousands};
use crate::rules::absent::{Absent, Input, Judged};
use crate::rules::scope::RunScope;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T16: Tripwire = Tripwire::GpuThrottled;

/// A busy sample below this share of the card's maximum SM clock, with a limiting reason
/// active, is throttled.
pub const DEPTH: f64 = 0.75;
/// Throttled for at least this share of the busy time: fail.
pub const FAIL_SHARE: f64 = 0.10;
/// Consecutive throttled samples that make an episode worth a warning (one is a blip).
pub const MIN_EPISODE_SAMPLES: usize = 2;
/// Utilization (percent) from which a sample counts as busy.
pub const BUSY_UTIL_PCT: f64 = 10.0;
/// The power and thermal reasons; `hw_slowdown` is the driver's own power-brake or
/// over-temperature slowdown.
pub const LIMITING: [&str; 5] = [
    "sw_power_cap",
    "hw_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "sw_thermal_slowdown",
];

/// What T16 found: the deciding card's figures (the worst card's), and every card's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throttling {
    /// The deciding card's index.
    pub gpu: i64,
    /// Its busy and throttled seconds, to 0.1 s.
    pub busy_s: f64,
    pub throttled_s: f64,
    /// Throttled over busy time, to 3 places (null when it was never busy).
    pub throttled_share: Option<f64>,
    /// One entry per card, in the samples' order.
    pub gpus: Vec<CardFigures>,
}

/// One card's figures over the run, rounded as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardFigures {
    pub gpu: i64,
    pub name: String,
    pub samples: usize,
    pub busy_s: f64,
    pub throttled_s: f64,
    pub throttled_share: Option<f64>,
    /// The longest throttled episode worth a warning, in seconds.
    pub longest_episode_s: f64,
    /// The lowest SM clock while throttled.
    pub min_clock_mhz: Option<f64>,
    pub max_sm_clock_mhz: Option<f64>,
    pub max_power_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub max_temp_c: Option<f64>,
    /// The limiting reasons seen while throttled.
    pub reasons: Vec<&'static str>,
}

/// A number of the samples file the plausibility gate refused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refused {
    pub implausible: String,
}

/// One card over the run.
#[derive(Debug, Clone, PartialEq)]
pub struct CardRun {
    pub card: GpuCard,
    pub samples: usize,
    pub busy_s: f64,
    pub throttled_s: f64,
    /// Throttled stretches as (start, end) seconds after the zero given, with their length
    /// in samples.
    pub episodes: Vec<(f64, f64, usize)>,
    /// The lowest SM clock while throttled.
    pub min_clock_mhz: Option<f64>,
    /// The limiting reasons seen while throttled, in [`LIMITING`] order.
    pub reasons: Vec<&'static str>,
    pub max_temp_c: Option<f64>,
    pub max_power_w: Option<f64>,
    /// Some busy sample carried reasons (the driver reports them).
    pub reasons_known: bool,
}

impl CardRun {
    pub fn share(&self) -> Option<f64> {
        (self.busy_s > 0.0).then(|| self.throttled_s / self.busy_s)
    }

    /// The longest episode worth a warning, in seconds.
    pub fn longest_episode_s(&self) -> f64 {
        self.episodes
            .iter()
            .filter(|e| e.2 >= MIN_EPISODE_SAMPLES)
            .map(|e| e.1 - e.0)
            .fold(0.0, f64::max)
    }
}

/// Whether a sample was busy: by utilization, else by the idle reason; none when neither
/// is known.
fn busy(row: &GpuRow) -> Option<bool> {
    match (row.util_pct, &row.reasons) {
        (Some(u), _) => Some(u >= BUSY_UTIL_PCT),
        (None, Some(_)) => Some(!row.has_reason("gpu_idle")),
        (None, None) => None,
    }
}

fn throttled(row: &GpuRow, max_clock: f64) -> bool {
    let limited = LIMITING.iter().any(|r| row.has_reason(r));
    limited && row.sm_clock_mhz.is_some_and(|c| c < DEPTH * max_clock)
}

fn max_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

/// Every card's run, with times in seconds after `zero` (a monotonic and a wall time).
pub fn per_card(samples: &GpuSamples, zero: (Option<i64>, f64)) -> Vec<CardRun> {
    let interval = samples.interval_s();
    samples
        .cards()
        .into_iter()
        .map(|card| {
            let rows: Vec<&GpuRow> = samples.rows_of(card.index).collect();
            let times: Vec<f64> = rows
                .iter()
                .map(|r| seconds_since(r, zero.0, zero.1))
                .collect();
            let max_clock = card.max_sm_clock_mhz.filter(|m| *m > 0.0);
            let mut run = CardRun {
                samples: rows.len(),
                busy_s: 0.0,
                throttled_s: 0.0,
                episodes: Vec::new(),
                min_clock_mhz: None,
                reasons: Vec::new(),
                max_temp_c: max_of(rows.iter().filter_map(|r| r.temp_c)),
                max_power_w: max_of(rows.iter().filter_map(|r| r.power_w)),
                reasons_known: false,
                card,
            };
            let mut open: Option<(f64, f64, usize)> = None;
            let mut last_dt = interval.unwrap_or(0.0);
            for (k, row) in rows.iter().enumerate() {
                // The time this sample stands for: up to the next one, gaps left out.
                let dt = match times.get(k + 1) {
                    Some(next) => {
                        let d = (next - times[k]).max(0.0);
                        match interval {
                            Some(i) => d.min(3.0 * i),
                            None => d,
                        }
                    }
                    None => last_dt,
                };
                last_dt = dt;
                let is_busy = busy(row) == Some(true);
                let hit = is_busy && max_clock.is_some_and(|m| throttled(row, m));
                if is_busy {
                    run.busy_s += dt;
                    run.reasons_known |= row.reasons.is_some();
                }
                if hit {
                    run.throttled_s += dt;
                    run.min_clock_mhz = match (run.min_clock_mhz, row.sm_clock_mhz) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    for r in LIMITING {
                        if row.has_reason(r) && !run.reasons.contains(&r) {
                            run.reasons.push(r);
                        }
                    }
                    let e = open.get_or_insert((times[k], times[k], 0));
                    e.1 = times[k] + dt;
                    e.2 += 1;
                } else if let Some(e) = open.take() {
                    run.episodes.push(e);
                }
            }
            run.episodes.extend(open);
            run.reasons
                .sort_by_key(|r| LIMITING.iter().position(|x| x == r));
            run
        })
        .collect()
}

/// A card's verdict and its sentence.
fn judge(run: &CardRun) -> (Status, String) {
    let id = format!("GPU {}", run.card.index);
    let Some(max) = run.card.max_sm_clock_mhz.filter(|m| *m > 0.0) else {
        return (
            Status::Unknown,
            format!("{id} reported no maximum SM clock, so a lowered clock cannot be told"),
        );
    };
    if run.samples == 0 {
        return (Status::Unknown, format!("{id} has no samples"));
    }
    if run.busy_s <= 0.0 {
        return (
            Status::Unknown,
            format!(
                "{id} was never busy in its {} samples (utilization under {}%): they may be of \
                 another card than the server's",
                run.samples,
                fixed(BUSY_UTIL_PCT, 0)
            ),
        );
    }
    if !run.reasons_known {
        return (
            Status::Unknown,
            format!("the driver reported no clock-limiting reasons for {id}, so a lowered clock cannot be attributed"),
        );
    }
    let share = run.share().unwrap_or(0.0);
    let episode = run.longest_episode_s();
    let detail = || {
        let mut d = format!(
            "SM clock down to {} MHz of its {} MHz maximum with {} active",
            run.min_clock_mhz.map_or("?".into(), thousands),
            thousands(max),
            run.reasons.join(", ")
        );
        if let Some(t) = run.max_temp_c {
            d.push_str(&format!(", up to {} °C", fixed(t, 0)));
        }
        if let Some(p) = run.max_power_w {
            d.push_str(&format!(", up to {} W", fixed(p, 0)));
            if let Some(l) = run.card.power_limit_w {
                d.push_str(&format!(" of its {} W limit", fixed(l, 0)));
            }
        }
        d
    };
    if share >= FAIL_SHARE {
        (
            Status::Fail,
            format!(
                "{id} ran throttled for {} s of its {} s busy ({}%): {}",
                fixed(run.throttled_s, 1),
                fixed(run.busy_s, 1),
                fixed(share * 100.0, 0),
                detail()
            ),
        )
    } else if episode > 0.0 {
        (
            Status::Warn,
            format!(
                "{id} was throttled for {} s of its {} s busy ({}%, longest episode {} s): {}",
                fixed(run.throttled_s, 1),
                fixed(run.busy_s, 1),
                fixed(share * 100.0, 1),
                fixed(episode, 1),
                detail()
            ),
        )
    } else {
        (
            Status::Pass,
            format!(
                "{id} held its clock for its {} s busy: never below {}% of its {} MHz maximum \
                 with a power or thermal limit active",
                fixed(run.busy_s, 1),
                fixed(DEPTH * 100.0, 0),
                thousands(max)
            ),
        )
    }
}

impl CardFigures {
    fn of(run: &CardRun) -> CardFigures {
        let r1 = |x: f64| round_dp(x, 1);
        CardFigures {
            gpu: run.card.index,
            name: run.card.name.clone(),
            samples: run.samples,
            busy_s: r1(run.busy_s),
            throttled_s: r1(run.throttled_s),
            throttled_share: run.share().map(|s| round_dp(s, 3)),
            longest_episode_s: r1(run.longest_episode_s()),
            min_clock_mhz: run.min_clock_mhz,
            max_sm_clock_mhz: run.card.max_sm_clock_mhz,
            max_power_w: run.max_power_w,
            power_limit_w: run.card.power_limit_w,
            max_temp_c: run.max_temp_c,
            reasons: run.reasons.clone(),
        }
    }
}

/// The whole run: the recorder's GPU samples. A folder the recorder made without them
/// can't tell; one from elsewhere never had them, so T16 is left out.
pub fn run(cx: &RunScope<'_>) -> Judged {
    if !cx.load_measured() {
        return Err(Absent::NotGiven);
    }
    match &cx.gpu {
        Input::NotGiven if cx.recorded_by_inferlint() => Ok(without_samples()),
        gpu => Ok(check(gpu.need()?)),
    }
}

/// No samples at all: can't tell.
pub fn without_samples() -> CheckResult {
    CheckResult::new(
        T16,
        Status::Unknown,
        format!(
            "no GPU samples ({GPU_SAMPLES}, written by inferlint-recorder record on the server's \
             machine), so a throttled GPU cannot be ruled out"
        ),
    )
}

/// T16 on a run's GPU samples.
pub fn check(samples: &GpuSamples) -> CheckResult {
    // Every number of the file feeds the verdict or its evidence: a refused one is no
    // pass (plausible.rs).
    if let Some(bad) = samples.implausible.first() {
        return CheckResult::new(T16, Status::Unknown, crate::plausible::cannot_tell(bad)).found(
            Refused {
                implausible: bad.to_string(),
            },
        );
    }
    let zero = samples
        .rows
        .first()
        .map_or((None, 0.0), |r| (r.t_mono_ns, r.t_wall));
    let runs = per_card(samples, zero);
    if runs.is_empty() {
        return CheckResult::new(
            T16,
            Status::Unknown,
            format!("{GPU_SAMPLES} lists no card, so a throttled GPU cannot be ruled out"),
        );
    }
    let judged: Vec<(Status, String)> = runs.iter().map(judge).collect();
    // The worst card decides: fail, warn, can't tell, pass.
    let rank = |s: Status| match s {
        Status::Fail => 0,
        Status::Warn => 1,
        Status::Unknown => 2,
        _ => 3,
    };
    let worst = (0..runs.len())
        .min_by_key(|&i| rank(judged[i].0))
        .unwrap_or(0);
    let (status, mut message) = judged[worst].clone();
    if runs.len() > 1 {
        let others: Vec<String> = (0..runs.len())
            .filter(|&i| i != worst)
            .map(|i| {
                format!(
                    "GPU {}: {}",
                    runs[i].card.index,
                    judged[i].0.report_label().to_lowercase()
                )
            })
            .collect();
        message.push_str(&format!(" (other cards: {})", others.join("; ")));
    }
    let w = &runs[worst];
    CheckResult::new(T16, status, message).found(Throttling {
        gpu: w.card.index,
        busy_s: round_dp(w.busy_s, 1),
        throttled_s: round_dp(w.throttled_s, 1),
        throttled_share: w.share().map(|s| round_dp(s, 3)),
        gpus: runs.iter().map(CardFigures::of).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::gpu::GpuHeader;
    use crate::input::InputError;
    use crate::inputs::{InputFile, RunInput};
    use crate::json::Json;
    use crate::rules::absent::{settle, Gap};
    use crate::rules::testing::{said, Folder};

    /// The evidence as `results.json` writes it.
    fn written(r: &CheckResult) -> String {
        Json::Obj(r.evidence()).to_compact()
    }

    fn found(r: &CheckResult) -> &Throttling {
        r.finding::<Throttling>().expect("T16's figures")
    }

    const MAX: f64 = 3105.0;

    fn card(index: i64) -> GpuCard {
        GpuCard {
            index,
            name: "NVIDIA GeForce RTX 4090".into(),
            max_sm_clock_mhz: Some(MAX),
            power_limit_w: Some(450.0),
        }
    }

    /// A sample every 0.25 s: busy at `clock` with `reasons`.
    fn row(gpu: i64, k: usize, clock: f64, util: f64, reasons: &[&str]) -> GpuRow {
        GpuRow {
            t_wall: 1000.0 + k as f64 * 0.25,
            t_mono_ns: Some(k as i64 * 250_000_000),
            gpu,
            sm_clock_mhz: Some(clock),
            power_w: Some(440.0),
            temp_c: Some(70.0),
            util_pct: Some(util),
            reasons: Some(reasons.iter().map(|r| r.to_string()).collect()),
        }
    }

    /// `n` busy samples on one card; samples in `slow` run at 45% with power and thermal
    /// reasons, the others at 88% riding the power cap (normal).
    fn run(n: usize, slow: std::ops::Range<usize>) -> GpuSamples {
        let rows = (0..n)
            .map(|k| {
                if slow.contains(&k) {
                    row(0, k, 1395.0, 98.0, &["sw_power_cap", "hw_thermal_slowdown"])
                } else {
                    row(0, k, 2730.0, 97.0, &["sw_power_cap"])
                }
            })
            .collect();
        GpuSamples {
            header: Some(GpuHeader {
                interval_s: Some(0.25),
                reasons_field: Some("clocks_event_reasons".into()),
                gpus: vec![card(0)],
            }),
            rows,
            ..GpuSamples::default()
        }
    }

    #[test]
    fn a_long_throttle_fails_and_the_same_run_without_it_passes() {
        let r = check(&run(100, 40..80));
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert_eq!(
            (found(&r).throttled_s, found(&r).throttled_share),
            (10.0, Some(0.4))
        );
        assert!(
            r.message.contains("1,395 MHz of its 3,105 MHz"),
            "{}",
            r.message
        );
        assert!(r.message.contains("sw_power_cap, hw_thermal_slowdown"));
        let r = check(&run(100, 0..0));
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert_eq!(found(&r).throttled_s, 0.0);
    }

    #[test]
    fn a_short_episode_warns_and_a_blip_passes() {
        // 4 samples (1 s) of 100: below the fail share, an episode.
        let r = check(&run(100, 50..54));
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(r.message.contains("longest episode 1.0 s"), "{}", r.message);
        // One sample alone is a blip.
        assert_eq!(check(&run(100, 50..51)).status, Status::Pass);
        // Just at the fail share.
        assert_eq!(check(&run(100, 0..10)).status, Status::Fail);
        assert_eq!(check(&run(100, 0..9)).status, Status::Warn);
    }

    #[test]
    fn a_low_clock_without_a_limiting_reason_is_not_throttling() {
        let mut s = run(40, 0..0);
        for r in &mut s.rows {
            r.sm_clock_mhz = Some(1000.0);
            r.reasons = Some(vec!["applications_clocks_setting".into()]);
        }
        assert_eq!(check(&s).status, Status::Pass);
        // The same clock with a thermal reason is.
        for r in &mut s.rows {
            r.reasons = Some(vec!["sw_thermal_slowdown".into()]);
        }
        assert_eq!(check(&s).status, Status::Fail);
    }

    #[test]
    fn idle_samples_are_not_busy_time() {
        let mut s = run(100, 0..50);
        // The throttled half was idle: no fail, and nothing left that could throttle.
        for r in &mut s.rows[..50] {
            r.util_pct = Some(0.0);
        }
        let r = check(&s);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert_eq!(found(&r).busy_s, 12.5);
    }

    #[test]
    fn missing_inputs_are_cant_tell_never_pass() {
        assert_eq!(without_samples().status, Status::Unknown);
        assert!(without_samples().message.contains(GPU_SAMPLES));
        let mut s = run(40, 0..0);
        s.header.as_mut().unwrap().gpus[0].max_sm_clock_mhz = None;
        assert_eq!(check(&s).status, Status::Unknown);
        let mut s = run(40, 0..40);
        for r in &mut s.rows {
            r.util_pct = Some(0.0);
        }
        assert_eq!(check(&s).status, Status::Unknown);
        let mut s = run(40, 0..40);
        for r in &mut s.rows {
            r.reasons = None;
        }
        assert_eq!(check(&s).status, Status::Unknown);
        assert_eq!(check(&GpuSamples::default()).status, Status::Unknown);
    }

    #[test]
    fn the_worst_card_decides_and_each_card_is_in_the_evidence() {
        let mut s = run(100, 0..0);
        s.header.as_mut().unwrap().gpus.push(card(1));
        s.rows
            .extend((0..100).map(|k| row(1, k, 1395.0, 99.0, &["hw_slowdown"])));
        let r = check(&s);
        assert_eq!(r.status, Status::Fail);
        assert_eq!(found(&r).gpu, 1);
        assert!(
            r.message.starts_with("GPU 1 ran throttled"),
            "{}",
            r.message
        );
        assert!(
            r.message.ends_with("(other cards: GPU 0: pass)"),
            "{}",
            r.message
        );
        let cards = &found(&r).gpus;
        assert_eq!(cards.len(), 2);
        assert_eq!((cards[0].gpu, cards[0].throttled_s), (0, 0.0));
        assert_eq!(cards[1].reasons, ["hw_slowdown"]);
    }

    /// The samples as the recorder writes them, with `from` replaced by `to` on one line
    /// (1-based; the header is line 1, sample k line k + 2), read back.
    fn reread(s: &GpuSamples, line: usize, from: &str, to: &str) -> GpuSamples {
        let mut lines = vec![crate::docs::to_line(s.header.as_ref().unwrap())];
        lines.extend(s.rows.iter().map(GpuRow::line));
        assert!(lines[line - 1].contains(from), "{}", lines[line - 1]);
        lines[line - 1] = lines[line - 1].replacen(from, to, 1);
        GpuSamples::read("run/gpu.samples.jsonl", lines.join("\n").as_bytes()).unwrap()
    }

    #[test]
    fn an_implausible_reading_that_would_pass_is_cant_tell_naming_it() {
        // Two throttled samples in a row warn; with one of them unreadable they would pass.
        let plain = run(100, 50..52);
        assert_eq!(check(&plain).status, Status::Warn);
        assert_eq!(check(&reread(&plain, 1, "", "")).status, Status::Warn);
        for (value, shown) in [
            ("1e308", "1e308"),
            ("NaN", "NaN"),
            ("9223372036854775808", "9.223372036854776e18"),
        ] {
            let mut damaged = plain.clone();
            damaged.rows[51].sm_clock_mhz = value.parse().ok();
            // Taken as written (no gate), the reading hides the episode: a pass.
            assert_eq!(check(&damaged).status, Status::Pass, "{value}");
            let clock = "\"sm_clock_mhz\": 1395.0";
            let bad = format!("\"sm_clock_mhz\": {value}");
            let r = check(&reread(&plain, 53, clock, &bad));
            assert_eq!(r.status, Status::Unknown, "{value}: {}", r.message);
            assert!(
                r.message.starts_with(&format!(
                    "can't tell from an implausible value: run/gpu.samples.jsonl:53: \
                     sm_clock_mhz = {shown} "
                )),
                "{}",
                r.message
            );
            assert_eq!(
                r.finding::<Refused>().unwrap().implausible,
                r.message
                    .trim_start_matches("can't tell from an implausible value: ")
            );
        }
        // A NaN or negative utilization would leave the episode out of the busy time.
        for (value, shown) in [("NaN", "NaN"), ("-98.0", "-98")] {
            let mut damaged = plain.clone();
            damaged.rows[51].util_pct = value.parse().ok();
            assert_eq!(check(&damaged).status, Status::Pass, "{value}");
            let bad = format!("\"util_pct\": {value}");
            let r = check(&reread(&plain, 53, "\"util_pct\": 98.0", &bad));
            assert_eq!(r.status, Status::Unknown, "{}", r.message);
            assert!(
                r.message
                    .contains(&format!("run/gpu.samples.jsonl:53: util_pct = {shown} ")),
                "{}",
                r.message
            );
        }
        // A clock maximum of 2^63 in the header.
        let r = check(&reread(&plain, 1, "3105.0", "9223372036854775808"));
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(
            r.message
                .contains("run/gpu.samples.jsonl:1: max_sm_clock_mhz = 9.223372036854776e18"),
            "{}",
            r.message
        );
    }

    #[test]
    fn gaps_in_the_samples_are_not_counted() {
        let mut s = run(20, 0..0);
        // A 10 s hole after the 10th sample counts as 3 intervals, not 10 s.
        for r in &mut s.rows[10..] {
            r.t_mono_ns = r.t_mono_ns.map(|m| m + 10_000_000_000);
        }
        let r = check(&s);
        assert_eq!(found(&r).busy_s, 5.5);
    }

    #[test]
    fn the_evidence_names_the_deciding_card_and_each_card() {
        // 8 samples of 0.25 s, the middle 4 throttled: half the busy time.
        let r = check(&run(8, 2..6));
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert_eq!(
            written(&r),
            r#"{"gpu": 0, "busy_s": 2.0, "throttled_s": 1.0, "throttled_share": 0.5, "gpus": [{"gpu": 0, "name": "NVIDIA GeForce RTX 4090", "samples": 8, "busy_s": 2.0, "throttled_s": 1.0, "throttled_share": 0.5, "longest_episode_s": 1.0, "min_clock_mhz": 1395.0, "max_sm_clock_mhz": 3105.0, "max_power_w": 440.0, "power_limit_w": 450.0, "max_temp_c": 70.0, "reasons": ["sw_power_cap", "hw_thermal_slowdown"]}]}"#
        );
        let card = &found(&r).gpus[0];
        assert_eq!(card.longest_episode_s, 1.0);
        assert_eq!(card.min_clock_mhz, Some(1395.0));
        assert_eq!(card.reasons, ["sw_power_cap", "hw_thermal_slowdown"]);
        // A card never busy has no share and no throttled clock: written as null.
        let mut idle = run(4, 0..0);
        for r in &mut idle.rows {
            r.util_pct = Some(0.0);
        }
        let r = check(&idle);
        assert_eq!(r.status, Status::Unknown);
        assert!(r
            .message
            .starts_with("GPU 0 was never busy in its 4 samples"));
        assert_eq!(found(&r).throttled_share, None);
        assert_eq!(found(&r).gpus[0].min_clock_mhz, None);
        assert_eq!(
            written(&r),
            r#"{"gpu": 0, "busy_s": 0.0, "throttled_s": 0.0, "throttled_share": null, "gpus": [{"gpu": 0, "name": "NVIDIA GeForce RTX 4090", "samples": 4, "busy_s": 0.0, "throttled_s": 0.0, "throttled_share": null, "longest_episode_s": 0.0, "min_clock_mhz": null, "max_sm_clock_mhz": 3105.0, "max_power_w": 440.0, "power_limit_w": 450.0, "max_temp_c": 70.0, "reasons": []}]}"#
        );
        // No card, no samples, a refused number: nothing but the refused value.
        assert_eq!(written(&check(&GpuSamples::default())), "{}");
        assert_eq!(written(&without_samples()), "{}");
        let plain = run(100, 50..52);
        let r = check(&reread(
            &plain,
            53,
            "\"util_pct\": 98.0",
            "\"util_pct\": NaN",
        ));
        assert_eq!(
            written(&r),
            r#"{"implausible": "run/gpu.samples.jsonl:53: util_pct = NaN is not a number"}"#
        );
    }

    /// A folder holding a recording, with GPU samples and the recorder's manifest or not.
    fn folder(gpu: bool, manifest: bool) -> Folder {
        let file = |name: &str| Some(InputFile::new(name, Vec::new()));
        Folder {
            input: RunInput {
                series: file("run/run.series.jsonl"),
                gpu: if gpu {
                    file("run/gpu.samples.jsonl")
                } else {
                    None
                },
                manifest: if manifest {
                    file("run/manifest.json")
                } else {
                    None
                },
                ..RunInput::default()
            },
            ..Folder::default()
        }
    }

    #[test]
    fn the_run_reads_the_samples_and_says_what_the_conversion_says() {
        // No measured load in the folder: no result.
        assert_eq!(settle(T16, super::run(&Folder::default().scope())), None);
        // The recorder made the folder and left no samples: can't tell.
        let f = folder(false, true);
        let r = settle(T16, super::run(&f.scope())).unwrap();
        assert_eq!(r, without_samples());
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("no GPU samples (gpu.samples.jsonl"),
            "{}",
            r.message
        );
        // A folder from elsewhere never had them: left out.
        assert_eq!(settle(T16, super::run(&folder(false, false).scope())), None);
        let f = folder(true, true);
        let mut cx = f.scope();
        let e = InputError::new("run/gpu.samples.jsonl", Some(3), "not JSON");
        cx.gpu = Input::Unusable(&e);
        let r = settle(T16, super::run(&cx)).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "unusable input: run/gpu.samples.jsonl:3: not JSON"
            )
        );
        cx.gpu = Input::Missing(Gap::Run("the recorder stopped before sampling".into()));
        let r = settle(T16, super::run(&cx)).unwrap();
        assert_eq!(
            said(&r),
            (
                Status::Unknown,
                "can't tell: the recorder stopped before sampling"
            )
        );
        let s = run(100, 40..80);
        cx.gpu = Input::Present(&s);
        let r = settle(T16, super::run(&cx)).unwrap();
        assert_eq!(r.status, Status::Fail, "{}", r.message);
    }
}
