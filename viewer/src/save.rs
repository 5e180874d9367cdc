//! "Save as one file": the page as it was before the viewer drew into it, with the run
//! (or the runs compared) shown spliced into its run element (`analyzer::page`, the command line's splicer too),
//! offered as a download.

use analyzer::page;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::dom::{document, now_ms};
use crate::state::{Compared, Loaded};

/// The page as it was before the viewer touched it, to save one-file reports from; `None`
/// when this page is not the one-file build.
pub fn capture_template() -> Option<String> {
    // Only the one-file build carries the wasm inside; a page that loads it from a URL
    // cannot be saved as one offline file.
    document().get_element_by_id("inferlint-wasm")?;
    let html = document().document_element()?;
    let clone: web_sys::Element = html.clone_node_with_deep(true).ok()?.dyn_into().ok()?;
    for attr in [
        "data-theme",
        "data-state",
        "data-effective-theme",
        "data-ready-ms",
    ] {
        let _ = clone.remove_attribute(attr);
    }
    // outerHTML leaves out the doctype; without it the saved page would render in quirks mode.
    Some(format!("<!DOCTYPE html>\n{}", clone.outer_html()))
}

/// Offers the run `l` as a one-file report, made now, named report.html. The error is the
/// message the page shows.
pub fn save_one_file(template: Option<&str>, l: &Loaded) -> Result<(), String> {
    let template = template.ok_or(
        "Saving needs the one-file page (www/dist/index.html as built by `cargo xtask viewer`).",
    )?;
    let mut run = l.pack.clone();
    run.generated_ms = Some(now_ms());
    let html = page::splice(template, &run, &l.title())
        .map_err(|_| "This page has no place for an embedded run.".to_string())?;
    download(analyzer::docs::REPORT, &html)
        .map_err(|_| "The browser refused the download.".to_string())
}

/// Offers the runs compared as one file that opens on the same comparison.
pub fn save_compared(template: Option<&str>, c: &Compared) -> Result<(), String> {
    let template = template.ok_or(
        "Saving needs the one-file page (www/dist/index.html as built by `cargo xtask viewer`).",
    )?;
    let mut runs = c.packs.clone();
    runs.generated_ms = Some(now_ms());
    let labels: Vec<&str> = runs.runs.iter().map(|(l, _)| l.as_str()).collect();
    let title = format!("Comparison: {}", labels.join(", "));
    let html = page::splice_many(template, &runs, &title)
        .map_err(|_| "This page has no place for an embedded run.".to_string())?;
    download(analyzer::docs::REPORT, &html)
        .map_err(|_| "The browser refused the download.".to_string())
}

/// Offers `text` as a download named `name`.
fn download(name: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("text/html");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)?;
    let a: web_sys::HtmlAnchorElement = document().create_element("a")?.dyn_into()?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}
