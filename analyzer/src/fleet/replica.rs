//! One replica's files, parsed, its context for the rules (the single-server checks T1,
//! T10, T14, T9 and T8, against its even share of the concurrency asked for), and the
//! figures the replica table shows.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::blocks::GaugeSteps;
use crate::counters::Pair;
use crate::docs::{AFTER_SNAPSHOT, BEFORE_SNAPSHOT, SERIES};
use crate::engine::Engine;
use crate::input::InputError;
use crate::inputs::{InputFile, ReplicaInput};
use crate::rules::absent::{Gap, Input};
use crate::rules::scope::{ReplicaScope, Share};
use crate::rules::verdict::CheckResult;
use crate::series::Series;
use crate::snapshot::{snapshots_engine, Snapshot};

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

    /// Its context for the rules: a file its folder lacks is missing, said as such.
    pub fn scope<'a>(
        &'a self,
        pair: Option<&'a Pair<'a>>,
        gauge_steps: Option<&'a GaugeSteps>,
        share: Option<Share>,
        scrape_s: Option<f64>,
    ) -> ReplicaScope<'a> {
        let gap = |what: &str| {
            Some(Gap::Replica {
                id: self.id.clone(),
                what: what.to_string(),
            })
        };
        let readings = format!("{BEFORE_SNAPSHOT} and {AFTER_SNAPSHOT}");
        ReplicaScope {
            id: &self.id,
            engine: self.engine().unwrap_or(Engine::Vllm),
            pair: match (pair, self.pair_error()) {
                (Some(p), _) => Input::Present(p),
                (None, Some(e)) => Input::Unusable(e),
                (None, None) => Input::Missing(gap(&readings).unwrap()),
            },
            after: Input::from_parsed(self.after.as_ref()).or_missing(gap(AFTER_SNAPSHOT)),
            series: Input::from_parsed(self.series.as_ref()).or_missing(gap(SERIES)),
            gauge_steps,
            share,
            scrape_s,
        }
    }

    /// Its KV gauge's steps, when it has a recording, an after snapshot and an engine
    /// that exports a block count.
    pub fn gauge_steps(&self) -> Option<GaugeSteps> {
        let series = self.series()?;
        let after = self.after.as_ref()?.as_ref().ok()?;
        series
            .engine()
            .metrics()
            .cache_info
            .map(|_| GaugeSteps::read(series, after))
    }
}
