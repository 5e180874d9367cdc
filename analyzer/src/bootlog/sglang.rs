//! SGLang's boot-log lines (bootlog.md §2.4). Sizes are printed in `GB` and kept as printed.

use super::fields::Val;
use super::pat::{after_each, each_until, to_f64, to_i64, Step};
use super::vllm::{dict, dict_to_end};

/// `server_args={…}` reaching the end of the line.
pub(crate) fn server_args(line: &str) -> Option<Val> {
    dict(dict_to_end(line, "server_args=")?)
}

/// `KV Cache is allocated. dtype: D, #tokens: T, K size: K GB, V size: V GB`.
pub(crate) fn kv_pool(line: &str) -> Option<Val> {
    let (t, k, v) = after_each(line, "KV Cache is allocated. dtype: ", |mut c| {
        // D is a run of non-space characters; the comma after it ends that run too.
        let d = c.run1(|ch| !ch.is_whitespace())?;
        if d.len() < 2 || !d.ends_with(',') || !c.lit(" #tokens: ") {
            return None;
        }
        let t = c.count()?;
        if !c.lit(", K size: ") {
            return None;
        }
        let k = c.decimal()?;
        if !c.lit(" GB, V size: ") {
            return None;
        }
        let v = c.decimal()?;
        c.lit(" GB").then_some((t, k, v))
    })?;
    Some(Val::SgKv {
        tokens: to_i64(t)?,
        k: to_f64(k)?,
        v: to_f64(v)?,
    })
}

/// `Load weight end. elapsed=S s,` … `mem usage=G GB`.
pub(crate) fn model_load(line: &str) -> Option<Val> {
    let (s, g) = each_until(line, "Load weight end. elapsed=", |mut c| {
        let Some(s) = c.decimal().filter(|_| c.lit(" s,")) else {
            return Step::Next;
        };
        let g = after_each(c.rest(), "mem usage=", |mut c| {
            let g = c.decimal()?;
            c.lit(" GB").then_some(g)
        });
        g.map_or(Step::Stop, |g| Step::Hit((s, g)))
    })?;
    Some(Val::Pair(to_f64(g)?, to_f64(s)?))
}

/// `CUDA graph end. elapsed=E s, mem usage=G GB` → G.
pub(crate) fn cudagraph(line: &str) -> Option<Val> {
    let g = after_each(line, "CUDA graph end. elapsed=", |mut c| {
        c.decimal()?;
        if !c.lit(" s, mem usage=") {
            return None;
        }
        let g = c.decimal()?;
        c.lit(" GB").then_some(g)
    })?;
    to_f64(g).map(Val::Float)
}

/// `capped to N by the REASON (`: REASON the shortest text before ` (`, trimmed.
pub(crate) fn capped(line: &str) -> Option<Val> {
    let (n, reason) = each_until(line, "capped to ", |mut c| {
        let Some(n) = c.count().filter(|_| c.lit(" by the ")) else {
            return Step::Next;
        };
        let rest = c.rest();
        // At least one character of reason before ` (`.
        let Some(first) = rest.chars().next() else {
            return Step::Stop;
        };
        match rest[first.len_utf8()..].find(" (") {
            Some(k) => Step::Hit((n, rest[..k + first.len_utf8()].trim())),
            None => Step::Stop,
        }
    })?;
    Some(Val::CapReason(to_i64(n)?, reason.to_string()))
}

/// `max_total_num_tokens=T,` … `max_running_requests=N`.
pub(crate) fn limits(line: &str) -> Option<Val> {
    let (t, n) = each_until(line, "max_total_num_tokens=", |mut c| {
        let Some(t) = c.count().filter(|_| c.lit(",")) else {
            return Step::Next;
        };
        let n = after_each(c.rest(), "max_running_requests=", |mut c| c.count());
        n.map_or(Step::Stop, |n| Step::Hit((t, n)))
    })?;
    Some(Val::Limits(to_i64(t)?, to_i64(n)?))
}

/// `Use NAME backend by default`.
pub(crate) fn default_backend(line: &str) -> Option<Val> {
    after_each(line, "Use ", |mut c| {
        let name = c.word()?;
        c.lit(" backend by default")
            .then(|| Val::Str(name.to_string()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Json;

    const P: &str = "[2026-10-01 01:41:07] ";

    #[test]
    fn arguments() {
        let l = format!("{P}server_args={{'model_path': '/root/models/Qwen3-8B', 'page_size': 1}}");
        let Some(Val::Dict(d)) = server_args(&l) else {
            panic!()
        };
        assert_eq!(d.get("page_size"), Some(&Json::Int(1)));
        assert_eq!(server_args("server_args={'model_path': '/x'"), None);
    }

    #[test]
    fn pool_and_load() {
        let l = format!(
            "{P}KV Cache is allocated. dtype: torch.bfloat16, #tokens: 32096, K size: 2.20 GB, V size: 2.20 GB"
        );
        assert_eq!(
            kv_pool(&l),
            Some(Val::SgKv {
                tokens: 32096,
                k: 2.2,
                v: 2.2
            })
        );
        assert_eq!(
            kv_pool("KV Cache is allocated. dtype: , #tokens: 1, K size: 1 GB, V size: 1 GB"),
            None
        );
        let l = format!(
            "{P}Load weight end. elapsed=20.69 s, type=Qwen3ForCausalLM, avail mem=7.09 GB, mem usage=15.28 GB."
        );
        assert_eq!(model_load(&l), Some(Val::Pair(15.28, 20.69)));
        let l = format!("{P}Capture target prefill CUDA graph end. elapsed=23.90 s, mem usage=0.83 GB, avail mem=1.19 GB.");
        assert_eq!(cudagraph(&l), Some(Val::Float(0.83)));
    }

    #[test]
    fn caps() {
        let l = format!(
            "{P}max_running_requests is capped to 1 by the mamba state cache (max_mamba_cache_size=5, 5 state slots per request). To raise it"
        );
        assert_eq!(
            capped(&l),
            Some(Val::CapReason(1, "mamba state cache".into()))
        );
        assert_eq!(capped("max_running_requests is capped to 1 by the x"), None);
        let l = format!(
            "{P}max_total_num_tokens=32096, chunked_prefill_size=4096, max_prefill_tokens=16384, max_running_requests=32, context_len=16384"
        );
        assert_eq!(limits(&l), Some(Val::Limits(32096, 32)));
        assert_eq!(
            limits("max_total_num_tokens=1 max_running_requests=2"),
            None
        );
    }

    #[test]
    fn default_backend_line() {
        let l = format!("{P}Attention backend not specified. Use flashinfer backend by default.");
        assert_eq!(default_backend(&l), Some(Val::Str("flashinfer".into())));
        assert_eq!(
            default_backend("Attention backend not specified. Use it."),
            None
        );
    }
}
