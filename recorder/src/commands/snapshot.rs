//! `snapshot URL -o FILE` (recorder.md §4): one reading of an engine's metrics, written
//! as a snapshot document.

use anyhow::{Context, Result};

use super::checked_reading;
use crate::cli::{named_engine, SnapshotArgs};
use crate::docs::write_doc_to;

pub fn snapshot(args: SnapshotArgs) -> Result<i32> {
    let engine = named_engine(&args.engine).map_err(anyhow::Error::msg)?;
    let (_, reading) = match checked_reading(&args.url, engine) {
        Ok(x) => x,
        Err(status) => return Ok(status),
    };
    write_doc_to(&args.out, &reading.snapshot_doc())
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!(
        "{} samples, scrape {:.3}s -> {}",
        reading.metrics.samples.len(),
        reading.latency_s,
        args.out.display()
    );
    Ok(0)
}
