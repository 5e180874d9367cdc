//! What the analysis derives from the parsed inputs before any rule runs, and the whole
//! run's context built from them: how the recording ended, a server down before the
//! load, the snapshot pair, the KV gauge's steps, the concurrency asked for.

use super::engines::Engines;
use super::parsed::Parsed;
use super::{expected_extra, ok, requested_concurrency};
use crate::blocks::GaugeSteps;
use crate::bootlog::BootLog;
use crate::counters::Pair;
use crate::engine::Engine;
use crate::inputs::{Options, RunInput};
use crate::rules::absent::{Gap, Input};
use crate::rules::load_failed::LoadFailed;
use crate::rules::outcome::{self, RunOutcome};
use crate::rules::scope::RunScope;
use crate::rules::server_down::{self, ServerDown};

/// Facts several rules read, derived once.
pub(super) struct Derived<'p> {
    /// How the recording itself ended.
    pub outcome: RunOutcome,
    pub down: Option<ServerDown>,
    pub load_failed: Option<LoadFailed>,
    pub pair: Option<Pair<'p>>,
    pub gauge_steps: Option<GaugeSteps>,
    pub requested: Option<i64>,
    pub expected_extra: i64,
}

impl<'p> Derived<'p> {
    pub fn of(p: &'p Parsed, input: &RunInput, opts: &Options, logs: &[BootLog]) -> Derived<'p> {
        let (before, after) = (ok(&p.before), ok(&p.after));
        let bench = ok(&p.bench);
        Derived {
            outcome: outcome::read(&outcome::Evidence {
                manifest: p.manifest.as_ref(),
                teardown: ok(&p.teardown),
                bench,
                before_only: input.before.is_some() && input.after.is_none(),
                server_ready: logs.first().map(|l| l.facts.ready),
            }),
            down: server_down::before_load(ok(&p.probe)),
            load_failed: bench.and_then(LoadFailed::of),
            pair: before.zip(after).map(|(b, a)| Pair::new(b, a)),
            gauge_steps: ok(&p.series)
                .zip(after)
                .filter(|(s, _)| s.engine().metrics().cache_info.is_some())
                .map(|(s, a)| GaugeSteps::read(s, a)),
            requested: requested_concurrency(opts, p.manifest.as_ref(), bench),
            expected_extra: expected_extra(input, p.manifest.as_ref(), bench),
        }
    }

    /// The whole run's context. A run that broke before its second snapshot lacks it:
    /// the pair and the after snapshot are then missing, not merely not given; one
    /// stopped before its load lacks the series and the load's result too.
    pub fn scope<'a>(
        &'a self,
        p: &'a Parsed,
        input: &'a RunInput,
        logs: &'a [BootLog],
        engines: &Engines,
    ) -> RunScope<'a> {
        // A recording stopped before its load lacks every reading of it.
        let early = self.outcome.before_load.clone().map(Gap::Run);
        let after_gap = self
            .outcome
            .after_missing
            .clone()
            .map(Gap::Run)
            .or(early.clone());
        RunScope {
            input,
            logs,
            log_errors: &p.log_errors,
            facts: logs.first().map(|l| &l.facts),
            manifest: p.manifest.as_ref(),
            outcome: &self.outcome,
            snapshot_engine: engines.snapshots(),
            engine: engines.log.or(engines.report).unwrap_or(Engine::Vllm),
            pair: match (&self.pair, p.snapshot_error()) {
                (Some(pair), _) => Input::Present(pair),
                (None, Some(e)) => Input::Unusable(e),
                (None, None) => Input::NotGiven.or_missing(after_gap.clone()),
            },
            after: Input::from_parsed(p.after.as_ref()).or_missing(after_gap),
            series: Input::from_parsed(p.series.as_ref()).or_missing(early.clone()),
            bench: Input::from_parsed(p.bench.as_ref()).or_missing(early),
            gate: Input::from_parsed(p.gate.as_ref()),
            probe: Input::from_parsed(p.probe.as_ref()),
            teardown: Input::from_parsed(p.teardown.as_ref()),
            gpu: Input::from_parsed(p.gpu.as_ref()),
            load_cpu: Input::from_parsed(p.load_cpu.as_ref()),
            scrape: Input::from_parsed(p.scrape.as_ref()),
            scrape_engine: p.scrape_engine().or(engines.report).unwrap_or(Engine::Vllm),
            down: self.down.as_ref(),
            load_failed: self.load_failed.as_ref(),
            requested: self.requested,
            gauge_steps: self.gauge_steps.as_ref(),
            expected_extra: self.expected_extra,
            load_ran: p.manifest.as_ref().is_none_or(|m| m.load_given),
            client_limit: None,
        }
    }
}
