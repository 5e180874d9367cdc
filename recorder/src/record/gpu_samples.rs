//! Part of steps 13–15 (T16): the GPU sampler runs beside the series
//! from just before the load until the load ends; without `nvidia-smi` the manifest
//! says why there are no GPU samples.

use std::time::Duration;

use analyzer::docs::GPU_SAMPLES;

use super::Run;
use crate::gpu_sampler::Sampler;

impl Run {
    /// Starts sampling the cards at the series' interval.
    pub(super) fn gpu_start(&mut self) {
        let path = self.opts.dir.join(GPU_SAMPLES);
        match Sampler::start(&path, Duration::from_secs_f64(self.opts.interval)) {
            Ok(s) => self.gpu = Some(s),
            Err(e) => self
                .manifest
                .notes
                .push(format!("no GPU samples ({GPU_SAMPLES}): {e}")),
        }
    }

    /// Stops the sampler (the load has ended, however it ended).
    pub(super) fn gpu_finish(&mut self) {
        let Some(sampler) = self.gpu.take() else {
            return;
        };
        match sampler.finish(Duration::from_secs(5)) {
            Some(w) => {
                if let Some(e) = w.error {
                    self.manifest
                        .notes
                        .push(format!("the GPU samples stopped early: {e}"));
                }
                if w.skipped > 0 {
                    self.manifest.notes.push(format!(
                        "{} lines of nvidia-smi output were not GPU samples",
                        w.skipped
                    ));
                }
            }
            None => self
                .manifest
                .notes
                .push("the GPU sampler did not stop within 5 s".into()),
        }
    }
}
