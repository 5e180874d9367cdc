//! Reading a server's metrics (docs/run-folder.md#engines): path discovery with the
//! working path remembered per base URL, midpoint clocks, the engine the names show, and
//! the advice given when a server serves no engine's metrics.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use analyzer::docs::SnapshotDoc;
use analyzer::prom::Exposition;
use analyzer::Engine;

use crate::clock::{self, Stamp};
use crate::http::{self, Client};

/// The working metrics path per base URL, for the life of the process.
static REMEMBERED: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);

fn remembered(base: &str) -> Option<String> {
    let g = REMEMBERED.lock().ok()?;
    g.as_ref()?.get(base).cloned()
}

fn remember(base: &str, path: Option<&str>) {
    if let Ok(mut g) = REMEMBERED.lock() {
        let map = g.get_or_insert_with(HashMap::new);
        match path {
            Some(p) => map.insert(base.to_string(), p.to_string()),
            None => map.remove(base),
        };
    }
}

/// One timed reading of the metrics.
#[derive(Debug, Clone)]
pub struct Reading {
    /// The full URL read, path included.
    pub url: String,
    pub path: String,
    pub t_wall: f64,
    pub t_mono_ns: i64,
    pub latency_s: f64,
    /// The body as served (UTF-8, invalid bytes replaced).
    pub text: String,
    pub metrics: Exposition,
}

impl Reading {
    /// The engine the metric names show, if any.
    pub fn engine(&self) -> Option<Engine> {
        Engine::from_metric_names(self.metrics.names())
    }

    /// The snapshot document (docs/run-folder.md#snapshots).
    pub fn snapshot_doc(&self) -> SnapshotDoc {
        SnapshotDoc {
            url: self.url.clone(),
            t_wall: self.t_wall,
            t_mono_ns: Some(self.t_mono_ns),
            latency_s: Some(self.latency_s),
            text: self.text.clone(),
        }
    }
}

/// Why a scrape gave no reading.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScrapeError {
    #[error("{0}")]
    Http(String),
    #[error("HTTP {0} {1} at {2}")]
    Status(u16, String, String),
    #[error("{path} is not Prometheus text ({detail})")]
    NotPrometheus { path: String, detail: String },
    #[error("both /metrics and /prometheus/metrics answer JSON")]
    OnlyJson,
}

/// A base URL (trailing `/` dropped) and how to read it.
pub struct Scraper {
    pub base: String,
    client: Client,
    clock: fn() -> Stamp,
}

fn looks_json(body: &[u8]) -> bool {
    matches!(
        body.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{') | Some(b'[')
    )
}

impl Scraper {
    pub fn new(base: &str) -> Scraper {
        Scraper::with_clock(base, Duration::from_secs(10), Stamp::now)
    }

    /// With an injected clock (tests) and timeout.
    pub fn with_clock(base: &str, timeout: Duration, clock: fn() -> Stamp) -> Scraper {
        Scraper {
            base: base.trim_end_matches('/').to_string(),
            client: Client::new(timeout),
            clock,
        }
    }

    fn get(&self, path: &str) -> Result<(Stamp, Stamp, http::Reply), ScrapeError> {
        let t0 = (self.clock)();
        let url = format!("{}{path}", self.base);
        let reply = self.client.get(&url).map_err(|e| ScrapeError::Http(e.0))?;
        let t1 = (self.clock)();
        if reply.status != 200 {
            return Err(ScrapeError::Status(
                reply.status,
                http::reason(reply.status),
                path.to_string(),
            ));
        }
        Ok((t0, t1, reply))
    }

    /// One reading. A remembered path is used directly; a failure forgets it.
    pub fn scrape(&self) -> Result<Reading, ScrapeError> {
        if let Some(path) = remembered(&self.base) {
            let r = self.get(&path).and_then(|g| self.finish(&path, g));
            if r.is_err() {
                remember(&self.base, None);
            }
            return r;
        }
        let first = self.get("/metrics")?;
        if !looks_json(&first.2.body) {
            let r = self.finish("/metrics", first)?;
            remember(&self.base, Some("/metrics"));
            return Ok(r);
        }
        // TensorRT-LLM answers JSON iteration stats at /metrics; the clocks restart so
        // the latency covers only the request that gave the reading.
        let second = self.get("/prometheus/metrics")?;
        if looks_json(&second.2.body) {
            return Err(ScrapeError::OnlyJson);
        }
        let r = self.finish("/prometheus/metrics", second)?;
        remember(&self.base, Some("/prometheus/metrics"));
        Ok(r)
    }

    fn finish(
        &self,
        path: &str,
        (t0, t1, reply): (Stamp, Stamp, http::Reply),
    ) -> Result<Reading, ScrapeError> {
        let text = reply.into_text();
        let metrics = Exposition::parse(&text).map_err(|e| ScrapeError::NotPrometheus {
            path: path.to_string(),
            detail: e.to_string(),
        })?;
        let (t_wall, t_mono_ns, latency_s) = clock::midpoint(t0, t1);
        Ok(Reading {
            url: format!("{}{path}", self.base),
            path: path.to_string(),
            t_wall,
            t_mono_ns,
            latency_s,
            text,
            metrics,
        })
    }
}

/// What to change so a server serves its metrics, for one engine.
pub fn hint(engine: Engine) -> &'static str {
    match engine {
        Engine::Vllm => "vLLM serves them at /metrics with no flag: check that the address is the server's",
        Engine::Sglang => "start SGLang with --enable-metrics",
        Engine::Trtllm => "TensorRT-LLM needs `return_perf_metrics: true` and `enable_iter_perf_stats: true` in the YAML file given to `trtllm-serve --config`, and then serves /prometheus/metrics",
    }
}

/// The advice for the engine in effect, or for all three when none is known.
pub fn hints(engine: Option<Engine>) -> String {
    match engine {
        Some(e) => hint(e).to_string(),
        None => Engine::ALL
            .iter()
            .map(|e| format!("for {}, {}", e.display(), hint(*e)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// `no vLLM, SGLang or TensorRT-LLM metrics at URL (ERROR): HINT`.
pub fn no_metrics(url: &str, error: &str, engine: Option<Engine>) -> String {
    format!(
        "no vLLM, SGLang or TensorRT-LLM metrics at {url} ({error}): {}",
        hints(engine)
    )
}

/// A reading an engine's metrics were found in, or the problem text.
pub fn engine_reading(
    scraper: &Scraper,
    engine: Option<Engine>,
) -> Result<(Reading, Engine), String> {
    match scraper.scrape() {
        Err(e) => Err(no_metrics(&scraper.base, &e.to_string(), engine)),
        Ok(r) => match r.engine() {
            None => Err(no_metrics(
                &scraper.base,
                "no metric name has an engine's prefix",
                engine,
            )),
            Some(found) => Ok((r, found)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::io::{BufRead, BufReader, Write};
    use std::sync::{Arc, Mutex};

    /// A tiny local HTTP server: every request's path is logged; `reply(path)` gives the
    /// status and body. Each answer closes its connection.
    struct Tiny {
        base: String,
        log: Arc<Mutex<Vec<String>>>,
    }

    type Reply = Box<dyn Fn(&str) -> (u16, String) + Send>;

    fn tiny(reply: Reply) -> Tiny {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
        let log = Arc::new(Mutex::new(Vec::new()));
        let log2 = log.clone();
        std::thread::spawn(move || {
            for conn in l.incoming().flatten() {
                let mut r = BufReader::new(conn);
                let mut first = String::new();
                if r.read_line(&mut first).is_err() {
                    continue;
                }
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).map_or(true, |n| n == 0) || h.trim().is_empty() {
                        break;
                    }
                }
                let path = first.split_whitespace().nth(1).unwrap_or("").to_string();
                log2.lock().unwrap().push(path.clone());
                let (status, body) = reply(&path);
                let mut c = r.into_inner();
                let _ = write!(
                    c,
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Tiny { base, log }
    }

    impl Tiny {
        /// The paths asked since the last call.
        fn asked(&self) -> Vec<String> {
            std::mem::take(&mut *self.log.lock().unwrap())
        }
    }

    const TRT_PROM: &str = "# TYPE trtllm_request_success_total counter\ntrtllm_request_success_total{model_name=\"m\",finished_reason=\"length\"} 3\n";

    thread_local! {
        static TICK: std::cell::Cell<i64> = const { std::cell::Cell::new(0) };
    }

    /// A clock that advances one second per reading: wall 100, 101, ...; monotonic the same.
    fn ticking() -> Stamp {
        let n = TICK.with(|t| {
            let n = t.get();
            t.set(n + 1);
            n
        });
        Stamp {
            wall: 100.0 + n as f64,
            mono_ns: (1 + n) * 1_000_000_000,
        }
    }

    #[test]
    fn json_metrics_fall_back_to_prometheus_and_the_path_is_remembered() {
        // TensorRT-LLM answers JSON at /metrics and Prometheus text at /prometheus/metrics.
        let srv = tiny(Box::new(|p: &str| match p {
            "/metrics" => (200, "[{\"iter\": 1, \"gpuMemUsage\": 0}]".into()),
            "/prometheus/metrics" => (200, TRT_PROM.into()),
            _ => (404, "not found".into()),
        }));
        TICK.with(|t| t.set(0));
        let s = Scraper::with_clock(&format!("{}/", srv.base), Duration::from_secs(5), ticking);
        let r = s.scrape().unwrap();
        assert_eq!(srv.asked(), ["/metrics", "/prometheus/metrics"]);
        assert_eq!(r.path, "/prometheus/metrics");
        assert_eq!(r.url, format!("{}/prometheus/metrics", srv.base));
        assert_eq!(r.engine(), Some(Engine::Trtllm));
        // The clocks were read again before the second GET: readings 2 and 3, not 0 and 3.
        assert_eq!(r.t_mono_ns, 3_500_000_000);
        assert!((r.latency_s - 1.0).abs() < 1e-12, "{}", r.latency_s);
        assert!((r.t_wall - 102.5).abs() < 1e-9);
        // Next time the remembered path is used directly, also by a new scraper of the
        // same base (the memory is per base URL, for the life of the process).
        let r = Scraper::new(&srv.base).scrape().unwrap();
        assert_eq!(r.path, "/prometheus/metrics");
        assert_eq!(srv.asked(), ["/prometheus/metrics"]);
        let _ = s.scrape().unwrap();
        assert_eq!(srv.asked(), ["/prometheus/metrics"]);
    }

    #[test]
    fn a_failing_remembered_path_is_forgotten() {
        let fail = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let f2 = fail.clone();
        let srv = tiny(Box::new(move |p: &str| {
            let failing = f2.load(std::sync::atomic::Ordering::SeqCst);
            match p {
                "/metrics" => (200, "{\"iterationStats\": []}".into()),
                "/prometheus/metrics" if failing => (503, "busy".into()),
                "/prometheus/metrics" => (200, TRT_PROM.into()),
                _ => (404, "not found".into()),
            }
        }));
        let s = Scraper::new(&srv.base);
        assert_eq!(s.scrape().unwrap().path, "/prometheus/metrics");
        assert_eq!(srv.asked(), ["/metrics", "/prometheus/metrics"]);
        // The remembered path fails: the reading fails, and the path is forgotten.
        fail.store(true, std::sync::atomic::Ordering::SeqCst);
        let e = s.scrape().unwrap_err();
        assert_eq!(
            e,
            ScrapeError::Status(
                503,
                "Service Unavailable".into(),
                "/prometheus/metrics".into()
            )
        );
        assert_eq!(srv.asked(), ["/prometheus/metrics"]);
        assert_eq!(remembered(&srv.base), None);
        // The next scrape starts from /metrics again.
        fail.store(false, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(s.scrape().unwrap().path, "/prometheus/metrics");
        assert_eq!(srv.asked(), ["/metrics", "/prometheus/metrics"]);
        assert_eq!(s.scrape().unwrap().path, "/prometheus/metrics");
        assert_eq!(srv.asked(), ["/prometheus/metrics"]);
    }

    #[test]
    fn prometheus_at_metrics_is_remembered_and_json_everywhere_is_refused() {
        let srv = tiny(Box::new(|p: &str| {
            match p {
            "/metrics" => (
                200,
                "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 0\n"
                    .into(),
            ),
            _ => (404, "not found".into()),
        }
        }));
        let s = Scraper::new(&srv.base);
        let r = s.scrape().unwrap();
        assert_eq!(
            (r.path.as_str(), r.engine()),
            ("/metrics", Some(Engine::Vllm))
        );
        let _ = s.scrape().unwrap();
        assert_eq!(srv.asked(), ["/metrics", "/metrics"]);

        let srv = tiny(Box::new(|_: &str| (200, "[]".into())));
        assert_eq!(
            Scraper::new(&srv.base).scrape().unwrap_err(),
            ScrapeError::OnlyJson
        );
        assert_eq!(srv.asked(), ["/metrics", "/prometheus/metrics"]);
        assert_eq!(remembered(&srv.base), None);
    }

    #[test]
    fn json_bodies_are_told_apart() {
        assert!(looks_json(b"  [1]"));
        assert!(looks_json(b"\n{\"a\": 1}"));
        assert!(!looks_json(b"# HELP x\nx 1\n"));
    }

    #[test]
    fn hints_for_one_or_all() {
        assert_eq!(
            hints(Some(Engine::Sglang)),
            "start SGLang with --enable-metrics"
        );
        let all = hints(None);
        assert!(all.starts_with("for vLLM, "));
        assert!(
            all.contains("; for SGLang, start SGLang with --enable-metrics; for TensorRT-LLM, ")
        );
    }
}
