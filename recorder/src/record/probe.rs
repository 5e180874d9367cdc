//! Step 11, the probe (recorder.md §3.3, §6): one request, then a burst, into
//! `probe.json`. A failed probe alone does not end the run; its T7 is printed as the
//! analyzer reads it.

use analyzer::docs::manifest::Stage;
use analyzer::docs::PROBE;

use super::{Run, Step, Stop};
use crate::docs::result_line;
use crate::probe::{self, ProbeOptions};
use crate::{say, signals};

impl Run {
    pub(super) fn probe_step(&mut self) -> Step<()> {
        say("== probe: one request, then 8 at once");
        let base = self.manifest.url.clone();
        let Some(doc) =
            signals::abandonable(0, move || probe::run(&base, &ProbeOptions::default()))
        else {
            return Err(Stop::Interrupted(Stage::Before));
        };
        self.write(PROBE, &doc);
        say(&result_line(&probe::result(&doc)));
        Ok(())
    }
}
