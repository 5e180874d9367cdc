//! T20: the load tool, not the server, limited the run (docs/tripwires.md#t20).
//!
//! From the tool's own timeline of its requests (`bench::timeline`):
//! - **a concurrency load** of c: the time-weighted mean number of requests open while
//!   the tool was still sending (its first send to its last; after the last send the
//!   load drains by design), against c (or the number of requests, when fewer). Under
//!   [`REACHED`] of it warns, under [`HALF`] fails, while the recording shows the server
//!   had room then (nothing waiting, the KV cache under T9's `SATURATED`, fewer running
//!   than its limit). With the server full as well, whose limit it was can't be told;
//!   without readings of the server it warns at most.
//! - **a rate load** of r: the rate the sends actually went out at, against r, allowing
//!   for the spread of a Poisson schedule (`slack`). Behind it by more warns, under half
//!   fails; unless a concurrency cap asked for beside the rate was full most of the time
//!   (the cap held the sends back, as asked).
//!
//! The recorder's samples of the load command's CPU time (`load_cpu`) name a tool pinned
//! at a full core as the likely cause.

use serde::Serialize;

use crate::bench::timeline::Timeline;
use crate::bench::{BenchResult, Requests};
use crate::load_cpu::LoadCpu;
use crate::num::{fixed, shortest};
use crate::plausible;
use crate::rules::absent::{Absent, Gap, Input, Judged};
use crate::rules::scope::{PhaseScope, RunScope};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::{column, Field, Series};

const T20: Tripwire = Tripwire::LoadGeneratorBound;

/// Below this share of the concurrency asked for, kept open on average while sending, the
/// load was lighter than its label by more than run-to-run spread: a warning.
pub const REACHED: f64 = 0.9;
/// Below half, the run measured a different load altogether: a failure.
pub const HALF: f64 = 0.5;
/// A rate load may fall this far behind its rate before it warns…
pub const RATE_SLACK: f64 = 0.10;
/// …or this many standard deviations of a Poisson schedule's achieved rate (1/√(n−1) of
/// it over n sends), when that is more.
pub const SPREAD_SIGMAS: f64 = 3.0;
/// Seconds added at each end of the sending stretch when the recording is looked at.
pub const PAD_S: f64 = 1.0;
/// A concurrency cap beside a rate, full for this share of the sending, held it back.
pub const CAP_HELD: f64 = 0.5;

/// What the server's readings showed while the tool was sending.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Room {
    pub readings: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_usage_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_cap: Option<i64>,
    /// Nothing waited, the cache was not full and fewer ran than the limit; none when the
    /// readings lack the queue.
    pub had_room: Option<bool>,
}

/// T20's evidence.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Reached {
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    /// Requests on the tool's timeline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sending_s: Option<f64>,
    /// Requests open on average while sending (a concurrency load).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_open: Option<f64>,
    /// Requests sent per second (a rate load).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_rate: Option<f64>,
    /// What was reached over what was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// A rate load's allowed shortfall.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slack: Option<f64>,
    /// The share of the sending during which a cap beside a rate was full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_cap_share: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<Room>,
    /// The share of the sending during which the load command used a full core.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_core_share: Option<f64>,
    /// Requests that failed, when they leave a shortfall unexplained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
}

/// The load tool held the load back (T20 warns or fails): what T8 says of whose limit.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientLimit {
    pub tool: String,
    pub mean_open: f64,
}

impl ClientLimit {
    /// The clause T8 adds.
    pub fn clause(&self) -> String {
        format!(
            "{} kept only {} requests open on average while sending, with the server's room \
             to spare: the load tool's limit, not the server's (T20)",
            self.tool,
            fixed(self.mean_open, 1)
        )
    }
}

/// The evidence of a T20 result.
pub fn reached(r: &CheckResult) -> Option<&Reached> {
    r.finding::<Reached>()
}

/// What T20 reads, from whichever scope.
pub struct LoadInputs<'a> {
    pub tool: &'a str,
    pub requests: Option<&'a Requests>,
    pub concurrency: Option<i64>,
    /// A finite request rate asked for.
    pub rate: Option<f64>,
    /// Every request asked for at once (vLLM's `request_rate` of `inf` without a cap).
    pub all_at_once: bool,
    /// Requests sent (completed and failed), and the result's duration: a rate's lower
    /// bound without per-request times.
    pub sent: Option<i64>,
    /// Requests that failed: a failed request ends at once and leaves its slot empty.
    pub failed: Option<i64>,
    pub duration_s: Option<f64>,
    pub series: Option<&'a Series>,
    pub running_cap: Option<i64>,
    /// The load's end, unix seconds: where the tool's last answer ended, for a tool whose
    /// clock has an arbitrary zero.
    pub load_end_wall: Option<f64>,
    pub cpu: Option<&'a LoadCpu>,
}

/// The whole run's inputs; none for a sweep (each phase is judged on its own).
fn run_inputs<'a>(cx: &RunScope<'a>, b: &'a BenchResult) -> LoadInputs<'a> {
    let rate = b
        .request_rate
        .or(b.named_rate)
        .filter(|r| r.is_finite() && *r > 0.0);
    LoadInputs {
        tool: b.tool_name(),
        requests: b.requests.as_ref(),
        concurrency: cx.requested,
        rate,
        all_at_once: b.named_rate.is_some_and(f64::is_infinite) && cx.requested.is_none(),
        sent: b.completed.zip(b.failed).map(|(c, f)| c + f),
        failed: b.failed,
        duration_s: b.duration,
        series: cx.series.present(),
        running_cap: cx.facts.and_then(|f| f.running_cap_info()).map(|c| c.cap),
        load_end_wall: cx.manifest.and_then(|m| m.load_ended_wall),
        cpu: cx.load_cpu.present(),
    }
}

/// The load tool's result, or why there is none to judge.
fn bench<'a>(cx: &RunScope<'a>) -> Result<&'a BenchResult, Absent> {
    if !cx.load_measured() {
        return Err(Absent::NotGiven);
    }
    match &cx.bench {
        Input::NotGiven if cx.load_ran && cx.series.is_given() => Err(Gap::Run(
            "the folder holds no load-tool result, so the load's own timeline is unknown".into(),
        )
        .into()),
        other => other.need(),
    }
}

/// The whole run; a sweep's run-level result points to its phases. On a folder the
/// recorder did not make, a "can't tell" that only its captures could decide (the
/// per-request times it asks the load tool for) is left out, like T18's.
pub fn run(cx: &RunScope<'_>) -> Judged {
    let b = bench(cx)?;
    if let Some(sweep) = b.sweep_phrase() {
        return Ok(CheckResult::new(
            T20,
            Status::NotApplicable,
            format!("{sweep}: each phase is judged on its own"),
        ));
    }
    let r = check(&run_inputs(cx, b));
    let refused = reached(&r).is_some_and(|e| e.implausible.is_some());
    if cx.recorded_by_inferlint() || refused || r.status != Status::Unknown {
        Ok(r)
    } else {
        Err(Absent::NotGiven)
    }
}

/// What T8 says of whose limit: some when the run's T20 warns or fails.
pub fn client_limit(cx: &RunScope<'_>) -> Option<ClientLimit> {
    let r = run(cx).ok()?;
    if !matches!(r.status, Status::Warn | Status::Fail) {
        return None;
    }
    let e = reached(&r)?;
    Some(ClientLimit {
        tool: e.tool.clone(),
        mean_open: e.mean_open?,
    })
}

/// One phase: its own requests (when its result keeps them) on its own window.
pub fn phase(cx: &PhaseScope<'_>) -> Judged {
    let p = cx.phase;
    // Like every check of a phase, none without the phase's window on the recording.
    let w = cx.window.need()?;
    Ok(check(&LoadInputs {
        tool: cx.tool,
        requests: p.requests.as_ref(),
        concurrency: p.concurrency.filter(|&c| c > 0),
        rate: p.rate.filter(|r| r.is_finite() && *r > 0.0),
        all_at_once: false,
        sent: p.completed.zip(p.failed).map(|(c, f)| c + f),
        failed: p.failed,
        duration_s: p.duration,
        series: Some(&w.inner),
        running_cap: cx.facts.and_then(|f| f.running_cap_info()).map(|c| c.cap),
        load_end_wall: p.end_wall,
        cpu: cx.load_cpu,
    }))
}

/// T20 on its inputs.
pub fn check(i: &LoadInputs<'_>) -> CheckResult {
    let mut e = Reached {
        tool: i.tool.to_string(),
        concurrency: i.concurrency,
        request_rate: i.rate,
        ..Reached::default()
    };
    // A refused send time or latency leaves its request off the timeline: no verdict.
    if let Some(bad) = i.requests.and_then(|q| q.implausible.first()) {
        e.implausible = Some(bad.to_string());
        return CheckResult::new(T20, Status::Unknown, plausible::cannot_tell(bad)).found(e);
    }
    let timeline = i.requests.and_then(Timeline::of);
    if let Some(t) = &timeline {
        e.requests = Some(t.len());
        let (first, last) = t.sending();
        e.sending_s = Some(last - first);
    }
    let (status, message) = match (i.rate, i.concurrency, &timeline) {
        (Some(rate), cap, t) => rate_load(i, rate, cap, t.as_ref(), &mut e),
        (None, Some(c), Some(t)) => concurrency_load(i, c, t, &mut e),
        (None, None, Some(t)) if i.all_at_once => concurrency_load(i, t.len() as i64, t, &mut e),
        (None, _, None) if i.concurrency.is_some() || i.all_at_once => (
            Status::Unknown,
            format!(
                "{}'s result keeps no per-request send times and latencies, so how many \
                 requests it kept open can't be told (vllm bench serve keeps them with \
                 --save-detailed)",
                i.tool
            ),
        ),
        _ => (
            Status::Unknown,
            format!(
                "{}'s result does not say what load it asked for (a concurrency or a rate), \
                 so there is nothing to hold its timeline to",
                i.tool
            ),
        ),
    };
    CheckResult::new(T20, status, message).found(e)
}

/// A concurrency load of `c`: the mean open while sending against c (or the number of
/// requests, when fewer).
fn concurrency_load(i: &LoadInputs<'_>, c: i64, t: &Timeline, e: &mut Reached) -> (Status, String) {
    let n = t.len();
    let target = (c as f64).min(n as f64);
    let (first, last) = t.sending();
    let fewer = if (n as f64) < c as f64 {
        format!(" (only {n} requests, so at most {n} could be open)")
    } else {
        String::new()
    };
    if t.peak_open() >= n || last <= first {
        e.share = Some(1.0);
        return (
            Status::Pass,
            format!(
                "{} sent all {n} requests before any answer ended, so all were open at once{fewer}",
                i.tool
            ),
        );
    }
    let (mean, _) = t.open_over(first, last, target);
    let share = mean / target;
    e.mean_open = Some(mean);
    e.share = Some(share);
    let kept = format!(
        "{} kept {} requests open on average of the {c} asked for{fewer} while it sent its {n} \
         requests over {} s ({}%)",
        i.tool,
        fixed(mean, 1),
        fixed(last - first, 1),
        fixed(share * 100.0, 0)
    );
    if share >= REACHED {
        return (Status::Pass, kept);
    }
    if let Some(f) = i.failed.filter(|&f| f > 0) {
        e.failed = Some(f);
        return (
            Status::Unknown,
            format!(
                "{kept}, but {f} of its requests failed (T22): a failed request ends at once \
                 and its slot stands empty until the next is sent, so whose limit the \
                 shortfall was can't be told"
            ),
        );
    }
    let status = if share < HALF {
        Status::Fail
    } else {
        Status::Warn
    };
    let cause = cpu_cause(i, t, (first, last), e);
    let (room, aligned) = room(i, t, (first, last));
    e.server = room.clone();
    match room.and_then(|r| r.had_room.map(|had| (had, r))) {
        Some((true, r)) => (
            status,
            format!(
                "{kept}, while the server had room ({}): the load tool, not the server, \
                 limited the run{cause}",
                room_words(&r)
            ),
        ),
        Some((false, r)) => (
            Status::Unknown,
            format!(
                "{kept}, but the server was at a limit too ({}), so whose limit it was can't \
                 be told{cause}",
                room_words(&r)
            ),
        ),
        None => (
            Status::Warn.max(status),
            format!(
                "{kept}; {}, so whether the server had room can't be shown{cause}",
                aligned.unwrap_or_else(|| "the recording has no queue readings then".into())
            ),
        ),
    }
}

/// "nothing waiting, the KV cache at most 42% full, up to 7 running of its limit 16".
fn room_words(r: &Room) -> String {
    let mut parts = Vec::new();
    match r.waiting_max {
        Some(w) if w > 0.0 => parts.push(format!("up to {} waiting", shortest(w))),
        Some(_) => parts.push("nothing waiting".to_string()),
        None => {}
    }
    if let Some(kv) = r.kv_usage_max {
        parts.push(format!(
            "the KV cache at most {}% full",
            fixed(kv * 100.0, 0)
        ));
    }
    if let Some(run) = r.running_max {
        let cap = r
            .running_cap
            .map(|c| format!(" of its limit {c}"))
            .unwrap_or_default();
        parts.push(format!("up to {} running{cap}", shortest(run)));
    }
    parts.join(", ")
}

/// The server's readings over the sending, and why there are none when there are none.
fn room(i: &LoadInputs<'_>, t: &Timeline, sending: (f64, f64)) -> (Option<Room>, Option<String>) {
    let Some(series) = i.series else {
        return (
            None,
            Some("the folder has no recording of the server".into()),
        );
    };
    if let Some(bad) = series.implausible_in(&[column::RUNNING, column::WAITING, column::KV_USAGE])
    {
        return (None, Some(plausible::cannot_tell(bad)));
    }
    let offset = if t.unix_clock() {
        0.0
    } else {
        match i.load_end_wall {
            Some(end) => end - t.last_end(),
            None => {
                return (
                    None,
                    Some(format!(
                        "{}'s clock has no fixed zero and the load's end is not recorded, so \
                         its timeline can't be placed on the recording",
                        i.tool
                    )),
                )
            }
        }
    };
    let (from, to) = (sending.0 + offset - PAD_S, sending.1 + offset + PAD_S);
    let rows = &series.rows;
    let inside: Vec<usize> = (0..rows.len())
        .filter(|&k| (from..=to).contains(&rows.t_wall()[k]))
        .collect();
    if inside.is_empty() {
        return (
            None,
            Some("the recording has no reading while it was sending".into()),
        );
    }
    let max = |f: Field| -> Option<f64> {
        let col = rows.column(f);
        inside
            .iter()
            .filter_map(|&k| Some(col[k]).filter(|v| !v.is_nan()))
            .reduce(f64::max)
    };
    let mut r = Room {
        readings: inside.len(),
        waiting_max: max(Field::Waiting),
        kv_usage_max: max(Field::KvUsage),
        running_max: max(Field::Running),
        running_cap: i.running_cap,
        had_room: None,
    };
    r.had_room = r.waiting_max.map(|w| {
        w <= 0.0
            && r.kv_usage_max
                .is_none_or(|kv| kv < super::t09_falling_ceiling::SATURATED)
            && r.running_cap
                .zip(r.running_max)
                .is_none_or(|(c, run)| run < c as f64)
    });
    (Some(r), None)
}

/// "; its processes used a full core for 80% of that time: the likely cause", from the
/// recorder's samples of the load command's CPU time over the sending.
fn cpu_cause(i: &LoadInputs<'_>, t: &Timeline, sending: (f64, f64), e: &mut Reached) -> String {
    let Some(cpu) = i.cpu else {
        return String::new();
    };
    let offset = if t.unix_clock() {
        Some(0.0)
    } else {
        i.load_end_wall.map(|end| end - t.last_end())
    };
    let Some(offset) = offset else {
        return String::new();
    };
    let Some(share) = cpu.full_core_share(sending.0 + offset, sending.1 + offset) else {
        return String::new();
    };
    e.full_core_share = Some(share);
    if share < crate::load_cpu::PINNED_SHARE {
        return String::new();
    }
    format!(
        "; its processes used a full core for {}% of that time: a load tool pinned at a core \
         is the likely cause",
        fixed(share * 100.0, 0)
    )
}

/// A rate load: the rate the sends went out at against the one asked for.
fn rate_load(
    i: &LoadInputs<'_>,
    rate: f64,
    cap: Option<i64>,
    t: Option<&Timeline>,
    e: &mut Reached,
) -> (Status, String) {
    let Some(t) = t else {
        return rate_from_totals(i, rate, e);
    };
    let n = t.len();
    let slack = RATE_SLACK.max(SPREAD_SIGMAS / ((n - 1) as f64).sqrt());
    e.slack = Some(slack);
    let (first, last) = t.sending();
    let Some(sent) = t.send_rate() else {
        return (
            Status::Pass,
            format!(
                "{} sent all {n} requests at one instant, ahead of any rate",
                i.tool
            ),
        );
    };
    e.sent_rate = Some(sent);
    let share = sent / rate;
    e.share = Some(share);
    let said = format!(
        "{} sent its {n} requests at {}/s against the {}/s asked for ({}%)",
        i.tool,
        fixed(sent, 1),
        shortest(rate),
        fixed(share * 100.0, 0)
    );
    if share >= 1.0 - slack {
        return (
            Status::Pass,
            format!(
                "{said}, within the {}% a random schedule of {n} sends may fall behind",
                fixed(slack * 100.0, 0)
            ),
        );
    }
    if let Some(c) = cap {
        let (_, full) = t.open_over(first, last, c as f64);
        e.at_cap_share = Some(full);
        if full >= CAP_HELD {
            return (
                Status::Pass,
                format!(
                    "{said}, but its cap of {c} open requests was full {}% of the time: the \
                     cap held the sends back, as asked",
                    fixed(full * 100.0, 0)
                ),
            );
        }
    }
    let status = if share < HALF {
        Status::Fail
    } else {
        Status::Warn
    };
    let cause = cpu_cause(i, t, (first, last), e);
    (
        status,
        format!("{said}: the load tool fell behind its own schedule{cause}"),
    )
}

/// A rate load without per-request times: the lowest rate the totals allow.
fn rate_from_totals(i: &LoadInputs<'_>, rate: f64, e: &mut Reached) -> (Status, String) {
    let (Some(sent), Some(d)) = (i.sent, i.duration_s.filter(|d| *d > 0.0)) else {
        return (
            Status::Unknown,
            format!(
                "{}'s result has neither per-request send times nor the requests sent and the \
                 duration, so the rate it reached can't be told",
                i.tool
            ),
        );
    };
    let slack = RATE_SLACK.max(SPREAD_SIGMAS / ((sent - 1).max(1) as f64).sqrt());
    e.slack = Some(slack);
    // The sends took at most the whole duration.
    let at_least = (sent - 1).max(0) as f64 / d;
    e.sent_rate = Some(at_least);
    if at_least >= rate * (1.0 - slack) {
        e.share = Some(at_least / rate);
        return (
            Status::Pass,
            format!(
                "{} sent {sent} requests in {} s: at least {}/s against the {}/s asked for",
                i.tool,
                fixed(d, 1),
                fixed(at_least, 1),
                shortest(rate)
            ),
        );
    }
    (
        Status::Unknown,
        format!(
            "{} sent {sent} requests in {} s, at least {}/s against the {}/s asked for; without \
             per-request send times the last answers' time can't be told from a late sender",
            i.tool,
            fixed(d, 1),
            fixed(at_least, 1),
            shortest(rate)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::load_cpu::LoadCpuRow;
    use crate::engine::Engine;
    use crate::rules::absent::settle;
    use crate::rules::testing::{gauges, series, Folder};

    /// Requests sent at `starts` (the tool's clock, zero arbitrary), each `latency` long.
    fn requests(starts: &[f64], latency: f64) -> Requests {
        Requests {
            ttft_s: vec![Some(0.1); starts.len()],
            start_s: Some(starts.iter().map(|&s| Some(s)).collect()),
            latency_s: Some(vec![Some(latency); starts.len()]),
            output_tokens: None,
            input_tokens: None,
            implausible: Vec::new(),
        }
    }

    /// `n` requests of 1 s kept `c` at once, each slot's next sent 1 ms after its last.
    fn kept(c: usize, n: usize) -> Requests {
        let starts: Vec<f64> = (0..n).map(|i| (i / c) as f64 * 1.001).collect();
        requests(&starts, 1.0)
    }

    /// 40 requests of 1 s, one sent every 0.4 s: about 2.5 open at once.
    fn slow() -> Requests {
        let starts: Vec<f64> = (0..40).map(|i| i as f64 * 0.4).collect();
        requests(&starts, 1.0)
    }

    /// Readings every second from t = 100, for 20 s.
    fn server(running: f64, waiting: f64, kv: f64) -> Series {
        series(Engine::Vllm, vec![gauges(running, waiting, kv); 20])
    }

    fn inputs<'a>(q: &'a Requests, s: Option<&'a Series>) -> LoadInputs<'a> {
        LoadInputs {
            tool: "vllm bench serve",
            requests: Some(q),
            concurrency: Some(8),
            rate: None,
            all_at_once: false,
            sent: None,
            failed: None,
            duration_s: None,
            series: s,
            running_cap: None,
            // The slow client's last answer ends at 16.6 s on its clock: 116.6 s here.
            load_end_wall: Some(116.6),
            cpu: None,
        }
    }

    #[test]
    fn a_client_that_keeps_its_slots_full_passes() {
        let q = kept(8, 40);
        let r = check(&inputs(&q, None));
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert!(
            r.message
                .starts_with("vllm bench serve kept 8.0 requests open on average of the 8"),
            "{}",
            r.message
        );
        assert_eq!(reached(&r).unwrap().requests, Some(40));
    }

    #[test]
    fn a_slow_client_with_the_server_idle_fails_and_names_the_load_tool() {
        let (q, s) = (slow(), server(3.0, 0.0, 0.2));
        let r = check(&inputs(&q, Some(&s)));
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert!(
            r.message.contains(
                "while the server had room (nothing waiting, the KV cache at most 20% full, up \
                 to 3 running): the load tool, not the server, limited the run"
            ),
            "{}",
            r.message
        );
        let e = reached(&r).unwrap();
        assert!(e.share.unwrap() < HALF, "{e:?}");
        assert_eq!(e.server.as_ref().unwrap().had_room, Some(true));
    }

    #[test]
    fn a_full_server_makes_it_cannot_tell_and_no_recording_warns_at_most() {
        let (q, s) = (slow(), server(3.0, 5.0, 0.95));
        let r = check(&inputs(&q, Some(&s)));
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(
            r.message.contains("whose limit it was can't be told"),
            "{}",
            r.message
        );
        let r = check(&inputs(&q, None));
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(
            r.message
                .contains("the folder has no recording of the server"),
            "{}",
            r.message
        );
        // A clock with no fixed zero and no recorded end can't be placed on the readings.
        let s = server(3.0, 0.0, 0.2);
        let mut i = inputs(&q, Some(&s));
        i.load_end_wall = None;
        let r = check(&i);
        assert_eq!(r.status, Status::Warn, "{}", r.message);
        assert!(
            r.message.contains("can't be placed on the recording"),
            "{}",
            r.message
        );
    }

    #[test]
    fn failed_requests_leave_a_shortfall_unexplained() {
        let q = slow();
        let mut i = inputs(&q, None);
        let r = check(&i);
        assert!(
            matches!(r.status, Status::Fail | Status::Warn),
            "{}",
            r.message
        );
        i.failed = Some(3);
        let r = check(&i);
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
        assert!(
            r.message.ends_with(
                "but 3 of its requests failed (T22): a failed request ends at once and its \
                 slot stands empty until the next is sent, so whose limit the shortfall was \
                 can't be told"
            ),
            "{}",
            r.message
        );
        assert_eq!(reached(&r).unwrap().failed, Some(3));
    }

    #[test]
    fn a_busy_load_tool_is_named_as_the_cause() {
        let (q, s) = (slow(), server(3.0, 0.0, 0.2));
        let rows = (0..20)
            .map(|k| LoadCpuRow {
                t_wall: 100.0 + k as f64,
                t_mono_ns: None,
                cpu_s: Some(k as f64 * 0.97),
                processes: Some(1),
            })
            .collect();
        let cpu = LoadCpu {
            rows,
            ..LoadCpu::default()
        };
        let mut i = inputs(&q, Some(&s));
        i.cpu = Some(&cpu);
        let r = check(&i);
        assert!(
            r.message.ends_with(
                "its processes used a full core for 100% of that time: a load tool pinned at a \
                 core is the likely cause"
            ),
            "{}",
            r.message
        );
    }

    #[test]
    fn a_rate_load_behind_its_schedule() {
        // Asked for 10/s, sent 2.5/s.
        let q = slow();
        let mut i = inputs(&q, None);
        (i.concurrency, i.rate) = (None, Some(10.0));
        let r = check(&i);
        assert_eq!(r.status, Status::Fail, "{}", r.message);
        assert!(
            r.message.starts_with(
                "vllm bench serve sent its 40 requests at 2.5/s against the 10/s asked for (25%)"
            ),
            "{}",
            r.message
        );
        // Asked for 2.6/s: within a random schedule's spread over 40 sends.
        i.rate = Some(2.6);
        assert_eq!(check(&i).status, Status::Pass);
        // Behind, but a cap of 2 open was full most of the time: as asked.
        i.rate = Some(10.0);
        i.concurrency = Some(2);
        let r = check(&i);
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert!(
            r.message.contains("the cap held the sends back"),
            "{}",
            r.message
        );
    }

    #[test]
    fn a_rate_load_without_send_times_passes_only_on_its_totals() {
        let q = slow();
        let i = LoadInputs {
            requests: None,
            concurrency: None,
            rate: Some(10.0),
            sent: Some(101),
            failed: None,
            duration_s: Some(10.5),
            ..inputs(&q, None)
        };
        assert_eq!(check(&i).status, Status::Pass);
        let i = LoadInputs {
            duration_s: Some(30.0),
            ..i
        };
        let r = check(&i);
        assert_eq!(r.status, Status::Unknown, "{}", r.message);
    }

    #[test]
    fn without_a_timeline_or_an_asked_load_it_cannot_tell() {
        let q = slow();
        let i = LoadInputs {
            requests: None,
            ..inputs(&q, None)
        };
        let r = check(&i);
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("keeps no per-request send times"),
            "{}",
            r.message
        );
        let i = LoadInputs {
            concurrency: None,
            ..inputs(&q, None)
        };
        let r = check(&i);
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.contains("does not say what load it asked for"),
            "{}",
            r.message
        );
        let mut bad = slow();
        bad.implausible.push(crate::plausible::Implausible::new(
            "bench.json",
            None,
            "start_times[3]",
            -1.0,
            crate::plausible::Why::Negative,
        ));
        let r = check(&inputs(&bad, None));
        assert_eq!(r.status, Status::Unknown);
        assert!(r.message.contains("start_times[3]"), "{}", r.message);
    }

    #[test]
    fn fewer_requests_than_slots_all_sent_at_once_pass() {
        let q = requests(&[0.0, 0.0, 0.001], 1.0);
        let r = check(&inputs(&q, None));
        assert_eq!(r.status, Status::Pass, "{}", r.message);
        assert!(
            r.message.contains("all were open at once (only 3 requests"),
            "{}",
            r.message
        );
    }

    #[test]
    fn the_run_tells_t8_whose_limit_it_was() {
        let (q, s) = (slow(), server(3.0, 0.0, 0.2));
        let b = BenchResult {
            completed: Some(40),
            failed: Some(0),
            requests: Some(q),
            ..BenchResult::default()
        };
        let mut folder = Folder::default();
        folder.input.bench = Some(crate::inputs::BenchInput {
            evidence_path: "bench.json".into(),
            file: crate::inputs::InputFile::new("bench.json", b"{}".to_vec()),
        });
        let mf = crate::manifest::Manifest {
            load_ended_wall: Some(116.6),
            ..Default::default()
        };
        let mut cx = folder.scope();
        cx.bench = Input::Present(&b);
        cx.series = Input::Present(&s);
        cx.requested = Some(8);
        cx.manifest = Some(&mf);
        let limit = client_limit(&cx).unwrap();
        assert!(
            limit
                .clause()
                .starts_with("the load tool kept only 2.4 requests open"),
            "{}",
            limit.clause()
        );
        cx.client_limit = Some(limit);
        let t8 = settle(
            Tripwire::ConcurrencyNotReached,
            crate::rules::t08_concurrency_not_reached::run(&cx),
        )
        .unwrap();
        assert_eq!(t8.status, Status::Fail);
        assert!(
            t8.message
                .ends_with("the load tool's limit, not the server's (T20)"),
            "{}",
            t8.message
        );
        // Without a result, a run that recorded a load can't tell.
        cx.bench = Input::NotGiven;
        let r = settle(T20, run(&cx)).unwrap();
        assert_eq!(r.status, Status::Unknown);
    }
}
