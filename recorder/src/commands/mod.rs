//! The bodies of the commands, one file each: `record` hands over to `record::record`;
//! the single-step commands (`snapshot`, `watch`, `probe`, `gpu-inspect`, `teardown`)
//! do their one step and print what the analyzer makes of it.

mod gpu_inspect;
mod probe;
mod record;
mod replicas;
mod snapshot;
mod teardown;
mod watch;

use std::path::PathBuf;

use analyzer::analysis::{mismatch, NamedEngine};
use analyzer::docs::manifest::EngineFrom;
use analyzer::Engine;

use crate::procs::ProcFs;
use crate::scrape::{self, Scraper};

pub use gpu_inspect::gpu_inspect;
pub use probe::probe;
pub use record::record;
pub use snapshot::snapshot;
pub use teardown::teardown;
pub use watch::watch;

/// How the refusal message names the way an engine was named.
fn named_by(from: EngineFrom) -> &'static str {
    if from == EngineFrom::Flag {
        "--engine"
    } else {
        "INFERLINT_ENGINE"
    }
}

/// Progress lines: on stdout, or on stderr when stdout carries JSON.
fn say_to(json: bool, line: &str) {
    let line = analyzer::term::escape(line);
    if json {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// `/proc`, or the folder the tests give instead.
fn fs_of(root: &Option<PathBuf>) -> ProcFs {
    root.clone()
        .map_or_else(ProcFs::default, |root| ProcFs { root })
}

/// The first reading of `snapshot` and `watch`: an engine's metrics, the named one.
/// `Err` is the exit status, the reason printed.
fn checked_reading(
    url: &str,
    engine: Option<(Engine, EngineFrom)>,
) -> Result<(Scraper, scrape::Reading), i32> {
    let scraper = Scraper::new(url);
    match scrape::engine_reading(&scraper, engine.map(|e| e.0)) {
        Err(text) => {
            eprintln!("inferlint: {}", analyzer::term::escape(&text));
            Err(2)
        }
        Ok((reading, found)) => match engine {
            Some((named, by)) if named != found => {
                let what = format!("the metrics at {}", scraper.base);
                let named = NamedEngine {
                    engine: named,
                    by: named_by(by),
                };
                eprintln!("inferlint: {}", mismatch(named, &what, found));
                Err(2)
            }
            _ => Ok((scraper, reading)),
        },
    }
}
