//! The gauge series (docs/run-folder.md#series): one row per successful reading, the
//! header at the first success, every row flushed as written so a kill leaves a readable
//! file, and the recorder thread `record` runs during the load.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use analyzer::docs::{self, Row, SeriesHeader};
use analyzer::num::round_dp;
use analyzer::prom::Exposition;
use analyzer::rules::t17_prefix_cache_hits as prefix_cache;
use analyzer::Engine;

use crate::scrape::{Reading, Scraper};

/// A KV gauge that matched more than one series in one reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Ambiguity {
    pub name: String,
    pub label_sets: Vec<String>,
}

/// When a row's readings were taken: the wall clock, and the monotonic clock and the
/// latency of a scrape the recorder made itself (none for a reading from Prometheus).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Taken {
    pub t_wall: f64,
    pub t_mono_ns: Option<i64>,
    pub latency_s: Option<f64>,
}

impl Taken {
    pub fn of(reading: &Reading) -> Taken {
        Taken {
            t_wall: reading.t_wall,
            t_mono_ns: Some(reading.t_mono_ns),
            latency_s: Some(reading.latency_s),
        }
    }
}

/// The row of one reading, and the ambiguity when the KV gauge had several series.
pub fn row_of(reading: &Reading, engine: Engine) -> (Row, Option<Ambiguity>) {
    row_from(&reading.metrics, Taken::of(reading), engine)
}

/// The row of a set of metrics taken at `taken`, and the ambiguity when the KV gauge had
/// several series.
pub fn row_from(metrics: &Exposition, taken: Taken, engine: Engine) -> (Row, Option<Ambiguity>) {
    let names = engine.metrics();
    let (kv_usage, ambiguity) = match metrics.single(names.kv_usage, &[]) {
        Ok(v) => (v, None),
        Err(_) => (None, Some(ambiguity(metrics, names.kv_usage))),
    };
    // SGLang exports its retraction counter only after the first retraction; its gauge
    // witnesses that the counter reads 0 until then.
    let preemptions = names.evictions.and_then(|name| {
        metrics.total(name, &[]).or_else(|| {
            names
                .evictions_witness
                .filter(|witness| metrics.has(witness))
                .map(|_| 0.0)
        })
    });
    let row = Row {
        t_wall: round_dp(taken.t_wall, 6),
        t_mono_ns: taken.t_mono_ns,
        latency_s: taken.latency_s,
        running: metrics.total(names.running, &[]),
        waiting: metrics.total(names.waiting, &[]),
        kv_usage,
        preemptions,
        generation_tokens: metrics.total(names.generation_tokens, &[]),
        prompt_tokens: metrics.total(names.prompt_tokens, &[]),
        paused: names.paused.and_then(|p| metrics.total(p, &[])),
        prefix_cache_hits: prefix_cache::read(metrics, engine.prefix_cache().hits),
        prefix_cache_queries: prefix_cache::read(metrics, engine.prefix_cache().queries),
    };
    (row, ambiguity)
}

fn ambiguity(x: &Exposition, name: &str) -> Ambiguity {
    let label_sets = x
        .select(name, &[])
        .map(|s| {
            let inner: Vec<String> = s
                .labels
                .iter()
                .map(|(k, v)| format!("{k}=\"{v}\""))
                .collect();
            format!("{{{}}}", inner.join(","))
        })
        .collect();
    Ambiguity {
        name: name.to_string(),
        label_sets,
    }
}

/// Appends rows to a series file: the header at the first success, each line flushed.
pub struct SeriesWriter {
    file: File,
    url: String,
    interval_s: f64,
    engine: Option<Engine>,
    pub rows: usize,
    ambiguous_rows: usize,
    ambiguity: Option<Ambiguity>,
}

impl SeriesWriter {
    pub fn create(path: &Path, url: &str, interval_s: f64) -> std::io::Result<SeriesWriter> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(SeriesWriter {
            file,
            url: url.trim_end_matches('/').to_string(),
            interval_s,
            engine: None,
            rows: 0,
            ambiguous_rows: 0,
            ambiguity: None,
        })
    }

    /// The header line: told once, from the first successful reading (none: no engine).
    fn header(&mut self, engine: Option<Engine>) -> std::io::Result<()> {
        let header = SeriesHeader {
            url: Some(self.url.clone()),
            interval_s: Some(self.interval_s),
            engine,
        };
        self.line(&docs::to_line(&header))
    }

    fn line(&mut self, text: &str) -> std::io::Result<()> {
        // One write per line, so a reader never sees half a header next to a row.
        let mut buf = Vec::with_capacity(text.len() + 1);
        buf.extend_from_slice(text.as_bytes());
        buf.push(b'\n');
        self.file.write_all(&buf)?;
        self.file.flush()
    }

    /// Writes the row of a successful reading (and the header before the first).
    pub fn write(&mut self, reading: &Reading) -> std::io::Result<Row> {
        self.write_metrics(&reading.metrics, Taken::of(reading), reading.engine())
    }

    /// Writes the row of a set of metrics (and the header before the first, its engine
    /// the one the first metrics showed, else vLLM).
    pub fn write_metrics(
        &mut self,
        metrics: &Exposition,
        taken: Taken,
        shown: Option<Engine>,
    ) -> std::io::Result<Row> {
        let engine = match self.engine {
            Some(e) => e,
            None => {
                // Told once, from the first successful reading's names.
                let e = shown.unwrap_or(Engine::Vllm);
                self.header(Some(e))?;
                self.engine = Some(e);
                e
            }
        };
        let (row, amb) = row_from(metrics, taken, engine);
        if let Some(a) = amb {
            self.ambiguous_rows += 1;
            self.ambiguity.get_or_insert(a);
        }
        self.line(&row.line(engine))?;
        self.rows += 1;
        Ok(row)
    }

    /// Ends the file: a header without `engine` when no reading succeeded. Returns the
    /// note about an ambiguous KV gauge, if any.
    pub fn close(&mut self) -> std::io::Result<Option<String>> {
        if self.engine.is_none() {
            self.header(None)?;
            self.engine = Some(Engine::Vllm);
        }
        Ok(self.ambiguity.as_ref().map(|a| {
            format!(
                "kv_usage written as null in {} rows: {} series named {} ({})",
                self.ambiguous_rows,
                a.label_sets.len(),
                a.name,
                a.label_sets.join(", ")
            )
        }))
    }
}

/// The latest row, shared with the progress line.
pub type Latest = Arc<Mutex<Option<Row>>>;

/// What a finished series recording reports.
#[derive(Debug, Default)]
pub struct Summary {
    pub rows: usize,
    pub failures: usize,
    pub note: Option<String>,
    pub write_error: Option<String>,
}

/// How often a parked series thread looks at its stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// Records until `stop` is set: read, write, wait `interval` (interruptibly), repeat.
/// `verbose` prints `scrape failed: ERROR` per failed reading (`watch`).
pub fn record_until(
    scraper: &Scraper,
    writer: &mut SeriesWriter,
    interval: Duration,
    stop: &AtomicBool,
    latest: &Latest,
    verbose: bool,
) -> Summary {
    let mut summary = Summary::default();
    while !stop.load(Ordering::SeqCst) {
        match scraper.scrape() {
            Ok(reading) => match writer.write(&reading) {
                Ok(row) => {
                    if let Ok(mut latest) = latest.lock() {
                        *latest = Some(row);
                    }
                }
                Err(e) => {
                    summary.write_error = Some(e.to_string());
                    break;
                }
            },
            Err(e) => {
                summary.failures += 1;
                if verbose {
                    eprintln!("scrape failed: {}", analyzer::term::escape(&e.to_string()));
                }
            }
        }
        // Parked between readings: `Recorder::finish` wakes the thread at once; a stop
        // set without a wake-up (`watch`) is seen within 100 ms.
        let end = Instant::now() + interval;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            if stop.load(Ordering::SeqCst) || left.is_zero() {
                break;
            }
            std::thread::park_timeout(left.min(STOP_CHECK));
        }
    }
    summary.rows = writer.rows;
    match writer.close() {
        Ok(note) => summary.note = note,
        Err(e) => summary.write_error = Some(e.to_string()),
    }
    summary
}

/// The series recorder on its own thread (`record`, from just before the load until
/// just after the after snapshot).
pub struct Recorder {
    stop: Arc<AtomicBool>,
    thread: std::thread::Thread,
    done: std::sync::mpsc::Receiver<Summary>,
    pub latest: Latest,
}

impl Recorder {
    pub fn start(scraper: Scraper, mut writer: SeriesWriter, interval: Duration) -> Recorder {
        let stop = Arc::new(AtomicBool::new(false));
        let latest: Latest = Arc::new(Mutex::new(None));
        let (tx, done) = std::sync::mpsc::channel();
        let (stop2, latest2) = (stop.clone(), latest.clone());
        let handle = std::thread::spawn(move || {
            let summary = record_until(&scraper, &mut writer, interval, &stop2, &latest2, false);
            let _ = tx.send(summary);
        });
        Recorder {
            stop,
            thread: handle.thread().clone(),
            done,
            latest,
        }
    }

    /// Stops it; the reading in progress is finished (at most `wait`).
    pub fn finish(self, wait: Duration) -> Option<Summary> {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.unpark();
        self.done.recv_timeout(wait).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(text: &str) -> Reading {
        Reading {
            url: "http://h/metrics".into(),
            path: "/metrics".into(),
            t_wall: 1_790_000_000.123_456_7,
            t_mono_ns: 5_000_000_000,
            latency_s: 0.004,
            text: text.into(),
            metrics: Exposition::parse(text).unwrap(),
        }
    }

    #[test]
    fn vllm_row_fields_and_order() {
        let r = reading(
            "vllm:num_requests_running{model_name=\"m\"} 3\nvllm:num_requests_waiting{model_name=\"m\"} 1\n\
             vllm:kv_cache_usage_perc{model_name=\"m\"} 0.5\nvllm:num_preemptions_total{model_name=\"m\"} 0\n\
             vllm:generation_tokens_total{model_name=\"m\"} 10\n",
        );
        let (row, amb) = row_of(&r, Engine::Vllm);
        assert!(amb.is_none());
        assert_eq!(
            row.line(Engine::Vllm),
            "{\"t_wall\": 1790000000.123457, \"t_mono_ns\": 5000000000, \"latency_s\": 0.004, \"running\": 3.0, \"waiting\": 1.0, \"kv_usage\": 0.5, \"preemptions\": 0.0, \"generation_tokens\": 10.0, \"prompt_tokens\": null, \"prefix_cache_hits\": null, \"prefix_cache_queries\": null}"
        );
    }

    #[test]
    fn sglang_witness_and_trtllm_paused() {
        let r = reading("sglang:num_retracted_reqs 0\nsglang:num_running_reqs 2\n");
        let (row, _) = row_of(&r, Engine::Sglang);
        assert_eq!(row.preemptions, Some(0.0));
        let r = reading("sglang:num_running_reqs 2\n");
        assert_eq!(row_of(&r, Engine::Sglang).0.preemptions, None);
        let r = reading("trtllm_num_paused_requests{pid=\"1\"} 2\n");
        let (row, _) = row_of(&r, Engine::Trtllm);
        let line = row.line(Engine::Trtllm);
        assert!(!line.contains("preemptions"));
        assert!(
            line.ends_with(
                "\"prompt_tokens\": null, \"paused\": 2.0, \"prefix_cache_hits\": null, \"prefix_cache_queries\": null}"
            ),
            "{line}"
        );
    }

    #[test]
    fn prefix_cache_columns_sum_the_engine_counters() {
        let r = reading(
            "vllm:prefix_cache_hits_total{engine=\"0\"} 30\nvllm:prefix_cache_queries_total{engine=\"0\"} 120\n",
        );
        let (row, _) = row_of(&r, Engine::Vllm);
        assert_eq!(
            (row.prefix_cache_hits, row.prefix_cache_queries),
            (Some(30.0), Some(120.0))
        );
        let r = reading(
            "sglang:prefill_effective_tokens_total{mode=\"input\"} 70\nsglang:prefill_effective_tokens_total{mode=\"device_hit\"} 20\nsglang:prefill_effective_tokens_total{mode=\"host_hit\"} 10\n",
        );
        let (row, _) = row_of(&r, Engine::Sglang);
        assert_eq!(
            (row.prefix_cache_hits, row.prefix_cache_queries),
            (Some(30.0), Some(100.0))
        );
        // Absent counters stay absent, never zero.
        let (row, _) = row_of(&reading("trtllm_num_requests_running 1\n"), Engine::Trtllm);
        assert_eq!(
            (row.prefix_cache_hits, row.prefix_cache_queries),
            (None, None)
        );
    }

    #[test]
    fn two_kv_series_give_null_and_a_note() {
        let dir = std::env::temp_dir().join(format!("rec-series-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let p = dir.join("a.series.jsonl");
        let _ = std::fs::remove_file(&p);
        let mut w = SeriesWriter::create(&p, "http://h/", 0.25).unwrap();
        let r = reading("vllm:kv_cache_usage_perc{engine=\"0\"} 0.5\nvllm:kv_cache_usage_perc{engine=\"1\"} 0.25\n");
        let row = w.write(&r).unwrap();
        assert_eq!(row.kv_usage, None);
        let note = w.close().unwrap().unwrap();
        assert!(
            note.contains("1 rows: 2 series named vllm:kv_cache_usage_perc"),
            "{note}"
        );
        let text = std::fs::read_to_string(&p).unwrap();
        let first = text.lines().next().unwrap();
        assert_eq!(first, "{\"schema\": \"inferlint.series/1\", \"url\": \"http://h\", \"interval_s\": 0.25, \"engine\": \"vllm\"}");
        // A file cut mid-row stays readable.
        let cut = format!("{text}{{\"t_wall\": 1.0, \"runn");
        let s = analyzer::series::Series::read("a", cut.as_bytes()).unwrap();
        assert_eq!(s.rows.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn header_alone_when_nothing_succeeded() {
        let dir = std::env::temp_dir().join(format!("rec-series2-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let p = dir.join("b.series.jsonl");
        let _ = std::fs::remove_file(&p);
        let mut w = SeriesWriter::create(&p, "http://h", 0.5).unwrap();
        assert!(w.close().unwrap().is_none());
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "{\"schema\": \"inferlint.series/1\", \"url\": \"http://h\", \"interval_s\": 0.5}\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
