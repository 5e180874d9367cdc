//! The run-level tripwires, one file each (checks.md; T16–T18 in this folder's
//! README.md; T19, a fleet's, too). Each takes already-parsed inputs and returns one result; none reads files.

pub mod load_figures;
pub mod measured;
pub mod readings_end;
pub mod run_outcome;
pub mod scraped;
pub mod server_down;
pub mod t01_preemption;
pub mod t02_orphaned_engine;
pub mod t07_probe;
pub mod t08_concurrency;
pub mod t09_ceiling;
pub mod t10_rate;
pub mod t14_null_block;
pub mod t15_client_server;
pub mod t16_gpu_throttled;
pub mod t17_prefix_cache;
pub mod t18_warm_up;
pub mod t19_load_unbalanced;
