//! Writing documents so that a kill at any instant leaves a readable folder, through the
//! one atomic writer (`inferlint::output`: a new temporary file beside the target, synced,
//! renamed over it; never through a link). The documents themselves and their bytes are
//! the analyzer's (`analyzer::docs`); the terminal line of a result is `inferlint::render`'s.

use std::path::{Path, PathBuf};

use analyzer::docs::{self, Document};

/// Writes `bytes` into `dir` as `name`, whole or not at all.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    inferlint::output::write_atomically(&dir.join(name), bytes).map_err(std::io::Error::other)
}

/// Writes a document into `dir` as `name` (docs/run-folder.md#recorder-documents).
pub fn write_doc<T: Document>(dir: &Path, name: &str, doc: &T) -> std::io::Result<()> {
    write_atomic(dir, name, &docs::to_bytes(doc))
}

/// Writes a document where the user said (`-o FILE`), creating parent folders.
pub fn write_doc_to<T: Document>(path: &Path, doc: &T) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    write_doc(&dir, &name, doc)
}

/// Prints result objects: the JSON array under `--json`, else one line each.
pub fn print_results(results: &[analyzer::CheckResult], json: bool) {
    if json {
        println!("{}", analyzer::json::to_pretty(results, 1));
    } else {
        for r in results {
            println!("{}", result_line(r));
        }
    }
}

/// `[  2] PASS  2 consecutive clear readings`: one result as the terminal shows it
/// (uncoloured: the recorder's output is mostly read from logs).
pub fn result_line(r: &analyzer::CheckResult) -> String {
    inferlint::render::result_line(r, false)
}

/// Exit status of verdict-reporting commands (docs/tripwires.md#exit-status).
pub fn exit_status(results: &[analyzer::CheckResult], strict: bool) -> i32 {
    analyzer::rules::verdict::exit_status(results, strict, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use analyzer::docs::processes::Processes;

    #[test]
    fn atomic_write_leaves_no_temporary() {
        let d = std::env::temp_dir().join(format!("rec-docs-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        write_doc(&d, "p.json", &Processes::default()).unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("p.json")).unwrap(),
            "{\n \"schema\": \"inferlint.processes/1\",\n \"snapshots\": []\n}\n"
        );
        let left: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["p.json"], "no temporary left beside it");
        let _ = std::fs::remove_dir_all(d);
    }
}
