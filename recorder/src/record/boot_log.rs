//! Step 9, the boot log: a log naming another engine than the one in
//! effect ends the run. Its verdicts come from the final analysis. Also step 16's part
//! for attach mode: the `--boot-log` file copied in after the load.

use analyzer::docs::manifest::{BootLog, Stage};
use analyzer::docs::BOOT_LOG;
use analyzer::engine::engine_from_log;

use super::{problem, Run, Step};
use crate::docs::write_atomic;
use crate::say;

impl Run {
    /// Step 9.
    pub(super) fn boot_log_step(&mut self) -> Step<()> {
        let path = match (&self.server, &self.opts.boot_log) {
            (Some(_), _) => self.opts.dir.join(BOOT_LOG),
            (None, Some(p)) => p.clone(),
            (None, None) => return Ok(()),
        };
        say("== boot log");
        let bytes = std::fs::read(&path).unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        if let (Some(named), Some(logged)) = (self.engine, engine_from_log(&text)) {
            if named != logged {
                return problem(
                    Stage::BootLog,
                    format!(
                        "the engine named is {}, but the boot log is {}'s",
                        named.display(),
                        logged.display()
                    ),
                );
            }
        }
        Ok(())
    }

    /// Attach mode: the `--boot-log` file copied in now, so it covers the run.
    pub(super) fn copy_boot_log(&mut self) {
        let Some(src) = self.opts.boot_log.clone() else {
            return;
        };
        match std::fs::read(&src) {
            Ok(bytes) => match write_atomic(&self.opts.dir, BOOT_LOG, &bytes) {
                Ok(()) => {
                    self.manifest.boot_log = Some(BootLog {
                        source: src.display().to_string(),
                        ..BootLog::default()
                    })
                }
                Err(e) => self
                    .manifest
                    .notes
                    .push(format!("cannot copy the boot log: {e}")),
            },
            Err(e) => self
                .manifest
                .notes
                .push(format!("cannot read the boot log {}: {e}", src.display())),
        }
    }
}
