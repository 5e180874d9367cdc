//! A labelled fact, the unit of the report's fact lists (the test, the setup, the server).

use serde::Serialize;

/// A labelled fact ("Measured time": "1 min 34 s ...").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fact {
    pub label: String,
    pub value: String,
}

impl Fact {
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> Fact {
        Fact {
            label: label.into(),
            value: value.into(),
        }
    }
}
