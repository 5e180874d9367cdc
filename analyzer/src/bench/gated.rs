//! Numbers read from a load tool's nested result through the plausibility gate, each
//! named by its key path in messages (`benchmarks[1].metrics.request_totals.successful`).

use std::cell::RefCell;

use crate::json::Json;
use crate::plausible::{self, Implausible, Quantity};

/// Reads gated numbers out of one result value; keeps what the gate refused.
pub struct Gated<'a> {
    at: (&'a str, Option<usize>),
    found: RefCell<Vec<Implausible>>,
}

/// The value at `path` (object keys) under `v`.
pub fn at<'v>(v: &'v Json, path: &[&str]) -> Option<&'v Json> {
    path.iter().try_fold(v, |node, k| node.get(k))
}

impl<'a> Gated<'a> {
    pub fn new(at: (&'a str, Option<usize>)) -> Self {
        Gated {
            at,
            found: RefCell::new(Vec::new()),
        }
    }

    /// The number at `path` under `v`, named `prefix.path` when refused; absent when
    /// missing, not a number, or refused.
    pub fn num(&self, v: &Json, prefix: &str, path: &[&str], q: Quantity) -> Option<f64> {
        let x = at(v, path)?.as_f64()?;
        let name = match prefix {
            "" => path.join("."),
            p => format!("{p}.{}", path.join(".")),
        };
        plausible::keep(q, Some(x), self.at, &name, &mut self.found.borrow_mut())
    }

    /// A whole count at `path`: gated first, so 2^63 is refused rather than saturated.
    pub fn count(&self, v: &Json, prefix: &str, path: &[&str]) -> Option<i64> {
        self.num(v, prefix, path, Quantity::Count)
            .map(|x| x.trunc() as i64)
    }

    /// What the gate refused, in reading order.
    pub fn into_refused(self) -> Vec<Implausible> {
        self.found.into_inner()
    }
}
