//! Everything the report says beyond the verdicts (docs/run-folder.md#results-json): the
//! run's figures, what limited it, the plain account, the facts, and the data behind
//! every chart. All of it is arithmetic on the inputs; the formulas sit next to the code.

pub mod account;
pub mod cache;
pub mod charts;
pub mod fact;
pub mod format;
pub mod limits;
pub mod load_start;
pub mod reduce;
pub mod replay;
pub mod server;
pub mod summary;
