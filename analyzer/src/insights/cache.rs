//! The cache arithmetic: does the KV pool hold the load at full length?

use crate::bench::BenchResult;
use crate::bootlog::BootFacts;
use crate::engine::Engine;

use super::summary::Summary;

/// One request's cache at full length against the pool, for `n` requests kept open.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheMath {
    /// Tokens per request (prompt + output), possibly fractional.
    pub per_request: f64,
    /// Requests kept open (the requested concurrency).
    pub n: i64,
    /// Block size in tokens, when known.
    pub block: Option<i64>,
    /// One request at full length in whole blocks: ceil(P / b) · b, or P.
    pub at_full: f64,
    /// n · A.
    pub need: f64,
    /// The KV pool in tokens (as exported, not reduced by the null block).
    pub pool: i64,
    /// floor(pool / A).
    pub fit: i64,
}

/// The block size: the boot log's page size, else its attention block size, else 16 on
/// vLLM, else none.
pub fn block_size(engine: Engine, facts: Option<&BootFacts>) -> Option<i64> {
    facts
        .and_then(|f| f.page_size.or(f.attention_block_size))
        .or((engine == Engine::Vllm).then_some(16))
        .filter(|&b| b > 0)
}

/// Tokens per request: from the server's counters, else from the load tool's result.
pub fn tokens_per_request(summary: &Summary, bench: Option<&BenchResult>) -> Option<f64> {
    if let (Some(p), Some(o), Some(d)) =
        (summary.prompt_tokens, summary.output_tokens, summary.done)
    {
        if d > 0.0 {
            return Some((p + o) / d);
        }
    }
    let b = bench?;
    match (b.total_input_tokens, b.total_output_tokens, b.completed) {
        (Some(i), Some(o), Some(c)) if c > 0 => Some((i + o) as f64 / c as f64),
        _ => None,
    }
}

/// The arithmetic, or none when pool, P or n is missing or the model is hybrid (a
/// running-cap reason such as SGLang's state slots, or an attention block above 64).
pub fn compute(
    engine: Engine,
    facts: Option<&BootFacts>,
    summary: &Summary,
    bench: Option<&BenchResult>,
    requested: Option<i64>,
) -> Option<CacheMath> {
    let f = facts?;
    let pool = f.kv_pool_tokens?;
    let n = requested?;
    let per_request = tokens_per_request(summary, bench)?;
    let hybrid = f.running_cap_reason.is_some() || f.attention_block_size.is_some_and(|b| b > 64);
    if hybrid || pool <= 0 || per_request <= 0.0 {
        return None;
    }
    let block = block_size(engine, facts);
    let at_full = match block {
        Some(b) => (per_request / b as f64).ceil() * b as f64,
        None => per_request,
    };
    Some(CacheMath {
        per_request,
        n,
        block,
        at_full,
        need: n as f64 * at_full,
        pool,
        fit: (pool as f64 / at_full).floor() as i64,
    })
}

impl CacheMath {
    /// "32 requests of about 1,093 tokens".
    pub fn load_text(&self) -> String {
        let about = if self.per_request.fract() != 0.0 {
            "about "
        } else {
            ""
        };
        format!(
            "{} requests of {about}{} tokens",
            self.n,
            crate::num::thousands(self.per_request)
        )
    }
}
