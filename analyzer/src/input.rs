//! Input errors: a file that cannot be read as its format (docs/run-folder.md#reading).
//! Each names the file and, where there is one, the 1-based line at fault.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct InputError {
    /// The file as the user named it (or as found in the run folder).
    pub file: String,
    pub line: Option<usize>,
    pub reason: String,
}

impl InputError {
    pub fn new(file: &str, line: Option<usize>, reason: impl Into<String>) -> Self {
        InputError {
            file: file.to_string(),
            line,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.reason),
            None => write!(f, "{}: {}", self.file, self.reason),
        }
    }
}

/// Strict UTF-8 for the formats that require it (snapshots, result files, documents).
pub fn decode_strict<'a>(file: &str, bytes: &'a [u8]) -> Result<&'a str, InputError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        InputError::new(file, Some(line), "not valid UTF-8 text")
    })
}
