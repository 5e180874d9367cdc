//! Runs every rule of a scope, in the scope's order, and settles what a rule could not
//! read into its "can't tell" (`absent.rs`). One table per scope names its rules; the
//! registry's scopes must agree with them (a test holds them together).
//!
//! The order is the order results are shown in: the boot log's checks first, then the
//! clean-up (T2), the probe (T7), the client against the server (T15, T23), the load's
//! own failures and answers (T22, T21), the readings (T1, T10, T14, T9, T8) and how
//! densely they were taken (T24), then what concerns the measured load (T16–T18, T20).

use super::absent::{settle, Input, Judged};
use super::outcome::RunOutcome;
use super::registry::Tripwire;
use super::scope::{
    BootLogScope, FleetScope, PhaseScope, ReplicaScope, RunScope, ScrapeScope, StartsScope,
};
use super::verdict::{CheckResult, Status};
use super::{
    t01_silent_preemption as t01, t02_orphaned_engine as t02, t04_pool_size_jump as t04,
    t05_large_kv_blocks as t05, t06_backend_ignored as t06, t07_crash_after_ready as t07,
    t08_concurrency_not_reached as t08, t09_falling_ceiling as t09,
    t10_integer_second_timer as t10, t11_kv_memory_drift as t11, t12_unexplained_failure as t12,
    t14_null_block as t14, t15_client_server_mismatch as t15, t16_gpu_throttled as t16,
    t17_prefix_cache_hits as t17, t18_warm_up_in_window as t18, t19_load_unbalanced as t19,
    t20_load_generator_bound as t20, t21_output_not_as_asked as t21, t22_failures_hidden as t22,
    t23_latency_mismatch as t23, t24_coarse_recording as t24,
};
use crate::bootlog::{self, BootLog};
use crate::input::InputError;
use Tripwire::*;

/// A scope's rules: the tripwire each judges and the function that judges it.
type Rules<F> = &'static [(Tripwire, F)];

/// One start's log. T12 comes twice: the start's outcome, and `check-log`'s lines in an
/// unknown format.
const BOOT_LOG: Rules<fn(&BootLogScope<'_>) -> Judged> = &[
    (UnexplainedFailure, t12::boot_log),
    (CrashAfterReady, t07::boot_log),
    (LargeKvBlocks, t05::boot_log),
    (BackendIgnored, t06::boot_log),
    (UnexplainedFailure, t12::unparsed_lines),
];

/// Starts with the same settings.
const STARTS: Rules<fn(&StartsScope<'_>) -> Judged> =
    &[(PoolSizeJump, t04::starts), (KvMemoryDrift, t11::starts)];

/// The whole run.
const RUN: Rules<fn(&RunScope<'_>) -> Judged> = &[
    (OrphanedEngine, t02::run),
    (CrashAfterReady, t07::run),
    (ClientServerMismatch, t15::run),
    (LatencyMismatch, t23::run),
    (FailuresHidden, t22::run),
    (OutputNotAsAsked, t21::run),
    (SilentPreemption, t01::run),
    (IntegerSecondTimer, t10::run),
    (NullBlock, t14::run),
    (FallingCeiling, t09::run),
    (ConcurrencyNotReached, t08::run),
    (CoarseRecording, t24::run),
    (GpuThrottled, t16::run),
    (PrefixCacheHits, t17::run),
    (WarmUpInWindow, t18::run),
    (LoadGeneratorBound, t20::run),
];

/// A folder with a load tool's own scrape and no recording: these take the place of the
/// run's rules of the same tripwires.
const SCRAPE: Rules<fn(&ScrapeScope<'_>) -> Judged> = &[
    (ClientServerMismatch, t15::scrape),
    (SilentPreemption, t01::scrape),
    (ConcurrencyNotReached, t08::scrape),
];

const PHASE: Rules<fn(&PhaseScope<'_>) -> Judged> = &[
    (SilentPreemption, t01::phase),
    (ConcurrencyNotReached, t08::phase),
    (CoarseRecording, t24::phase),
    (FallingCeiling, t09::phase),
    (IntegerSecondTimer, t10::phase),
    (ClientServerMismatch, t15::phase),
    (FailuresHidden, t22::phase),
    (OutputNotAsAsked, t21::phase),
    (LoadGeneratorBound, t20::phase),
];

const REPLICA: Rules<fn(&ReplicaScope<'_>) -> Judged> = &[
    (SilentPreemption, t01::replica),
    (IntegerSecondTimer, t10::replica),
    (NullBlock, t14::replica),
    (FallingCeiling, t09::replica),
    (ConcurrencyNotReached, t08::replica),
];

const FLEET: Rules<fn(&FleetScope<'_>) -> Judged> = &[
    (SilentPreemption, t01::fleet),
    (ClientServerMismatch, t15::fleet),
    (ConcurrencyNotReached, t08::fleet),
    (LoadUnbalanced, t19::fleet),
];

/// Every rule of a table, each judged by `judge`, what it could not read settled.
fn run_all<F>(rules: Rules<F>, judge: impl Fn(&F) -> Judged) -> Vec<CheckResult> {
    rules
        .iter()
        .filter_map(|(t, rule)| settle(*t, judge(rule)))
        .collect()
}

/// Every boot log's checks (each names its log in `source`, and with several logs its
/// message starts with the log's label), then T4 and T11 for each group of starts with
/// the same settings. `server_died`: the run's T7 says so, not the log's.
pub fn boot_logs(logs: &[BootLog], with_unparsed: bool, server_died: bool) -> Vec<CheckResult> {
    let several = logs.len() > 1;
    let mut out = Vec::new();
    for log in logs {
        let cx = BootLogScope {
            log: Input::Present(log),
            with_unparsed,
            server_died,
        };
        for mut r in run_all(BOOT_LOG, |rule| rule(&cx)) {
            if several {
                r.message = format!("{}: {}", log.label, r.message);
            }
            r.source = Some(log.label.clone());
            out.push(r);
        }
    }
    if several {
        let (groups, not_compared) = bootlog::groups(logs);
        for (t, rule) in STARTS {
            for group in &groups {
                let cx = StartsScope {
                    logs,
                    group,
                    not_compared: &not_compared,
                };
                out.extend(settle(*t, rule(&cx)));
            }
        }
    }
    out
}

/// The checks of boot logs read alone (`check-log`, and the tests of the log rules).
pub fn check_logs(logs: &[BootLog], with_unparsed: bool) -> Vec<CheckResult> {
    boot_logs(logs, with_unparsed, false)
}

/// The checks of a boot log that could not be read: each says so.
pub fn unreadable_log(e: &InputError) -> Vec<CheckResult> {
    let cx = BootLogScope {
        log: Input::Unusable(e),
        with_unparsed: false,
        server_died: false,
    };
    run_all(BOOT_LOG, |rule| rule(&cx))
}

/// The whole run's checks, its boot logs' first; a broken run's passes say they cover
/// only what was recorded.
pub fn run(cx: &RunScope<'_>) -> Vec<CheckResult> {
    let mut out = boot_logs(cx.logs, false, cx.outcome.server_died.is_some());
    for e in cx.log_errors {
        out.extend(unreadable_log(e));
    }
    let scrape_only = !cx.pair.is_given() && !cx.series.is_given() && cx.scrape.is_given();
    for (t, rule) in RUN {
        let judged = match SCRAPE.iter().find(|(s, _)| s == t) {
            Some((_, from_scrape)) if scrape_only => {
                cx.scrape_scope().and_then(|s| from_scrape(&s))
            }
            _ => rule(cx),
        };
        out.extend(settle(*t, judged));
    }
    out
}

/// One phase's checks; their messages speak of the phase.
pub fn phase(cx: &PhaseScope<'_>) -> Vec<CheckResult> {
    run_all(PHASE, |rule| rule(cx))
        .into_iter()
        .map(|mut r| {
            r.message = r
                .message
                .replace("during the run", "during the phase")
                .replace("of this run", "of this phase");
            r
        })
        .collect()
}

pub fn replica(cx: &ReplicaScope<'_>) -> Vec<CheckResult> {
    run_all(REPLICA, |rule| rule(cx))
}

pub fn fleet(cx: &FleetScope<'_>) -> Vec<CheckResult> {
    run_all(FLEET, |rule| rule(cx))
}

/// A broken run's passes cover only what was recorded before it broke: each says so. The
/// start-up checks (T5, T6, T12) and the teardown's T2 judge what they read whole.
pub fn qualify_broken(
    results: &mut [CheckResult],
    outcome: &RunOutcome,
    ready_line: Option<usize>,
) {
    for r in results.iter_mut().filter(|r| r.status == Status::Pass) {
        match r.tripwire {
            UnexplainedFailure if outcome.server_died.is_some() => {
                r.message = match ready_line {
                    Some(n) => format!(
                        "The server started cleanly (ready at line {n}); it died later, during \
                         the run (T7)"
                    ),
                    None => {
                        "The server started cleanly; it died later, during the run (T7)".to_string()
                    }
                };
            }
            OrphanedEngine | LargeKvBlocks | BackendIgnored | UnexplainedFailure => {}
            _ => {
                r.message
                    .push_str(" (the run broke: this covers only what was recorded)");
                r.set("partial_run", true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::registry::Scope;

    /// Each scope's table judges exactly the tripwires the registry lists for it.
    #[test]
    fn the_tables_follow_the_registry() {
        fn listed<F>(rules: Rules<F>) -> Vec<Tripwire> {
            let mut v: Vec<Tripwire> = rules.iter().map(|(t, _)| *t).collect();
            v.sort();
            v.dedup();
            v
        }
        let registered = |scope: Scope| -> Vec<Tripwire> {
            Tripwire::ALL
                .into_iter()
                .filter(|t| t.judged_in(scope))
                .collect()
        };
        assert_eq!(listed(BOOT_LOG), registered(Scope::BootLog));
        assert_eq!(listed(STARTS), registered(Scope::Starts));
        assert_eq!(listed(RUN), registered(Scope::Run));
        assert_eq!(listed(SCRAPE), registered(Scope::Scrape));
        assert_eq!(listed(PHASE), registered(Scope::Phase));
        assert_eq!(listed(REPLICA), registered(Scope::Replica));
        assert_eq!(listed(FLEET), registered(Scope::Fleet));
        // What no table judges is the recorder's.
        for t in Tripwire::ALL {
            let judged = [
                Scope::BootLog,
                Scope::Starts,
                Scope::Run,
                Scope::Phase,
                Scope::Replica,
                Scope::Fleet,
                Scope::Scrape,
            ]
            .into_iter()
            .any(|s| t.judged_in(s));
            assert_eq!(!judged, t.judged_in(Scope::Recorder), "{}", t.id());
        }
    }
}
