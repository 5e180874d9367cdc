//! The fixed texts the boot-log rules look for, found in one pass over a line.
//!
//! A log can be hundreds of megabytes, and each line must be tested against some fifty
//! anchors. Calling `str::contains` fifty times per line is too slow, so every line is
//! scanned once: the 4-byte window at every even position is hashed into a small bitmap
//! holding two adjacent 4-byte windows of every anchor (one of them is at an even
//! position wherever the anchor occurs), and only a hit is checked against the anchors
//! themselves. The windows are independent of each other, so the loop runs at memory
//! speed.

use std::sync::OnceLock;

macro_rules! anchors {
    ($($name:ident => $text:literal @ $at:literal,)*) => {
        /// One anchor text; its discriminant is its bit in a [`Mask`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub(crate) enum A { $($name,)* }
        /// The anchor texts, indexed by [`A`].
        pub(crate) const TEXTS: &[&str] = &[$($text,)*];
        /// Where each anchor's two indexed windows start: a place with characters rarely
        /// seen together in logs, so that few windows need checking.
        const AT: &[usize] = &[$($at,)*];
    };
}

anchors! {
    // vLLM fields (§2.3)
    VllmInit => "Initializing a V1 LLM engine" @ 14,
    NonDefault => "non-default args:" @ 2,
    Potential => "attention backend out of potential backends" @ 23,
    EnumBackend => "Using AttentionBackendEnum." @ 21,
    BlockSize => "Setting attention block size to" @ 21,
    MambaPad => "Padding mamba page size by" @ 11,
    KvSize => "GPU KV cache size:" @ 10,
    AvailKv => "Available KV cache memory:" @ 7,
    ModelLoading => "Model loading took" @ 3,
    CgEstimated => "Estimated CUDA graph memory:" @ 0,
    CgPool => "CUDA graph pool memory:" @ 9,
    Consumed => "GiB for consumed memory" @ 1,
    Compile => "torch.compile took" @ 3,
    SpecDecode => "is not supported with spec-decode" @ 26,
    // SGLang fields (§2.4)
    ServerArgs => "server_args={" @ 8,
    SgKv => "KV Cache is allocated." @ 1,
    SgLoad => "Load weight end." @ 2,
    SgGraph => "CUDA graph end." @ 8,
    SgCapped => "max_running_requests is capped to" @ 23,
    SgLimits => "max_total_num_tokens=" @ 3,
    SgDefault => "Attention backend not specified." @ 19,
    // TensorRT-LLM fields (§2.5)
    TrtVersion => "TensorRT LLM version:" @ 6,
    TrtPool => "for max tokens in paged KV cache" @ 20,
    TrtPage => "tokens per block=" @ 12,
    TrtLimits => "max_num_requests=" @ 5,
    TrtLoad => "after loading weights (inside torch)" @ 21,
    LlmArgs => "LLM Args:" @ 2,
    // Markers (§2.6, §2.7)
    Drafter => "Loading drafter model" @ 7,
    Eager => "Cudagraph is disabled under eager mode" @ 0,
    Compiling => "Compiling a graph for compile range" @ 8,
    AotLoad => "Directly load AOT compilation" @ 13,
    Ready => "Application startup complete" @ 14,
    Post => "\"POST /" @ 0,
    RequestId => "request ID " @ 6,
    // Failure classifier (§5)
    Shutdown => "[shutdown]" @ 0,
    QueueFull => "Request queue full - rejecting request" @ 16,
    QueueOverflow => "QueueOverflowError" @ 4,
    Headers => "CUDA compiler and CUDA toolkit headers are incompatible" @ 26,
    Ptxas => "ptxas" @ 0,
    NvccFatal => "nvcc fatal" @ 3,
    LdCannot => "ld: cannot find " @ 1,
    NinjaFailed => "Ninja build failed" @ 0,
    NinjaStopped => "ninja: build stopped" @ 4,
    Oom => "OutOfMemoryError" @ 0,
    CudaOom => "CUDA out of memory" @ 2,
    NoCacheMem => "No available memory for the cache blocks" @ 0,
    KvTooSmall => "KV cache is needed, which is larger than the available KV cache memory" @ 15,
    Accelerator => "AcceleratorError: " @ 0,
    CudaError => "CUDA error: " @ 2,
    EngineDead => "EngineDeadError" @ 5,
    FatalEngine => "EngineCore encountered a fatal error" @ 23,
    // Rule 10's exception; rules 11–13: an exception name and its message.
    Assertion => "AssertionError" @ 0,
    ErrorText => "Error: " @ 2,
    ExceptionText => "Exception: " @ 2,
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
    /// One bit per hash of a 4-byte window that begins an anchor at offset 0 or 1.
    bits: Box<[u64; 1024]>,
    /// (window, offset in the anchor, anchor index), sorted by window.
    heads: Vec<(u32, u8, u8)>,
}

fn window(b: &[u8], i: usize) -> u32 {
    // One unaligned load.
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default())
}

fn slot(g: u32) -> usize {
    (g.wrapping_mul(0x9E37_79B1) >> 16) as usize
}

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        let mut heads = Vec::with_capacity(2 * TEXTS.len());
        for (i, t) in TEXTS.iter().enumerate() {
            for off in AT[i]..AT[i] + 2 {
                let g = window(t.as_bytes(), off);
                let h = slot(g);
                bits[h >> 6] |= 1 << (h & 63);
                heads.push((g, off as u8, i as u8));
            }
        }
        heads.sort_unstable();
        Scanner { bits, heads }
    })
}

impl Scanner {
    /// The anchors holding window `g` at byte `i` of `b`.
    #[cold]
    fn check(&self, b: &[u8], i: usize, g: u32) -> u128 {
        let from = self.heads.partition_point(|&(hg, _, _)| hg < g);
        let mut m = 0;
        for &(hg, off, id) in &self.heads[from..] {
            if hg != g {
                break;
            }
            let Some(start) = i.checked_sub(usize::from(off)) else {
                continue;
            };
            if b[start..].starts_with(TEXTS[usize::from(id)].as_bytes()) {
                m |= 1u128 << id;
            }
        }
        m
    }
}

/// Nonzero when some byte of `x` is zero.
fn zero_byte(x: u32) -> u32 {
    x.wrapping_sub(0x0101_0101) & !x & 0x8080_8080
}

/// Every anchor that occurs in `hay`, and whether it holds an ESC byte (checked in the
/// same pass, so that lines without escapes need no second look).
pub(crate) fn scan_esc(hay: &str) -> (Mask, bool) {
    const {
        assert!(TEXTS.len() <= 128 && AT.len() == TEXTS.len());
        let mut k = 0;
        while k < TEXTS.len() {
            assert!(
                AT[k] + 5 <= TEXTS[k].len(),
                "two windows must fit in the anchor"
            );
            k += 1;
        }
    };
    const ESC: u32 = 0x1b1b_1b1b;
    let s = scanner();
    let b = hay.as_bytes();
    let mut m = 0u128;
    let mut esc = 0u32;
    let mut i = 0;
    while i + 4 <= b.len() {
        let g = window(b, i);
        esc |= zero_byte(g ^ ESC);
        let h = slot(g);
        if s.bits[h >> 6] & (1 << (h & 63)) != 0 {
            m |= s.check(b, i, g);
        }
        i += 2;
    }
    // The windows cover every byte up to `i + 1`; the rest are checked one by one.
    let tail = b.get(i.min(b.len())..).unwrap_or_default();
    (Mask(m), esc != 0 || tail.contains(&0x1b))
}

/// Every anchor that occurs in `hay`.
pub(crate) fn scan(hay: &str) -> Mask {
    scan_esc(hay).0
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
        assert!(m.has(A::ErrorText));
        assert!(!m.has(A::ExceptionText));
    }

    #[test]
    fn every_offset_and_line_end() {
        for (i, t) in TEXTS.iter().enumerate() {
            for pad in 0..4 {
                for tail in ["", "x", "xy"] {
                    let line = format!("{}{t}{tail}", "p".repeat(pad));
                    assert!(scan(&line).0 & (1u128 << i) != 0, "{line}");
                }
            }
        }
    }

    #[test]
    fn escapes_anywhere_are_seen() {
        for n in 0..12 {
            for at in 0..=n {
                let mut line = "x".repeat(n);
                line.insert(at, '\x1b');
                assert!(scan_esc(&line).1, "{line:?}");
            }
            assert!(!scan_esc(&"x".repeat(n)).1);
        }
        assert!(!scan_esc("é\u{1b1b}ab").1);
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The filter finds exactly what `str::contains` finds, wherever the anchors sit.
        #[test]
        fn same_as_contains(parts in prop::collection::vec(
            prop_oneof![
                prop::sample::select(TEXTS).prop_map(str::to_string),
                prop::sample::select(TEXTS).prop_map(|t| t[..t.len() - 1].to_string()),
                prop::sample::select(TEXTS).prop_map(|t| t[1..].to_string()),
                "[ -~]{0,6}",
                "[\\x00-\\x7f]{0,3}",
                "\\PC{0,3}",
            ],
            0..12,
        )) {
            let hay: String = parts.concat();
            let (m, esc) = scan_esc(&hay);
            for (i, t) in TEXTS.iter().enumerate() {
                prop_assert_eq!(m.0 & (1u128 << i) != 0, hay.contains(t), "{} in {:?}", t, hay);
            }
            prop_assert_eq!(esc, hay.contains('\x1b'));
        }
    }

    #[test]
    fn partial_anchor_is_not_found() {
        assert!(!scan("Application startup compl").has(A::Ready));
        assert!(scan("..Application startup complete.").has(A::Ready));
    }
}
