//! One server start's boot log, and several starts with the same settings compared.

use crate::bootlog::BootLog;
use crate::rules::absent::Input;

/// One start's log.
pub struct BootLogScope<'a> {
    pub log: Input<'a, BootLog>,
    /// `check-log` also reports recognised lines in an unknown format.
    pub with_unparsed: bool,
    /// The run's own documents show the server died during the run: T7 then comes from
    /// the run, naming the cause this log shows, once.
    pub server_died: bool,
}

/// Starts with the same settings (a group of two or more logs), for T4 and T11.
pub struct StartsScope<'a> {
    pub logs: &'a [BootLog],
    /// Indexes into `logs`.
    pub group: &'a [usize],
    /// The labels of the logs that take part in no comparison.
    pub not_compared: &'a [String],
}
