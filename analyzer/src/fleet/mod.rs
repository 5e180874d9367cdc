//! Many replicas behind one router (`fleet.json`, `replicas/<id>/`, `router/`): each
//! replica judged on its own readings with the single-server checks, and the fleet judged
//! as a whole (T1, T8, T15, and T19 for a load placed unevenly). Prometheus' scrape
//! interval, from `fleet.json`, bounds what the readings can show: T8 says a shorter peak
//! may not show, T10 says how far off its rate can be.

mod charts;
pub mod folder;
mod replica;

pub use folder::{load as load_files, FleetFiles};
pub use replica::ReplicaReport;

use crate::bench::BenchResult;
use crate::blocks::GaugeSteps;
use crate::counters::Pair;
use crate::docs::{self, Fleet};
use crate::input::InputError;
use crate::inputs::{InputFile, RunInput};
use crate::insights::charts::TimeChart;
use crate::plausible::{self, Implausible, Quantity};
use crate::rules::runner;
use crate::rules::scope::{FleetScope, ReplicaScope, Share};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::series::Series;
use crate::snapshot::Snapshot;
use replica::ReplicaRun;

/// The router's counter of requests sent to each worker (`worker="http://host:port"`).
pub const ROUTER_PROCESSED: &str = "vllm_router_processed_requests_total";

/// What the fleet's analysis adds to the Report.
#[derive(Debug, Clone, Default)]
pub struct FleetOutcome {
    /// The fleet-level verdicts: T1, T15, T8, T19.
    pub checks: Vec<CheckResult>,
    pub replicas: Vec<ReplicaReport>,
    /// Requests running and KV cache in use, one line per replica (the page's charts).
    pub charts: Option<(TimeChart, TimeChart)>,
    /// The engine the first replica's inputs name.
    pub engine: Option<crate::engine::Engine>,
    pub errors: Vec<InputError>,
    pub implausible: Vec<Implausible>,
}

/// What the top level of the run folder gives the fleet's checks.
pub struct FleetContext<'a> {
    pub requested: Option<i64>,
    /// The load tool's result and the path T15 names.
    pub bench: Option<(&'a BenchResult, &'a str)>,
    /// Requests the load tool left out of its result (T15).
    pub expected_extra: i64,
    /// The server was down before the load: the run's T8 and T15 already say so.
    pub down: bool,
}

/// `fleet.json` with its seconds through the plausibility gate (a refused one is left out).
fn read_fleet(f: &InputFile, implausible: &mut Vec<Implausible>) -> Result<Fleet, InputError> {
    let mut fleet: Fleet = f.bytes().and_then(|b| docs::read(&f.name, b))?;
    let mut gate = |v: Option<f64>, field: &str| {
        v.filter(|x| {
            plausible::gate(Quantity::Seconds, *x, (&f.name, None), field, implausible) && *x > 0.0
        })
    };
    fleet.step_s = gate(fleet.step_s, "step_s");
    fleet.scrape_interval_s = gate(fleet.scrape_interval_s, "scrape_interval_s");
    for r in &mut fleet.replicas {
        r.scrape_interval_s = gate(r.scrape_interval_s, "replicas[].scrape_interval_s");
    }
    Ok(fleet)
}

/// Every replica's and the fleet's verdicts. `input.fleet` is `fleet.json`.
pub fn analyze(input: &RunInput, fleet_file: &InputFile, ctx: &FleetContext<'_>) -> FleetOutcome {
    let mut out = FleetOutcome::default();
    let fleet = match read_fleet(fleet_file, &mut out.implausible) {
        Ok(f) => Some(f),
        Err(e) => {
            out.errors.push(e);
            None
        }
    };
    let fleet = fleet.unwrap_or_default();
    // The replicas in the folder, then those fleet.json lists whose folder is missing.
    let mut runs: Vec<ReplicaRun> = input.replicas.iter().map(ReplicaRun::parse).collect();
    for r in &fleet.replicas {
        if !runs.iter().any(|x| x.id == r.id) && docs::fleet::replica_id_is_valid(&r.id) {
            runs.push(ReplicaRun::absent(&r.id));
        }
    }
    runs.sort_by(|a, b| a.id.cmp(&b.id));
    for run in &runs {
        for e in [&run.before, &run.after]
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_ref().err())
            .chain(run.series.as_ref().and_then(|r| r.as_ref().err()))
        {
            out.errors.push(e.clone());
        }
        for s in [&run.before, &run.after].into_iter().flatten().flatten() {
            out.implausible.extend(s.implausible.iter().cloned());
        }
        if let Some(s) = run.series() {
            out.implausible.extend(s.implausible.iter().cloned());
        }
    }
    let router = router_counts(input, &mut out.errors);
    let share = ctx.requested.map(|requested| Share {
        requested,
        replicas: runs.len(),
    });
    let scrape_of = |run: &ReplicaRun| {
        let listed = fleet.replicas.iter().find(|r| r.id == run.id);
        listed
            .and_then(|r| r.scrape_interval_s)
            .or(fleet.scrape_interval_s)
    };
    let pairs: Vec<Option<Pair<'_>>> = runs.iter().map(ReplicaRun::pair).collect();
    let steps: Vec<Option<GaugeSteps>> = runs.iter().map(ReplicaRun::gauge_steps).collect();
    let scopes: Vec<ReplicaScope<'_>> = runs
        .iter()
        .zip(&pairs)
        .zip(&steps)
        .map(|((run, pair), steps)| run.scope(pair.as_ref(), steps.as_ref(), share, scrape_of(run)))
        .collect();
    let results: Vec<Vec<CheckResult>> = scopes.iter().map(runner::replica).collect();
    for (run, checks) in runs.iter().zip(&results) {
        let listed = fleet.replicas.iter().find(|r| r.id == run.id);
        let instance = listed.map(|r| r.instance.clone()).filter(|i| !i.is_empty());
        let t1 = checks
            .iter()
            .find(|c| c.tripwire == Tripwire::SilentPreemption);
        out.replicas.push(ReplicaReport {
            id: run.id.clone(),
            router_served: instance
                .as_deref()
                .and_then(|i| router.as_ref().and_then(|r| r.served(i))),
            instance,
            labels: listed.map(|r| r.labels.clone()).unwrap_or_default(),
            scrape_interval_s: scrape_of(run),
            engine: run.engine().map(crate::engine::Engine::key),
            peak_running: run.series().and_then(Series::peak_running),
            preemptions: t1
                .filter(|c| matches!(c.status, Status::Pass | Status::Fail))
                .and_then(crate::rules::t01_silent_preemption::preemptions),
            served: run.served(),
            checks: checks.clone(),
        });
    }
    out.checks = runner::fleet(&FleetScope {
        replicas: &scopes,
        replica_results: &results,
        requested: ctx.requested,
        step_s: fleet.step_s,
        scrape_s: fleet.scrape_interval_s,
        bench: ctx.bench,
        expected_extra: ctx.expected_extra,
        down: ctx.down,
    });
    out.charts = charts::per_replica(&runs, fleet.step_s, ctx.requested);
    out.engine = runs.iter().find_map(ReplicaRun::engine);
    out
}

/// The router's snapshots, for requests per worker.
struct RouterCounts {
    before: Snapshot,
    after: Snapshot,
}

impl RouterCounts {
    /// Requests the router sent the worker at `instance` (`host:port`) during the run.
    fn served(&self, instance: &str) -> Option<f64> {
        ["http://", "https://", ""].into_iter().find_map(|scheme| {
            let worker = format!("{scheme}{instance}");
            let labels = [("worker", worker.as_str())];
            let b = self.before.metrics.total(ROUTER_PROCESSED, &labels);
            let a = self.after.metrics.total(ROUTER_PROCESSED, &labels)?;
            // A worker first seen during the run started from zero.
            let d = a - b.unwrap_or(0.0);
            (d >= 0.0).then_some(d)
        })
    }
}

fn router_counts(input: &RunInput, errors: &mut Vec<InputError>) -> Option<RouterCounts> {
    let r = input.router.as_ref()?;
    let read = |f: &Option<InputFile>| -> Option<Result<Snapshot, InputError>> {
        f.as_ref()
            .map(|f| f.bytes().and_then(|b| Snapshot::read(&f.name, b)))
    };
    match (read(&r.before), read(&r.after)) {
        (Some(Ok(before)), Some(Ok(after))) => Some(RouterCounts { before, after }),
        (b, a) => {
            errors.extend([b, a].into_iter().flatten().filter_map(Result::err));
            None
        }
    }
}
