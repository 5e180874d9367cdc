//! `snapshot URL -o FILE`: one reading of an engine's metrics, written
//! as a snapshot document; with `--prometheus`, one per replica (`replicas.rs`).

use anyhow::{Context, Result};

use super::checked_reading;
use crate::cli::{named_engine, SnapshotArgs};
use crate::docs::write_doc_to;

pub fn snapshot(args: SnapshotArgs) -> Result<i32> {
    let engine = named_engine(&args.engine).map_err(anyhow::Error::msg)?;
    if let Some((url, selector)) = args.source.source().map_err(anyhow::Error::msg)? {
        return super::replicas::snapshot(&url, selector, engine, &args.out);
    }
    let url = args.url.as_deref().unwrap_or_default();
    let (_, reading) = match checked_reading(url, engine) {
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
