//! The one pass over a log's lines that both the facts and the classifier read from.

use std::borrow::Cow;

use super::anchors::{self, Mask, A, TEXTS};
use super::lines::{strip_ansi, vllm_tag};
use crate::text::split_lines;

/// One line as the rules see it.
pub(crate) struct LineView<'t> {
    /// 1-based, as Python's `splitlines` counts.
    pub lineno: usize,
    pub raw: &'t str,
    /// ANSI escapes removed.
    pub clean: Cow<'t, str>,
    /// The anchors on the clean line.
    pub mask: Mask,
    /// The vLLM process tag's name and pid (byte ranges of `clean`), when there is one.
    tag: Option<((usize, usize), (usize, usize))>,
    /// Where the text after the vLLM prefix starts in `clean`.
    body: usize,
    has_esc: bool,
}

impl LineView<'_> {
    /// The raw line (escapes included) holds anchor `a`.
    pub(crate) fn raw_has(&self, a: A) -> bool {
        if self.has_esc {
            self.raw.contains(TEXTS[a as usize])
        } else {
            self.mask.has(a)
        }
    }

    /// The process tag's (name, pid), when the line starts with one.
    pub(crate) fn tag(&self) -> Option<(&str, &str)> {
        let ((n0, n1), (p0, p1)) = self.tag?;
        Some((&self.clean[n0..n1], &self.clean[p0..p1]))
    }

    /// The clean line without its vLLM prefix (§1.4).
    pub(crate) fn body(&self) -> &str {
        &self.clean[self.body..]
    }
}

/// Byte range of `part` within `whole` (a subslice of it).
fn range(whole: &str, part: &str) -> (usize, usize) {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    (start, start + part.len())
}

/// Calls `f` for every line of `text`, in order.
pub(crate) fn each_line<'t>(text: &'t str, mut f: impl FnMut(&LineView<'t>)) {
    for (k, raw) in split_lines(text).enumerate() {
        let (mut mask, has_esc) = anchors::scan_esc(raw);
        let clean = if has_esc {
            let c = strip_ansi(raw);
            mask = anchors::scan(&c);
            c
        } else {
            Cow::Borrowed(raw)
        };
        let (tag, body) = match vllm_tag(&clean) {
            Some(t) => (
                Some((range(&clean, t.name), range(&clean, t.pid))),
                range(&clean, t.rest).0,
            ),
            None => (None, 0),
        };
        f(&LineView {
            lineno: k + 1,
            raw,
            clean,
            mask,
            tag,
            body,
            has_esc,
        });
    }
}
