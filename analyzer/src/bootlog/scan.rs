//! The one pass over a log's lines that both the facts and the classifier read from.

use std::borrow::Cow;

use super::anchors::{self, Mask, A, TEXTS};
use super::lines::strip_ansi;
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
}

/// Calls `f` for every line of `text`, in order.
pub(crate) fn each_line<'t>(text: &'t str, mut f: impl FnMut(&LineView<'t>)) {
    for (k, raw) in split_lines(text).enumerate() {
        let clean = strip_ansi(raw);
        let has_esc = matches!(clean, Cow::Owned(_));
        let mask = anchors::scan(&clean);
        f(&LineView {
            lineno: k + 1,
            raw,
            clean,
            mask,
            has_esc,
        });
    }
}
