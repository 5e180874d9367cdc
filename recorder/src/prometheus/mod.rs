//! Reading many replicas through a Prometheus server instead of scraping one server:
//! the HTTP API client (`api`), what is asked (`query`: the `--match` selector merged
//! with the metric names inferlint reads) and how the answers become a fleet's documents
//! (`replicas`). [`Source`] puts them together for `record`, `snapshot` and `watch`.

pub mod api;
pub mod query;
pub mod replicas;

use std::time::{Duration, Instant};

use analyzer::docs::fleet::Replica;
use analyzer::Engine;

pub use api::{ApiError, Prometheus};
pub use query::Selector;

use crate::clock;

/// The replicas' metrics at one instant, and how they were asked.
#[derive(Debug, Clone)]
pub struct Readings {
    /// The evaluation time (unix seconds).
    pub t_wall: f64,
    pub reply: api::InstantReply,
}

impl Readings {
    /// The samples of one replica (by its `instance`).
    pub fn of<'a>(&'a self, replica: &'a Replica) -> Vec<&'a api::Sample> {
        self.reply
            .samples
            .iter()
            .filter(|s| s.labels.get(replicas::INSTANCE) == Some(&replica.instance))
            .collect()
    }

    /// The engine the metric names show.
    pub fn engine(&self) -> Option<Engine> {
        Engine::from_metric_names(self.reply.samples.iter().map(api::Sample::name))
    }
}

/// A Prometheus server and the replicas' selector.
#[derive(Clone)]
pub struct Source {
    pub prometheus: Prometheus,
    pub selector: Selector,
    /// The replicas' engine once known: only its metric names are asked then.
    pub engine: Option<Engine>,
}

impl Source {
    pub fn new(url: &str, selector: Selector) -> Source {
        Source {
            prometheus: Prometheus::new(url),
            selector,
            engine: None,
        }
    }

    /// The metrics a snapshot holds, for every replica, evaluated now.
    pub fn read(&self) -> Result<Readings, ApiError> {
        let t_wall = clock::wall();
        let query = self
            .selector
            .with_names(&query::snapshot_names(self.engine));
        let reply = self.prometheus.instant(&query, t_wall)?;
        Ok(Readings { t_wall, reply })
    }

    /// The replicas the selector finds now, their scrape intervals from the target list
    /// (none when the list cannot be read), and the readings they were found in.
    pub fn discover(&self) -> Result<(Vec<Replica>, Readings), ApiError> {
        self.prometheus.ready()?;
        let readings = self.read()?;
        let targets = self.prometheus.targets().unwrap_or_default();
        Ok((
            replicas::replicas(&readings.reply.samples, &targets),
            readings,
        ))
    }

    /// The selected targets whose last scrape failed (`up == 0`): their `instance`s.
    pub fn down(&self) -> Result<Vec<String>, ApiError> {
        let query = format!("{} == 0", self.selector.metric("up"));
        let reply = self.prometheus.instant(&query, clock::wall())?;
        Ok(reply
            .samples
            .iter()
            .filter_map(|s| s.labels.get(replicas::INSTANCE).cloned())
            .collect())
    }

    /// Waits until Prometheus has scraped every selected target after `since` (unix
    /// seconds), so an instant query shows what the replicas held then, not up to one
    /// scrape interval earlier. False when `limit` passed first.
    pub fn await_scrape(&self, since: f64, limit: Duration) -> Result<bool, ApiError> {
        let query = format!("timestamp({})", self.selector.metric("up"));
        let end = Instant::now() + limit;
        loop {
            let r = self.prometheus.instant(&query, clock::wall())?;
            if !r.samples.is_empty() && r.samples.iter().all(|s| s.value > since) {
                return Ok(true);
            }
            if Instant::now() >= end {
                return Ok(false);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The series' metrics from `start` to `end` every `step` seconds, for every replica;
    /// with the URL of the (first) query.
    pub fn series(
        &self,
        start: f64,
        end: f64,
        step: f64,
    ) -> Result<(Vec<api::RangeSeries>, String), ApiError> {
        let query = self.selector.with_names(&query::series_names(self.engine));
        self.prometheus.range(&query, start, end, step)
    }
}
