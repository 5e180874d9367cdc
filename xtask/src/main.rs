//! Build tasks, so a fresh machine needs nothing but cargo:
//!   cargo xtask demo   the main job on this machine (see README)
//!   cargo xtask test   every test, then the parity and bad-input trials
//!   cargo xtask ci     formatting, lints, the wasm build, then `test`
//!   cargo xtask viewer the browser viewer, built and inlined into one offline page
//!                      (www/dist/index.html, www/dist/report.html), installing the
//!                      pinned tools it needs when they are missing

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs a command in the project root, echoing it; fails on a non-zero exit.
fn run(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}").replace('"', "");
    eprintln!("== {shown}");
    let status = cmd
        .current_dir(root())
        .status()
        .with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// The recorded GPU runs: $INFERLINT_FIXTURES, else ../shared/fixtures.
fn recorded() -> Option<PathBuf> {
    let dir = std::env::var_os("INFERLINT_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/fixtures"));
    dir.join("expected-verdicts.json").is_file().then_some(dir)
}

fn ensure_wasm_target() -> Result<()> {
    let out = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output();
    match out {
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains("wasm32-unknown-unknown") => Ok(()),
        Ok(_) => run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"])),
        Err(_) => {
            eprintln!("== rustup not found: assuming the wasm32 target is installed");
            Ok(())
        }
    }
}

/// The main job on a machine with no GPU: record a 32-request run against the engine
/// simulator's vLLM (a hybrid model with 43 KV blocks of 784 tokens, as on the GPU run this
/// project started from), then let `inferlint analyze` give the verdicts.
fn demo() -> Result<()> {
    run(cargo().args([
        "build",
        "-q",
        "-p",
        "analyzer",
        "-p",
        "enginesim",
        "-p",
        "recorder",
    ]))?;
    let bins = root().join("target/debug");
    let work = root().canonicalize()?.join("target/inferlint-demo");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    // The simulator's vllm and nvidia-smi personalities, on PATH for this command only.
    let links = work.join("bin");
    let st = Command::new(bins.join("inferlint-enginesim"))
        .arg("install")
        .arg(&links)
        .stdout(std::process::Stdio::null())
        .status()?;
    if !st.success() {
        bail!(
            "cannot install the simulator's links in {}",
            links.display()
        );
    }
    let path = std::env::join_paths(
        std::iter::once(links.clone()).chain(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths),
        ),
    )?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let model = "/models/Qwen3.8-27B-W4A16-AutoRound";
    let serve = format!(
        "vllm serve {model} --port {port} --max-model-len 16384 --max-num-seqs 32 \
         --gpu-memory-utilization 0.93 --sim-kv-blocks 43 --sim-block-size 784 --sim-hybrid --sim-speed 40"
    );
    let base = format!("http://127.0.0.1:{port}");
    let out = work.join("run");
    let t0 = std::time::Instant::now();
    let mut cmd = Command::new(bins.join("inferlint-recorder"));
    cmd.arg("record")
        .arg("-o")
        .arg(&out)
        .args([
            "--title",
            "demo: Qwen3.8-27B-like hybrid model on a simulated RTX 4090",
        ])
        .args(["--serve", &serve, "--"])
        .args([
            "vllm",
            "bench",
            "serve",
            "--model",
            model,
            "--base-url",
            &base,
        ])
        .args(["--dataset-name", "random", "--random-input-len", "88"])
        .args(["--random-output-len", "1000", "--ignore-eos"])
        .args(["--num-prompts", "32", "--max-concurrency", "32"])
        .env("PATH", path)
        .env("INFERLINT_SIM_GPU_STATE", work.join("gpu"));
    eprintln!(
        "== inferlint-recorder record -o {} --serve \"{serve}\" -- vllm bench serve ...",
        out.display()
    );
    let status = cmd
        .current_dir(root())
        .status()
        .context("cannot run inferlint-recorder")?;
    // The recorder exits 1 because tripwires failed: that is the demo's point. Check that
    // the run was recorded and the verdicts are the GPU run's.
    let results = std::fs::read_to_string(out.join("results.json"))
        .with_context(|| format!("the run was not analyzed (recorder exit {status})"))?;
    let failed = |id: &str| {
        results
            .split(&format!("\"id\": \"{id}\""))
            .nth(1)
            .and_then(|rest| rest.split("\"status\": \"").nth(1))
            .is_some_and(|s| s.starts_with("fail"))
    };
    eprintln!(
        "== recorded and checked in {:.0} s; the report: {}",
        t0.elapsed().as_secs_f64(),
        out.join("report.html").display()
    );
    if !(failed("T1") && failed("T8")) {
        bail!(
            "expected T1 and T8 to fail, as on the GPU run; see {}",
            out.display()
        );
    }
    eprintln!("== T1 and T8 fail, as on the real GPU run");
    Ok(())
}

fn test() -> Result<()> {
    // The viewer first: the command line embeds it (analyzer/build.rs), and the browser
    // tests below open the one-file reports it writes.
    viewer()?;
    run(cargo().args(["test", "--workspace"]))?;
    match recorded() {
        Some(fixtures) => {
            run(cargo().args(["build", "--release", "-q", "-p", "analyzer"]))?;
            let bin = root().join("target/release/inferlint");
            // The trials run on a copy (`analyze` writes results.json into each folder),
            // laid out as shared/ is: the parity tool finds ../fixtures beside itself.
            let work =
                std::env::temp_dir().join(format!("inferlint-trials-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&work);
            copy_tree(&fixtures, &work.join("fixtures"))?;
            copy_tree(&fixtures.join("../tools"), &work.join("tools"))?;
            let parity = run(Command::new("python3")
                .arg(work.join("tools/parity"))
                .arg(&bin));
            let bad = run(Command::new("python3")
                .arg(work.join("tools/bad-input"))
                .arg(&bin)
                .arg(work.join("fixtures"))
                .arg("300"));
            let _ = std::fs::remove_dir_all(&work);
            parity?;
            bad?;
        }
        None => eprintln!("== recorded GPU runs not found: parity and bad-input trials skipped"),
    }
    browser_tests()
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)?.flatten() {
        let dst = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else {
            std::fs::copy(e.path(), dst)?;
        }
    }
    Ok(())
}

fn ci() -> Result<()> {
    ensure_wasm_target()?;
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(cargo().args([
        "build",
        "-p",
        "analyzer",
        "--target",
        "wasm32-unknown-unknown",
        "--no-default-features",
        "--lib",
    ]))?;
    test()
}

fn main() -> Result<()> {
    match std::env::args().nth(1).as_deref() {
        Some("demo") => demo(),
        Some("test") => test(),
        Some("ci") => ci(),
        Some("viewer") => viewer(),
        Some("viewer-inline") => finish_viewer(),
        Some("browser-tests") => browser_tests(),
        _ => {
            eprintln!("usage: cargo xtask demo | test | ci | viewer | browser-tests");
            std::process::exit(2);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The browser viewer: tools, build, inlining into one file, browser tests.
//
// Every tool comes from crates.io, npm or Debian, pinned, and is installed only when it is
// missing (or at another version); nothing is downloaded at build time (trunk runs
// offline). See ../shared/notes/offline-wasm-build.md for why each pin is what it is.

/// trunk: 0.22 needs a newer rustc than the project's.
const TRUNK: &str = "0.21.14";
/// The npm tools (binaryen's wasm-opt 132, playwright-core) live here.
const NODE_DIR: &str = "tests/browser";

fn output(cmd: &mut Command) -> Option<String> {
    let o = cmd.output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

fn cargo_bin() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .unwrap_or_else(|| PathBuf::from(".cargo"))
        .join("bin")
}

/// PATH with cargo's bin folder and the npm tools first.
fn tool_path() -> std::ffi::OsString {
    let mut dirs = vec![cargo_bin(), root().join(NODE_DIR).join("node_modules/.bin")];
    if let Some(p) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}

fn tool(name: &str) -> Command {
    let mut c = Command::new(name);
    c.env("PATH", tool_path());
    c
}

/// The wasm-bindgen crate version in Cargo.lock: the CLI must be exactly that version.
fn locked_version(krate: &str) -> Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))?;
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == format!("name = \"{krate}\"") {
            if let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = \"")) {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    bail!("{krate} is not in Cargo.lock")
}

fn has_version(name: &str, version: &str) -> bool {
    output(tool(name).arg("--version")).is_some_and(|v| v.split_whitespace().any(|w| w == version))
}

fn ensure_viewer_tools() -> Result<()> {
    ensure_wasm_target()?;
    if !has_version("trunk", TRUNK) {
        run(cargo().args(["install", "trunk", "--version", TRUNK, "--locked"]))?;
    }
    let wb = locked_version("wasm-bindgen")?;
    if !has_version("wasm-bindgen", &wb) {
        // Without --locked: its own lockfile pins a crate version this registry lacks.
        run(cargo().args(["install", "wasm-bindgen-cli", "--version", &wb]))?;
    }
    ensure_node_tools()
}

/// npm's binaryen (wasm-opt 132; Debian's binaryen makes a wasm that fails to start) and
/// playwright-core, from tests/browser/package-lock.json.
fn ensure_node_tools() -> Result<()> {
    let dir = root().join(NODE_DIR);
    let bin = dir.join("node_modules/.bin");
    if bin.join("wasm-opt").exists() && dir.join("node_modules/playwright-core").is_dir() {
        return Ok(());
    }
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir))
}

/// Chromium for the browser tests: Debian's, installed when missing and allowed (root).
fn chromium() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Ok(PathBuf::from(p));
    }
    for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if Path::new(p).is_file() {
            return Ok(PathBuf::from(p));
        }
    }
    let root_user = output(Command::new("id").arg("-u")).is_some_and(|u| u.trim() == "0");
    if !root_user {
        bail!("Chromium is missing: install it (apt-get install chromium) or set CHROMIUM");
    }
    run(Command::new("apt-get").arg("update"))?;
    run(Command::new("apt-get").args(["install", "-y", "chromium"]))?;
    Ok(PathBuf::from("/usr/bin/chromium"))
}

/// Builds the viewer with trunk (offline) and inlines it into one self-contained page.
fn viewer() -> Result<()> {
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
fn finish_viewer() -> Result<()> {
    let dist = root().join("www/dist");
    let page = inline(&dist)?;
    std::fs::write(dist.join("report.html"), &page)?;
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
fn remove_elements(
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
fn inline_stylesheets(html: &str, dist: &Path) -> Result<String> {
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

fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 {
            T[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if c.len() > 2 {
            T[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

/// trunk's dist as one file: its loader and preload links dropped (absolute paths do not
/// work from file://), the wasm-bindgen glue inlined as a module, and the wasm carried
/// raw-deflated as base64, inflated by the browser's DecompressionStream and started with
/// `init({ module_or_path: bytes })` (async: no size limit). A failed start writes its
/// error into the page instead of leaving it blank.
fn inline(dist: &Path) -> Result<String> {
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
        base64(&miniz_oxide::deflate::compress_to_vec(&wasm, 10))
    );
    let at = page
        .rfind("</body>")
        .context("trunk's page has no </body>")?;
    page.insert_str(at, &boot);
    Ok(page)
}

/// The viewer in headless Chromium (tests/browser, `node --test`): one-file reports of
/// every run folder against `inferlint analyze --json`, drop and pick, a broken file, no
/// network, the hostile line, theme and keyboard.
fn browser_tests() -> Result<()> {
    ensure_node_tools()?;
    let chromium = chromium()?;
    if !root().join("www/dist/report.html").is_file() {
        viewer()?;
    }
    // The command line with the viewer inside (build.rs picks up www/dist/report.html).
    run(cargo().args(["build", "--release", "-q", "-p", "analyzer"]))?;
    let mut cmd = Command::new("node");
    cmd.args(["--test", "--test-concurrency=1", "--test-reporter=spec"])
        .arg(root().join(NODE_DIR).join("viewer.test.mjs"))
        .env("CHROMIUM", &chromium)
        .env("INFERLINT_BIN", root().join("target/release/inferlint"))
        .env("INFERLINT_PAGE", root().join("www/dist/index.html"));
    if let Some(f) = recorded() {
        cmd.env("INFERLINT_FIXTURES", f);
    }
    run(&mut cmd)
}
