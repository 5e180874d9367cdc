//! One replica judged on its own readings: the single-server checks T1, T10, T14, T9 and
//! T8 (against its even share of the concurrency asked for), run by the same functions as
//! for a single server, and the figures the replica table shows.

use crate::rules::Tripwire;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::{snapshots_engine, unknown_for};
use crate::counters::Pair;
use crate::docs::{AFTER_SNAPSHOT, BEFORE_SNAPSHOT, REPLICAS_DIR, SERIES};
use crate::engine::Engine;
use crate::input::InputError;
use crate::inputs::{InputFile, ReplicaInput};
use crate::rules;
use crate::rules::verdict::{CheckResult, Status};
use crate::series::Series;
use crate::snapshot::Snapshot;

/// One replica in the Report (`replicas` of `results.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplicaReport {
    /// Its folder under `replicas/`.
    pub id: String,
    /// Prometheus' `instance` label, from `fleet.json`.
    pub instance: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// How often Prometheus scraped it (seconds), from `fleet.json`.
    pub scrape_interval_s: Option<f64>,
    pub engine: Option<&'static str>,
    /// Its own verdicts: T1, T10, T14, T9, T8.
    pub checks: Vec<CheckResult>,
    /// The most requests its recording showed running at once.
    pub peak_running: Option<f64>,
    /// Evictions during the run (its T1), when known.
    pub preemptions: Option<f64>,
    /// Requests it finished between the readings.
    pub served: Option<f64>,
    /// Requests the router says it sent this replica, when the router was read.
    pub router_served: Option<f64>,
}

/// A replica's parsed inputs; each `None` when its file is absent.
pub(crate) struct ReplicaRun {
    pub id: String,
    pub before: Option<Result<Snapshot, InputError>>,
    pub after: Option<Result<Snapshot, InputError>>,
    pub series: Option<Result<Series, InputError>>,
}

impl ReplicaRun {
    pub fn parse(r: &ReplicaInput) -> ReplicaRun {
        fn parse<T>(
            f: &Option<InputFile>,
            read: impl Fn(&str, &[u8]) -> Result<T, InputError>,
        ) -> Option<Result<T, InputError>> {
            f.as_ref().map(|f| f.bytes().and_then(|b| read(&f.name, b)))
        }
        ReplicaRun {
            id: r.id.clone(),
            before: parse(&r.before, Snapshot::read),
            after: parse(&r.after, Snapshot::read),
            series: parse(&r.series, Series::read),
        }
    }

    /// A replica listed in `fleet.json` whose folder is not there.
    pub fn absent(id: &str) -> ReplicaRun {
        ReplicaRun {
            id: id.to_string(),
            before: None,
            after: None,
            series: None,
        }
    }

    pub fn series(&self) -> Option<&Series> {
        self.series.as_ref().and_then(|r| r.as_ref().ok())
    }

    pub fn pair(&self) -> Option<Pair<'_>> {
        match (&self.before, &self.after) {
            (Some(Ok(b)), Some(Ok(a))) => Some(Pair::new(b, a)),
            _ => None,
        }
    }

    /// The first unusable snapshot's error.
    pub fn pair_error(&self) -> Option<&InputError> {
        [&self.before, &self.after]
            .into_iter()
            .find_map(|s| s.as_ref().and_then(|r| r.as_ref().err()))
    }

    /// The engine its metric names say, else its series header's.
    pub fn engine(&self) -> Option<Engine> {
        let snaps: Vec<&Snapshot> = [&self.before, &self.after]
            .into_iter()
            .filter_map(|s| s.as_ref().and_then(|r| r.as_ref().ok()))
            .collect();
        snapshots_engine(&snaps).or_else(|| self.series().and_then(|s| s.engine_named))
    }

    /// Requests it finished between the readings (a restart or a missing counter: none).
    pub fn served(&self) -> Option<f64> {
        let engine = self.engine().unwrap_or(Engine::Vllm);
        self.pair()?
            .delta(engine.metrics().requests_finished, &[], None)
            .ok()
            .flatten()
    }

    /// A missing file, said as "can't tell".
    fn missing(&self, tripwire: Tripwire, what: &str) -> CheckResult {
        CheckResult::new(
            tripwire,
            Status::Unknown,
            format!(
                "{REPLICAS_DIR}/{}/ has no {what}, so this replica's {} can't be told",
                self.id,
                tripwire.id()
            ),
        )
        .with("replica", self.id.as_str())
    }

    /// Its checks in the single server's order: T1, T10, T14, T9, T8.
    pub fn checks(&self, share: Option<Share>, scrape_s: Option<f64>) -> Vec<CheckResult> {
        let mut out = Vec::new();
        let engine = self.engine().unwrap_or(Engine::Vllm);
        let series = self.series();
        let pair = self.pair();
        let readings = format!("{BEFORE_SNAPSHOT} and {AFTER_SNAPSHOT}");
        match (&pair, self.pair_error()) {
            (Some(pair), _) => {
                out.push(rules::t01_silent_preemption::check(
                    engine, pair, series, None,
                ));
                let mut t10 = rules::t10_integer_second_timer::check(
                    pair,
                    engine.metrics().generation_tokens,
                );
                note_scrape_precision(&mut t10, scrape_s);
                out.push(t10);
            }
            (None, Some(e)) => {
                out.push(unknown_for(Tripwire::SilentPreemption, e));
                out.push(unknown_for(Tripwire::IntegerSecondTimer, e));
            }
            (None, None) => {
                out.push(self.missing(Tripwire::SilentPreemption, &readings));
                out.push(self.missing(Tripwire::IntegerSecondTimer, &readings));
            }
        }
        let after = self.after.as_ref().and_then(|r| r.as_ref().ok());
        match (&self.series, series) {
            (_, Some(s)) => {
                let mut usable = None;
                if s.engine().metrics().cache_info.is_none() {
                    out.push(rules::t14_null_block::not_applicable(s.engine()));
                } else if let Some(a) = after {
                    let (r, n) = rules::t14_null_block::check(s, a);
                    usable = n;
                    out.push(r);
                } else if let Some(Err(e)) = &self.after {
                    out.push(unknown_for(Tripwire::NullBlock, e));
                } else {
                    out.push(self.missing(Tripwire::NullBlock, AFTER_SNAPSHOT));
                }
                out.push(rules::t09_falling_ceiling::check(s, usable));
                out.push(match share {
                    Some(sh) => sh.judge(s, scrape_s),
                    None => CheckResult::new(
                        Tripwire::ConcurrencyNotReached,
                        Status::Unknown,
                        "the concurrency asked for is not known, so this replica's share of \
                         it can't be told (give --requested)",
                    ),
                });
            }
            (Some(Err(e)), None) => {
                for t in [
                    Tripwire::NullBlock,
                    Tripwire::FallingCeiling,
                    Tripwire::ConcurrencyNotReached,
                ] {
                    out.push(unknown_for(t, e));
                }
            }
            _ => {
                for t in [
                    Tripwire::NullBlock,
                    Tripwire::FallingCeiling,
                    Tripwire::ConcurrencyNotReached,
                ] {
                    out.push(self.missing(t, SERIES));
                }
            }
        }
        out
    }
}

/// A replica's even share of the concurrency asked for: a router spreading the load
/// evenly gives each of `replicas` this many at once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Share {
    pub requested: i64,
    pub replicas: usize,
}

impl Share {
    /// The share, rounded up.
    pub fn of(&self) -> i64 {
        let n = self.replicas.max(1) as i64;
        (self.requested + n - 1) / n
    }

    /// T8 on the replica's recording against its share; a fail says a peak shorter than
    /// a scrape may not show.
    fn judge(&self, s: &Series, scrape_s: Option<f64>) -> CheckResult {
        let mut r = rules::t08_concurrency_not_reached::check(s, self.of(), None);
        r.message = format!(
            "its even share of the {} requested across {} replicas: {}",
            self.requested, self.replicas, r.message
        );
        r.set("fleet_requested", self.requested);
        r.set("replicas", self.replicas);
        if let Some(scrape) = scrape_s {
            r.set("scrape_interval_s", scrape);
            if r.status == Status::Fail {
                r.message.push_str(&format!(
                    "; Prometheus scraped every {} s, so a peak shorter than that may not show",
                    crate::num::shortest(scrape)
                ));
            }
        }
        r
    }
}

/// T10 from Prometheus: a counter read through an instant query is as old as the last
/// scrape, so each end of the span is uncertain by up to one scrape interval.
fn note_scrape_precision(r: &mut CheckResult, scrape_s: Option<f64>) {
    let Some(scrape) = scrape_s else { return };
    r.set("scrape_interval_s", scrape);
    let span = r.evidence("span_s").and_then(|v| v.as_f64());
    if let (Some(span), Status::Pass) = (span, r.status) {
        if span > 0.0 {
            let share = 2.0 * scrape / span;
            r.set("scrape_uncertainty_share", share);
            r.message.push_str(&format!(
                " (within ±{}%: Prometheus scraped every {} s, so each end may be that old)",
                crate::num::fixed(share * 100.0, 1),
                crate::num::shortest(scrape)
            ));
        }
    }
}
