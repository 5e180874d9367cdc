//! Writing `results.json` and `report.html` so that a reader never sees half a file and
//! a run folder from someone else cannot redirect the write: the bytes go to a new
//! temporary file beside the target (created exclusively, under a name no one else
//! uses), are synced, then renamed over the target in one step. An existing target that
//! is a symbolic link or not a regular file is refused, never followed; the rename
//! itself replaces a directory entry and never writes through a link, so a link swapped
//! in after the check is replaced, not followed. Killed mid-write, the old file stays
//! whole and a `.NAME.*.partial` file is left beside it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Why an output was not written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{0}: is a symbolic link; inferlint does not write through links (remove it, or name another file)")]
    Link(String),
    #[error("{0}: is not a regular file (a folder, device, FIFO or socket); not replaced")]
    NotAFile(String),
    #[error("{0}: cannot write: {1}")]
    Io(String, std::io::Error),
}

/// Writes `bytes` to `target` whole or not at all.
pub fn write_atomically(target: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let shown = target.display().to_string();
    match std::fs::symlink_metadata(target) {
        Ok(m) if m.file_type().is_symlink() => return Err(OutputError::Link(shown)),
        Ok(m) if !m.is_file() => return Err(OutputError::NotAFile(shown)),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(OutputError::Io(shown, e)),
    }
    let (tmp, mut file) =
        temporary_beside(target).map_err(|e| OutputError::Io(shown.clone(), e))?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, target));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(OutputError::Io(shown, e));
    }
    // The rename is durable once the folder is synced; failing that is not an error.
    if let Some(dir) = parent(target) {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// The folder a path is in (`.` for a bare name).
fn parent(p: &Path) -> Option<&Path> {
    match p.parent() {
        Some(d) if d.as_os_str().is_empty() => Some(Path::new(".")),
        other => other,
    }
}

/// A new file beside `target`, created exclusively (O_EXCL) under a name made of the
/// target's, the process id, the time and a counter.
fn temporary_beside(target: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let dir = parent(target).unwrap_or(Path::new("."));
    let base = target
        .file_name()
        .map_or("output".into(), |n| n.to_string_lossy().into_owned());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(
            ".{base}.{}.{nanos}.{n}.partial",
            std::process::id()
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Whether two paths name the same existing file (same device and inode).
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("inferlint-out-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn replaces_whole_and_leaves_nothing_beside() {
        let d = scratch("whole");
        let t = d.join("results.json");
        std::fs::write(&t, "old").unwrap();
        write_atomically(&t, b"new").unwrap();
        assert_eq!(std::fs::read(&t).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn links_and_folders_are_refused_and_left_alone() {
        let d = scratch("link");
        let victim = d.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let t = d.join("results.json");
        std::os::unix::fs::symlink(&victim, &t).unwrap();
        assert!(matches!(
            write_atomically(&t, b"x"),
            Err(OutputError::Link(_))
        ));
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        let folder = d.join("report.html");
        std::fs::create_dir(&folder).unwrap();
        assert!(matches!(
            write_atomically(&folder, b"x"),
            Err(OutputError::NotAFile(_))
        ));
        assert!(same_file(&victim, &t));
        assert!(!same_file(&victim, &folder));
        let _ = std::fs::remove_dir_all(&d);
    }
}
