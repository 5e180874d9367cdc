//! Steps 15 and 16 (recorder.md §3.3): after the load, however it ended, the after
//! snapshot, the series recorder stopped (the reading in progress finished, at most
//! 10 s), the load tool's result brought in, and in attach mode the boot log copied in.

use std::time::Duration;

use analyzer::docs::manifest::BenchResult;

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

    /// The result file the client saved, copied in as `bench.json` or `bench.jsonl`.
    fn collect_result(&mut self) {
        let found = match &self.opts.bench_result {
            Some(p) => p.is_file().then(|| p.clone()),
            None => load::find_result(&self.result_plan, self.load_since),
        };
        let Some(src) = found else {
            return;
        };
        match load::bring_in(&src, &self.opts.dir) {
            Ok(file) => {
                self.manifest.bench_result = Some(BenchResult {
                    file,
                    source: src.display().to_string(),
                })
            }
            Err(e) => self.manifest.notes.push(format!(
                "cannot copy the result file {}: {e}",
                src.display()
            )),
        }
    }
}
