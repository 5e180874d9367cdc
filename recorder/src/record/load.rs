//! Steps 13 and 14, series and load (recorder.md §3.3, §3.4, §5): the series recorder
//! starts on its own thread, then the load command runs with the save flags its client
//! lacks, its output echoed and kept in `load.log`.

use std::time::{Duration, SystemTime};

use analyzer::docs::manifest::Stage;
use analyzer::docs::{LOAD_LOG, SERIES};

use super::{close::quote, problem, Run, Step, Stop};
use crate::load;
use crate::scrape::Scraper;
use crate::series::{Recorder, SeriesWriter};
use crate::{clock, say};

impl Run {
    /// Step 13: the series recorder, from just before the load.
    fn series_step(&mut self) -> Step<()> {
        if self.fleet.is_some() {
            // The replicas' series come from Prometheus after the load; the cards here
            // are not theirs.
            return Ok(());
        }
        let writer = SeriesWriter::create(
            &self.opts.dir.join(SERIES),
            &self.manifest.url,
            self.opts.interval,
        )
        .map_err(|e| Stop::Problem(Stage::Load, format!("cannot write {SERIES}: {e}")))?;
        let recorder = Recorder::start(
            Scraper::new(&self.manifest.url),
            writer,
            Duration::from_secs_f64(self.opts.interval),
        );
        self.progress.follow(recorder.latest.clone());
        self.series = Some(recorder);
        self.gpu_start();
        Ok(())
    }

    /// Steps 13–14.
    pub(super) fn load_step(&mut self) -> Step<()> {
        self.series_step()?;
        let client = load::client_of(&self.opts.load);
        let dir_text = self.opts.dir.display().to_string();
        let plan = load::plan(&self.opts.load, client, &dir_text);
        self.manifest.load.argv_run = plan.argv_run.clone();
        self.manifest.load.appended = plan.appended.clone();
        self.manifest.load.client = client;
        self.result_plan = plan.result.clone();
        self.load_since = SystemTime::now();
        self.manifest.load.started_wall = Some(clock::wall());
        let len = self.boot_len();
        if let Some(b) = self.manifest.boot_log.as_mut() {
            b.load_start = len;
        }
        self.save_manifest();
        say(&format!("== load: {}", quote(&plan.argv_run)));
        self.load_started = true;
        let echo = self.progress.printer(self.opts.json);
        let progress = &self.progress;
        let log = self.opts.dir.join(LOAD_LOG);
        let ran = load::run(&plan.argv_run, &log, echo, &mut || progress.tick());
        self.gpu_finish();
        self.progress.finish();
        self.manifest.load.ended_wall = Some(clock::wall());
        let len = self.boot_len();
        if let Some(b) = self.manifest.boot_log.as_mut() {
            b.load_end = len;
        }
        match ran {
            Err(e) => {
                // An empty load.log still says the load was attempted.
                let _ = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log);
                self.load_failed = true;
                problem(Stage::Load, e)
            }
            Ok((ended, interrupted)) => {
                self.manifest.load.exit = ended.code;
                self.manifest.load.signal = ended.signal.clone();
                if ended.code != Some(0) {
                    self.load_failed = true;
                    match (&ended.code, &ended.signal) {
                        (Some(c), _) => say(&format!("the load command exited with code {c}")),
                        (None, Some(s)) => say(&format!("the load command was ended by {s}")),
                        _ => {}
                    }
                }
                if interrupted {
                    return Err(Stop::Interrupted(Stage::Load));
                }
                Ok(())
            }
        }
    }
}
