//! The one pass over a log's lines that both the facts and the classifier read from.

use std::borrow::Cow;
use std::ops::Range;

use super::anchors::{anchors_in, Anchor, AnchorSet, AnchorsByLine, TEXTS};
use super::lines::{strip_ansi, vllm_tag};
use crate::text::split_lines;

/// Where the vLLM process tag's parts sit in the clean line.
struct TagSpans {
    name: Range<usize>,
    pid: Range<usize>,
}

/// One line as the rules see it.
pub(crate) struct LineView<'t> {
    /// 1-based, as Python's `splitlines` counts.
    pub lineno: usize,
    pub raw: &'t str,
    /// ANSI escapes removed.
    pub clean: Cow<'t, str>,
    /// The anchors on the clean line.
    pub anchors: AnchorSet,
    /// The vLLM process tag, when there is one.
    tag: Option<TagSpans>,
    /// Where the text after the vLLM prefix starts in `clean`.
    body: usize,
    has_esc: bool,
}

impl LineView<'_> {
    /// The raw line (escapes included) holds `anchor`.
    pub(crate) fn raw_has(&self, anchor: Anchor) -> bool {
        if self.has_esc {
            self.raw.contains(TEXTS[anchor as usize])
        } else {
            self.anchors.has(anchor)
        }
    }

    /// The process tag's (name, pid), when the line starts with one.
    pub(crate) fn tag(&self) -> Option<(&str, &str)> {
        let tag = self.tag.as_ref()?;
        Some((&self.clean[tag.name.clone()], &self.clean[tag.pid.clone()]))
    }

    /// The clean line without its vLLM prefix (`lines::vllm_tag`).
    pub(crate) fn body(&self) -> &str {
        &self.clean[self.body..]
    }
}

/// Byte range of `part` within `whole` (a subslice of it).
fn span(whole: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

/// Calls `f` for every line of `text`, in order.
pub(crate) fn each_line<'t>(text: &'t str, mut f: impl FnMut(&LineView<'t>)) {
    let mut anchors_by_line = AnchorsByLine::new(text);
    for (k, raw) in split_lines(text).enumerate() {
        let at = span(text, raw);
        let found = anchors_by_line.line(at.start, at.end);
        let (clean, anchors) = if found.has_esc {
            let clean = strip_ansi(raw);
            let anchors = anchors_in(&clean).anchors;
            (clean, anchors)
        } else {
            (Cow::Borrowed(raw), found.anchors)
        };
        let (tag, body) = match vllm_tag(&clean) {
            Some(t) => (
                Some(TagSpans {
                    name: span(&clean, t.name),
                    pid: span(&clean, t.pid),
                }),
                span(&clean, t.rest).start,
            ),
            None => (None, 0),
        };
        f(&LineView {
            lineno: k + 1,
            raw,
            clean,
            anchors,
            tag,
            body,
            has_esc: found.has_esc,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one search over the whole text gives every line the anchors a search of that
    /// line alone finds, whatever ends the lines, escapes included.
    #[test]
    fn whole_text_anchors_match_each_line() {
        let text = "ptxas error\r\nRuntimeError: x\rCUDA error: y\u{2028}\x1b[31mOutOfMemoryError: z\x1b[0m\x0b\
                    \u{85}\"POST /v1 HTTP/1.1\" 200\x1cApplication startup complete\n\nrequest ID 3 -> pause\n";
        let mut seen = Vec::new();
        each_line(text, |v| {
            seen.push((v.lineno, v.raw.to_string(), v.anchors, v.has_esc));
        });
        let want: Vec<_> = split_lines(text)
            .enumerate()
            .map(|(k, raw)| {
                let clean = strip_ansi(raw);
                (
                    k + 1,
                    raw.to_string(),
                    anchors_in(&clean).anchors,
                    raw.contains('\x1b'),
                )
            })
            .collect();
        assert_eq!(seen, want);
        assert_eq!(seen.len(), 9);
        assert!(seen[3].2.has(Anchor::Oom) && seen[3].3);
        assert!(seen[5].2.has(Anchor::Post));
    }
}
