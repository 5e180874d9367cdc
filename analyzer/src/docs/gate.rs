//! `gate.json` (`inferlint.gate/1`, docs/run-folder.md#gate): the clear-card readings
//! before a server is started (`record --serve`, `gpu-inspect -o`), and the parts it
//! shares with `teardown.json` and the manifest: a reading, a server process, a card's
//! facts. The rule that judges the readings is T2's (`rules::t02_orphaned_engine`).

use serde::{Deserialize, Serialize};

use super::Document;
use crate::engine::Engine;

/// One clear-card reading, written as `[elapsed s, MiB used or null, live servers]`
/// (the clear-card rule's: docs/tripwires.md#t2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "(f64, Option<i64>, u32)", into = "(f64, Option<i64>, u32)")]
pub struct Reading {
    /// Seconds since the rule started, rounded to 3 decimals.
    pub elapsed_s: f64,
    /// The largest `memory.used` over all GPUs; none when unreadable.
    pub used_mib: Option<i64>,
    /// Live server processes of every engine.
    pub servers: u32,
}

impl From<(f64, Option<i64>, u32)> for Reading {
    fn from((elapsed_s, used_mib, servers): (f64, Option<i64>, u32)) -> Reading {
        Reading {
            elapsed_s,
            used_mib,
            servers,
        }
    }
}

impl From<Reading> for (f64, Option<i64>, u32) {
    fn from(r: Reading) -> Self {
        (r.elapsed_s, r.used_mib, r.servers)
    }
}

/// A live server process (as `recorder/src/procs.rs` recognises one): `gate.json`'s
/// `servers`, `teardown.json`'s `left_alone`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerProcess {
    pub pid: i32,
    pub engine: Engine,
    pub argv: Vec<String>,
}

/// One card as `nvidia-smi` lists it; `None`: not reported.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Gpu {
    pub index: i64,
    pub name: String,
    pub memory_total_mib: Option<i64>,
    pub memory_used_mib: Option<i64>,
    pub memory_free_mib: Option<i64>,
    pub driver_version: Option<String>,
    pub compute_cap: Option<String>,
    /// The architecture family from the compute capability.
    pub family: Option<String>,
}

/// `gate.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Gate {
    pub max_used_mib: i64,
    pub consecutive: u32,
    pub interval_s: f64,
    pub timeout_s: f64,
    pub readings: Vec<Reading>,
    /// None: the rule was cut short (a signal), so the card was not judged.
    pub clear: Option<bool>,
    pub reason: String,
    /// Live server processes at the last reading.
    pub servers: Vec<ServerProcess>,
    /// False where there is no `/proc`: the processes could not be listed.
    pub linux: bool,
    /// The cards' facts (`gpu-inspect -o` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus: Option<Vec<Gpu>>,
}

impl Default for Gate {
    /// Missing keys: nothing read, nothing judged, on Linux (`linux` is refused only
    /// when it says false).
    fn default() -> Self {
        Gate {
            max_used_mib: 0,
            consecutive: 0,
            interval_s: 0.0,
            timeout_s: 0.0,
            readings: Vec::new(),
            clear: None,
            reason: String::new(),
            servers: Vec::new(),
            linux: true,
            gpus: None,
        }
    }
}

impl Document for Gate {
    const SCHEMA: &'static str = "inferlint.gate/1";
}

#[cfg(test)]
mod tests {
    use super::super::{read, tests::fixture, to_bytes};
    use super::*;

    #[test]
    fn recorded_gates_round_trip_byte_for_byte() {
        for engine in ["vllm", "sglang", "trtllm"] {
            let bytes = fixture(engine, "gate.json");
            let gate: Gate = read("gate.json", &bytes).unwrap();
            assert_eq!(gate.clear, Some(true), "{engine}");
            assert_eq!(
                String::from_utf8(to_bytes(&gate)).unwrap(),
                String::from_utf8(bytes).unwrap()
            );
        }
    }

    #[test]
    fn the_gate_only_example_reads_and_unknown_keys_are_ignored() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/edge/gate-only/gate.json"
        );
        let gate: Gate = read("gate.json", &std::fs::read(path).unwrap()).unwrap();
        assert_eq!(gate.clear, Some(false));
        assert_eq!(gate.readings.len(), 6);
        assert_eq!(
            gate.readings[1],
            Reading {
                elapsed_s: 2.001,
                used_mib: Some(21768),
                servers: 1
            }
        );
        assert_eq!(gate.servers[0].engine, Engine::Vllm);
        let gate: Gate = read(
            "gate.json",
            br#"{"schema": "inferlint.gate/1", "clear": true, "later": {"x": [1]}}"#,
        )
        .unwrap();
        assert_eq!(
            (gate.clear, gate.linux, gate.gpus),
            (Some(true), true, None)
        );
    }

    #[test]
    fn a_written_gate_reads_back() {
        let gate = Gate {
            max_used_mib: 800,
            consecutive: 2,
            interval_s: 2.0,
            timeout_s: 10.0,
            readings: vec![Reading {
                elapsed_s: 0.0,
                used_mib: None,
                servers: 0,
            }],
            clear: Some(false),
            reason: "not clear after 10s: last reading None MiB used, 0 server processes alive"
                .into(),
            servers: vec![],
            linux: true,
            gpus: Some(vec![Gpu {
                index: 0,
                name: "NVIDIA GeForce RTX 4090".into(),
                compute_cap: Some("8.9".into()),
                family: Some("Ada Lovelace".into()),
                ..Gpu::default()
            }]),
        };
        let bytes = to_bytes(&gate);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.starts_with("{\n \"schema\": \"inferlint.gate/1\",\n \"max_used_mib\": 800,"));
        assert!(text.contains("\"readings\": [\n  [\n   0.0,\n   null,\n   0\n  ]\n ],"));
        assert!(text.ends_with("}\n"));
        assert_eq!(read::<Gate>("gate.json", &bytes).unwrap(), gate);
    }
}
