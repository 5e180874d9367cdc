//! vLLM's boot-log lines (bootlog.md §2.3): one function per field's value rule. Each
//! returns `None` when the rule does not match or its text does not convert.

use super::fields::Val;
use super::pat::{
    after_each, each_until, grouped_to_i64, to_f64, to_i64, word_ending_at, Ahead, Cur, Step,
};
use super::pylit;
use crate::json::Json;

/// `Initializing a V1 LLM engine (vX)`: X up to the next `)`, without whitespace.
pub(crate) fn version(line: &str) -> Option<Val> {
    let (mut paren, mut space) = (Ahead::new(), Ahead::new());
    each_until(line, "Initializing a V1 LLM engine (v", |c| {
        let Some(end) = paren.at(line, c.i, |r| r.find(')')) else {
            return Step::Stop;
        };
        let space = space.at(line, c.i, |r| r.find(char::is_whitespace));
        if end == c.i || space.is_some_and(|w| w < end) {
            Step::Next
        } else {
            Step::Hit(Val::Str(line[c.i..end].to_string()))
        }
    })
}

/// The text from the `{` right after `lead` to a `}` ending the line, when there is one.
pub(crate) fn dict_to_end<'a>(line: &'a str, lead: &str) -> Option<&'a str> {
    let end = line.trim_end();
    if !end.ends_with('}') {
        return None;
    }
    let (i, m) = line
        .match_indices(lead)
        .find(|&(i, m)| line[i + m.len()..].starts_with('{') && i + m.len() < end.len())?;
    Some(&end[i + m.len()..])
}

/// A dict literal read with the Python literal reader.
pub(crate) fn dict(text: &str) -> Option<Val> {
    match pylit::parse(text)? {
        d @ Json::Obj(_) => Some(Val::Dict(d)),
        _ => None,
    }
}

/// `non-default args: {…}` reaching the end of the line.
pub(crate) fn non_default_args(line: &str) -> Option<Val> {
    dict(dict_to_end(line, "non-default args: ")?)
}

/// `Using NAME attention backend out of potential backends: [LIST]`.
pub(crate) fn backend_with_candidates(line: &str) -> Option<Val> {
    const MID: &str = " attention backend out of potential backends: [";
    each_until(line, MID, |c| {
        let i = c.i - MID.len();
        let name = word_ending_at(line, i);
        if name.is_empty() || !line[..i - name.len()].ends_with("Using ") {
            return Step::Next;
        }
        let rest = c.rest();
        let Some(close) = rest.find(']') else {
            return Step::Stop;
        };
        let list = &rest[..close];
        let candidates = list
            .split(',')
            .map(|s| s.trim_matches(|c| c == ' ' || c == '\'' || c == '"'))
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        Step::Hit(Val::Backend {
            name: name.to_string(),
            candidates: Some(candidates),
        })
    })
}

/// The second selection form. Outer `None`: the anchor (`Using AttentionBackendEnum.` +
/// word + ` backend.`) is absent; inner `None`: present but not at the end of the line.
pub(crate) fn enum_backend(line: &str) -> Option<Option<Val>> {
    let mut anchored = false;
    for (i, m) in line.match_indices("Using AttentionBackendEnum.") {
        let mut c = Cur {
            s: line,
            i: i + m.len(),
        };
        let Some(name) = c.word() else { continue };
        if !c.lit(" backend.") {
            continue;
        }
        anchored = true;
        if c.at_end() {
            return Some(Some(Val::Backend {
                name: name.to_string(),
                candidates: None,
            }));
        }
    }
    anchored.then_some(None)
}

/// `Setting attention block size to N tokens`.
pub(crate) fn block_size(line: &str) -> Option<Val> {
    let n = after_each(line, "Setting attention block size to ", |mut c| {
        let n = c.count()?;
        c.lit(" tokens").then_some(n)
    })?;
    to_i64(n).map(Val::Int)
}

/// `Padding mamba page size by X%`.
pub(crate) fn mamba_padding(line: &str) -> Option<Val> {
    let x = after_each(line, "Padding mamba page size by ", |mut c| {
        let x = c.decimal()?;
        c.lit("%").then_some(x)
    })?;
    to_f64(x).map(Val::Float)
}

/// `GPU KV cache size: T tokens, Maximum concurrency for L tokens per request: Xx`.
pub(crate) fn kv_pool(line: &str) -> Option<Val> {
    let (t, l, x) = after_each(line, "GPU KV cache size: ", |mut c| {
        let t = c.grouped()?;
        if !c.lit(" tokens, Maximum concurrency for ") {
            return None;
        }
        let l = c.grouped()?;
        if !c.lit(" tokens per request: ") {
            return None;
        }
        let x = c.decimal()?;
        c.lit("x").then_some((t, l, x))
    })?;
    Some(Val::KvPool {
        tokens: grouped_to_i64(t)?,
        request_len: grouped_to_i64(l)?,
        concurrency: to_f64(x)?,
    })
}

/// `LEAD X SUFFIX`, X a decimal.
pub(crate) fn decimal_between(line: &str, lead: &str, suffix: &str) -> Option<Val> {
    let x = after_each(line, lead, |mut c| {
        let x = c.decimal()?;
        c.lit(suffix).then_some(x)
    })?;
    to_f64(x).map(Val::Float)
}

/// `Available KV cache memory: X GiB`.
pub(crate) fn available_kv(line: &str) -> Option<Val> {
    decimal_between(line, "Available KV cache memory: ", " GiB")
}

/// `Model loading took G GiB memory and S seconds`.
pub(crate) fn model_load(line: &str) -> Option<Val> {
    let (g, s) = after_each(line, "Model loading took ", |mut c| {
        let g = c.decimal()?;
        if !c.lit(" GiB memory and ") {
            return None;
        }
        let s = c.decimal()?;
        c.lit(" seconds").then_some((g, s))
    })?;
    Some(Val::Pair(to_f64(g)?, to_f64(s)?))
}

/// `Estimated CUDA graph memory: X GiB total`.
pub(crate) fn cudagraph_estimated(line: &str) -> Option<Val> {
    decimal_between(line, "Estimated CUDA graph memory: ", " GiB total")
}

/// `CUDA graph pool memory: X GiB (actual)`.
pub(crate) fn cudagraph_actual(line: &str) -> Option<Val> {
    decimal_between(line, "CUDA graph pool memory: ", " GiB (actual)")
}

/// `Actual usage is C GiB for consumed memory (weights + non-torch), P GiB for peak activation`.
pub(crate) fn memory_split(line: &str) -> Option<Val> {
    let (c_, p) = after_each(line, "Actual usage is ", |mut c| {
        let consumed = c.decimal()?;
        if !c.lit(" GiB for consumed memory (weights + non-torch), ") {
            return None;
        }
        let peak = c.decimal()?;
        c.lit(" GiB for peak activation")
            .then_some((consumed, peak))
    })?;
    Some(Val::Pair(to_f64(c_)?, to_f64(p)?))
}

/// `torch.compile took X s in total`.
pub(crate) fn compile_seconds(line: &str) -> Option<Val> {
    decimal_between(line, "torch.compile took ", " s in total")
}

/// `FROM is not supported with spec-decode … setting cudagraph_mode=TO`.
pub(crate) fn cudagraph_downgrade(line: &str) -> Option<Val> {
    const MID: &str = " is not supported with spec-decode";
    each_until(line, MID, |c| {
        let from = word_ending_at(line, c.i - MID.len());
        if from.is_empty() {
            return Step::Next;
        }
        match after_each(c.rest(), "setting cudagraph_mode=", |mut c| c.word()) {
            Some(to) => Step::Hit(Val::Downgrade(from.to_string(), to.to_string())),
            None => Step::Stop,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "(EngineCore pid=164098) INFO 09-07 23:15:06 [x.py:1] ";

    #[test]
    fn version_line() {
        let l = format!("{P}Initializing a V1 LLM engine (v0.28.0) with config: model='/m'");
        assert_eq!(version(&l), Some(Val::Str("0.28.0".into())));
        assert_eq!(version("Initializing a V1 LLM engine (v 1) x"), None);
        assert_eq!(version("Initializing a V1 LLM engine (v) x"), None);
        assert_eq!(version("Initializing a V1 LLM engine (v1"), None);
    }

    #[test]
    fn arguments_line() {
        let l = format!("{P}non-default args: {{'model': '/m', 'max_num_seqs': 32}}  ");
        let Some(Val::Dict(d)) = non_default_args(&l) else {
            panic!()
        };
        assert_eq!(d.get("max_num_seqs"), Some(&Json::Int(32)));
        assert_eq!(
            non_default_args("non-default args: {'model': '/m', 'x"),
            None
        );
        assert_eq!(non_default_args("non-default args: {'a': 1} tail"), None);
        assert_eq!(non_default_args("non-default args: {'a': f(1)}"), None);
        assert_eq!(non_default_args("non-default args: {1, 2}"), None);
    }

    #[test]
    fn backend_lines() {
        let l = format!(
            "{P}Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN', 'FLASHINFER']."
        );
        assert_eq!(
            backend_with_candidates(&l),
            Some(Val::Backend {
                name: "FLASH_ATTN".into(),
                candidates: Some(vec!["FLASH_ATTN".into(), "FLASHINFER".into()])
            })
        );
        assert_eq!(
            enum_backend(&format!(
                "{P}Using AttentionBackendEnum.TRITON_ATTN backend. "
            )),
            Some(Some(Val::Backend {
                name: "TRITON_ATTN".into(),
                candidates: None
            }))
        );
        assert_eq!(
            enum_backend("Using AttentionBackendEnum.FLASH_ATTN for MMEncoderAttention."),
            None
        );
        assert_eq!(
            enum_backend("Using backend AttentionBackendEnum.FLASH_ATTN for vit attention"),
            None
        );
        assert_eq!(
            enum_backend("Using AttentionBackendEnum.X backend. and more"),
            Some(None)
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kv_pool("GPU KV cache size: 31,554 tokens, Maximum concurrency for 16,384 tokens per request: 1.93x"),
            Some(Val::KvPool {
                tokens: 31554,
                request_len: 16384,
                concurrency: 1.93
            })
        );
        assert_eq!(kv_pool("GPU KV cache size: 31.5k tokens (1.93x)"), None);
        assert_eq!(
            kv_pool(
                "GPU KV cache size: , tokens, Maximum concurrency for 1 tokens per request: 1x"
            ),
            None
        );
        assert_eq!(
            block_size("Setting attention block size to 784 tokens to ensure"),
            Some(Val::Int(784))
        );
        assert_eq!(
            mamba_padding("Padding mamba page size by 0.13% to"),
            Some(Val::Float(0.13))
        );
        assert_eq!(mamba_padding("Padding mamba page size by 1.2.3% to"), None);
        assert_eq!(
            model_load("Model loading took 17.71 GiB memory and 75.250819 seconds"),
            Some(Val::Pair(17.71, 75.250819))
        );
        assert_eq!(
            memory_split("Actual usage is 17.95 GiB for consumed memory (weights + non-torch), 1.86 GiB for peak activation, and"),
            Some(Val::Pair(17.95, 1.86))
        );
        assert_eq!(
            cudagraph_actual("CUDA graph pool memory: 0.18 GiB (actual), 0.2"),
            Some(Val::Float(0.18))
        );
        assert_eq!(
            compile_seconds("torch.compile took 60.37 s in total"),
            Some(Val::Float(60.37))
        );
    }

    #[test]
    fn downgrade() {
        let l = "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend FlashInferBackend (support: AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE";
        assert_eq!(
            cudagraph_downgrade(l),
            Some(Val::Downgrade(
                "FULL_AND_PIECEWISE".into(),
                "PIECEWISE".into()
            ))
        );
        assert_eq!(
            cudagraph_downgrade("X is not supported with spec-decode"),
            None
        );
    }
}
