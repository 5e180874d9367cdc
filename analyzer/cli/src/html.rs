//! The report page `analyze` writes (docs/run-folder.md#report-html): one self-contained
//! offline file.
//!
//! When the browser viewer has been built (`cargo xtask viewer`; see `build.rs`), the page
//! is the viewer itself (its wasm inside) with the run's input files embedded, compressed
//! (`pack`): opened from disk, it recomputes every verdict with the same analyzer and draws
//! the charts. Without a built viewer it is a plain static page of the verdicts. Every
//! string from the inputs is escaped either way; the page fetches nothing.

use analyzer::analysis::{Options, RunInput};
use analyzer::pack::{self, Carriage};
use analyzer::page::{self, escape_html};
use analyzer::report::Report;
use analyzer::rules::verdict::Status;

/// The built viewer page, when there is one.
#[cfg(inferlint_viewer)]
const VIEWER: Option<&str> = Some(include_str!(env!("INFERLINT_VIEWER_HTML")));
#[cfg(not(inferlint_viewer))]
const VIEWER: Option<&str> = None;

/// The built viewer page, to splice runs into; `None` when it was not built.
pub(crate) fn viewer_template() -> Option<&'static str> {
    VIEWER
}

/// The report page for a run: the viewer with the run inside, else the static page.
/// The series was streamed (`disk::StreamedRun`, its `InputFile` without bytes):
/// `series` gives its carriage (made while it was read, or from its bytes read again),
/// asked only when the page carries it (a week's recording is hundreds of megabytes).
pub fn page(
    r: &Report,
    input: &RunInput,
    opts: &Options,
    series: impl FnOnce() -> Option<Result<Carriage, String>>,
) -> String {
    VIEWER
        .and_then(|t| one_file(t, r, input, opts, series()))
        .unwrap_or_else(|| static_page(r))
}

/// The viewer page with the run in its run element and the run's title on the tab; the
/// series' carriage (or why it could not be read), when given, in place of `input`'s.
fn one_file(
    template: &str,
    r: &Report,
    input: &RunInput,
    opts: &Options,
    series: Option<Result<Carriage, String>>,
) -> Option<String> {
    let generated_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as f64);
    let mut run = pack::to_pack(input, opts, generated_ms);
    let mut ready = None;
    if let (Some(carried), Some(f)) = (series, run.files.iter_mut().find(|f| f.role == SERIES)) {
        f.bytes = match carried {
            Ok(c) => {
                ready = Some((SERIES, c));
                Ok(Vec::new())
            }
            Err(reason) => Err(reason),
        };
    }
    page::splice_with(template, &run, &r.title, ready).ok()
}

/// The series' role in a pack.
const SERIES: &str = "series";

const STYLE: &str =
    "body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}\
li{margin:.4rem 0}.s{display:inline-block;min-width:9rem;font-weight:600}\
.fail .s{color:#b00020}.warn .s{color:#8a5a00}.unknown .s{color:#6a1b9a}.pass .s{color:#1b5e20}\
.not_applicable .s{color:#555}small{color:#555}";

/// The plain page: verdicts and what limited the run, no charts.
fn static_page(r: &Report) -> String {
    let mut checks = r.checks.clone();
    checks.sort_by_key(|c| (c.status, c.tripwire));
    let mut items = String::new();
    for c in &checks {
        let why = match (c.status, Some(c.tripwire.entry())) {
            (Status::Fail | Status::Warn | Status::Unknown, Some(t)) => {
                format!("<br><small>{}</small>", escape_html(t.why))
            }
            _ => String::new(),
        };
        items.push_str(&format!(
            "<li class=\"{st}\" data-tripwire=\"{id}\" data-status=\"{st}\"><span class=\"s\">{label}</span> \
             <b>{id}</b> {name}: {msg}{why}</li>\n",
            st = c.status.as_str(),
            id = c.id(),
            label = c.status.report_label(),
            name = escape_html(c.name()),
            msg = escape_html(&c.message),
        ));
    }
    let limits: String = r
        .limits
        .iter()
        .map(|l| {
            format!(
                "<li><b>{}</b> {}</li>",
                escape_html(&l.title),
                escape_html(&l.text)
            )
        })
        .collect();
    let limits = if limits.is_empty() {
        String::new()
    } else {
        format!("<h2>What limited this run</h2><ul>{limits}</ul>")
    };
    let skipped: String = r
        .skipped
        .iter()
        .map(|s| {
            format!(
                "<li><b>{}</b>: {}</li>",
                escape_html(&s.name),
                escape_html(&s.reason)
            )
        })
        .collect();
    let skipped = if skipped.is_empty() {
        String::new()
    } else {
        format!("<h2>Not read</h2><ul>{skipped}</ul>")
    };
    let note = r
        .version_note
        .as_ref()
        .map(|n| format!("<p><small>{}</small></p>", escape_html(n)))
        .unwrap_or_default();
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\n\
         <h1>{title}</h1>{note}{limits}<h2>Results</h2><ul>\n{items}</ul>{skipped}\
         <p><small>Made from: {made}. Generated by inferlint {ver}.</small></p></body></html>\n",
        title = escape_html(&r.title),
        made = escape_html(&r.made_from.join(", ")),
        ver = env!("CARGO_PKG_VERSION"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer::analysis::InputFile;

    #[test]
    fn the_run_goes_into_the_run_element_as_inert_text() {
        let template = "<!DOCTYPE html><html><head><title>x</title></head><body>\
            <script type=\"application/json\" id=\"inferlint-run\"></script></body></html>";
        let input = RunInput {
            boot_logs: vec![InputFile::new(
                "run/boot.log",
                b"INFO <img src=x onerror=alert(1)> </script>".to_vec(),
            )],
            ..RunInput::default()
        };
        let opts = Options {
            requested: Some(32),
            ..Options::default()
        };
        let a = analyzer::analyze(&input, &opts).unwrap();
        let page = one_file(template, &a.report, &input, &opts, None).unwrap();
        let data = page::embedded_run(&page).unwrap();
        assert!(!data.contains('<'));
        let run = pack::decode(data).unwrap();
        assert_eq!(run.option("requested"), Some("32"));
        let boot = &pack::from_pack(&run).0.boot_logs;
        assert_eq!(boot.len(), 1);
        assert_eq!(boot[0].name, input.boot_logs[0].name);
        assert_eq!(boot[0].bytes, input.boot_logs[0].bytes);
        assert!(page.ends_with("</script></body></html>"));
    }

    #[test]
    fn a_streamed_series_goes_into_the_page_with_the_bytes_given() {
        let template = "<html><head><title>x</title></head><body>\
            <script type=\"application/json\" id=\"inferlint-run\"></script></body></html>";
        let series = b"{\"t_wall\": 1.0, \"running\": 2.0}\n".to_vec();
        // As `disk::StreamedRun` leaves it: the file named, its bytes read apart.
        let input = RunInput {
            series: Some(InputFile::new("run/run.series.jsonl", Vec::new())),
            ..RunInput::default()
        };
        let opts = Options::default();
        let read = analyzer::series::Series::read("run/run.series.jsonl", &series);
        let a = analyzer::analysis::analyze_with_series(&input, &opts, Some(read)).unwrap();
        let carried = Carriage::columnar(series.len(), &pack::columns::encode(&series));
        let page = one_file(template, &a.report, &input, &opts, Some(Ok(carried))).unwrap();
        let run = pack::decode(page::embedded_run(&page).unwrap()).unwrap();
        let carried = pack::from_pack(&run).0.series.unwrap();
        assert_eq!(carried.name, "run/run.series.jsonl");
        assert_eq!(carried.bytes, Ok(series));
    }
}
