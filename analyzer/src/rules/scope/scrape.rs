//! A folder that holds a load tool's own scrape of the server's `/metrics` (AIPerf's
//! `server_metrics_export.json`) and no recording of inferlint's: the counters and gauges
//! are read at the resolution the load tool sampled them.

use crate::bench::aiperf_server::{Reading, Seen};
use crate::bench::{AiperfServer, BenchResult};
use crate::engine::Engine;
use crate::manifest::Manifest;
use crate::plausible::cannot_tell;
use crate::rules::absent::Input;
use crate::rules::verdict::CheckResult;

/// The evidence key naming the scrape file.
pub const SCRAPE_FILE: &str = "scrape_file";

pub struct ScrapeScope<'a> {
    /// The engine the scrape's metric names say, else the report's.
    pub engine: Engine,
    pub scrape: &'a AiperfServer,
    /// The scrape's file, as results name it.
    pub file: &'a str,
    pub requested: Option<i64>,
    /// The load tool's result.
    pub bench: Input<'a, BenchResult>,
    /// The result's file, as T15 names it.
    pub bench_file: &'a str,
    pub manifest: Option<&'a Manifest>,
    /// A load ran, unless the recorder says none was given.
    pub load_ran: bool,
}

impl ScrapeScope<'_> {
    /// A result read from the scrape says so: its message ends with the resolution the
    /// load tool sampled at, its evidence names the file.
    pub fn sourced(&self, mut r: CheckResult, seen: Seen) -> CheckResult {
        r.message = format!("{}, {}", r.message, self.scrape.resolution(seen));
        r.with(SCRAPE_FILE, self.file)
            .with("sampled_every_ms", self.scrape.interval_ms)
    }

    /// A reading's value, or why it decides nothing.
    pub fn value_or(&self, reading: Reading<'_>, name: &str) -> Result<f64, String> {
        let tool = &self.scrape.tool;
        match reading {
            Reading::Value(v) => Ok(v),
            Reading::Missing => Err(format!("{tool}'s scrape has no {name}")),
            Reading::SeveralEndpoints(n) => Err(format!(
                "{tool}'s scrape has {name} from {n} endpoints, whose highest samples do not add up"
            )),
            Reading::Refused(bad) => Err(cannot_tell(bad)),
        }
    }
}
