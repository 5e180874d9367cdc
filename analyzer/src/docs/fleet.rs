//! `fleet.json` (`inferlint.fleet/1`): a deployment of several replicas recorded through
//! Prometheus. It names where the evidence came from (the Prometheus server, the selector,
//! the router the load went through) and lists the replicas; each replica's readings live
//! in its own subfolder, `replicas/<id>/`, laid out like a single server's run folder
//! (`before.snapshot.json`, `after.snapshot.json`, `run.series.jsonl`), so every
//! single-server parser reads them unchanged. The router's own exporter, when it was read,
//! is kept the same way under `router/`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::keyword::keywords;
use super::Document;

keywords! {
    /// Where the replicas' metrics were read.
    pub enum FleetSource {
        /// Instant and range queries to a Prometheus server's HTTP API.
        Prometheus = "prometheus",
    }
}

/// One replica: its folder name and how Prometheus tells it apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Replica {
    /// The subfolder under `replicas/` ([`replica_id_is_valid`]).
    pub id: String,
    /// Prometheus' `instance` label (`host:port`).
    pub instance: String,
    /// Every identifying label Prometheus gave its series (`job`, `instance`, pod, rank,
    /// `engine`…), without `__name__`.
    pub labels: BTreeMap<String, String>,
    /// How often Prometheus scraped this replica, from its target list (seconds); none
    /// when the target list did not say.
    pub scrape_interval_s: Option<f64>,
}

/// `fleet.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fleet {
    pub source: Option<FleetSource>,
    /// The Prometheus server's base URL.
    pub prometheus_url: Option<String>,
    /// The series selector given with `--match`, e.g. `{job="vllm"}`.
    pub selector: Option<String>,
    /// The address the probe and the load were sent to (the router).
    pub router_url: Option<String>,
    /// The step of the range queries the series were built from (seconds).
    pub step_s: Option<f64>,
    /// The longest scrape interval among the replicas (seconds): below it the series
    /// repeats readings, so it bounds what a gauge can show.
    pub scrape_interval_s: Option<f64>,
    pub replicas: Vec<Replica>,
}

impl Document for Fleet {
    const SCHEMA: &'static str = "inferlint.fleet/1";
}

/// A replica's folder name: 1–64 characters of `A–Z a–z 0–9 . _ -`, not `.` or `..`, so
/// it can never leave `replicas/`.
pub fn replica_id_is_valid(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A folder name for a replica made from its `instance` label (`127.0.0.1:8031` →
/// `127.0.0.1-8031`); `None` when nothing usable is left.
pub fn replica_id_from_instance(instance: &str) -> Option<String> {
    let id: String = instance
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    replica_id_is_valid(&id).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::super::{read, to_bytes};
    use super::*;

    #[test]
    fn round_trips_and_reads_a_minimal_document() {
        let fleet = Fleet {
            source: Some(FleetSource::Prometheus),
            prometheus_url: Some("http://127.0.0.1:9095".into()),
            selector: Some(r#"{job="vllm"}"#.into()),
            router_url: Some("http://127.0.0.1:8030".into()),
            step_s: Some(1.0),
            scrape_interval_s: Some(1.0),
            replicas: vec![Replica {
                id: "127.0.0.1-8031".into(),
                instance: "127.0.0.1:8031".into(),
                labels: [("job".to_string(), "vllm".to_string())].into(),
                scrape_interval_s: Some(1.0),
            }],
        };
        let bytes = to_bytes(&fleet);
        assert_eq!(read::<Fleet>("fleet.json", &bytes).unwrap(), fleet);
        let minimal: Fleet = read("fleet.json", br#"{"schema": "inferlint.fleet/1"}"#).unwrap();
        assert!(minimal.replicas.is_empty() && minimal.source.is_none());
    }

    #[test]
    fn replica_ids_never_leave_their_folder() {
        assert_eq!(
            replica_id_from_instance("127.0.0.1:8031").as_deref(),
            Some("127.0.0.1-8031")
        );
        assert_eq!(
            replica_id_from_instance("[::1]:80").as_deref(),
            Some("---1--80")
        );
        for bad in ["", ".", "..", "a/b", "a b", &"x".repeat(65)] {
            assert!(!replica_id_is_valid(bad), "{bad:?}");
        }
        assert_eq!(replica_id_from_instance(".."), None);
    }
}
