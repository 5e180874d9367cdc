//! The fixed texts the boot-log rules look for, found in one pass over a line.
//!
//! A log can be hundreds of megabytes, and each line must be tested against some fifty
//! anchors. Calling `str::contains` fifty times per line is too slow, so every line is
//! scanned once: each 4-byte window is hashed into a small bitmap holding the first four
//! bytes of every anchor, and only a hit is checked against the anchors themselves. The
//! windows are independent of each other, so the loop runs at memory speed.

use std::sync::OnceLock;

macro_rules! anchors {
    ($($name:ident => $text:literal,)*) => {
        /// One anchor text; its discriminant is its bit in a [`Mask`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub(crate) enum A { $($name,)* }
        /// The anchor texts, indexed by [`A`].
        pub(crate) const TEXTS: &[&str] = &[$($text,)*];
    };
}

anchors! {
    // vLLM fields (§2.3)
    VllmInit => "Initializing a V1 LLM engine",
    NonDefault => "non-default args:",
    Potential => "attention backend out of potential backends",
    EnumBackend => "Using AttentionBackendEnum.",
    BlockSize => "Setting attention block size to",
    MambaPad => "Padding mamba page size by",
    KvSize => "GPU KV cache size:",
    AvailKv => "Available KV cache memory:",
    ModelLoading => "Model loading took",
    CgEstimated => "Estimated CUDA graph memory:",
    CgPool => "CUDA graph pool memory:",
    Consumed => "GiB for consumed memory",
    Compile => "torch.compile took",
    SpecDecode => "is not supported with spec-decode",
    // SGLang fields (§2.4)
    ServerArgs => "server_args={",
    SgKv => "KV Cache is allocated.",
    SgLoad => "Load weight end.",
    SgGraph => "CUDA graph end.",
    SgCapped => "max_running_requests is capped to",
    SgLimits => "max_total_num_tokens=",
    SgDefault => "Attention backend not specified.",
    // TensorRT-LLM fields (§2.5)
    TrtVersion => "TensorRT LLM version:",
    TrtPool => "for max tokens in paged KV cache",
    TrtPage => "tokens per block=",
    TrtLimits => "max_num_requests=",
    TrtLoad => "after loading weights (inside torch)",
    LlmArgs => "LLM Args:",
    // Markers (§2.6, §2.7)
    Drafter => "Loading drafter model",
    Eager => "Cudagraph is disabled under eager mode",
    Compiling => "Compiling a graph for compile range",
    AotLoad => "Directly load AOT compilation",
    Ready => "Application startup complete",
    TrtInfo => "[TRT-LLM] [I]",
    Post => "\"POST /",
    RequestId => "request ID ",
    // Failure classifier (§5)
    Shutdown => "[shutdown]",
    QueueFull => "Request queue full - rejecting request",
    Headers => "CUDA compiler and CUDA toolkit headers are incompatible",
    Ptxas => "ptxas",
    Nvcc => "nvcc",
    LdCannot => "ld: cannot find ",
    NinjaFailed => "Ninja build failed",
    NinjaStopped => "ninja: build stopped",
    Oom => "OutOfMemoryError",
    CudaOom => "CUDA out of memory",
    NoCacheMem => "No available memory for the cache blocks",
    KvTooSmall => "KV cache is needed, which is larger than the available KV cache memory",
    Accelerator => "AcceleratorError: ",
    CudaError => "CUDA error: ",
    EngineDead => "EngineDeadError",
    FatalEngine => "EngineCore encountered a fatal error",
    Error => "Error",
    Exception => "Exception",
}

/// The set of anchors found in one line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Mask(pub u128);

impl Mask {
    pub(crate) fn has(self, a: A) -> bool {
        self.0 & (1u128 << a as u32) != 0
    }
    #[cfg(test)]
    pub(crate) fn any(self) -> bool {
        self.0 != 0
    }
}

struct Scanner {
    /// One bit per hash of a 4-byte window that starts some anchor.
    bits: Box<[u64; 1024]>,
    /// (first four bytes, anchor index) for every anchor.
    heads: Vec<(u32, u8)>,
}

fn head(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn slot(g: u32) -> usize {
    (g.wrapping_mul(0x9E37_79B1) >> 16) as usize
}

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        let mut heads = Vec::with_capacity(TEXTS.len());
        for (i, t) in TEXTS.iter().enumerate() {
            debug_assert!(t.len() >= 4, "anchors need four bytes: {t}");
            let g = head(t.as_bytes());
            let h = slot(g);
            bits[h >> 6] |= 1 << (h & 63);
            heads.push((g, i as u8));
        }
        Scanner { bits, heads }
    })
}

/// Every anchor that occurs in `hay`.
pub(crate) fn scan(hay: &str) -> Mask {
    const { assert!(TEXTS.len() <= 128) };
    let s = scanner();
    let b = hay.as_bytes();
    let mut m = 0u128;
    for (i, w) in b.windows(4).enumerate() {
        let g = head(w);
        let h = slot(g);
        if s.bits[h >> 6] & (1 << (h & 63)) != 0 {
            for &(hg, id) in &s.heads {
                if hg == g && b[i..].starts_with(TEXTS[id as usize].as_bytes()) {
                    m |= 1u128 << id;
                }
            }
        }
    }
    Mask(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_anchor_anywhere() {
        for (i, t) in TEXTS.iter().enumerate() {
            let line = format!("xx {t} yy");
            let m = scan(&line);
            assert!(m.0 & (1u128 << i) != 0, "{t}");
            assert!(scan(t).0 & (1u128 << i) != 0, "{t}");
        }
    }

    #[test]
    fn nothing_in_plain_text() {
        assert!(!scan("INFO:     127.0.0.1:1 - \"GET /metrics HTTP/1.1\" 200 OK").any());
        assert!(!scan("").any());
        assert!(!scan("abc").any());
        let m = scan("RuntimeError: boom");
        assert!(m.has(A::Error));
        assert!(!m.has(A::Exception));
    }

    #[test]
    fn partial_anchor_is_not_found() {
        assert!(!scan("Application startup compl").has(A::Ready));
        assert!(scan("..Application startup complete.").has(A::Ready));
    }
}
