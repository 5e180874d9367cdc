//! Steps 4 and 5, serve mode (docs/tripwires.md#t2, docs/tripwires.md#t13): the GPU gate
//! (T2 before a start: the clear-card rule over 10 s, counting every engine's servers,
//! into `gate.json`) and the free port (whatever listens there would be taken for the new
//! server).

use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use analyzer::docs::gate::{Gate, Gpu, ServerProcess};
use analyzer::docs::manifest::Stage;
use analyzer::docs::GATE;
use analyzer::rules::t02_orphaned_engine::{self as t02, CardCheck, Rule, GATE_TIMEOUT_S};

use super::{address, problem, Run, Step, Stop};
use crate::procs::{self, ProcFs};
use crate::say;
use crate::teardown::{self, Live};

/// The clear-card rule on the live card, as `gate.json` records it. `gpus`: the cards'
/// facts, written by `gpu-inspect -o` only.
pub fn gate(fs: &ProcFs, rule: &Rule, gpus: Option<Vec<Gpu>>) -> Gate {
    let mut live = Live::new(fs.clone(), 0);
    let check = teardown::card_rule(&mut live, rule);
    let servers = procs::live_servers(fs).iter().map(|s| s.doc()).collect();
    gate_doc(rule, check, servers, true, gpus)
}

/// `gate.json` from the rule and what it found; `servers` alive at the last reading.
pub fn gate_doc(
    rule: &Rule,
    check: CardCheck,
    servers: Vec<ServerProcess>,
    linux: bool,
    gpus: Option<Vec<Gpu>>,
) -> Gate {
    Gate {
        max_used_mib: rule.max_used_mib,
        consecutive: rule.consecutive,
        interval_s: rule.interval_s,
        timeout_s: rule.timeout_s,
        readings: check.readings,
        clear: check.clear,
        reason: check.reason,
        servers,
        linux,
        gpus,
    }
}

/// Something already answers at the address.
pub fn port_taken(host: &str, port: u16) -> bool {
    let Ok(addrs) = (host, port).to_socket_addrs() else {
        return false;
    };
    addrs
        .into_iter()
        .any(|a| TcpStream::connect_timeout(&a, Duration::from_secs(1)).is_ok())
}

impl Run {
    /// Step 4.
    pub(super) fn gate_step(&mut self) -> Step<()> {
        say("== is the GPU free?");
        let gate = gate(&self.fs, &Rule::with_timeout(GATE_TIMEOUT_S), None);
        self.write(GATE, &gate);
        match gate.clear {
            // No reader of the card: can't tell, which is not "not free" (a departure
            // from the reference: docs/tripwires.md#t2).
            None if t02::no_reader(&gate.reason) => {
                if self.opts.require_gpu_check {
                    return problem(
                        Stage::Gate,
                        format!("{} (--require-gpu-check)", gate.reason),
                    );
                }
                say(&format!(
                    "warning: {}; starting the server anyway (--require-gpu-check refuses)",
                    gate.reason
                ));
                Ok(())
            }
            None => Err(Stop::Interrupted(Stage::Gate)),
            Some(false) => problem(Stage::Gate, "the GPU is not free; start no server on it"),
            Some(true) => Ok(()),
        }
    }

    /// Step 5: the address's host and port, when it has them.
    pub(super) fn port_step(&mut self) -> Step<Option<u16>> {
        let host_port = address::host_port(&self.manifest.url);
        if let Some((host, port)) = &host_port {
            if port_taken(host, *port) {
                return problem(
                    Stage::Port,
                    format!(
                        "something already answers at {}: whatever listens there would be taken for the new server",
                        self.manifest.url
                    ),
                );
            }
        }
        Ok(host_port.map(|(_, port)| port))
    }
}
