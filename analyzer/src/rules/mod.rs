//! The rules layer: the registry of tripwires (`registry.rs`); one file per tripwire the
//! analyzer judges (`tNN_slug.rs`), with a function per scope it is judged in; the
//! contexts those functions read (`scope/`); the one conversion of an absent input into
//! "can't tell" (`absent.rs`); the runner that runs a scope's rules in order
//! (`runner.rs`); and the result they return (`verdict.rs`). Rules read parsed inputs and
//! return results; none reads files.

pub mod absent;
mod failure;
pub mod load_failed;
pub mod load_figures;
pub mod outcome;
pub mod readings_end;
pub mod registry;
pub mod runner;
pub mod scope;
pub mod server_down;
mod starts;
pub mod t01_silent_preemption;
pub mod t02_orphaned_engine;
pub mod t04_pool_size_jump;
pub mod t05_large_kv_blocks;
pub mod t06_backend_ignored;
pub mod t07_crash_after_ready;
pub mod t08_concurrency_not_reached;
pub mod t09_falling_ceiling;
pub mod t10_integer_second_timer;
pub mod t11_kv_memory_drift;
pub mod t12_unexplained_failure;
pub mod t14_null_block;
pub mod t15_client_server_mismatch;
pub mod t16_gpu_throttled;
pub mod t17_prefix_cache_hits;
pub mod t18_warm_up_in_window;
pub mod t19_load_unbalanced;
pub mod t20_load_generator_bound;
pub mod t21_output_not_as_asked;
pub mod t22_failures_hidden;
pub mod t23_latency_mismatch;
pub mod t24_coarse_recording;
#[cfg(test)]
pub mod testing;
pub mod verdict;

pub use registry::{Scope, Tripwire};
pub use verdict::{CheckResult, Status};
