//! `inferlint-recorder completions bash|zsh|fish`, `man` and `--version`: the same check
//! as the analyzer's command (`analyzer/cli/tests/support/completions.rs`, shared).

#[path = "../../analyzer/cli/tests/support/completions.rs"]
mod completions;

use clap::CommandFactory;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_inferlint-recorder");

#[test]
fn completion_scripts_offer_the_real_subcommands_and_flags() {
    completions::check_command(BIN, recorder::cli::Cli::command());
}

#[test]
fn man_writes_a_page_per_command() {
    let dir = std::env::temp_dir().join(format!("recorder-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(BIN).arg("man").arg(&dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for page in [
        "inferlint-recorder.1",
        "inferlint-recorder-record.1",
        "inferlint-recorder-teardown.1",
    ] {
        assert!(dir.join(page).is_file(), "no {page}");
    }
    let record = std::fs::read_to_string(dir.join("inferlint-recorder-record.1")).unwrap();
    assert!(
        record.contains("\\-\\-serve"),
        "the page lists record's flags"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn version_matches_the_analyzer_command() {
    let out = Command::new(BIN).arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim_end(),
        format!("inferlint-recorder {}", inferlint::version::VERSION)
    );
}
