//! The rows of a comparison and each run's value in them, read from its Report: what ran,
//! the KV pool, the concurrency, the engine settings that differ (`settings.rs`),
//! evictions, throughput, requests, and every tripwire.

use serde::Serialize;

use super::{Cell, Run};
use crate::engine::Engine;
use crate::insights::cache::block_size;
use crate::num::{fixed, plural, thousands};
use crate::report::Report;
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;
use crate::rules::{
    t01_silent_preemption as t01, t10_integer_second_timer as t10, t14_null_block as t14,
};
use crate::text::base_name;

/// How a row's differences are judged and read out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// What ran (engine and version): shown, never judged, since comparing engines is
    /// often the point.
    Identity,
    /// A setting that makes the other rows not like for like when it differs (the model,
    /// the concurrency asked for, the block size).
    Setting,
    /// The KV pool: any change matters (T4, T11).
    Pool,
    /// A count where any change matters (most running at once, evictions, requests).
    Count,
    /// A rate: matters beyond [`super::RATE_TOLERANCE`].
    Rate,
    /// Shown for context, never judged: a figure that differs for reasons of its own
    /// (the pool in blocks and the block size across engines; the server's rate over the
    /// whole recording, idle time included).
    Context,
    /// A tripwire's status: any change matters.
    Status,
}

/// One row before it is judged.
pub(super) struct Spec {
    pub key: String,
    pub label: String,
    pub kind: Kind,
    pub cells: Vec<Cell>,
    /// The unit a reading names ("tokens", "output tokens/s"), when it names one.
    pub unit: &'static str,
}

fn spec(
    key: &str,
    label: &str,
    kind: Kind,
    unit: &'static str,
    runs: &[Run<'_>],
    cell: impl Fn(&Report) -> Cell,
) -> Spec {
    Spec {
        key: key.to_string(),
        label: label.to_string(),
        kind,
        cells: runs.iter().map(|r| cell(r.report)).collect(),
        unit,
    }
}

fn engine_of(r: &Report) -> Engine {
    r.facts
        .as_ref()
        .and_then(|f| f.engine)
        .or(r.engine)
        .unwrap_or(Engine::Vllm)
}

fn check(r: &Report, tripwire: Tripwire) -> Option<&CheckResult> {
    r.checks.iter().find(|c| c.tripwire == tripwire)
}

/// The rate T10 measured and the span it was measured over.
fn server_rate(r: &Report) -> Option<(f64, f64)> {
    let e = t10::rate(check(r, Tripwire::IntegerSecondTimer)?)?;
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
    Some((finite(e.rate_per_s)?, finite(e.span_s)?))
}

/// Every row, in the order the table shows them.
pub(super) fn specs(runs: &[Run<'_>]) -> Vec<Spec> {
    let mut out = setup_rows(runs);
    out.extend(super::settings::rows(runs));
    out.extend(load_rows(runs));
    out.extend(tripwire_rows(runs));
    out
}

/// What was run: the engine, the model, the pool, the concurrency asked for.
fn setup_rows(runs: &[Run<'_>]) -> Vec<Spec> {
    vec![
        spec("engine", "Engine", Kind::Identity, "", runs, |r| {
            let name = engine_of(r).display();
            match r.facts.as_ref().and_then(|f| f.version()) {
                Some(v) => Cell::text(format!("{name} {v}")),
                None if r.engine.is_some() || r.facts.is_some() => Cell::text(name),
                None => Cell::absent(),
            }
        }),
        spec("model", "Model", Kind::Setting, "", runs, |r| {
            r.facts
                .as_ref()
                .and_then(|f| f.model())
                .map_or_else(Cell::absent, |m| Cell::text(base_name(m)))
        }),
        spec(
            "kv_pool_tokens",
            "KV pool",
            Kind::Pool,
            "tokens",
            runs,
            |r| {
                r.facts
                    .as_ref()
                    .and_then(|f| f.kv_pool_tokens)
                    .map_or_else(Cell::absent, |p| {
                        Cell::number(p as f64, format!("{} tokens", thousands(p as f64)))
                    })
            },
        ),
        spec(
            "kv_pool_blocks",
            "KV pool in blocks",
            Kind::Context,
            "blocks",
            runs,
            |r| kv_blocks(r).map_or_else(Cell::absent, |b| Cell::number(b, thousands(b))),
        ),
        spec(
            "block_size",
            "Block size",
            Kind::Context,
            "tokens",
            runs,
            |r| {
                if r.facts.is_none() {
                    return Cell::absent();
                }
                block_size(engine_of(r), r.facts.as_ref()).map_or_else(Cell::absent, |b| {
                    Cell::number(b as f64, plural(b as f64, "token"))
                })
            },
        ),
        spec(
            "requested",
            "Concurrency asked for",
            Kind::Setting,
            "",
            runs,
            |r| {
                r.requested
                    .map_or_else(Cell::absent, |n| Cell::number(n as f64, n.to_string()))
            },
        ),
    ]
}

/// What the load did: how many ran at once, evictions, throughput, requests.
fn load_rows(runs: &[Run<'_>]) -> Vec<Spec> {
    vec![
        spec(
            "peak_running",
            "Most running at once (T8)",
            Kind::Count,
            "",
            runs,
            |r| {
                r.summary
                    .peak_running
                    .map_or_else(Cell::absent, |n| Cell::number(n as f64, n.to_string()))
            },
        ),
        spec(
            "evictions",
            "Preempted, retracted or paused (T1)",
            Kind::Count,
            "",
            runs,
            evictions,
        ),
        spec(
            "output_tokens_per_s_client",
            "Output tokens/s, load tool",
            Kind::Rate,
            "output tokens/s",
            runs,
            |r| {
                r.bench
                    .as_ref()
                    .and_then(|b| b.output_throughput)
                    .filter(|v| v.is_finite())
                    .map_or_else(Cell::absent, |v| Cell::number(v, thousands(v)))
            },
        ),
        spec(
            "output_tokens_per_s_server",
            "Output tokens/s, server counter",
            Kind::Context,
            "output tokens/s",
            runs,
            |r| match server_rate(r) {
                Some((rate, span)) => Cell::number(
                    rate,
                    format!("{} over {} s", fixed(rate, 1), fixed(span, 1)),
                ),
                _ => Cell::absent(),
            },
        ),
        spec(
            "finished",
            "Requests finished",
            Kind::Count,
            "requests",
            runs,
            |r| {
                r.summary
                    .done
                    .or_else(|| r.bench.as_ref().and_then(|b| b.completed).map(|n| n as f64))
                    .map_or_else(Cell::absent, |n| Cell::number(n, thousands(n)))
            },
        ),
        spec(
            "failed",
            "Requests failed",
            Kind::Count,
            "requests",
            runs,
            |r| match r.bench.as_ref().and_then(|b| b.failed) {
                Some(n) => Cell::number(n as f64, thousands(n as f64)),
                None => r.summary.errors().map_or_else(Cell::absent, |n| {
                    Cell::number(n, format!("{} (server)", thousands(n)))
                }),
            },
        ),
        spec(
            "client_server",
            "Client and server counts agree (T15)",
            Kind::Status,
            "",
            runs,
            |r| match check(r, Tripwire::ClientServerMismatch) {
                None => Cell::absent(),
                Some(c) => Cell {
                    text: match c.status {
                        Status::Pass => "agree".to_string(),
                        Status::Fail | Status::Warn => "disagree".to_string(),
                        other => other.report_label().to_lowercase(),
                    },
                    value: None,
                    status: Some(c.status),
                },
            },
        ),
    ]
}

/// A row per tripwire any of the runs has.
fn tripwire_rows(runs: &[Run<'_>]) -> Vec<Spec> {
    let mut out = Vec::new();
    // The tripwires every single-server run can have (T16 on are newer and optional).
    for t in Tripwire::ALL.into_iter().filter(|t| t.number() <= 15) {
        if runs.iter().any(|r| check(r.report, t).is_some()) {
            let label = format!("{} {}", t.id(), t.slug());
            out.push(spec(
                &t.id(),
                &label,
                Kind::Status,
                "",
                runs,
                |r| match check(r, t) {
                    None => Cell::absent(),
                    Some(c) => Cell {
                        text: c.status.report_label().to_string(),
                        value: None,
                        status: Some(c.status),
                    },
                },
            ));
        }
    }
    out
}

/// The pool in blocks: the count the server exported (T14), else the pool over the
/// block size.
fn kv_blocks(r: &Report) -> Option<f64> {
    if let Some(n) = check(r, Tripwire::NullBlock).and_then(t14::reported_blocks) {
        return Some(n as f64);
    }
    let pool = r.facts.as_ref()?.kv_pool_tokens?;
    let block = block_size(engine_of(r), r.facts.as_ref())?;
    Some((pool / block) as f64)
}

/// T1's count in the engine's own word, and where it shows: vLLM's preemptions leave no
/// log line (T1 fails on them); TensorRT-LLM's pauses are counted from its log.
fn evictions(r: &Report) -> Cell {
    let Some(c) = check(r, Tripwire::SilentPreemption) else {
        return Cell::absent();
    };
    let engine = c
        .finding::<t01::Evictions>()
        .and_then(|e| e.engine)
        .and_then(Engine::from_key)
        .unwrap_or_else(|| engine_of(r));
    let Some(n) = t01::preemptions(c) else {
        return Cell {
            status: Some(c.status),
            ..Cell::absent()
        };
    };
    let mut text = plural(n, engine.eviction_word());
    if !engine.evictions_counted() {
        text.push_str(" in its log");
    } else if c.status == Status::Fail {
        text.push_str(", no log line");
    }
    Cell {
        text,
        value: Some(n),
        status: Some(c.status),
    }
}
