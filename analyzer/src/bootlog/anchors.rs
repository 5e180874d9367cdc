//! The fixed texts the boot-log rules look for (the fields' anchors, the markers,
//! the classifier's texts), found with one Aho-Corasick automaton built once.
//!
//! A log can be hundreds of megabytes and each line must be tested against some fifty
//! anchors, so the whole text is searched in one pass ([`AnchorsByLine`]) and the matches
//! are handed out line by line; a single line (one whose ANSI escapes were removed) is
//! searched on its own ([`anchors_in`]). The search reports, at each position where some
//! anchor starts, the longest one; every anchor that is a part of a found one is added
//! from a table, so the set is exactly the anchors `str::contains` would find.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, Input, MatchKind};
use memchr::memchr;

macro_rules! anchors {
    ($($name:ident => $text:literal,)*) => {
        /// One anchor text; its discriminant is its bit in an [`AnchorSet`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub(crate) enum Anchor { $($name,)* }
        /// The anchor texts, indexed by [`Anchor`].
        pub(crate) const TEXTS: &[&str] = &[$($text,)*];
    };
}

anchors! {
    // vLLM fields (`vllm.rs`)
    VllmInit => "Initializing a V1 LLM engine",
    NonDefault => "non-default args:",
    Potential => "attention backend out of potential backends",
    EnumBackend => "Using AttentionBackendEnum.",
    BlockSize => "Setting attention block size to",
    MambaPad => "Padding mamba page size by",
    KvSize => "GPU KV cache size:",
    AvailKv => "Available KV cache memory:",
    // vLLM's CPU platform (0.32): the pool, the KV space, the MLA backends it names
    CpuKvSize => "CPU KV cache size:",
    CpuKvSpace => "GiB for KV cache on node",
    CpuMla => "_MLA backend.",
    ModelLoading => "Model loading took",
    CgEstimated => "Estimated CUDA graph memory:",
    CgPool => "CUDA graph pool memory:",
    Consumed => "GiB for consumed memory",
    Compile => "torch.compile took",
    SpecDecode => "is not supported with spec-decode",
    // SGLang fields (`sglang.rs`)
    ServerArgs => "server_args={",
    SgKv => "KV Cache is allocated.",
    SgLoad => "Load weight end.",
    SgGraph => "CUDA graph end.",
    SgCapped => "max_running_requests is capped to",
    SgLimits => "max_total_num_tokens=",
    SgDefault => "Attention backend not specified.",
    // TensorRT-LLM fields (`trtllm.rs`)
    TrtVersion => "TensorRT LLM version:",
    TrtPool => "for max tokens in paged KV cache",
    TrtPage => "tokens per block=",
    TrtLimits => "max_num_requests=",
    TrtLoad => "after loading weights (inside torch)",
    LlmArgs => "LLM Args:",
    // Markers (readiness, compilation, counts the derived facts need)
    Drafter => "Loading drafter model",
    Eager => "Cudagraph is disabled under eager mode",
    NoGraphs => "'cudagraph_mode': <CUDAGraphMode.NONE:",
    CpuDevice => "device_config=cpu",
    Compiling => "Compiling a graph for compile range",
    AotLoad => "Directly load AOT compilation",
    Ready => "Application startup complete",
    Post => "\"POST /",
    RequestId => "request ID ",
    // Failure classifier (`classify.rs`)
    Shutdown => "[shutdown]",
    QueueFull => "Request queue full - rejecting request",
    QueueOverflow => "QueueOverflowError",
    Headers => "CUDA compiler and CUDA toolkit headers are incompatible",
    Ptxas => "ptxas",
    NvccFatal => "nvcc fatal",
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
    // Rule 10's exception; rules 11–13: an exception name and its message.
    Assertion => "AssertionError",
    ErrorText => "Error: ",
    ExceptionText => "Exception: ",
}

/// The byte that starts an ANSI escape. Found apart from the anchors: a one-byte pattern
/// leaves the automaton's prefilter little to skip by (reading the 200 MB log of `cargo
/// bench -p inferlint`, facts and classifier, took 0.86–0.94 s of CPU with ESC among the
/// patterns and 0.44–0.47 s without, on the same loaded machine).
const ESC: u8 = 0x1b;

/// A set of anchors (those found in one line, or those a rule looks at).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AnchorSet(u128);

impl AnchorSet {
    /// The set of the given anchors.
    pub(crate) fn of(anchors: &[Anchor]) -> Self {
        AnchorSet(anchors.iter().fold(0, |bits, &a| bits | 1 << a as u32))
    }

    pub(crate) fn has(self, anchor: Anchor) -> bool {
        self.0 & (1u128 << anchor as u32) != 0
    }

    /// Some anchor is in both sets.
    pub(crate) fn meets(self, other: AnchorSet) -> bool {
        self.0 & other.0 != 0
    }

    #[cfg(test)]
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// The automaton, and for each anchor the anchors it contains (itself included).
struct Finder {
    automaton: AhoCorasick,
    contained: Vec<u128>,
}

static FINDER: LazyLock<Finder> = LazyLock::new(|| {
    const { assert!(TEXTS.len() <= 128) };
    let automaton = match AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(TEXTS)
    {
        Ok(a) => a,
        Err(e) => panic!("the boot-log anchors make no automaton: {e}"),
    };
    let contained = TEXTS
        .iter()
        .map(|outer| {
            TEXTS
                .iter()
                .enumerate()
                .filter(|(_, inner)| outer.contains(*inner))
                .fold(0u128, |bits, (k, _)| bits | 1 << k)
        })
        .collect();
    Finder {
        automaton,
        contained,
    }
});

/// One anchor found: where it starts and ends, and which it is.
#[derive(Debug, Clone, Copy)]
struct Found {
    start: usize,
    end: usize,
    pattern: usize,
}

impl Finder {
    /// The leftmost-longest match starting at or after `from`.
    fn next(&self, hay: &str, from: usize) -> Option<Found> {
        let m = self.automaton.find(Input::new(hay).span(from..hay.len()))?;
        Some(Found {
            start: m.start(),
            end: m.end(),
            pattern: m.pattern().as_usize(),
        })
    }
}

/// What one line holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LineAnchors {
    pub anchors: AnchorSet,
    /// The line holds an ESC byte (an ANSI escape, most likely).
    pub has_esc: bool,
}

impl LineAnchors {
    fn add(&mut self, finder: &Finder, found: Found) {
        self.anchors.0 |= finder.contained[found.pattern];
    }
}

/// Every anchor that occurs in `hay`, and whether it holds an ESC byte.
pub(crate) fn anchors_in(hay: &str) -> LineAnchors {
    let finder = &*FINDER;
    let mut line = LineAnchors {
        has_esc: memchr(ESC, hay.as_bytes()).is_some(),
        ..LineAnchors::default()
    };
    let mut from = 0;
    while let Some(found) = finder.next(hay, from) {
        line.add(finder, found);
        // The next anchor may start inside this one.
        from = found.start + 1;
    }
    line
}

/// The anchors of a whole text, handed out line by line: one search over the text instead
/// of one per line (most lines hold no anchor, and a search has a cost to start).
pub(crate) struct AnchorsByLine<'t> {
    text: &'t str,
    finder: &'static Finder,
    /// The next match not yet handed out.
    pending: Option<Found>,
    /// The next ESC byte not yet handed out.
    next_esc: Option<usize>,
}

impl<'t> AnchorsByLine<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        let finder = &*FINDER;
        AnchorsByLine {
            text,
            finder,
            pending: finder.next(text, 0),
            next_esc: memchr(ESC, text.as_bytes()),
        }
    }

    /// The anchors of the line at bytes `start..end` of the text. Lines must be asked for
    /// in order; no anchor holds a line break, so every match lies inside one line.
    pub(crate) fn line(&mut self, start: usize, end: usize) -> LineAnchors {
        let mut line = LineAnchors::default();
        while let Some(at) = self.next_esc.filter(|&at| at < end) {
            line.has_esc |= at >= start;
            self.next_esc = memchr(ESC, &self.text.as_bytes()[at + 1..]).map(|k| at + 1 + k);
        }
        while let Some(found) = self.pending {
            if found.start >= end {
                break;
            }
            if found.end <= end && found.start >= start {
                line.add(self.finder, found);
            }
            self.pending = self.finder.next(self.text, found.start + 1);
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(hay: &str) -> AnchorSet {
        anchors_in(hay).anchors
    }

    #[test]
    fn finds_every_anchor_anywhere() {
        for (i, t) in TEXTS.iter().enumerate() {
            let line = format!("xx {t} yy");
            assert!(scan(&line).0 & (1u128 << i) != 0, "{t}");
            assert!(scan(t).0 & (1u128 << i) != 0, "{t}");
        }
    }

    #[test]
    fn nothing_in_plain_text() {
        assert!(scan("INFO:     127.0.0.1:1 - \"GET /metrics HTTP/1.1\" 200 OK").is_empty());
        assert!(scan("").is_empty());
        assert!(scan("abc").is_empty());
        let m = scan("RuntimeError: boom");
        assert!(m.has(Anchor::ErrorText));
        assert!(!m.has(Anchor::ExceptionText));
    }

    #[test]
    fn anchors_inside_anchors() {
        let m = scan("AcceleratorError: x");
        assert!(m.has(Anchor::Accelerator) && m.has(Anchor::ErrorText));
        let m = scan("OutOfMemoryError: CUDA out of memory");
        assert!(m.has(Anchor::Oom) && m.has(Anchor::ErrorText) && m.has(Anchor::CudaOom));
    }

    #[test]
    fn escapes_anywhere_are_seen() {
        for n in 0..12 {
            for at in 0..=n {
                let mut line = "x".repeat(n);
                line.insert(at, '\x1b');
                assert!(anchors_in(&line).has_esc, "{line:?}");
            }
            assert!(!anchors_in(&"x".repeat(n)).has_esc);
        }
        assert!(!anchors_in("é\u{1b1b}ab").has_esc);
    }

    /// Splits `text` at `\n` and asks [`AnchorsByLine`] for each line in order.
    fn by_line(text: &str) -> Vec<LineAnchors> {
        let mut lines = AnchorsByLine::new(text);
        let mut start = 0;
        text.split('\n')
            .map(|l| {
                let got = lines.line(start, start + l.len());
                start += l.len() + 1;
                got
            })
            .collect()
    }

    #[test]
    fn whole_text_pass_gives_each_line_its_own() {
        let text = "a Ready Application startup complete\n\nptxas\x1b[0m\"POST /x\nrequest ID 1";
        let got = by_line(text);
        let want: Vec<_> = text.split('\n').map(anchors_in).collect();
        assert_eq!(got, want);
        assert!(got[0].anchors.has(Anchor::Ready));
        assert!(got[2].has_esc && got[2].anchors.has(Anchor::Post));
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The search finds exactly what `str::contains` finds, wherever the anchors sit,
        /// in one line or in a text of several.
        #[test]
        fn same_as_contains(parts in prop::collection::vec(
            prop_oneof![
                prop::sample::select(TEXTS).prop_map(str::to_string),
                prop::sample::select(TEXTS).prop_map(|t| t[..t.len() - 1].to_string()),
                prop::sample::select(TEXTS).prop_map(|t| t[1..].to_string()),
                "[ -~]{0,6}",
                "[\\x00-\\x7f]{0,3}",
                "\\PC{0,3}",
                Just("\n".to_string()),
            ],
            0..12,
        )) {
            let hay: String = parts.concat();
            for line in hay.split('\n') {
                let found = anchors_in(line);
                for (i, t) in TEXTS.iter().enumerate() {
                    prop_assert_eq!(found.anchors.0 & (1u128 << i) != 0, line.contains(t), "{} in {:?}", t, line);
                }
                prop_assert_eq!(found.has_esc, line.contains('\x1b'));
            }
            let want: Vec<_> = hay.split('\n').map(anchors_in).collect();
            prop_assert_eq!(by_line(&hay), want);
        }
    }

    #[test]
    fn partial_anchor_is_not_found() {
        assert!(!scan("Application startup compl").has(Anchor::Ready));
        assert!(scan("..Application startup complete.").has(Anchor::Ready));
    }
}
