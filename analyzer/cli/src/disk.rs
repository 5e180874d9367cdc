//! Reading inputs from disk: one file given by path, or a whole run folder. The command,
//! the benchmarks and the tests all load folders through here, so they see the same files.

use std::path::Path;

use analyzer::analysis::{InputFile, RunInput};
use analyzer::folder;

/// Reads a file given on the command line; an unreadable file keeps its error.
pub fn read_input(path: &Path) -> InputFile {
    let name = path.display().to_string();
    // Only regular files: a device or pipe (`/dev/zero`, a FIFO) could be read forever.
    let bytes = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err("is a folder, not a file".to_string()),
        Ok(m) if !m.is_file() => Err("not a regular file".to_string()),
        Ok(_) => std::fs::read(path).map_err(|e| io_reason(&e)),
        Err(e) => Err(io_reason(&e)),
    };
    InputFile { name, bytes }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => format!("cannot read: {e}"),
    }
}

/// The regular files directly inside a folder, by name.
pub fn folder_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir)?.flatten() {
        if e.file_type().is_ok_and(|t| t.is_file()) {
            if let Some(n) = e.file_name().to_str() {
                names.push(n.to_string());
            }
        }
    }
    Ok(names)
}

/// Loads a run folder's files by role (formats.md §1.2), naming each file as the folder
/// path as given joined with its name.
pub fn load_run_folder(dir: &Path) -> std::io::Result<RunInput> {
    load_run_folder_as(dir, &dir.display().to_string())
}

/// As [`load_run_folder`], naming files under `shown` instead of the folder's path (tests
/// name fixtures by their path relative to the fixtures folder).
pub fn load_run_folder_as(dir: &Path, shown: &str) -> std::io::Result<RunInput> {
    let names = folder_names(dir)?;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let read = |n: &str| read_input(&dir.join(n)).bytes;
    Ok(folder::load(shown, &refs, &read))
}
