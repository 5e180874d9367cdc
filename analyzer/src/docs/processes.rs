//! `processes.json` (`inferlint.processes/1`, docs/run-folder.md#processes): the launched
//! server's process tree at readiness and at the stop. No check reads it; `teardown --run
//! DIR` uses it to recognise the run's processes.

use serde::{Deserialize, Serialize};

use super::keyword::keywords;
use super::Document;
use crate::engine::Engine;

/// One process as `/proc` showed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Process {
    pub pid: i32,
    pub ppid: i32,
    pub sid: i32,
    /// Start time in clock ticks after boot: tells a process from a reused PID.
    pub start_ticks: u64,
    /// `/proc/PID/stat`'s state letter (`S`, `R`, `Z`, ...).
    pub state: char,
    pub comm: String,
    pub argv: Vec<String>,
    /// The engine when the process is a server process (`recorder/src/procs.rs`).
    pub engine: Option<Engine>,
}

keywords! {
    /// When the tree was read.
    pub enum When {
        Ready = "ready",
        Stop = "stop",
    }
}

/// The owned tree at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeSnapshot {
    pub when: When,
    pub t_wall: f64,
    pub processes: Vec<Process>,
}

/// `processes.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Processes {
    pub snapshots: Vec<TreeSnapshot>,
}

impl Document for Processes {
    const SCHEMA: &'static str = "inferlint.processes/1";
}

#[cfg(test)]
mod tests {
    use super::super::{read, tests::fixture, to_bytes};
    use super::*;

    #[test]
    fn recorded_trees_round_trip_byte_for_byte() {
        for engine in ["vllm", "sglang", "trtllm"] {
            let bytes = fixture(engine, "processes.json");
            let p: Processes = read("processes.json", &bytes).unwrap();
            assert_eq!(p.snapshots[0].when, When::Ready);
            assert_eq!(p.snapshots.last().unwrap().when, When::Stop);
            assert_eq!(
                String::from_utf8(to_bytes(&p)).unwrap(),
                String::from_utf8(bytes).unwrap()
            );
        }
    }

    #[test]
    fn a_state_is_one_letter() {
        let e = read::<Processes>(
            "processes.json",
            br#"{"schema": "inferlint.processes/1", "snapshots": [{"when": "stop", "t_wall": 1, "processes": [
                {"pid": 1, "ppid": 0, "sid": 1, "start_ticks": 5, "state": "SS", "comm": "x", "argv": [], "engine": null}]}]}"#,
        )
        .unwrap_err();
        assert!(
            e.reason.starts_with("snapshots[0].processes[0].state"),
            "{e}"
        );
    }
}
