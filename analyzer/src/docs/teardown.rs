//! `teardown.json` (`inferlint.teardown/1`, docs/run-folder.md#teardown): how the server
//! was stopped (`record --serve`, `teardown -o`): the signals sent, what was left, and
//! the clear-card readings after the stop, which T2 judges.

use serde::{Deserialize, Serialize};

use super::gate::{Reading, ServerProcess};
use super::keyword::keywords;
use super::manifest::Exit;
use super::Document;

/// The launched server: its PID and session.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Launched {
    pub pid: i32,
    pub sid: i32,
}

/// Who a signal went to: a whole process group, or one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    Group(i32),
    Pid(i32),
}

impl Target {
    /// The group or process id.
    pub fn id(self) -> i32 {
        match self {
            Target::Group(id) | Target::Pid(id) => id,
        }
    }
}

keywords! {
    /// The signals a stop sends.
    pub enum StopSignal {
        Term = "SIGTERM",
        Kill = "SIGKILL",
    }
}

keywords! {
    /// How a signal went: delivered, the target already gone, or refused (another user's).
    pub enum Delivery {
        Sent = "sent",
        Gone = "gone",
        NotPermitted = "not permitted",
    }
}

/// One signal: `{"elapsed_s": 0.006, "group": 6068, "signal": "SIGTERM", "result": "sent"}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SignalRecord {
    /// Seconds since the stop began, rounded to 3 decimals.
    pub elapsed_s: f64,
    #[serde(flatten)]
    pub to: Target,
    pub signal: StopSignal,
    pub result: Delivery,
}

/// `teardown.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Teardown {
    /// The run's server (null for `teardown` without `--run`).
    pub launched: Option<Launched>,
    pub signals: Vec<SignalRecord>,
    pub server_exit: Option<Exit>,
    /// Owned PIDs still alive after the launched process exited (the sweep after the
    /// stop, `recorder/src/record/stop.rs`).
    pub left_after_the_server_stopped: Vec<i32>,
    /// Servers that were not this run's, left running.
    pub left_alone: Vec<ServerProcess>,
    pub max_used_mib: i64,
    pub consecutive: u32,
    pub interval_s: f64,
    pub timeout_s: f64,
    pub readings: Vec<Reading>,
    /// None: the card was not checked.
    pub clear: Option<bool>,
    pub reason: Option<String>,
    /// A second signal cut the stop short.
    pub abandoned: bool,
}

impl Document for Teardown {
    const SCHEMA: &'static str = "inferlint.teardown/1";
}

#[cfg(test)]
mod tests {
    use super::super::{read, tests::fixture, to_bytes};
    use super::*;

    #[test]
    fn recorded_teardowns_round_trip_byte_for_byte() {
        for engine in ["vllm", "sglang", "trtllm"] {
            let bytes = fixture(engine, "teardown.json");
            let t: Teardown = read("teardown.json", &bytes).unwrap();
            assert_eq!(t.signals[0].to, Target::Group(t.launched.unwrap().sid));
            assert_eq!(t.signals[0].signal, StopSignal::Term);
            assert_eq!(t.server_exit, Some(Exit::Code(0)));
            assert_eq!(
                String::from_utf8(to_bytes(&t)).unwrap(),
                String::from_utf8(bytes).unwrap()
            );
        }
    }

    #[test]
    fn signals_to_a_pid_and_refusals_read_back() {
        let t = Teardown {
            signals: vec![SignalRecord {
                elapsed_s: 15.0,
                to: Target::Pid(7),
                signal: StopSignal::Kill,
                result: Delivery::NotPermitted,
            }],
            server_exit: Some(Exit::Signal("SIGKILL".into())),
            abandoned: true,
            ..Teardown::default()
        };
        let bytes = to_bytes(&t);
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.contains("\"elapsed_s\": 15.0,\n   \"pid\": 7,\n   \"signal\": \"SIGKILL\",\n   \"result\": \"not permitted\""),
            "{text}"
        );
        assert!(text.contains("\"server_exit\": \"SIGKILL\","));
        assert_eq!(read::<Teardown>("teardown.json", &bytes).unwrap(), t);
    }

    #[test]
    fn unknown_words_are_refused() {
        let e = read::<Teardown>(
            "teardown.json",
            br#"{"schema": "inferlint.teardown/1", "signals": [{"elapsed_s": 0, "pid": 1, "signal": "SIGHUP", "result": "sent"}]}"#,
        )
        .unwrap_err();
        assert!(e.reason.contains("SIGHUP"), "{e}");
    }
}
