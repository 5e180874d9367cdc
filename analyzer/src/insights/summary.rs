//! The run's figures from counter deltas and the recording (the Report's `summary`).
//! Every figure is absent when its inputs are; a restart drops every snapshot figure.

use crate::counters::{Pair, Restart};
use crate::engine::{Engine, FINISH_REASONS};
use crate::series::Series;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Seconds between the readings (absent when the span was refused).
    pub span: Option<f64>,
    /// Wall times of the two readings (absent for bare Prometheus text).
    pub start_wall: Option<f64>,
    pub end_wall: Option<f64>,
    /// Finished requests per reason, in the report's order (reasons missing are left out).
    pub reasons: Vec<(&'static str, f64)>,
    /// Finished requests.
    pub done: Option<f64>,
    pub output_tokens: Option<f64>,
    pub prompt_tokens: Option<f64>,
    /// Counter-based evictions (none for TensorRT-LLM, which has no counter).
    pub evictions: Option<f64>,
    pub mean_latency_s: Option<f64>,
    pub mean_ttft_s: Option<f64>,
    pub mean_queue_s: Option<f64>,
    /// The server restarted between the readings.
    pub restart: Option<Restart>,
    pub peak_running: Option<i64>,
    pub interval_s: Option<f64>,
    pub samples: usize,
    pub url: Option<String>,
}

impl Summary {
    pub fn build(engine: Engine, pair: Option<&Pair<'_>>, series: Option<&Series>) -> Summary {
        let mut s = Summary::default();
        if let Some(p) = pair {
            if let Err(restart) = s.fill_from_pair(engine, p) {
                // Keep only what the recording says.
                s = Summary {
                    restart: Some(restart),
                    ..Summary::default()
                };
            }
            s.url = Some(p.after.url.clone());
        }
        if let Some(series) = series {
            s.peak_running = series.peak_running().map(|p| p.trunc() as i64);
            s.interval_s = series.interval_s;
            s.samples = series.rows.len();
            if series.url.is_some() {
                s.url.clone_from(&series.url);
            }
        }
        s
    }

    fn fill_from_pair(&mut self, engine: Engine, pair: &Pair<'_>) -> Result<(), Restart> {
        let m = engine.metrics();
        self.span = pair.span().ok().map(|s| s.seconds);
        let (w0, w1) = (pair.before.t_wall, pair.after.t_wall);
        if !w0.is_nan() && !w1.is_nan() {
            self.start_wall = Some(w0);
            self.end_wall = Some(w1);
        }
        if let Some(label) = m.finished_reason_label {
            for reason in FINISH_REASONS {
                if let Some(d) = pair.delta(m.requests_finished, &[(label, reason)], None)? {
                    self.reasons.push((reason, d));
                }
            }
            if !self.reasons.is_empty() {
                self.done = Some(self.reasons.iter().map(|(_, d)| d).sum());
            }
        } else {
            self.done = pair.delta(m.requests_finished, &[], None)?;
        }
        self.output_tokens = pair.delta(m.generation_tokens, &[], None)?;
        self.prompt_tokens = pair.delta(m.prompt_tokens, &[], None)?;
        if let Some(ev) = m.evictions {
            self.evictions = pair.delta(ev, &[], m.evictions_witness)?;
        }
        self.mean_latency_s = pair.histogram_mean(m.e2e_latency)?;
        self.mean_ttft_s = pair.histogram_mean(m.ttft)?;
        self.mean_queue_s = pair.histogram_mean(m.queue_time)?;
        Ok(())
    }

    /// Requests that finished with an error, when reasons are known.
    pub fn errors(&self) -> Option<f64> {
        if self.reasons.is_empty() {
            return None;
        }
        Some(
            self.reasons
                .iter()
                .find(|(r, _)| *r == "error")
                .map_or(0.0, |(_, d)| *d),
        )
    }
}
