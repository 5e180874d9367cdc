//! Which engine each input comes from: refusing inputs of another engine than the one the
//! user named, and the engine each kind of input, and the report, is read as.

use super::parsed::Parsed;
use super::AnalyzeError;
use crate::engine::{engine_from_log, Engine};
use crate::inputs::{NamedEngine, RunInput};
use crate::snapshot::snapshots_engine;

/// Refusal text: which flag named which engine, and which engine the input came from.
pub fn mismatch(named: NamedEngine, what: &str, found: Engine) -> String {
    format!(
        "{} names {}, but {} wrote {what}: refusing to mix engines",
        match named.by {
            "--engine" => format!("--engine {}", named.engine.key()),
            other => format!("{other}={}", named.engine.key()),
        },
        named.engine.display(),
        found.display()
    )
}

/// Refuses an input written by another engine than the one named.
pub(super) fn refuse_mixed(
    named: Option<NamedEngine>,
    p: &Parsed,
    input: &RunInput,
) -> Result<(), AnalyzeError> {
    let Some(named) = named else {
        return Ok(());
    };
    let refuse = |what: &str, found: Engine| -> Result<(), AnalyzeError> {
        if found == named.engine {
            Ok(())
        } else {
            Err(AnalyzeError::EngineMismatch(mismatch(named, what, found)))
        }
    };
    if let Some(found) = snapshots_engine(&p.snapshots()) {
        refuse("the snapshots' metrics", found)?;
    }
    if let Some(Ok(s)) = &p.series {
        if let Some(found) = s.engine_named {
            let name = input
                .series
                .as_ref()
                .map_or("the series", |f| f.name.as_str());
            refuse(name, found)?;
        }
    }
    if let (Some(Ok(s)), Some(f)) = (&p.scrape, &input.aiperf_server) {
        if let Some(found) = s.engine {
            refuse(&f.name, found)?;
        }
    }
    for (name, text) in &p.log_texts {
        if let Some(found) = engine_from_log(text) {
            refuse(name, found)?;
        }
    }
    Ok(())
}

/// The engine of each kind of input, and of the report.
pub(super) struct Engines {
    /// The snapshots' metric names say it.
    pub snapshots_named: Option<Engine>,
    /// The boot log says it.
    pub log: Option<Engine>,
    /// The report's: the snapshots', the series', the log's, the scrape's, else the one
    /// named.
    pub report: Option<Engine>,
}

impl Engines {
    pub fn find(p: &Parsed, log: Option<Engine>, named: Option<Engine>) -> Engines {
        let snapshots_named = snapshots_engine(&p.snapshots());
        let series = match &p.series {
            Some(Ok(s)) => s.engine_named,
            _ => None,
        };
        Engines {
            snapshots_named,
            log,
            report: snapshots_named
                .or(series)
                .or(log)
                .or(p.scrape_engine())
                .or(named),
        }
    }

    /// The engine the snapshots are read as (vLLM when none names it).
    pub fn snapshots(&self) -> Engine {
        self.snapshots_named.unwrap_or(Engine::Vllm)
    }
}
