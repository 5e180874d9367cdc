//! A fleet of replicas behind a router: each replica judged on its own readings
//! ([`ReplicaScope`]), then the fleet as a whole ([`FleetScope`]). Prometheus' scrape
//! interval bounds what the readings can show.

use crate::bench::BenchResult;
use crate::blocks::GaugeSteps;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::rules::absent::Input;
use crate::rules::verdict::CheckResult;
use crate::series::Series;
use crate::snapshot::Snapshot;

/// One replica's context. A file its folder lacks is missing (never "not given"): a
/// fleet's replica always has a recording to read.
pub struct ReplicaScope<'a> {
    /// Its folder under `replicas/`.
    pub id: &'a str,
    /// The engine its metric names say (vLLM when none does).
    pub engine: Engine,
    pub pair: Input<'a, Pair<'a>>,
    pub after: Input<'a, Snapshot>,
    pub series: Input<'a, Series>,
    /// Its KV gauge's steps against the block count it exported.
    pub gauge_steps: Option<&'a GaugeSteps>,
    /// Its even share of the concurrency asked for, when that is known.
    pub share: Option<Share>,
    /// How often Prometheus scraped it (seconds).
    pub scrape_s: Option<f64>,
}

impl ReplicaScope<'_> {
    pub fn usable_blocks(&self) -> Option<u64> {
        self.gauge_steps.and_then(GaugeSteps::usable_blocks)
    }
}

/// A replica's even share of the concurrency asked for: a router spreading the load
/// evenly gives each of `replicas` this many at once.
#[derive(Debug, Clone, Copy)]
pub struct Share {
    pub requested: i64,
    pub replicas: usize,
}

impl Share {
    /// The share, rounded up.
    pub fn of(&self) -> i64 {
        let n = self.replicas.max(1) as i64;
        (self.requested + n - 1) / n
    }
}

/// The fleet as a whole.
pub struct FleetScope<'a> {
    /// Every replica, in folder order.
    pub replicas: &'a [ReplicaScope<'a>],
    /// Each replica's own verdicts, in the same order.
    pub replica_results: &'a [Vec<CheckResult>],
    pub requested: Option<i64>,
    /// The range queries' step (seconds), from `fleet.json`.
    pub step_s: Option<f64>,
    /// How often Prometheus scraped (seconds), from `fleet.json`.
    pub scrape_s: Option<f64>,
    /// The load tool's result and the path T15 names.
    pub bench: Option<(&'a BenchResult, &'a str)>,
    /// Requests the load tool sent outside its measurement.
    pub expected_extra: i64,
    /// The server was down before the load: the run's T8 and T15 already say so.
    pub down: bool,
}
