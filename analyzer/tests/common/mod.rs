//! Shared by the integration tests: where the recorded GPU runs are.
#![allow(dead_code)]

use std::path::PathBuf;

/// The folder of recorded runs: `$INFERLINT_FIXTURES`, else `../shared/fixtures` beside the
/// checkout. `None` (and a line on stderr) when they are absent and
/// `INFERLINT_SKIP_RECORDED=1` is set; otherwise a missing folder fails the test with a
/// message saying where to get them.
pub fn recorded() -> Option<PathBuf> {
    let dir = match std::env::var_os("INFERLINT_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => workspace_root().join("../shared/fixtures"),
    };
    if dir.join("expected-verdicts.json").is_file() {
        return Some(dir);
    }
    if std::env::var("INFERLINT_SKIP_RECORDED").as_deref() == Ok("1") {
        eprintln!("skipped: recorded GPU runs not found at {}", dir.display());
        return None;
    }
    panic!(
        "the recorded GPU runs are not at {}: put the published inferlint fixtures there \
         (a folder with expected-verdicts.json), point INFERLINT_FIXTURES at them, or set \
         INFERLINT_SKIP_RECORDED=1 to skip these tests",
        dir.display()
    );
}

/// The checkout's top folder (the one holding Cargo.lock), wherever the test crate sits.
pub fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(&here)
        .to_path_buf()
}

/// Reads a file of the recorded runs as text.
pub fn read(dir: &std::path::Path, rel: &str) -> String {
    let p = dir.join(rel);
    String::from_utf8_lossy(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .into_owned()
}

/// A fresh copy of a folder's top-level files under the test crate's temporary folder
/// (`<tag>-<pid>`), so `analyze` may write into it; what `analyze` wrote into `src`
/// (results.json, report.html) is left behind.
pub fn fresh_copy(src: &std::path::Path, tag: &str) -> PathBuf {
    let dst =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let name = e.file_name();
        let written = name == "results.json" || name == "report.html";
        if e.file_type().unwrap().is_file() && !written {
            std::fs::copy(e.path(), dst.join(name)).unwrap();
        }
    }
    dst
}

/// The number at a path of keys and array indexes in a JSON value (a test's lookup: a
/// missing step fails the test, naming the path).
pub fn number_at(v: &analyzer::json::Json, path: &[&str]) -> f64 {
    let mut node = v;
    for k in path {
        let next = match k.parse::<usize>() {
            Ok(i) => node.as_array().and_then(|a| a.get(i)),
            Err(_) => node.get(k),
        };
        node = next.unwrap_or_else(|| panic!("no {path:?} in the JSON"));
    }
    node.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number"))
}
