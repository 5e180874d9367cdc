//! T5: large KV blocks. Models that mix attention with Mamba layers force KV blocks of
//! hundreds of tokens to fit the Mamba state, so each request holds at least one such
//! block and far fewer requests fit than the pool's token count suggests.

use serde::Serialize;

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
            .found(Pages { page_size: p });
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
        .found(Unforced { block_size: r });
    };
    let same = r.as_f64().is_some_and(|x| x == b as f64) && !matches!(r, Json::Bool(_));
    let pool_blocks = match f.kv_pool_tokens {
        Some(t) if t != 0 && b != 0 => Some(t as f64 / b as f64),
        _ => None,
    };
    let ev = Forced {
        block_size: b,
        requested: requested.clone(),
        mamba_page_padding_pct: f.mamba_page_padding_pct,
        pool_blocks,
    };
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
    CheckResult::new(T5, if same { Status::Pass } else { Status::Warn }, msg).found(ev)
}

/// The KV cache's page size, as the engine configured it (SGLang, TensorRT-LLM).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pages {
    pub page_size: i64,
}

/// No block-size line in the log: the block size asked for, or the default.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unforced {
    pub block_size: Json,
}

/// The block size the log shows, against the one asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Forced {
    pub block_size: i64,
    /// What `--block-size` asked for (null when not set).
    pub requested: Option<Json>,
    pub mamba_page_padding_pct: Option<f64>,
    /// How many such blocks the pool holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_blocks: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootlog::{BootLog, Classification};
    use crate::docs::BOOT_LOG;
    use crate::input::InputError;
    use crate::json::obj;
    use crate::rules::absent::{settle, CantTell, Input};
    use crate::rules::testing::said;

    fn judged(facts: BootFacts) -> CheckResult {
        let log = BootLog {
            label: BOOT_LOG.into(),
            facts,
            classification: Classification::default(),
        };
        boot_log(&BootLogScope {
            log: Input::Present(&log),
            with_unparsed: false,
            server_died: false,
        })
        .expect("T5 judges every log it is given")
    }

    /// A log that shows blocks of `shown` tokens, `asked` given as `--block-size`.
    fn blocks(shown: i64, asked: Option<i64>) -> BootFacts {
        BootFacts {
            attention_block_size: Some(shown),
            non_default_args: asked.map(|a| obj([("block_size", Json::Int(a))])),
            ready: true,
            ..BootFacts::default()
        }
    }

    #[test]
    fn blocks_of_the_size_asked_for_pass() {
        let r = judged(blocks(32, Some(32)));
        assert_eq!(
            said(&r),
            (Status::Pass, "KV blocks are 32 tokens, as requested")
        );
        assert_eq!(
            r.finding::<Forced>(),
            Some(&Forced {
                block_size: 32,
                requested: Some(Json::Int(32)),
                mamba_page_padding_pct: None,
                pool_blocks: None,
            })
        );
        // No block-size line: the size asked for, else the default.
        let r = judged(BootFacts {
            ready: true,
            ..BootFacts::default()
        });
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "No block-size override in the log: KV blocks are 16 tokens"
            )
        );
        assert_eq!(
            r.finding::<Unforced>(),
            Some(&Unforced {
                block_size: Json::Int(16)
            })
        );
        let r = judged(BootFacts {
            engine: Some(Engine::Sglang),
            page_size: Some(64),
            ..BootFacts::default()
        });
        assert_eq!(
            said(&r),
            (
                Status::Pass,
                "SGLang allocates the KV cache in pages of 64 tokens, as configured"
            )
        );
        assert_eq!(r.finding::<Pages>(), Some(&Pages { page_size: 64 }));
    }

    #[test]
    fn blocks_forced_larger_for_the_mamba_state_warn() {
        let r = judged(BootFacts {
            mamba_page_padding_pct: Some(1.5),
            kv_pool_tokens: Some(52_800),
            ..blocks(528, None)
        });
        assert_eq!(
            said(&r),
            (
                Status::Warn,
                "KV blocks were forced to 528 tokens (the default is 16) to fit the Mamba \
                 state, Mamba pages padded by 1.5%: each request's KV cache is allocated in \
                 528-token units, so even a short request holds 528 tokens; the 52,800-token \
                 pool holds only 100.0 such blocks"
            )
        );
        let e = r.finding::<Forced>().expect("T5's finding");
        assert_eq!(
            (e.block_size, &e.requested, e.pool_blocks),
            (528, &None, Some(100.0))
        );
        // Not asked for is written as null; the pool's blocks only when known.
        assert_eq!(r.evidence_value("requested"), Some(Json::Null));
        let r = judged(blocks(528, Some(16)));
        assert!(r.message.contains("(16 were requested)"), "{}", r.message);
        assert_eq!(r.finding::<Forced>().unwrap().pool_blocks, None);
        assert_eq!(r.evidence_value("pool_blocks"), None);
    }

    #[test]
    fn a_start_that_never_sized_its_blocks_cannot_tell() {
        let r = judged(BootFacts::default());
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("Can't tell the KV block size"),
            "{}",
            r.message
        );
        assert!(r.evidence().is_empty());
    }

    #[test]
    fn an_absent_log_is_said_by_the_one_conversion() {
        let cx = |log| BootLogScope {
            log,
            with_unparsed: false,
            server_died: false,
        };
        assert_eq!(settle(T5, boot_log(&cx(Input::NotGiven))), None);
        let bad = InputError::new(BOOT_LOG, None, "not UTF-8");
        let r = settle(T5, boot_log(&cx(Input::Unusable(&bad)))).unwrap();
        assert_eq!(r.status, Status::Unknown);
        assert!(
            r.message.starts_with("unusable input: boot.log"),
            "{}",
            r.message
        );
        assert!(r
            .finding::<CantTell>()
            .is_some_and(|c| c.input_error.is_some()));
    }
}
