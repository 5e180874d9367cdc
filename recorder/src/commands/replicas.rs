//! `snapshot` and `watch` with `--prometheus URL --match SELECTOR`: the same readings for
//! every replica Prometheus scrapes, one file each in the `-o` folder, named by the
//! replica (`<replica>.snapshot.json`, `<replica>.series.jsonl`).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use analyzer::analysis::{mismatch, NamedEngine};
use analyzer::docs::fleet::Replica;
use analyzer::docs::{SERIES_SUFFIX, SNAPSHOT_SUFFIX};
use analyzer::prom::Exposition;
use analyzer::Engine;
use anyhow::{Context, Result};

use super::named_by;
use crate::docs::write_doc;
use crate::prometheus::{replicas, Readings, Selector, Source};
use crate::series::{SeriesWriter, Taken};
use crate::signals;

type Named = Option<(Engine, analyzer::docs::manifest::EngineFrom)>;

/// The replicas and their first readings, the engine checked; `Err` is the exit status,
/// the reason printed.
fn found(
    url: &str,
    selector: Selector,
    engine: Named,
) -> Result<(Source, Vec<Replica>, Readings), i32> {
    let source = Source::new(url, selector);
    let (list, readings) = match source.discover() {
        Ok(x) => x,
        Err(e) => {
            eprintln!(
                "inferlint: Prometheus: {}",
                analyzer::term::escape(&e.to_string())
            );
            return Err(2);
        }
    };
    let Some(shown) = readings.engine().filter(|_| !list.is_empty()) else {
        eprintln!(
            "inferlint: Prometheus at {} holds no engine's metrics matching {}",
            source.prometheus.base, source.selector.text
        );
        return Err(2);
    };
    if let Some((named, by)) = engine.filter(|(e, _)| *e != shown) {
        let what = format!("the replicas in Prometheus at {}", source.prometheus.base);
        let named = NamedEngine {
            engine: named,
            by: named_by(by),
        };
        eprintln!("inferlint: {}", mismatch(named, &what, shown));
        return Err(2);
    }
    Ok((
        Source {
            engine: Some(shown),
            ..source
        },
        list,
        readings,
    ))
}

/// `snapshot --prometheus URL --match SELECTOR -o DIR`.
pub fn snapshot(url: &str, selector: Selector, engine: Named, out: &Path) -> Result<i32> {
    let (_, list, readings) = match found(url, selector, engine) {
        Ok(x) => x,
        Err(status) => return Ok(status),
    };
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for replica in &list {
        let samples = readings.of(replica);
        let doc = replicas::snapshot_doc(
            &readings.reply.url,
            readings.t_wall,
            readings.reply.latency_s,
            &samples,
        );
        let name = format!("{}{SNAPSHOT_SUFFIX}", replica.id);
        write_doc(out, &name, &doc).with_context(|| format!("cannot write {name}"))?;
        println!(
            "{}: {} samples -> {}",
            replica.instance,
            samples.len(),
            out.join(&name).display()
        );
    }
    Ok(0)
}

/// One replica's samples of a reading as an exposition.
fn metrics_of(readings: &Readings, replica: &Replica) -> Option<Exposition> {
    let samples = readings.of(replica);
    if samples.is_empty() {
        return None;
    }
    let text = replicas::exposition_text(samples.iter().map(|s| (&s.labels, s.value)));
    Exposition::parse(&text).ok()
}

/// `watch --prometheus URL --match SELECTOR -o DIR`: repeated instant queries.
pub fn watch(
    url: &str,
    selector: Selector,
    engine: Named,
    out: &Path,
    interval: f64,
    duration: Option<f64>,
) -> Result<i32> {
    let (source, list, first) = match found(url, selector, engine) {
        Ok(x) => x,
        Err(status) => return Ok(status),
    };
    let shown = first.engine();
    signals::install();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut writers = BTreeMap::new();
    for replica in &list {
        let path = out.join(format!("{}{SERIES_SUFFIX}", replica.id));
        let w = SeriesWriter::create(&path, &source.prometheus.base, interval)
            .with_context(|| format!("cannot write {}", path.display()))?;
        writers.insert(replica.id.clone(), w);
    }
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let mut failures = 0usize;
    let mut readings: Result<Readings, crate::prometheus::ApiError> = Ok(first);
    while !stop.load(Ordering::SeqCst) {
        let next = Instant::now() + Duration::from_secs_f64(interval);
        match &readings {
            Ok(r) => {
                for replica in &list {
                    let (Some(metrics), Some(w)) =
                        (metrics_of(r, replica), writers.get_mut(&replica.id))
                    else {
                        continue;
                    };
                    let taken = Taken {
                        t_wall: r.t_wall,
                        t_mono_ns: None,
                        latency_s: Some(r.reply.latency_s),
                    };
                    w.write_metrics(&metrics, taken, shown)?;
                }
            }
            Err(e) => {
                failures += 1;
                eprintln!("query failed: {}", analyzer::term::escape(&e.to_string()));
            }
        }
        while Instant::now() < next {
            if signals::interrupted() || duration.is_some_and(|d| t0.elapsed().as_secs_f64() >= d) {
                stop.store(true, Ordering::SeqCst);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if !stop.load(Ordering::SeqCst) {
            readings = source.read();
        }
    }
    for (id, mut w) in writers {
        if let Some(note) = w.close()? {
            eprintln!("{id}: {note}");
        }
        println!(
            "{id}: {} samples -> {}",
            w.rows,
            out.join(format!("{id}{SERIES_SUFFIX}")).display()
        );
    }
    if failures > 0 {
        eprintln!("{failures} queries failed");
    }
    Ok(0)
}
