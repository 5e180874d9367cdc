//! Every fixture folder's `results.json`, held to what it was when last blessed: the
//! project's own folders under `fixtures/` and the recorded GPU runs in
//! `../shared/fixtures`, each analyzed by the `inferlint` binary as a user would
//! (`inferlint analyze DIR`, on a copy). A refactor must leave every byte as it was; a
//! change that means to move a verdict or a figure re-blesses the list and shows, in its
//! diff, which folders and which statuses moved:
//!
//! ```sh
//! INFERLINT_BLESS=1 cargo test -p inferlint --test same_results
//! ```
//!
//! The list (`same_results.txt`) holds, per folder, a digest of its `results.json` (every
//! key but the `replay` written last), the exit status, and each check's status.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use analyzer::json::{self, Json};
use sha2::{Digest, Sha256};

const LIST: &str = "tests/same_results.txt";

/// Every folder under `root` holding run files, as `(label, path)`, sorted.
fn run_folders(root: &Path, prefix: &str) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                let path = e.path();
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.push((format!("{prefix}{rel}"), path.clone()));
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A copy of a run folder and its subfolders, without what `analyze` writes.
fn copy_run(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let name = e.file_name();
        let to = dst.join(&name);
        if e.file_type().unwrap().is_dir() {
            copy_run(&e.path(), &to);
        } else if name != "results.json" && name != "report.html" {
            std::fs::copy(e.path(), to).unwrap();
        }
    }
}

/// One folder's line: `label exit digest T1:fail T8:pass …`, or `None` when `analyze`
/// finds no run in it (it wrote no results.json).
fn line(label: &str, src: &Path, work: &Path) -> Option<String> {
    // Named relative to the work folder: paths in the evidence stay the same from run to run.
    let name = label.replace(['/', ':'], "__");
    let copy = work.join(&name);
    copy_run(src, &copy);
    let out = Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .arg("analyze")
        .arg(&name)
        .current_dir(work)
        .env("NO_COLOR", "1")
        .output()
        .expect("run inferlint");
    let bytes = std::fs::read(copy.join("results.json")).ok()?;
    let digest = Sha256::digest(without_replay(&bytes));
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    let report = json::parse(std::str::from_utf8(&bytes).unwrap()).unwrap();
    let statuses: Vec<String> = report
        .get("checks")
        .and_then(Json::as_array)
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let s = |k: &str| c.get(k).and_then(Json::as_str).unwrap_or("?").to_string();
            format!("{}:{}", s("id"), s("status"))
        })
        .collect();
    Some(format!(
        "{label} exit={} {hex} {}",
        out.status.code().unwrap_or(-1),
        statuses.join(" ")
    ))
}

/// The document without its `replay` key (the page's frames, `insights::replay`), which
/// is written last: the digest holds every other key to its bytes, and the replay is held
/// by its own tests.
fn without_replay(bytes: &[u8]) -> Vec<u8> {
    const KEY: &[u8] = b",\n \"replay\": {";
    match bytes.windows(KEY.len()).rposition(|w| w == KEY) {
        Some(i) => [&bytes[..i], b"\n}\n".as_slice()].concat(),
        None => bytes.to_vec(),
    }
}

#[test]
fn every_fixture_gives_the_blessed_results() {
    let root = common::workspace_root();
    let mut folders = run_folders(&root.join("fixtures"), "fixtures/");
    match common::recorded() {
        Some(shared) => folders.extend(run_folders(&shared, "shared:")),
        None => eprintln!("the recorded GPU runs were left out (INFERLINT_SKIP_RECORDED)"),
    }
    let work = std::env::temp_dir().join(format!("inferlint-same-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let lines: Vec<String> = folders
        .iter()
        .filter_map(|(label, path)| line(label, path, &work))
        .collect();
    let _ = std::fs::remove_dir_all(&work);
    let got = lines.join("\n") + "\n";
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join(LIST);
    if std::env::var("INFERLINT_BLESS").as_deref() == Ok("1") {
        std::fs::write(&list, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&list).unwrap_or_default();
    let want: Vec<&str> = want
        .lines()
        .filter(|l| common::recorded().is_some() || !l.starts_with("shared:"))
        .collect();
    let got: Vec<&str> = got.lines().collect();
    let moved: Vec<String> = want
        .iter()
        .filter(|l| !got.contains(l))
        .map(|l| format!("- {l}"))
        .chain(
            got.iter()
                .filter(|l| !want.contains(l))
                .map(|l| format!("+ {l}")),
        )
        .collect();
    assert!(
        moved.is_empty(),
        "results.json moved for these folders (INFERLINT_BLESS=1 re-blesses a change that \
         means it):\n{}",
        moved.join("\n")
    );
}
