//! Steps 15 and 16: after the load, however it ended, the after
//! snapshot, the series recorder stopped (the reading in progress finished, at most
//! 10 s), the load tool's result brought in, and in attach mode the boot log copied in.

use std::time::Duration;

use analyzer::docs;
use analyzer::docs::manifest::{BenchResult, Client};

use super::{Run, Stop};
use crate::load;

impl Run {
    pub(super) fn after_load(&mut self, stop: &mut Option<Stop>) {
        // Stopped with the load; here too when the load step ended early.
        self.gpu_finish();
        if self.load_started {
            if self.fleet.is_some() {
                self.fleet_after_step(stop);
            } else {
                self.after_step(stop);
            }
        }
        if self.fleet.is_some() {
            self.fleet_series();
        }
        self.finish_series();
        if self.load_started {
            self.collect_result();
        }
        if self.server.is_none() {
            self.copy_boot_log();
        }
    }

    fn finish_series(&mut self) {
        let Some(recorder) = self.series.take() else {
            return;
        };
        match recorder.finish(Duration::from_secs(10)) {
            Some(summary) => {
                if let Some(n) = summary.note {
                    self.manifest.notes.push(n);
                }
                if let Some(e) = summary.write_error {
                    self.manifest
                        .notes
                        .push(format!("the series stopped early: {e}"));
                }
            }
            None => self
                .manifest
                .notes
                .push("the series recorder did not stop within 10 s".into()),
        }
    }

    /// The result file the client saved, copied in as `bench.json` or `bench.jsonl`; of
    /// several load commands, each one's as `bench-N.json`, listed in its `load.runs` entry.
    fn collect_result(&mut self) {
        if self.manifest.load.runs.len() > 1 && self.opts.bench_result.is_none() {
            for i in 0..self.result_plans.len() {
                let plan = &self.result_plans[i];
                let found = load::find_result(&plan.file, plan.since);
                let result = found.and_then(|src| self.bring_in(&src, i));
                if let Some(run) = self.manifest.load.runs.get_mut(i) {
                    run.result = result;
                }
            }
            return;
        }
        let found = match &self.opts.bench_result {
            Some(p) => p.is_file().then(|| p.clone()),
            None => self
                .result_plans
                .first()
                .and_then(|p| load::find_result(&p.file, self.load_since)),
        };
        if let Some(src) = found {
            self.manifest.bench_result = self.bring_in(&src, usize::MAX);
            return;
        }
        if let (Some(load::ResultFile::Exact(expected)), Some(Client::Aiperf)) = (
            self.result_plans.first().map(|p| &p.file),
            self.manifest.load.client,
        ) {
            let steps = load::aiperf_steps(&expected.clone());
            self.bring_in_steps(&steps);
        }
    }

    /// A sweep's step summaries as `bench-N.json`, each with its per-request export as
    /// `bench-N.requests.jsonl` (T18, and the step's window: AIPerf's summary has none).
    fn bring_in_steps(&mut self, steps: &[std::path::PathBuf]) {
        for (i, src) in steps.iter().enumerate() {
            let names = load::ResultNames::nth(i + 1);
            let Some(result) = self.copy_result(src, &names) else {
                continue;
            };
            self.manifest.bench_steps.push(result);
            let requests = src.with_file_name(load::AIPERF_REQUESTS);
            let Some(to) = docs::bench_requests_of(&names.json) else {
                continue;
            };
            let to = self.opts.dir.join(to);
            if requests.is_file() {
                if let Err(e) = std::fs::copy(&requests, &to) {
                    self.manifest.notes.push(format!(
                        "cannot copy the per-request export {}: {e}",
                        requests.display()
                    ));
                }
            }
        }
    }

    /// Copies one result file in under `names`; a failure is a note in the manifest.
    fn copy_result(
        &mut self,
        src: &std::path::Path,
        names: &load::ResultNames,
    ) -> Option<BenchResult> {
        match load::bring_in(src, &self.opts.dir, names) {
            Ok(file) => Some(BenchResult {
                file,
                source: src.display().to_string(),
            }),
            Err(e) => {
                self.manifest.notes.push(format!(
                    "cannot copy the result file {}: {e}",
                    src.display()
                ));
                None
            }
        }
    }

    /// Copies one result in under the names of the `i`th plan (`usize::MAX`: the only one).
    fn bring_in(&mut self, src: &std::path::Path, i: usize) -> Option<BenchResult> {
        let names = self
            .result_plans
            .get(i)
            .map_or_else(load::ResultNames::only, |p| p.names.clone());
        self.copy_result(src, &names)
    }
}
