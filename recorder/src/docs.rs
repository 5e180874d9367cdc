//! Writing documents so that a kill at any instant leaves a readable folder: the bytes go
//! to a temporary name in the same folder, are synced, then renamed over the real name.

use std::io::Write;
use std::path::Path;

use analyzer::json::Json;

pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, dir.join(name))
}

/// A recorder document: one-space indent and a final newline (recorder.md §9.2).
pub fn write_json(dir: &Path, name: &str, doc: &Json) -> std::io::Result<()> {
    let mut text = doc.to_pretty(1);
    text.push('\n');
    write_atomic(dir, name, text.as_bytes())
}

/// Writes to a path given by the user (`-o FILE`), creating parent folders.
pub fn write_json_to(path: &Path, doc: &Json) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    write_json(&dir, &name, doc)
}

/// Prints result objects: the JSON array under `--json`, else one line each.
pub fn print_results(results: &[analyzer::CheckResult], json: bool) {
    if json {
        println!("{}", analyzer::json::to_pretty(results, 1));
    } else {
        for r in results {
            println!(
                "[{:>3}] {}  {}",
                r.id(),
                r.status.terminal_label(),
                r.message
            );
        }
    }
}

/// Exit status of verdict-reporting commands (formats.md §8.3).
pub fn exit_status(results: &[analyzer::CheckResult], strict: bool) -> i32 {
    analyzer::verdict::exit_status(results, strict, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_leaves_no_temporary() {
        let d = std::env::temp_dir().join(format!("rec-docs-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let doc = analyzer::json::obj([("schema", Json::from("x/1")), ("a", Json::Int(1))]);
        write_json(&d, "m.json", &doc).unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("m.json")).unwrap(),
            "{\n \"schema\": \"x/1\",\n \"a\": 1\n}\n"
        );
        assert!(!d.join(".m.json.tmp").exists());
        let _ = std::fs::remove_dir_all(d);
    }
}
