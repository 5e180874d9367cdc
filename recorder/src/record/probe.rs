//! Step 11, the probe (docs/tripwires.md#t7): one request, then a burst, into
//! `probe.json`. A failed probe alone does not end the run; its T7 is printed as the
//! analyzer reads it. A server that no longer answers its health check after the probe
//! is down: the load is not run against it (a real vLLM whose engine died on the first
//! request still answers `/metrics` for a moment, so the before snapshot cannot tell).

use analyzer::docs::manifest::Stage;
use analyzer::docs::PROBE;

use super::{problem, Run, Step, Stop};
use crate::docs::result_line;
use crate::probe::{self, ProbeOptions};
use crate::{say, signals};

/// The problem of a run whose server went down during the probe.
pub const SERVER_DOWN_AFTER_PROBE: &str =
    "the server did not answer its health check after the probe: the load is not run against a server that is down";

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
        if doc.alive_after == Some(false) {
            return problem(Stage::Before, SERVER_DOWN_AFTER_PROBE);
        }
        Ok(())
    }
}
