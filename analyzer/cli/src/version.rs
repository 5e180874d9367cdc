//! What `--version` says, for `inferlint` and `inferlint-recorder` alike: the version,
//! the commit they were built from and whether `report.html` is the interactive page.
//! The facts come from `build.rs`.

/// `0.4.0 (commit 1a2b3c4d5e6f, interactive viewer embedded)`.
#[cfg(inferlint_viewer)]
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("INFERLINT_COMMIT"),
    ", interactive viewer embedded)"
);

/// `0.4.0 (commit unknown, no viewer: report.html is the plain page)`.
#[cfg(not(inferlint_viewer))]
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("INFERLINT_COMMIT"),
    ", no viewer: report.html is the plain page)"
);

/// Whether the interactive viewer is inside this build.
pub const VIEWER_EMBEDDED: bool = cfg!(inferlint_viewer);
