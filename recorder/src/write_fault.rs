//! A write that fails while recording (a full disk, an I/O error, a folder turned
//! read-only) ends the run cleanly instead of leaving it to run on unrecorded: whichever
//! writer hits it reports it here, the load's wait sees it and stops the load, and the
//! closing steps put it in the manifest's outcome. So that a full disk still leaves how
//! the run ended written down, the folder holds a reserve (`docs::RESERVE`) from the start,
//! freed when a closing document finds no room.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use analyzer::docs::RESERVE;

/// Room kept aside: the closing documents (processes, teardown, the manifest written
/// beside its old copy) take a page or two each, 16 KiB on a tmpfs in the fault trial.
pub const RESERVE_BYTES: usize = 32 * 1024;

/// The first write that failed, shared by every writer of one run.
#[derive(Debug, Clone, Default)]
pub struct WriteFault(Arc<OnceLock<String>>);

impl WriteFault {
    /// Records a failed write of `file` (the first one is kept) and returns it in words.
    pub fn report(&self, e: &std::io::Error, file: &str) -> String {
        let text = describe(e, file);
        let _ = self.0.set(text.clone());
        text
    }

    /// The first failed write, in words.
    pub fn get(&self) -> Option<&str> {
        self.0.get().map(String::as_str)
    }
}

/// "no space left on device while writing run.series.jsonl": the system's words for the
/// error (without its number), then the file.
pub fn describe(e: &std::io::Error, file: &str) -> String {
    let shown = e.to_string();
    let words = match shown.rfind(" (os error ") {
        Some(at) if shown.ends_with(')') => &shown[..at],
        _ => shown.as_str(),
    };
    let mut chars = words.chars();
    let first = chars.next().map(|c| c.to_lowercase().to_string());
    format!(
        "{}{} while writing {file}",
        first.unwrap_or_default(),
        chars.as_str()
    )
}

/// Sets the reserve aside in `dir` (written and synced, so the room is really taken).
pub fn set_aside(dir: &Path) -> std::io::Result<()> {
    let mut f = std::fs::File::create(dir.join(RESERVE))?;
    f.write_all(&[0u8; RESERVE_BYTES])?;
    f.sync_all()
}

/// Frees the reserve; true when there was one to free.
pub fn release(dir: &Path) -> bool {
    std::fs::remove_file(dir.join(RESERVE)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_systems_words_then_the_file() {
        let full = std::io::Error::from_raw_os_error(28);
        assert_eq!(
            describe(&full, "run.series.jsonl"),
            "no space left on device while writing run.series.jsonl"
        );
        let ro = std::io::Error::from_raw_os_error(30);
        assert_eq!(
            describe(&ro, "manifest.json"),
            "read-only file system while writing manifest.json"
        );
        let other = std::io::Error::new(std::io::ErrorKind::WriteZero, "Short write");
        assert_eq!(describe(&other, "x"), "short write while writing x");
    }

    #[test]
    fn the_first_fault_is_kept() {
        let f = WriteFault::default();
        assert_eq!(f.get(), None);
        let shared = f.clone();
        shared.report(&std::io::Error::from_raw_os_error(28), "a");
        f.report(&std::io::Error::from_raw_os_error(5), "b");
        assert_eq!(f.get(), Some("no space left on device while writing a"));
    }

    #[test]
    fn the_reserve_takes_room_and_is_freed() {
        let d = std::env::temp_dir().join(format!("rec-reserve-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        set_aside(&d).unwrap();
        let len = std::fs::metadata(d.join(RESERVE)).unwrap().len();
        assert_eq!(len, RESERVE_BYTES as u64);
        assert!(release(&d));
        assert!(!release(&d));
        let _ = std::fs::remove_dir_all(d);
    }
}
