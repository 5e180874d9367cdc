//! T5: large KV blocks. Models that mix attention with Mamba layers force KV blocks of
//! hundreds of tokens to fit the Mamba state, so each request holds at least one such
//! block and far fewer requests fit than the pool's token count suggests.

use super::absent::Judged;
use super::scope::BootLogScope;
use crate::bootlog::BootFacts;
use crate::engine::Engine;
use crate::json::Json;
use crate::num::{shortest, thousands_int};
use crate::rules::verdict::{CheckResult, Status};
use crate::rules::Tripwire;

const T5: Tripwire = Tripwire::LargeKvBlocks;

/// One start's log.
pub fn boot_log(cx: &BootLogScope<'_>) -> Judged {
    Ok(t5(&cx.log.need()?.facts))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The block size the log shows against the one asked for.
pub fn t5(f: &BootFacts) -> CheckResult {
    let engine = f.engine.unwrap_or(Engine::Vllm).display();
    let requested = f
        .non_default_args
        .as_ref()
        .and_then(|a| a.get("block_size"))
        .cloned();
    let r = requested.clone().unwrap_or(Json::Int(16));
    let r_text = match &r {
        Json::Int(n) => n.to_string(),
        other => other.to_compact(),
    };
    let Some(b) = f.attention_block_size else {
        if let Some(p) = f.page_size {
            return CheckResult::new(
                T5,
                Status::Pass,
                format!(
                    "{engine} allocates the KV cache in pages of {}, as configured",
                    plural(p.max(0) as usize, "token", "tokens")
                ),
            )
            .with("page_size", p);
        }
        if !f.ready {
            return CheckResult::new(
                T5,
                Status::Unknown,
                "Can't tell the KV block size: the start did not get far enough to size its \
                 blocks (no block-size line before the log ends)",
            );
        }
        return CheckResult::new(
            T5,
            Status::Pass,
            format!("No block-size override in the log: KV blocks are {r_text} tokens"),
        )
        .with("block_size", r);
    };
    let same = r.as_f64().is_some_and(|x| x == b as f64) && !matches!(r, Json::Bool(_));
    let mut ev = vec![
        ("block_size".to_string(), Json::Int(b)),
        (
            "requested".to_string(),
            requested.clone().unwrap_or(Json::Null),
        ),
        (
            "mamba_page_padding_pct".to_string(),
            f.mamba_page_padding_pct.map_or(Json::Null, Json::Float),
        ),
    ];
    let pool_blocks = match f.kv_pool_tokens {
        Some(t) if t != 0 && b != 0 => Some(t as f64 / b as f64),
        _ => None,
    };
    if let Some(pb) = pool_blocks {
        ev.push(("pool_blocks".to_string(), Json::Float(pb)));
    }
    let msg = if same {
        format!("KV blocks are {b} tokens, as requested")
    } else {
        let asked = if requested.is_some() {
            format!("{r_text} were requested")
        } else {
            format!("the default is {r_text}")
        };
        let pad = f.mamba_page_padding_pct.map_or_else(String::new, |p| {
            format!(", Mamba pages padded by {}%", shortest(p))
        });
        let pool = match (pool_blocks, f.kv_pool_tokens) {
            (Some(pb), Some(t)) => format!(
                "; the {}-token pool holds only {pb:.1} such blocks",
                thousands_int(t)
            ),
            _ => String::new(),
        };
        format!(
            "KV blocks were forced to {b} tokens ({asked}) to fit the Mamba state{pad}: each \
             request's KV cache is allocated in {b}-token units, so even a short request holds \
             {b} tokens{pool}"
        )
    };
    let mut res = CheckResult::new(T5, if same { Status::Pass } else { Status::Warn }, msg);
    res.evidence = ev;
    res
}
