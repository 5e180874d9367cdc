//! The failure classifier (docs/tripwires.md#classifier): why the server died, and when.
//!
//! One pass, constant state. The rules (`KINDS`) are tried in priority order, rule order
//! beating line order; equivalently the failure is the earliest line of the best-ranked
//! rule among the lines that count. Lines stop counting when a later served request shows
//! the server survived them (step 5 below): on each served line the candidates found so
//! far are dropped, so no look-ahead is needed.

use std::borrow::Cow;
use std::collections::VecDeque;

use super::anchors::{Anchor, AnchorSet};
use super::counts::is_served;
use super::lines::{is_word, word_at, word_before};
use super::scan::LineView;
use super::{Classification, Failure};
use crate::text::cut_chars;

/// Preceding lines a rule may look back at (rule 13 looks at six).
const LOOK_BACK: usize = 6;

const KINDS: [&str; 14] = [
    "jit_toolchain",
    "jit_toolchain",
    "jit_toolchain",
    "jit_toolchain",
    "jit_toolchain",
    "out_of_memory",
    "kv_cache_too_small",
    "accelerator_error",
    "cuda_error",
    "assertion",
    "value_error",
    "runtime_error",
    "unclassified_exception",
    "engine_dead",
];

struct Candidate {
    /// 1-based rule number.
    rule: u8,
    lineno: usize,
    line: String,
    detail: String,
}

pub(crate) struct Classifier<'t> {
    stopped: bool,
    in_ignored: bool,
    ready: bool,
    best: Option<Candidate>,
    /// The best-ranked candidate a served line dropped while serving (earliest on ties).
    set_aside: Option<Candidate>,
    queue_full: usize,
    overflow: usize,
    first_rejection: Option<usize>,
    recent: VecDeque<Cow<'t, str>>,
    /// The anchors some rule of `match_rules` needs: a line with none of them is not
    /// considered.
    rule_anchors: AnchorSet,
}

impl<'t> Classifier<'t> {
    pub(crate) fn new() -> Self {
        let rule_anchors = AnchorSet::of(&[
            Anchor::Headers,
            Anchor::Ptxas,
            Anchor::NvccFatal,
            Anchor::LdCannot,
            Anchor::NinjaFailed,
            Anchor::NinjaStopped,
            Anchor::Oom,
            Anchor::CudaOom,
            Anchor::NoCacheMem,
            Anchor::KvTooSmall,
            Anchor::Accelerator,
            Anchor::CudaError,
            Anchor::EngineDead,
            Anchor::FatalEngine,
            Anchor::Assertion,
            Anchor::ErrorText,
            Anchor::ExceptionText,
        ]);
        Classifier {
            stopped: false,
            in_ignored: false,
            ready: false,
            best: None,
            set_aside: None,
            queue_full: 0,
            overflow: 0,
            first_rejection: None,
            recent: VecDeque::with_capacity(LOOK_BACK + 1),
            rule_anchors,
        }
    }

    pub(crate) fn line(&mut self, v: &LineView<'t>) {
        if self.stopped {
            return;
        }
        // Step 2: an orderly shutdown ends what is classified.
        if v.raw_has(Anchor::Shutdown) {
            self.stopped = true;
            return;
        }
        // Step 1: ANSI removed, vLLM prefix stripped, trimmed.
        let mut p: Cow<'t, str> = match &v.clean {
            Cow::Borrowed(s) => Cow::Borrowed(s[s.len() - v.body().len()..].trim()),
            Cow::Owned(_) => Cow::Owned(v.body().trim().to_string()),
        };
        // Step 3: ignored tracebacks.
        let blank = if self.in_ignored {
            if p.starts_with("[end of ") && p.contains("traceback]") {
                self.in_ignored = false;
            }
            true
        } else if p.starts_with("[start of ") && p.contains("traceback]") {
            self.in_ignored = true;
            true
        } else {
            p.starts_with("Ignore import error")
        };
        if blank {
            p = Cow::Borrowed("");
        }
        if !self.ready {
            // Step 4: a server that became ready survived whatever came before.
            if v.anchors.has(Anchor::Ready) && p.contains("Application startup complete") {
                self.ready = true;
                self.best = None;
            } else {
                self.consider(&p, v.lineno, v.anchors);
            }
        } else {
            // Step 6: admission-control rejections are set aside.
            let rejected = if v.anchors.has(Anchor::QueueFull)
                && p.contains("Request queue full - rejecting request")
            {
                self.queue_full += 1;
                true
            } else if v.anchors.has(Anchor::QueueOverflow) && is_overflow(&p) {
                self.overflow += 1;
                true
            } else {
                false
            };
            if rejected {
                self.first_rejection.get_or_insert(v.lineno);
                p = Cow::Borrowed("");
            }
            // Step 5: a later served request shows the earlier lines were survived.
            if (v.anchors.has(Anchor::Post) && is_served(&p))
                || p.starts_with("Prefill batch")
                || p.starts_with("Decode batch")
            {
                if let Some(dropped) = self.best.take() {
                    if self
                        .set_aside
                        .as_ref()
                        .is_none_or(|s| dropped.rule < s.rule)
                    {
                        self.set_aside = Some(dropped);
                    }
                }
            }
            self.consider(&p, v.lineno, v.anchors);
        }
        if self.recent.len() == LOOK_BACK {
            self.recent.pop_front();
        }
        self.recent.push_back(p);
    }

    fn consider(&mut self, p: &str, lineno: usize, anchors: AnchorSet) {
        if p.is_empty() || !anchors.meets(self.rule_anchors) {
            return;
        }
        let below = self.best.as_ref().map_or(15, |b| b.rule);
        if let Some((rule, detail)) = match_rules(p, anchors, below, &self.recent) {
            self.best = Some(Candidate {
                rule,
                lineno,
                line: cut_chars(p, 300).to_string(),
                detail: cut_chars(detail.trim(), 200).to_string(),
            });
        }
    }

    pub(crate) fn end(self) -> Classification {
        let phase = if self.ready { "serving" } else { "boot" };
        let rejections = if self.queue_full > 0 {
            self.queue_full
        } else {
            self.overflow
        };
        let failure = |c: Candidate, phase: &str| Failure {
            kind: KINDS[usize::from(c.rule) - 1].to_string(),
            phase: phase.to_string(),
            lineno: c.lineno,
            line: c.line,
            detail: c.detail,
        };
        Classification {
            failure: self.best.map(|c| failure(c, phase)),
            set_aside: self.set_aside.map(|c| failure(c, "serving")),
            rejections,
            first_rejection_lineno: if rejections > 0 {
                self.first_rejection
            } else {
                None
            },
        }
    }
}

/// A line starting with a qualified `QueueOverflowError` followed by `:`.
fn is_overflow(p: &str) -> bool {
    let (names, rest) = qualified(p);
    names.last() == Some(&"QueueOverflowError") && rest.starts_with(':')
}

/// The dotted name at the start of `p`: every `identifier.` segment, then the word run
/// after the last dot (possibly empty); and the text after that run. A segment that is
/// not an identifier (empty, or starting with a digit) ends the chain.
fn qualified(p: &str) -> (Vec<&str>, &str) {
    let mut names = Vec::new();
    let mut at = 0;
    loop {
        let s = &p[at..];
        let n = s
            .char_indices()
            .find(|&(_, c)| !is_word(c))
            .map_or(s.len(), |(k, _)| k);
        let word = &s[..n];
        let ident = word
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        names.push(word);
        if ident && s[n..].starts_with('.') {
            at += n + 1;
        } else {
            return (names, &s[n..]);
        }
    }
}

/// Finds `needle` in `p` at a word start (not after a word character).
fn find_word_start(p: &str, needle: &str) -> Option<usize> {
    p.match_indices(needle)
        .map(|(i, _)| i)
        .find(|&i| !word_before(p, i))
}

/// `fatal`, optional whitespace, `:` at byte `i` (a word start); the byte after the colon.
fn fatal_colon(p: &str, i: usize) -> Option<usize> {
    if word_before(p, i) || !p[i..].starts_with("fatal") {
        return None;
    }
    let rest = &p[i + 5..];
    let t = rest.trim_start();
    t.starts_with(':').then(|| p.len() - t.len() + 1)
}

/// The best rule below `below` that `p` matches, with its detail.
fn match_rules(
    p: &str,
    anchors: AnchorSet,
    below: u8,
    recent: &VecDeque<Cow<'_, str>>,
) -> Option<(u8, String)> {
    let none = String::new;
    for rule in 1..below {
        let hit: Option<String> = match rule {
            1 if anchors.has(Anchor::Headers) => {
                const T: &str = "CUDA compiler and CUDA toolkit headers are incompatible";
                p.contains(T).then(|| T.to_string())
            }
            2 if anchors.has(Anchor::Ptxas) => p
                .match_indices("ptxas")
                .map(|(i, _)| i)
                .find(|&i| !word_before(p, i) && !word_at(p, i + 5))
                .and_then(|i| {
                    p[i + 5..]
                        .match_indices("fatal")
                        .filter_map(|(k, _)| fatal_colon(p, i + 5 + k))
                        .last()
                })
                .map(|after| p[after..].to_string()),
            3 if anchors.has(Anchor::NvccFatal) => p
                .match_indices("nvcc fatal")
                .find_map(|(i, _)| {
                    if word_before(p, i) {
                        return None;
                    }
                    fatal_colon(p, i + 5)
                })
                .map(|after| p[after..].to_string()),
            4 if anchors.has(Anchor::LdCannot) => {
                find_word_start(p, "ld: cannot find ").map(|i| p[i + 4..].to_string())
            }
            5 if anchors.has(Anchor::NinjaFailed) || anchors.has(Anchor::NinjaStopped) => {
                (p.contains("Ninja build failed") || p.contains("ninja: build stopped")).then(none)
            }
            6 if anchors.has(Anchor::Oom) || anchors.has(Anchor::CudaOom) => {
                let word = p
                    .match_indices("OutOfMemoryError")
                    .any(|(i, m)| !word_before(p, i) && !word_at(p, i + m.len()));
                (word || p.contains("CUDA out of memory")).then(none)
            }
            7 if anchors.has(Anchor::NoCacheMem) || anchors.has(Anchor::KvTooSmall) => (p
                .contains("No available memory for the cache blocks")
                || p.contains(
                    "KV cache is needed, which is larger than the available KV cache memory",
                ))
            .then(none),
            8 if anchors.has(Anchor::Accelerator) => text_after_word(p, "AcceleratorError: "),
            9 if anchors.has(Anchor::CudaError) => text_after_word(p, "CUDA error: "),
            10 if anchors.has(Anchor::Assertion) => assertion(p, recent),
            11 if anchors.has(Anchor::ErrorText) => exception_text(p, "ValueError"),
            12 if anchors.has(Anchor::ErrorText) => exception_text(p, "RuntimeError"),
            13 if anchors.has(Anchor::ErrorText) || anchors.has(Anchor::ExceptionText) => {
                unclassified(p, recent)
            }
            14 if anchors.has(Anchor::EngineDead) || anchors.has(Anchor::FatalEngine) => (p
                .contains("EngineDeadError")
                || p.contains("EngineCore encountered a fatal error"))
            .then(none),
            _ => None,
        };
        if let Some(detail) = hit {
            return Some((rule, detail));
        }
    }
    None
}

/// `LEAD` at a word start followed by some text: that text.
fn text_after_word(p: &str, lead: &str) -> Option<String> {
    p.match_indices(lead)
        .map(|(i, _)| i)
        .filter(|&i| !word_before(p, i))
        .map(|i| &p[i + lead.len()..])
        .find(|t| !t.is_empty())
        .map(str::to_string)
}

/// Rule 10: a qualified `AssertionError` (whole word) starting the line, optional `:`.
fn assertion(p: &str, recent: &VecDeque<Cow<'_, str>>) -> Option<String> {
    let (names, _) = qualified(p);
    // The last segment that is `AssertionError` (a greedy match of the qualifiers).
    let k = names.iter().rposition(|n| *n == "AssertionError")?;
    let consumed: usize = names[..=k].iter().map(|n| n.len() + 1).sum::<usize>() - 1;
    let rest = &p[consumed..];
    let rest = rest.strip_prefix(':').unwrap_or(rest).trim();
    if !rest.is_empty() {
        return Some(rest.to_string());
    }
    let cause = recent
        .iter()
        .rev()
        .take(3)
        .find(|l| l.starts_with("assert "))
        .map_or_else(String::new, |l| l.to_string());
    Some(cause)
}

/// Rules 11 and 12: a qualified `NAME: ` and some text starting the line.
fn exception_text(p: &str, name: &str) -> Option<String> {
    let (names, rest) = qualified(p);
    if names.last() != Some(&name) {
        return None;
    }
    let text = rest.strip_prefix(": ")?;
    (!text.is_empty()).then(|| text.to_string())
}

/// Rule 13: any qualified name ending in `Error` or `Exception`, then `: ` and text; the
/// place it was raised from the nearest `File "…", line N, in FUNC` of the six lines
/// before.
fn unclassified(p: &str, recent: &VecDeque<Cow<'_, str>>) -> Option<String> {
    if p.contains("EngineDeadError") {
        return None;
    }
    let (names, rest) = qualified(p);
    let last = names.last()?;
    if !(last.ends_with("Error") || last.ends_with("Exception")) {
        return None;
    }
    let text = rest.strip_prefix(": ")?;
    if text.is_empty() {
        return None;
    }
    let place = recent.iter().rev().take(LOOK_BACK).find_map(|l| frame(l));
    Some(match place {
        Some(Frame {
            file,
            line,
            function,
        }) => format!("{text} (in {function}, {file}:{line})"),
        None => text.to_string(),
    })
}

/// A traceback frame line's place.
struct Frame<'a> {
    /// The last component of the file's path.
    file: &'a str,
    line: &'a str,
    function: &'a str,
}

/// `File "PATH", line N, in FUNC` → the frame's place.
fn frame(l: &str) -> Option<Frame<'_>> {
    let rest = l.strip_prefix("File \"")?;
    let q = rest.find('"')?;
    let path = &rest[..q];
    let rest = rest[q + 1..].strip_prefix(", line ")?;
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    let line = &rest[..n];
    let rest = rest[n..].strip_prefix(", in ")?;
    let f = rest.find(char::is_whitespace).unwrap_or(rest.len());
    if f == 0 {
        return None;
    }
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    Some(Frame {
        file,
        line,
        function: &rest[..f],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootlog::classify;

    fn one(text: &str) -> Option<Failure> {
        classify(text).failure
    }

    #[test]
    fn qualified_names() {
        assert_eq!(
            qualified("torch.AcceleratorError: x"),
            (vec!["torch", "AcceleratorError"], ": x")
        );
        assert_eq!(
            qualified("1a.ValueError: x"),
            (vec!["1a"], ".ValueError: x")
        );
        assert_eq!(qualified("AssertionError"), (vec!["AssertionError"], ""));
        assert!(is_overflow(
            "vllm.exceptions.QueueOverflowError: The engine is busy"
        ));
        assert!(!is_overflow("QueueOverflowErrorX: no"));
        assert!(!is_overflow("raise QueueOverflowError()"));
    }

    #[test]
    fn rule_order_beats_line_order() {
        let log = "RuntimeError: Ninja build failed. Ninja output:\nx\n/usr/bin/ld: cannot find -lcudart: No such file\nninja: build stopped: subcommand failed.\n";
        let f = one(log).unwrap();
        assert_eq!((f.kind.as_str(), f.lineno), ("jit_toolchain", 3));
        assert_eq!(f.detail, "cannot find -lcudart: No such file");
        assert_eq!(f.phase, "boot");
    }

    #[test]
    fn accelerator_beats_cuda_error_on_one_line() {
        let f = one("(EngineCore pid=1) ERROR 09-05 10:57:48 [core.py:1346] torch.AcceleratorError: CUDA error: device not ready").unwrap();
        assert_eq!(f.kind, "accelerator_error");
        assert_eq!(f.detail, "CUDA error: device not ready");
        assert_eq!(
            f.line,
            "torch.AcceleratorError: CUDA error: device not ready"
        );
    }

    #[test]
    fn bare_assertion_takes_the_assert_line() {
        let log = "  File \"/x/__init__.py\", line 126, in _find_cuda_home\n    assert cuda_home is not None\n           ^^^^^\nAssertionError\n\nImportError: \nFATAL: x\n";
        let f = one(log).unwrap();
        assert_eq!((f.kind.as_str(), f.lineno), ("assertion", 4));
        assert_eq!(f.detail, "assert cuda_home is not None");
        assert_eq!(f.line, "AssertionError");
    }

    #[test]
    fn unclassified_names_its_frame() {
        let log = "Application startup complete.\n  File \"/a/b/async_llm.py\", line 339, in check_admission\n    raise Boom()\nfoo.BoomError: it broke\nINFO: \"GET /metrics HTTP/1.1\" 200 OK\n";
        let f = one(log).unwrap();
        assert_eq!(f.kind, "unclassified_exception");
        assert_eq!(f.phase, "serving");
        assert_eq!(f.detail, "it broke (in check_admission, async_llm.py:339)");
        assert_eq!(one("EngineDeadError: x").unwrap().kind, "engine_dead");
        assert_eq!(one("Boom: x"), None);
        assert_eq!(one("ImportError: ").map(|f| f.kind), None);
    }

    #[test]
    fn toolchain_details() {
        let f = one("ptxas info: x fatal : a ; ptxas fatal   : Unresolved extern").unwrap();
        assert_eq!(f.detail, "Unresolved extern");
        let f = one("nvcc fatal   : Unsupported gpu architecture 'compute_120'").unwrap();
        assert_eq!(f.detail, "Unsupported gpu architecture 'compute_120'");
        assert!(one("xptxas fatal: y").is_none());
        assert_eq!(
            one("torch.OutOfMemoryError: CUDA out of memory")
                .unwrap()
                .kind,
            "out_of_memory"
        );
        assert_eq!(
            one("X: No available memory for the cache blocks")
                .unwrap()
                .kind,
            "kv_cache_too_small"
        );
    }

    #[test]
    fn survived_errors_and_shutdown() {
        let log = "Application startup complete.\nRuntimeError: boom\nINFO: 1.2.3.4:5 - \"POST /v1/completions HTTP/1.1\" 200 OK\n";
        assert!(one(log).is_none());
        let log = "Application startup complete.\n[shutdown] stop\nRuntimeError: boom\n";
        assert!(one(log).is_none());
        let log = "RuntimeError: before\nApplication startup complete.\n";
        assert!(one(log).is_none());
        let log = "[start of x traceback]\nRuntimeError: hidden\n[end of x traceback].\nValueError: shown\n";
        assert_eq!(one(log).unwrap().kind, "value_error");
    }

    #[test]
    fn rejections_are_counted_and_set_aside() {
        let log = "Application startup complete.\n\
            Request queue full - rejecting request a (current=16, n=1, max=16).\n\
            vllm.exceptions.QueueOverflowError: The engine is currently busy\n\
            Request queue full - rejecting request b (current=16, n=1, max=16).\n";
        let c = classify(log);
        assert!(c.failure.is_none());
        assert_eq!(c.rejections, 2);
        assert_eq!(c.first_rejection_lineno, Some(2));
        let log = "Application startup complete.\nvllm.exceptions.QueueOverflowError: busy\n";
        assert_eq!(classify(log).rejections, 1);
        // Before ready they are nothing special.
        let log = "vllm.exceptions.QueueOverflowError: busy\n";
        assert_eq!(
            classify(log).failure.unwrap().kind,
            "unclassified_exception"
        );
    }
}
