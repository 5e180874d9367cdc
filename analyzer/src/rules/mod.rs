//! The rules layer: the registry of tripwires (`registry.rs`), one file per tripwire
//! judged by the analyzer (`tNN_slug.rs`), and the result they return (`verdict.rs`).
//! Rules read parsed inputs and return results; none reads files.

pub mod load_figures;
pub mod measured;
pub mod outcome;
pub mod registry;
pub mod scraped;
pub mod server_down;
pub mod t01_silent_preemption;
pub mod t02_orphaned_engine;
pub mod t07_crash_after_ready;
pub mod t08_concurrency_not_reached;
pub mod t09_falling_ceiling;
pub mod t10_integer_second_timer;
pub mod t14_null_block;
pub mod t15_client_server_mismatch;
pub mod t16_gpu_throttled;
pub mod t17_prefix_cache_hits;
pub mod t18_warm_up_in_window;
pub mod t19_load_unbalanced;
pub mod verdict;

pub use registry::{Scope, Tripwire};
pub use verdict::{CheckResult, Status};
