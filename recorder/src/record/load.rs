//! Steps 13 and 14, series and load: the series recorder
//! starts on its own thread, then the load command runs with the save flags its client
//! lacks, its output echoed and kept in `load.log`; several load commands (`--then`) run
//! one after another, each saving its own result.

use std::time::{Duration, SystemTime};

use analyzer::docs::manifest::{LoadRun, LoadStop, Stage};
use analyzer::docs::{LOAD_CPU, LOAD_LOG, SERIES};

use super::watch::ServerWatch;
use super::{close::quote, problem, ResultPlan, Run, Step, Stop};
use crate::load;
use crate::load_cpu::CpuSampler;
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
        .map_err(|e| Stop::Problem(Stage::Load, self.fault.report(&e, SERIES)))?
        .knowing(self.engine);
        let recorder = Recorder::start(
            self.scraper(),
            writer,
            Duration::from_secs_f64(self.opts.interval),
            self.fault.clone(),
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
            let (server, fault, fs) = (&mut self.server, &self.fault, &self.fs);
            let stopped = &mut self.load_stopped;
            let stopped_for = &mut self.manifest.load.stopped_for;
            // A fleet's address is its router, whose health is not one server's.
            let health = self.fleet.is_none().then_some(self.manifest.url.as_str());
            let mut watch = ServerWatch::start(health);
            let cpu_path = self.opts.dir.join(LOAD_CPU);
            let (cpu_fs, interval) = (self.fs.clone(), self.opts.interval);
            let program = argv.first().cloned();
            let mut cpu: Option<CpuSampler> = None;
            let mut cpu_note: Option<String> = None;
            let guard = server
                .as_ref()
                .and_then(|s| s.guard.as_ref())
                .and_then(|g| g.watcher());
            let mut started = |pid: i32| {
                let every = Duration::from_secs_f64(interval);
                let g = guard.clone();
                match CpuSampler::start(&cpu_path, cpu_fs.clone(), pid, program.clone(), every, g) {
                    Ok(s) => cpu = Some(s),
                    Err(e) => cpu_note = Some(format!("no CPU samples ({LOAD_CPU}): {e}")),
                }
            };
            // A server that dies, stays paused or fails its health check during the load,
            // or a write into the folder that fails, stops the load: nothing it sends
            // after counts.
            let ran = load::run(&plan.argv_run, &log, echo, fault, &mut started, &mut || {
                progress.tick();
                let why = watch.fault(server.as_mut(), fs).or_else(|| {
                    let failed = fault.get()?;
                    Some((LoadStop::WriteFailed, failed.to_string()))
                });
                if let (Some((kind, why)), None) = (&why, &stopped) {
                    say(&format!("== {why}: stopping the load"));
                    *stopped = Some(why.clone());
                    *stopped_for = Some(*kind);
                }
                why.is_some()
            });
            if let Some(s) = cpu.take() {
                s.finish();
            }
            self.manifest.notes.extend(cpu_note);
            let ended_wall = clock::wall();
            if let Some(r) = self.manifest.load.runs.last_mut().filter(|_| several) {
                r.ended_wall = Some(ended_wall);
                if let Ok((ended, _)) = &ran {
                    r.exit = ended.code;
                    r.signal = ended.signal.clone();
                }
            }
            outcome = self
                .load_ended(ran, &log)
                .and_then(|()| self.stopped_problem());
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

    /// Why the load was stopped by the recorder, as the run's problem: a server that died
    /// is said by the after step (its exit), the rest here.
    fn stopped_problem(&mut self) -> Step<()> {
        let died = self.server.as_mut().and_then(super::serve::ended_now);
        match (&self.load_stopped, died) {
            (Some(why), None) => problem(Stage::Load, why.clone()),
            _ => Ok(()),
        }
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
