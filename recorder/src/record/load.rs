//! Steps 13 and 14, series and load: the series recorder
//! starts on its own thread, then the load command runs with the save flags its client
//! lacks, its output echoed and kept in `load.log`; several load commands (`--then`) run
//! one after another, each saving its own result.

use std::time::{Duration, SystemTime};

use analyzer::docs::manifest::{LoadRun, Stage};
use analyzer::docs::{LOAD_LOG, SERIES};

use super::{close::quote, problem, ResultPlan, Run, Step, Stop};
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

    /// Steps 13–14: the load command, or several one after another (`--then`), each
    /// with its start and end noted in the manifest so the analyzer cuts one phase each.
    pub(super) fn load_step(&mut self) -> Step<()> {
        self.series_step()?;
        let commands = load::split_commands(&self.opts.load);
        let several = commands.len() > 1;
        let dir_text = self.opts.dir.display().to_string();
        let clients: Vec<_> = commands.iter().map(|c| load::client_of(c)).collect();
        // One client for the whole load when every command is the same one.
        self.manifest.load.client = if clients.windows(2).all(|w| w[0] == w[1]) {
            clients.first().copied().flatten()
        } else {
            None
        };
        self.load_since = SystemTime::now();
        self.manifest.load.started_wall = Some(clock::wall());
        let len = self.boot_len();
        if let Some(b) = self.manifest.boot_log.as_mut() {
            b.load_start = len;
        }
        self.load_started = true;
        let mut outcome = Ok(());
        for (i, (argv, client)) in commands.iter().zip(&clients).enumerate() {
            let names = if several {
                load::ResultNames::nth(i + 1)
            } else {
                load::ResultNames::only()
            };
            let plan = load::plan_named(argv, *client, &dir_text, &names);
            if several {
                self.manifest.load.runs.push(LoadRun {
                    argv_given: argv.clone(),
                    argv_run: plan.argv_run.clone(),
                    client: *client,
                    appended: plan.appended.clone(),
                    ..LoadRun::default()
                });
                let all: Vec<&[String]> = self
                    .manifest
                    .load
                    .runs
                    .iter()
                    .map(|r| r.argv_run.as_slice())
                    .collect();
                self.manifest.load.argv_run = all.join(&load::THEN.to_string());
            } else {
                self.manifest.load.argv_run = plan.argv_run.clone();
                self.manifest.load.appended = plan.appended.clone();
            }
            self.result_plans.push(ResultPlan {
                file: plan.result.clone(),
                since: SystemTime::now(),
                names,
            });
            let started = clock::wall();
            if let Some(r) = self.manifest.load.runs.last_mut().filter(|_| several) {
                r.started_wall = Some(started);
            }
            self.save_manifest();
            say(&format!("== load: {}", quote(&plan.argv_run)));
            let echo = self.progress.printer(self.opts.json);
            let progress = &self.progress;
            let log = self.opts.dir.join(LOAD_LOG);
            let server = &mut self.server;
            let mut said = false;
            // A server that dies during the load stops the load: nothing it sends counts.
            let ran = load::run(&plan.argv_run, &log, echo, &mut || {
                progress.tick();
                let gone = server.as_mut().and_then(super::serve::ended_now);
                if let (Some(how), false) = (&gone, said) {
                    say(&format!(
                        "== the server {how} during the load: stopping the load"
                    ));
                    said = true;
                }
                gone.is_some()
            });
            let ended_wall = clock::wall();
            if let Some(r) = self.manifest.load.runs.last_mut().filter(|_| several) {
                r.ended_wall = Some(ended_wall);
                if let Ok((ended, _)) = &ran {
                    r.exit = ended.code;
                    r.signal = ended.signal.clone();
                }
            }
            outcome = self.load_ended(ran, &log);
            // Like `&&`: a command that failed or was stopped ends the sequence.
            if outcome.is_err() || self.load_failed {
                break;
            }
        }
        self.gpu_finish();
        self.progress.finish();
        self.manifest.load.ended_wall = Some(clock::wall());
        let len = self.boot_len();
        if let Some(b) = self.manifest.boot_log.as_mut() {
            b.load_end = len;
        }
        outcome
    }

    /// How one load command ended, into the manifest's overall exit.
    fn load_ended(
        &mut self,
        ran: Result<(load::Ended, bool), String>,
        log: &std::path::Path,
    ) -> Step<()> {
        match ran {
            Err(e) => {
                // An empty load.log still says the load was attempted.
                let _ = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(log);
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
