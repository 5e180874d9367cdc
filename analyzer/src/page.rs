//! The one-file report page: a run (or several, for a comparison) spliced into the viewer
//! page, and the one HTML escaper.
//!
//! The viewer page (`www/index.html` as `cargo xtask viewer` inlines it) carries an empty
//! run element, `<script type="application/json" id="inferlint-run"></script>`. Both
//! writers of one-file reports, the `inferlint` command line (`cli/html.rs`) and the
//! viewer's "Save as one file", put a packed run (`crate::pack`) there and the run's title
//! on the tab through [`splice`], so the two pages cannot drift apart. Pure text: no file
//! system, no clock.

use crate::pack::{self, Pack, Packs};

/// The `id` of the element that carries the run.
pub const RUN_ID: &str = "inferlint-run";

/// The opening tag of the run element, exactly as the viewer page writes it.
const RUN_OPEN: &str = "<script type=\"application/json\" id=\"inferlint-run\">";
const SCRIPT_CLOSE: &str = "</script>";

/// Why a page could not take a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpliceError {
    #[error("the page has no element <script id=\"inferlint-run\"> to carry the run")]
    NoRunElement,
}

/// `s` as inert HTML text or attribute value: `& < > " '` become character references.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page `template` with `run` in its run element (whatever it held before is
/// replaced) and `title`, escaped, as the tab's title. The run's JSON is inert inside
/// `<script>` (`pack::encode`), so no input can end the element early.
pub fn splice(template: &str, run: &Pack, title: &str) -> Result<String, SpliceError> {
    splice_data(template, &pack::encode(run), title)
}

/// As [`splice`], one columnar file carried as made ahead of the pack
/// ([`pack::encode_with`]): the command line deflates the series while it analyzes.
pub fn splice_with(
    template: &str,
    run: &Pack,
    title: &str,
    ready: Option<(&str, pack::Carriage)>,
) -> Result<String, SpliceError> {
    splice_data(template, &pack::encode_with(run, ready), title)
}

/// The page `template` with several runs in its run element, as [`splice`] places one:
/// the viewer opens it on the comparison of those runs.
pub fn splice_many(template: &str, runs: &Packs, title: &str) -> Result<String, SpliceError> {
    splice_data(template, &pack::encode_many(runs), title)
}

/// `data` (inert packed JSON) in the run element, `title` on the tab.
fn splice_data(template: &str, data: &str, title: &str) -> Result<String, SpliceError> {
    let (start, end) = run_element(template).ok_or(SpliceError::NoRunElement)?;
    let head = with_title(&template[..start], title);
    let mut out = String::with_capacity(head.len() + data.len() + template.len() - end);
    out.push_str(&head);
    out.push_str(data);
    out.push_str(&template[end..]);
    Ok(out)
}

/// The text of the page's run element (empty in the bare viewer page), when it has one:
/// what the viewer hands to `pack::decode` on start.
pub fn embedded_run(page: &str) -> Option<&str> {
    run_element(page).map(|(start, end)| &page[start..end])
}

/// Where the run element's text starts and ends.
fn run_element(page: &str) -> Option<(usize, usize)> {
    let start = page.find(RUN_OPEN)? + RUN_OPEN.len();
    let end = start + page[start..].find(SCRIPT_CLOSE)?;
    Some((start, end))
}

/// `head` with the text of its first `<title>` replaced by `title`; unchanged without one.
fn with_title(head: &str, title: &str) -> String {
    const OPEN: &str = "<title>";
    const CLOSE: &str = "</title>";
    match (head.find(OPEN), head.find(CLOSE)) {
        (Some(a), Some(b)) if a < b => format!(
            "{}{OPEN}{}{CLOSE}{}",
            &head[..a],
            escape_html(title),
            &head[b + CLOSE.len()..]
        ),
        _ => head.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::{Form, PackedFile};

    const TEMPLATE: &str = "<!DOCTYPE html>\n<html><head><title>inferlint report</title></head>\
        <body><div id=\"app\"></div>\
        <script type=\"application/json\" id=\"inferlint-run\"></script>\
        <script type=\"module\">start()</script></body></html>";

    const HOSTILE: &str =
        "</script><img src=x onerror=alert(1)><!-- \"quoted\" 'single' & </title><script>alert(2)</script>";

    fn hostile_run() -> Pack {
        Pack {
            generated_ms: Some(1_764_480_000_000.0),
            options: vec![
                ("requested".to_string(), "32".to_string()),
                ("title".to_string(), HOSTILE.to_string()),
            ],
            files: vec![
                PackedFile {
                    role: "boot_log".to_string(),
                    name: format!("run/{HOSTILE}.log"),
                    bytes: Ok(format!("INFO {HOSTILE}\n").into_bytes()),
                    evidence_path: None,
                    form: Form::Text,
                },
                PackedFile {
                    role: "bench".to_string(),
                    name: "run/bench.json".to_string(),
                    bytes: Err(HOSTILE.to_string()),
                    evidence_path: Some(HOSTILE.to_string()),
                    form: Form::Text,
                },
            ],
        }
    }

    #[test]
    fn the_escaper_leaves_no_markup_and_no_quote() {
        let e = escape_html(HOSTILE);
        for c in ['<', '>', '"', '\''] {
            assert!(!e.contains(c), "{c} survived in {e}");
        }
        assert_eq!(
            escape_html("a&b<c>d\"e'f"),
            "a&amp;b&lt;c&gt;d&quot;e&#39;f"
        );
        assert_eq!(escape_html("plain – text"), "plain – text");
    }

    #[test]
    fn an_escaped_string_reads_back_as_itself() {
        let back = escape_html(HOSTILE)
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&");
        assert_eq!(back, HOSTILE);
    }

    #[test]
    fn a_spliced_run_decodes_to_the_same_run() {
        let run = hostile_run();
        let page = splice(TEMPLATE, &run, "a title").unwrap();
        let text = embedded_run(&page).unwrap();
        assert_eq!(pack::decode(text).unwrap(), run);
    }

    #[test]
    fn hostile_strings_stay_inert_in_the_spliced_page() {
        let page = splice(TEMPLATE, &hostile_run(), HOSTILE).unwrap();
        // No input added an element: the template's tags are all the page has.
        for tag in [
            "<script",
            "</script>",
            "<title>",
            "</title>",
            "<img",
            "<!--",
        ] {
            assert_eq!(
                page.matches(tag).count(),
                TEMPLATE.matches(tag).count(),
                "{tag}"
            );
        }
        let text = embedded_run(&page).unwrap();
        assert!(!text.contains('<') && !text.contains('>'));
        assert!(page.contains(&format!("<title>{}</title>", escape_html(HOSTILE))));
        assert!(page.ends_with("<script type=\"module\">start()</script></body></html>"));
    }

    #[test]
    fn several_runs_splice_inert_and_read_back() {
        let runs = Packs {
            generated_ms: None,
            options: vec![("baseline".to_string(), "1".to_string())],
            runs: vec![
                (HOSTILE.to_string(), hostile_run()),
                ("second".to_string(), Pack::default()),
            ],
        };
        let page = splice_many(TEMPLATE, &runs, HOSTILE).unwrap();
        for tag in ["<script", "</script>", "<img", "<!--"] {
            assert_eq!(
                page.matches(tag).count(),
                TEMPLATE.matches(tag).count(),
                "{tag}"
            );
        }
        let Ok(pack::Carried::Many(back)) = pack::decode_any(embedded_run(&page).unwrap()) else {
            panic!("several runs expected");
        };
        assert_eq!(back.runs.len(), 2);
        assert_eq!(back.runs[0].0, HOSTILE);
        assert_eq!(back.runs[0].1.files, hostile_run().files);
    }

    #[test]
    fn splicing_twice_replaces_the_first_run() {
        let first = splice(TEMPLATE, &hostile_run(), "one").unwrap();
        let run = Pack {
            options: vec![("requested".to_string(), "8".to_string())],
            ..Pack::default()
        };
        let second = splice(&first, &run, "two").unwrap();
        assert_eq!(pack::decode(embedded_run(&second).unwrap()).unwrap(), run);
        assert!(second.contains("<title>two</title>") && !second.contains("<title>one"));
    }

    #[test]
    fn the_run_element_is_found_by_its_id() {
        assert!(RUN_OPEN.contains(&format!("id=\"{RUN_ID}\"")));
    }

    #[test]
    fn a_page_without_a_run_element_is_refused() {
        let page = "<html><head><title>x</title></head><body></body></html>";
        assert_eq!(
            splice(page, &Pack::default(), "t"),
            Err(SpliceError::NoRunElement)
        );
        assert_eq!(embedded_run(page), None);
        assert_eq!(embedded_run(TEMPLATE), Some(""));
    }

    #[test]
    fn a_page_without_a_title_keeps_its_head() {
        let page = "<html><body><script type=\"application/json\" id=\"inferlint-run\">\
                    </script></body></html>";
        let out = splice(page, &Pack::default(), "<t>").unwrap();
        assert!(out.starts_with("<html><body><script"));
        assert!(!out.contains("<t>"));
    }
}
