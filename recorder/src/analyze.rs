//! Handing the closed folder to `inferlint analyze` (the last step of `record`): the
//! executable next to the recorder's own, else on PATH.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where `inferlint` is, if anywhere.
pub fn find() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join("inferlint")))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join("inferlint"))
            .find(|p| p.is_file())
    })
}

/// The arguments passed through.
pub fn args(dir: &Path, strict: bool, json: bool, engine: Option<&str>) -> Vec<String> {
    let mut a = vec!["analyze".to_string(), dir.display().to_string()];
    if strict {
        a.push("--strict".into());
    }
    if json {
        a.push("--json".into());
    }
    if let Some(e) = engine {
        a.push("--engine".into());
        a.push(e.into());
    }
    a
}

/// Runs it; its exit status, or None when it could not run (the command is printed).
pub fn run(dir: &Path, strict: bool, json: bool, engine: Option<&str>) -> Option<i32> {
    let a = args(dir, strict, json, engine);
    let Some(exe) = find() else {
        eprintln!(
            "== inferlint not found next to this program or on PATH; check the run with: inferlint {}",
            a.join(" ")
        );
        return None;
    };
    match Command::new(&exe).args(&a).status() {
        Ok(st) => st.code().or(Some(2)),
        Err(e) => {
            eprintln!(
                "== cannot run {}: {e}; check the run with: inferlint {}",
                exe.display(),
                a.join(" ")
            );
            None
        }
    }
}
