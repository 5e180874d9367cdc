//! The largest file inferlint reads for each role of a run folder, checked from the file's
//! size before a byte is read, so a huge or sparse file is refused without allocating its
//! size. Each limit leaves a wide margin over the largest real file of its kind: a 7-day
//! recording at 4 readings a second is about 550 MB of series (the 24-hour bench series is
//! 77.5 MB), a snapshot of a busy server under 1 MB.

use crate::docs::{RECORDER_DOCUMENTS, SERIES_SUFFIX};

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// What a file is read as, for its size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `*.series.jsonl`: 4 GiB (7 days at 4 Hz is about 550 MB).
    Series,
    /// A boot log or the load command's output: 2 GiB.
    Log,
    /// A metrics snapshot (`.snapshot.json`, Prometheus text): 64 MiB.
    Snapshot,
    /// A load tool's result (with per-request detail it can reach hundreds of MB): 1 GiB.
    LoadResult,
    /// One of the recorder's documents (manifest, gate, probe, teardown, processes): 64 MiB.
    Document,
}

impl Role {
    /// The largest file of this role read, in bytes.
    pub fn max_bytes(self) -> u64 {
        match self {
            Role::Series => 4 * GIB,
            Role::Log => 2 * GIB,
            Role::Snapshot => 64 * MIB,
            Role::LoadResult => GIB,
            Role::Document => 64 * MIB,
        }
    }

    /// How a message names it.
    pub fn noun(self) -> &'static str {
        match self {
            Role::Series => "series",
            Role::Log => "log",
            Role::Snapshot => "snapshot",
            Role::LoadResult => "load-tool result",
            Role::Document => "recorder document",
        }
    }

    /// The role of a run folder's file by its name (the patterns of `folder`); any other
    /// name is read as a load-tool result candidate.
    pub fn of_name(name: &str) -> Role {
        if name.ends_with(SERIES_SUFFIX) {
            Role::Series
        } else if name.ends_with(".log") {
            Role::Log
        } else if RECORDER_DOCUMENTS.contains(&name) {
            Role::Document
        } else if name.ends_with(".prom")
            || name.ends_with(".snapshot.json")
            || (name.ends_with(".json") && (name.contains("before") || name.contains("after")))
        {
            Role::Snapshot
        } else {
            Role::LoadResult
        }
    }

    /// Why a file of `len` bytes is not read, when it is over the limit.
    pub fn refuse(self, len: u64) -> Option<String> {
        (len > self.max_bytes()).then(|| {
            format!(
                "{} bytes, over the {} MiB limit for a {}: not read",
                crate::num::thousands(len as f64),
                crate::num::thousands((self.max_bytes() / MIB) as f64),
                self.noun()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_and_limits() {
        assert_eq!(Role::of_name("run.series.jsonl"), Role::Series);
        assert_eq!(Role::of_name("boot.log"), Role::Log);
        assert_eq!(Role::of_name("gate.json"), Role::Document);
        assert_eq!(Role::of_name("a_before.json"), Role::Snapshot);
        assert_eq!(Role::of_name("bench.jsonl"), Role::LoadResult);
        assert!(Role::Series.refuse(550 * MIB).is_none());
        assert_eq!(
            Role::Snapshot.refuse(65 * MIB).unwrap(),
            "68,157,440 bytes, over the 64 MiB limit for a snapshot: not read"
        );
    }
}
