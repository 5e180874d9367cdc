//! Step 8, metrics: one scrape must show an engine's metrics,
//! the engine named if one was; the path that answered is recorded.

use analyzer::docs::manifest::{EngineFrom, Stage};

use super::{problem, Run, Step, Stop};
use crate::scrape::{self, Scraper};
use crate::{say, signals};

impl Run {
    pub(super) fn metrics_step(&mut self) -> Step<()> {
        say("== metrics");
        let base = self.manifest.url.clone();
        let engine = self.engine;
        let found = signals::abandonable(0, move || {
            let scraper = Scraper::new(&base);
            scrape::engine_reading(&scraper, engine).map(|(r, e)| (r.path, e))
        });
        let (path, found) = match found {
            None => return Err(Stop::Interrupted(Stage::Metrics)),
            Some(Err(text)) => return problem(Stage::Metrics, text),
            Some(Ok(x)) => x,
        };
        self.manifest.metrics_path = Some(path);
        match self.engine {
            Some(e) if e != found => {
                return problem(
                    Stage::Metrics,
                    format!(
                        "the engine named is {}, but the server at {} is {}'s",
                        e.display(),
                        self.manifest.url,
                        found.display()
                    ),
                )
            }
            Some(_) => {}
            None => {
                self.set_engine(found, EngineFrom::Metrics);
                say(&format!(
                    "== engine: {} (from its metrics)",
                    found.display()
                ));
            }
        }
        self.scraper = Some(Scraper::new(&self.manifest.url));
        self.save_manifest();
        Ok(())
    }
}
