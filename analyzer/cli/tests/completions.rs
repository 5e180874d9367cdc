//! `inferlint completions bash|zsh|fish` and `inferlint man`: generated from the clap
//! definitions, they offer exactly the commands and flags the binary has.

mod support {
    pub mod completions;
}

use clap::CommandFactory;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_inferlint");

#[test]
fn completion_scripts_offer_the_real_subcommands_and_flags() {
    support::completions::check_command(BIN, inferlint::args::Cli::command());
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let out = Command::new(BIN)
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcsh"));
}

#[test]
fn man_writes_a_page_per_command() {
    let dir = std::env::temp_dir().join(format!("inferlint-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(BIN).arg("man").arg(&dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    let mut want: Vec<String> = support::completions::subcommands(&inferlint::args::Cli::command())
        .into_iter()
        .filter(|s| s != "help")
        .map(|s| format!("inferlint-{s}.1"))
        .chain(["inferlint.1".to_string()])
        .collect();
    want.sort();
    assert_eq!(pages, want);
    let page = std::fs::read_to_string(dir.join("inferlint-analyze.1")).unwrap();
    assert!(page.starts_with(".ie") || page.contains(".TH inferlint-analyze 1"));
    assert!(
        page.contains("\\-\\-bench\\-result"),
        "the page lists analyze's flags"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn version_names_the_version_commit_and_viewer() {
    let out = Command::new(BIN).arg("--version").output().unwrap();
    let v = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(
        v.starts_with(&format!("inferlint {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    let viewer = if inferlint::version::VIEWER_EMBEDDED {
        ", interactive viewer embedded)"
    } else {
        ", no viewer: report.html is the plain page)"
    };
    assert!(v.trim_end().ends_with(viewer), "{v}");
}
