//! Run folders from someone else, corrupted by hand (issue 11): outputs never follow a
//! link or land on an input, inputs that are not plain files are listed as skipped and
//! their checks can't tell, implausible numbers never pass, huge or sparse files are
//! refused before they are read, and escape sequences never reach the terminal.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_inferlint"))
        .env_remove("INFERLINT_ENGINE")
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .expect("run inferlint")
}

fn analyze(dir: &Path, extra: &[&str]) -> Output {
    let mut args: Vec<&std::ffi::OsStr> = vec!["analyze".as_ref(), dir.as_os_str()];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    run(&args)
}

fn out(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A fresh scratch folder holding a copy of the recorded vLLM run in `run/`.
fn scratch(tag: &str) -> (PathBuf, PathBuf) {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("untrusted-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let run = base.join("run");
    std::fs::create_dir_all(&run).unwrap();
    let src = common::workspace_root().join("fixtures/recorded/vllm");
    for e in std::fs::read_dir(src).unwrap().flatten() {
        std::fs::copy(e.path(), run.join(e.file_name())).unwrap();
    }
    (base, run)
}

fn status_of(o: &Output, t: &str) -> String {
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.lines()
        .find(|l| l.starts_with(&format!("[{t:>3}]")))
        .unwrap_or_else(|| panic!("no {t} in\n{}", out(o)))
        .to_string()
}

#[test]
fn a_symlinked_results_json_is_refused_and_its_target_untouched() {
    let (base, run) = scratch("results-link");
    let victim = base.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    symlink(&victim, run.join("results.json")).unwrap();
    let o = analyze(&run, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(
        out(&o).contains("results.json: is a symbolic link"),
        "{}",
        out(&o)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(run.join("results.json"))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_report_html_pointing_elsewhere_creates_nothing_there() {
    let (base, run) = scratch("report-link");
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    symlink(elsewhere.join("new.html"), run.join("report.html")).unwrap();
    let o = analyze(&run, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(!elsewhere.join("new.html").exists());
    // The other output is still written, whole.
    let doc = std::fs::read_to_string(run.join("results.json")).unwrap();
    assert!(analyzer::json::parse(&doc).is_ok());
}

#[test]
fn symlinked_and_odd_inputs_are_skipped_with_a_reason() {
    let (base, run) = scratch("inputs");
    let log = base.join("real-boot.log");
    std::fs::rename(run.join("boot.log"), &log).unwrap();
    symlink(&log, run.join("boot.log")).unwrap();
    std::fs::create_dir(run.join("load.log.d")).unwrap();
    let o = analyze(&run, &["--json"]);
    let text = out(&o);
    // The run has failed tripwires of its own (exit 1); the skipped files add "unusable".
    assert_ne!(o.status.code(), Some(0), "{text}");
    assert!(
        text.contains("skipped boot.log: a symbolic link: not followed"),
        "{text}"
    );
    assert!(
        text.contains("skipped load.log.d: a folder, not a file"),
        "{text}"
    );
    let doc = analyzer::json::parse(&String::from_utf8_lossy(&o.stdout)).unwrap();
    let skipped = doc.get("skipped").unwrap().as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    // The boot log's checks can't tell, naming why.
    let checks = doc.get("checks").unwrap().as_array().unwrap();
    let t12 = checks
        .iter()
        .find(|c| c.get("id").and_then(|v| v.as_str()) == Some("T12"))
        .unwrap();
    assert_eq!(t12.get("status").unwrap().as_str(), Some("unknown"));
    assert!(t12
        .get("message")
        .unwrap()
        .as_str()
        .unwrap()
        .contains("a symbolic link: not followed"));
}

#[test]
fn a_boot_log_folder_and_a_folder_of_links_are_named() {
    let (base, run) = scratch("dir-log");
    std::fs::remove_file(run.join("boot.log")).unwrap();
    std::fs::create_dir(run.join("boot.log")).unwrap();
    let o = analyze(&run, &[]);
    assert!(
        out(&o).contains("boot.log: a folder, not a file"),
        "{}",
        out(&o)
    );
    assert!(status_of(&o, "T12").contains("????"), "{}", out(&o));
    // Only links: every one named, exit 2.
    let links = base.join("links");
    std::fs::create_dir(&links).unwrap();
    for e in std::fs::read_dir(&run).unwrap().flatten() {
        symlink(e.path(), links.join(e.file_name())).unwrap();
    }
    let o = analyze(&links, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(
        out(&o).contains("before.snapshot.json: a symbolic link"),
        "{}",
        out(&o)
    );
    assert!(!out(&o).contains("no run files"), "{}", out(&o));
}

#[test]
fn html_onto_an_input_or_nowhere_is_an_error() {
    let (_base, run) = scratch("html");
    let log = run.join("boot.log");
    let before = std::fs::read(&log).unwrap();
    let o = analyze(&run, &["--html", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(out(&o).contains("an input of this analysis"), "{}", out(&o));
    assert_eq!(std::fs::read(&log).unwrap(), before);
    assert!(
        !run.join("results.json").exists(),
        "nothing written on a refusal"
    );
    let o = analyze(&run, &["--html", "/nonexistent-folder/report.html"]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(
        out(&o).contains("/nonexistent-folder/report.html: cannot write"),
        "{}",
        out(&o)
    );
}

#[test]
fn garbage_never_turns_green() {
    let (_base, run) = scratch("nan");
    let p = run.join("after.snapshot.json");
    let text = std::fs::read_to_string(&p).unwrap();
    let at = text.find("vllm:num_preemptions_total{").unwrap();
    let end = at + text[at..].find("\\n").unwrap();
    let value_at = at + text[at..end].rfind(' ').unwrap() + 1;
    let broken = format!("{}NaN{}", &text[..value_at], &text[end..]);
    std::fs::write(&p, broken).unwrap();
    let o = analyze(&run, &[]);
    let t1 = status_of(&o, "T1");
    assert!(t1.contains("????"), "{t1}");
    assert!(t1.contains("after.snapshot.json:"), "{t1}");
    assert!(t1.contains("vllm:num_preemptions_total = NaN"), "{t1}");
    assert_ne!(o.status.code(), Some(0));
}

#[test]
fn a_sparse_or_oversized_file_is_refused_before_reading() {
    let (_base, run) = scratch("sparse");
    let f = std::fs::File::create(run.join("run.series.jsonl")).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    let started = Instant::now();
    let o = analyze(&run, &[]);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(out(&o).contains("run.series.jsonl"), "{}", out(&o));
    assert!(status_of(&o, "T9").contains("????"), "{}", out(&o));
    // A dense snapshot over 64 MiB: refused by its size.
    let big = vec![b'#'; 65 << 20];
    std::fs::write(run.join("before.snapshot.json"), big).unwrap();
    let o = analyze(&run, &[]);
    assert!(
        out(&o).contains("over the 64 MiB limit for a snapshot"),
        "{}",
        out(&o)
    );
}

#[test]
fn escape_sequences_never_reach_the_terminal() {
    let (base, run) = scratch("escapes");
    let odd = base.join("run\x1b]0;pwned\x07\x08");
    std::fs::rename(&run, &odd).unwrap();
    let o = analyze(&odd, &[]);
    for (what, bytes) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        assert!(
            !bytes.iter().any(|&b| b == 0x1b || b == 0x07 || b == 0x08),
            "{what}: {}",
            out(&o)
        );
    }
    assert!(out(&o).contains("\\x1b]0;pwned\\x07"), "{}", out(&o));
}
