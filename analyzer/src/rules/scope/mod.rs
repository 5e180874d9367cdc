//! The scopes a tripwire is judged in, each a context that offers the rules their inputs
//! (`registry::Scope` names them): one server start's boot log and several starts
//! compared (`boot.rs`), the whole run (`run.rs`), a phase of a sweep (`phase.rs`), one
//! replica and the fleet (`fleet.rs`), and a load tool's own scrape (`scrape.rs`). A
//! context is built by the analysis from parsed inputs; the rules only read it.

pub mod boot;
pub mod fleet;
pub mod phase;
pub mod run;
pub mod scrape;
pub mod window;

pub use boot::{BootLogScope, StartsScope};
pub use fleet::{FleetScope, ReplicaScope, Share};
pub use phase::PhaseScope;
pub use run::RunScope;
pub use scrape::ScrapeScope;
