//! The browser viewer built with trunk and inlined into one offline page.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::tools::*;
use crate::{cargo, root, run};

/// Builds the viewer with trunk (offline) and inlines it into one self-contained page.
pub(crate) fn viewer() -> Result<()> {
    ensure_viewer_tools()?;
    // trunk runs cargo offline: fetch first so a fresh machine has every crate.
    run(cargo().args(["fetch", "--locked"]))?;
    let www = root().join("www");
    let status = tool("trunk")
        .args(["build", "--release", "--offline"])
        .env("TRUNK_SKIP_VERSION_CHECK", "true")
        .env("NO_COLOR", "true")
        .current_dir(&www)
        .status()
        .context("cannot run trunk")?;
    if !status.success() {
        bail!("trunk build failed ({status})");
    }
    finish_viewer()
}

/// Inlines trunk's output in www/dist into the one-file page.
pub(crate) fn finish_viewer() -> Result<()> {
    let dist = root().join("www/dist");
    let page = inline(&dist)?;
    std::fs::write(dist.join(analyzer::docs::REPORT), &page)?;
    std::fs::write(dist.join("index.html"), &page)?;
    for f in ["viewer.js", "viewer_bg.wasm", "style.css"] {
        let _ = std::fs::remove_file(dist.join(f));
    }
    eprintln!(
        "== viewer: www/dist/index.html ({} KB, one file; also report.html for the command line)",
        page.len() / 1024
    );
    Ok(())
}

/// Removes every element `<tag …>` (and, for scripts, its body) whose opening tag
/// contains `needle` (and, when given, whose body contains `body_needle`).
pub(crate) fn remove_elements(
    html: &str,
    open: &str,
    close: Option<&str>,
    needle: &str,
    body_needle: Option<&str>,
) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find(open) {
        let tag_end = match rest[i..].find('>') {
            Some(e) => i + e + 1,
            None => break,
        };
        let end = match close {
            Some(c) => rest[tag_end..]
                .find(c)
                .map(|e| tag_end + e + c.len())
                .unwrap_or(tag_end),
            None => tag_end,
        };
        let tag = &rest[i..tag_end];
        let body = &rest[tag_end..end];
        let hit = tag.contains(needle) && body_needle.is_none_or(|b| body.contains(b));
        out.push_str(&rest[..i]);
        if !hit {
            out.push_str(&rest[i..end]);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Replaces each `<link rel="stylesheet" href="…">` of trunk's page by a `<style>` with
/// the file's content.
pub(crate) fn inline_stylesheets(html: &str, dist: &Path) -> Result<String> {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find("<link") {
        let end = i + rest[i..].find('>').context("an unclosed <link")? + 1;
        let tag = &rest[i..end];
        out.push_str(&rest[..i]);
        let href = tag
            .split("href=\"")
            .nth(1)
            .and_then(|h| h.split('"').next())
            .unwrap_or("");
        if tag.contains("rel=\"stylesheet\"") && !href.starts_with("data:") {
            let file = dist.join(href.trim_start_matches("./").trim_start_matches('/'));
            let css = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            out.push_str("<style>");
            out.push_str(&css.replace("</style", "<\\/style"));
            out.push_str("</style>");
        } else {
            out.push_str(tag);
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    Ok(out)
}

/// trunk's dist as one file: its loader and preload links dropped (absolute paths do not
/// work from file://), the wasm-bindgen glue inlined as a module, and the wasm carried
/// raw-deflated as base64, inflated by the browser's DecompressionStream and started with
/// `init({ module_or_path: bytes })` (async: no size limit). A failed start writes its
/// error into the page instead of leaving it blank.
pub(crate) fn inline(dist: &Path) -> Result<String> {
    let html =
        std::fs::read_to_string(dist.join("index.html")).context("trunk wrote no index.html")?;
    if html.contains("id=\"inferlint-wasm\"") {
        bail!("www/dist/index.html is already inlined: run trunk again");
    }
    let glue =
        std::fs::read_to_string(dist.join("viewer.js")).context("trunk wrote no viewer.js")?;
    let wasm =
        std::fs::read(dist.join("viewer_bg.wasm")).context("trunk wrote no viewer_bg.wasm")?;
    let mut page = inline_stylesheets(&html, dist)?;
    page = remove_elements(&page, "<link", None, "modulepreload", None);
    page = remove_elements(&page, "<link", None, "rel=\"preload\"", None);
    page = remove_elements(
        &page,
        "<script",
        Some("</script>"),
        "type=\"module\"",
        Some("viewer"),
    );
    if page.contains("viewer.js")
        || page.contains("viewer_bg.wasm")
        || page.contains("rel=\"stylesheet\"")
    {
        bail!("trunk's loader is still in the page after inlining: its output format changed");
    }
    if !glue.contains("async function __wbg_init") {
        bail!("wasm-bindgen's glue has no __wbg_init: its output format changed");
    }
    let glue = glue
        .replace("</script", "<\\/script")
        .replace("<!--", "<\\u0021--");
    let boot = format!(
        "<script type=\"application/octet-stream\" id=\"inferlint-wasm\">{}</script>\n\
         <script type=\"module\">\n{glue}\n\
         (async () => {{\n\
           try {{\n\
             const text = document.getElementById('inferlint-wasm').textContent.trim();\n\
             const bin = atob(text);\n\
             const packed = new Uint8Array(bin.length);\n\
             for (let i = 0; i < bin.length; i++) packed[i] = bin.charCodeAt(i);\n\
             const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream('deflate-raw'));\n\
             const bytes = new Uint8Array(await new Response(stream).arrayBuffer());\n\
             await __wbg_init({{ module_or_path: bytes }});\n\
           }} catch (e) {{\n\
             const p = document.createElement('pre');\n\
             p.setAttribute('role', 'alert');\n\
             p.textContent = 'The report could not start in this browser: ' + e;\n\
             (document.getElementById('app') || document.body).prepend(p);\n\
             document.documentElement.setAttribute('data-state', 'failed');\n\
           }}\n\
         }})();\n\
         </script>\n",
        analyzer::pack::base64_encode(&analyzer::pack::compress(&wasm))
    );
    let at = page
        .rfind("</body>")
        .context("trunk's page has no </body>")?;
    page.insert_str(at, &boot);
    Ok(page)
}
