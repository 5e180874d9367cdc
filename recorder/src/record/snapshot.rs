//! Steps 12 and 15, the snapshots: the metrics just before the load
//! (a failure ends the run: the load is not run) and just after it (taken as soon as the
//! load ended, however it ended).

use analyzer::docs::manifest::Stage;
use analyzer::docs::{AFTER_SNAPSHOT, BEFORE_SNAPSHOT};

use super::{problem, Run, Step, Stop};
use crate::scrape::Scraper;
use crate::signals;

impl Run {
    /// Step 12.
    pub(super) fn before_step(&mut self) -> Step<()> {
        let base = self.manifest.url.clone();
        match signals::abandonable(0, move || Scraper::new(&base).scrape()) {
            None => Err(Stop::Interrupted(Stage::Before)),
            Some(Err(e)) => problem(
                Stage::Before,
                format!("the server did not answer its metrics before the load: {e}"),
            ),
            Some(Ok(reading)) => {
                self.write(BEFORE_SNAPSHOT, &reading.snapshot_doc());
                Ok(())
            }
        }
    }

    /// Step 15's snapshot: a failure is the run's problem unless it already has one.
    pub(super) fn after_step(&mut self, stop: &mut Option<Stop>) {
        let base = self.manifest.url.clone();
        match signals::abandonable(usize::MAX, move || Scraper::new(&base).scrape()) {
            Some(Ok(reading)) => self.write(AFTER_SNAPSHOT, &reading.snapshot_doc()),
            Some(Err(e)) if stop.is_none() => {
                let why = match self.server.as_mut().and_then(super::serve::ended_now) {
                    Some(how) => format!("the server {how} during the load"),
                    None => format!("the server did not answer its metrics after the load: {e}"),
                };
                *stop = Some(Stop::Problem(Stage::After, why));
            }
            Some(Err(_)) | None => {}
        }
    }
}
