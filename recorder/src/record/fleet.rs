//! Attach mode through Prometheus (`--prometheus URL --match SELECTOR`): the probe and the
//! load go to `--url` (the router), while every replica's metrics come from Prometheus.
//! Step 8 finds the replicas and writes `fleet.json`; steps 12 and 15 write one snapshot
//! pair per replica (instant queries once every target was scraped after the moment
//! asked); step 16 writes each replica's series from range queries over the load at the
//! series step (never below the scrape interval). The router's own exporter, when given,
//! is scraped directly into `router/`. Each document is written as its step completes.

use std::path::PathBuf;
use std::time::Duration;

use analyzer::docs::fleet::{Fleet, FleetSource};
use analyzer::docs::manifest::{EngineFrom, Stage};
use analyzer::docs::{
    SnapshotDoc, AFTER_SNAPSHOT, BEFORE_SNAPSHOT, FLEET, REPLICAS_DIR, ROUTER_DIR, SERIES,
};

use super::{problem, write_in, FleetOptions, Run, Step, Stop};
use crate::prometheus::{replicas, Readings, Source};
use crate::series::{SeriesWriter, Taken};
use crate::{clock, http, say, signals};

/// A fleet run's source and what it has learnt.
pub(super) struct FleetRun {
    source: Source,
    router_metrics: Option<String>,
    doc: Fleet,
    /// When the before snapshot was evaluated: the series starts there.
    before_t: Option<f64>,
    /// When the after snapshot was evaluated: the series ends there.
    after_t: Option<f64>,
}

impl FleetRun {
    pub(super) fn new(opts: &FleetOptions) -> FleetRun {
        FleetRun {
            source: Source::new(&opts.prometheus, opts.selector.clone()),
            router_metrics: opts.router_metrics.clone(),
            doc: Fleet {
                source: Some(FleetSource::Prometheus),
                prometheus_url: Some(opts.prometheus.trim_end_matches('/').to_string()),
                selector: Some(opts.selector.text.clone()),
                ..Fleet::default()
            },
            before_t: None,
            after_t: None,
        }
    }

    /// How long to wait for a scrape after a moment: three scrape intervals and 5 s.
    fn scrape_wait(&self) -> Duration {
        Duration::from_secs_f64(3.0 * self.doc.scrape_interval_s.unwrap_or(15.0) + 5.0)
    }
}

impl Run {
    fn fleet(&self) -> &FleetRun {
        self.fleet.as_ref().expect("a fleet run")
    }

    fn fleet_mut(&mut self) -> &mut FleetRun {
        self.fleet.as_mut().expect("a fleet run")
    }

    fn replica_dir(&self, id: &str) -> PathBuf {
        self.opts.dir.join(REPLICAS_DIR).join(id)
    }

    /// Step 8 through Prometheus: the replicas, their engine, `fleet.json`.
    pub(super) fn fleet_metrics_step(&mut self) -> Step<()> {
        let fleet = self.fleet();
        let source = fleet.source.clone();
        say(&format!(
            "== metrics: replicas {} through Prometheus at {}",
            source.selector.text, source.prometheus.base
        ));
        let found = signals::abandonable(0, move || {
            let found = source.discover()?;
            Ok((found, source.down().unwrap_or_default()))
        });
        let ((list, readings), down) = match found {
            None => return Err(Stop::Interrupted(Stage::Metrics)),
            Some(Err(e)) => {
                let e: crate::prometheus::ApiError = e;
                return problem(Stage::Metrics, format!("Prometheus: {e}"));
            }
            Some(Ok(x)) => x,
        };
        // A target Prometheus cannot scrape has no fresh series: it is no replica here.
        if !down.is_empty() {
            let note = format!(
                "Prometheus could not scrape {} of the selected targets at the start ({}): not recorded",
                down.len(),
                down.join(", ")
            );
            say(&format!("== {note}"));
            self.manifest.notes.push(note);
        }
        let Some(found_engine) = readings.engine().filter(|_| !list.is_empty()) else {
            return problem(
                Stage::Metrics,
                format!(
                    "Prometheus at {} holds no vLLM, SGLang or TensorRT-LLM metrics with an instance label matching {}: check --match against its targets",
                    self.fleet().source.prometheus.base,
                    self.fleet().source.selector.text
                ),
            );
        };
        match self.engine {
            Some(e) if e != found_engine => {
                return problem(
                    Stage::Metrics,
                    format!(
                        "the engine named is {}, but the replicas in Prometheus are {}'s",
                        e.display(),
                        found_engine.display()
                    ),
                )
            }
            Some(_) => {}
            None => {
                self.set_engine(found_engine, EngineFrom::Metrics);
                say(&format!(
                    "== engine: {} (from the replicas' metrics)",
                    found_engine.display()
                ));
            }
        }
        let scrape = list
            .iter()
            .filter_map(|r| r.scrape_interval_s)
            .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
        // Below the scrape interval a range query only repeats readings.
        let step = scrape.map_or(self.opts.interval, |s| s.max(self.opts.interval));
        let router = self.manifest.url.clone();
        let fleet = self.fleet_mut();
        fleet.source.engine = Some(found_engine);
        fleet.doc.router_url = Some(router);
        fleet.doc.scrape_interval_s = scrape;
        fleet.doc.step_s = Some(step);
        fleet.doc.replicas = list;
        let ids: Vec<&str> = fleet.doc.replicas.iter().map(|r| r.id.as_str()).collect();
        say(&format!(
            "== fleet: {} replicas ({}), scraped every {}, series every {step} s",
            ids.len(),
            ids.join(", "),
            scrape.map_or("? s (no target list)".to_string(), |s| format!("{s} s"))
        ));
        self.write(FLEET, &self.fleet().doc);
        self.manifest.metrics_source = Some(FleetSource::Prometheus);
        self.manifest.metrics_path = None;
        self.manifest.interval_s = step;
        self.save_manifest();
        Ok(())
    }

    /// The replicas' metrics once every target was scraped after now.
    fn fleet_reading(&self) -> Option<Result<(Readings, bool), String>> {
        let fleet = self.fleet();
        let source = fleet.source.clone();
        let wait = fleet.scrape_wait();
        signals::abandonable(usize::MAX, move || {
            let since = clock::wall();
            let fresh = source.await_scrape(since, wait)?;
            Ok((source.read()?, fresh))
        })
        .map(|r| r.map_err(|e: crate::prometheus::ApiError| e.to_string()))
    }

    /// Writes one snapshot per replica (and the router's) under `name`; the evaluation
    /// time.
    fn fleet_snapshots(&mut self, name: &str, readings: &Readings, fresh: bool) -> f64 {
        let what = name.trim_end_matches(".snapshot.json");
        if !fresh {
            self.manifest.notes.push(format!(
                "the {what} snapshot: not every replica was scraped again within {} s; its readings may be a scrape interval old",
                self.fleet().scrape_wait().as_secs()
            ));
        }
        for replica in self.fleet().doc.replicas.clone() {
            let samples = readings.of(&replica);
            if samples.is_empty() {
                self.manifest.notes.push(format!(
                    "replica {}: no metrics in Prometheus for the {what} snapshot",
                    replica.instance
                ));
                continue;
            }
            let doc = replicas::snapshot_doc(
                &readings.reply.url,
                readings.t_wall,
                readings.reply.latency_s,
                &samples,
            );
            let dir = self.replica_dir(&replica.id);
            if let Err(e) = std::fs::create_dir_all(&dir) {
                eprintln!("inferlint-recorder: cannot create {}: {e}", dir.display());
            }
            write_in(&dir, name, &doc);
        }
        self.router_snapshot(name);
        readings.t_wall
    }

    /// The router's own exporter, read directly; a failure is a note.
    fn router_snapshot(&mut self, name: &str) {
        let Some(url) = self.fleet().router_metrics.clone() else {
            return;
        };
        let read = url.clone();
        let got = signals::abandonable(usize::MAX, move || {
            let t0 = clock::Stamp::now();
            let reply = http::Client::new(Duration::from_secs(10)).get(&read);
            (t0, clock::Stamp::now(), reply)
        });
        let Some((t0, t1, reply)) = got else { return };
        match reply {
            Ok(r) if r.status == 200 => {
                let (t_wall, t_mono_ns, latency_s) = clock::midpoint(t0, t1);
                let doc = SnapshotDoc {
                    url,
                    t_wall,
                    t_mono_ns: Some(t_mono_ns),
                    latency_s: Some(latency_s),
                    text: r.into_text(),
                };
                let dir = self.opts.dir.join(ROUTER_DIR);
                let _ = std::fs::create_dir_all(&dir);
                write_in(&dir, name, &doc);
            }
            Ok(r) => self.manifest.notes.push(format!(
                "the router's metrics at {url} answered HTTP {}",
                r.status
            )),
            Err(e) => self
                .manifest
                .notes
                .push(format!("the router's metrics at {url}: {e}")),
        }
    }

    /// Step 12 through Prometheus: a failure ends the run (the load is not run).
    pub(super) fn fleet_before_step(&mut self) -> Step<()> {
        match self.fleet_reading() {
            None => Err(Stop::Interrupted(Stage::Before)),
            Some(Err(e)) => problem(
                Stage::Before,
                format!("Prometheus did not answer before the load: {e}"),
            ),
            Some(Ok((readings, fresh))) => {
                let t = self.fleet_snapshots(BEFORE_SNAPSHOT, &readings, fresh);
                self.fleet_mut().before_t = Some(t);
                Ok(())
            }
        }
    }

    /// Step 15 through Prometheus: a failure is the run's problem unless it has one.
    pub(super) fn fleet_after_step(&mut self, stop: &mut Option<Stop>) {
        match self.fleet_reading() {
            Some(Ok((readings, fresh))) => {
                let t = self.fleet_snapshots(AFTER_SNAPSHOT, &readings, fresh);
                self.fleet_mut().after_t = Some(t);
            }
            Some(Err(e)) if stop.is_none() => {
                *stop = Some(Stop::Problem(
                    Stage::After,
                    format!("Prometheus did not answer after the load: {e}"),
                ));
            }
            Some(Err(_)) | None => {}
        }
    }

    /// Step 16's series through Prometheus: from the before snapshot to the after one
    /// (or now), one file per replica.
    pub(super) fn fleet_series(&mut self) {
        let fleet = self.fleet();
        let Some(start) = fleet.before_t else { return };
        let end = fleet.after_t.unwrap_or_else(clock::wall);
        let step = fleet.doc.step_s.unwrap_or(self.opts.interval);
        let source = fleet.source.clone();
        let got = signals::abandonable(usize::MAX, move || source.series(start, end, step));
        let (series, url) = match got {
            None => return,
            Some(Err(e)) => {
                self.manifest
                    .notes
                    .push(format!("no series: Prometheus did not answer: {e}"));
                return;
            }
            Some(Ok(x)) => x,
        };
        let (groups, _) = replicas::by_instance(&series, |s| &s.labels);
        for replica in self.fleet().doc.replicas.clone() {
            let dir = self.replica_dir(&replica.id);
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(SERIES);
            let written = SeriesWriter::create(&path, &url, step).and_then(|mut w| {
                let mine = groups.get(&replica.instance).cloned().unwrap_or_default();
                for (t_wall, metrics) in replicas::readings(&mine) {
                    let taken = Taken {
                        t_wall,
                        t_mono_ns: None,
                        latency_s: None,
                    };
                    w.write_metrics(&metrics, taken, self.engine)?;
                }
                w.close()
            });
            match written {
                Ok(Some(note)) => self
                    .manifest
                    .notes
                    .push(format!("replica {}: {note}", replica.instance)),
                Ok(None) => {}
                Err(e) => self.manifest.notes.push(format!(
                    "replica {}: cannot write {}: {e}",
                    replica.instance,
                    path.display()
                )),
            }
        }
    }
}
