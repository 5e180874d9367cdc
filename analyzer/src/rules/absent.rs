//! What a rule gets when it asks its scope for an input, and the one conversion of an
//! absent input into a result.
//!
//! A scope offers each input as [`Input`]: there to read, not given (nothing said it
//! should be: the rule gives no result), missing (the run should hold it: "can't tell",
//! saying why), or unusable (the file is there but cannot be read: "can't tell", naming
//! it). A rule asks with [`Input::need`] and `?`; the runner turns what comes back with
//! [`Absent::into_result`], so every rule says a missing or unusable input the same way.

use serde::Serialize;

use super::registry::Tripwire;
use super::verdict::{CheckResult, Status};
use crate::input::InputError;

/// An input as a scope offers it.
#[derive(Debug)]
pub enum Input<'a, T> {
    Present(&'a T),
    /// Not given, and nothing in the run says it should have been.
    NotGiven,
    /// The run should hold it and does not.
    Missing(Gap),
    /// Given, and unusable.
    Unusable(&'a InputError),
}

impl<T> Clone for Input<'_, T> {
    fn clone(&self) -> Self {
        match self {
            Input::Present(v) => Input::Present(v),
            Input::NotGiven => Input::NotGiven,
            Input::Missing(g) => Input::Missing(g.clone()),
            Input::Unusable(e) => Input::Unusable(e),
        }
    }
}

impl<'a, T> Input<'a, T> {
    /// A parsed file: absent is not given, a parse error unusable.
    pub fn from_parsed(parsed: Option<&'a Result<T, InputError>>) -> Input<'a, T> {
        match parsed {
            Some(Ok(v)) => Input::Present(v),
            Some(Err(e)) => Input::Unusable(e),
            None => Input::NotGiven,
        }
    }

    /// The input, or why there is none.
    pub fn need(&self) -> Result<&'a T, Absent> {
        match self {
            Input::Present(v) => Ok(v),
            Input::NotGiven => Err(Absent::NotGiven),
            Input::Missing(g) => Err(Absent::Missing(g.clone())),
            Input::Unusable(e) => Err(Absent::Unusable((*e).clone())),
        }
    }

    /// The input when it is there.
    pub fn present(&self) -> Option<&'a T> {
        match self {
            Input::Present(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_given(&self) -> bool {
        !matches!(self, Input::NotGiven)
    }

    /// Not given is missing for a reason the scope knows (`gap`).
    pub fn or_missing(self, gap: Option<Gap>) -> Input<'a, T> {
        match (self, gap) {
            (Input::NotGiven, Some(g)) => Input::Missing(g),
            (other, _) => other,
        }
    }
}

/// Why a missing input is missing, as its scope says it.
#[derive(Debug, Clone, PartialEq)]
pub enum Gap {
    /// The run should hold it (a broken run lacks its after-load snapshot, say).
    Run(String),
    /// A phase's stretch of the recording cannot be read; the reason is the message.
    Phase(String),
    /// A replica's folder lacks a file (`what`).
    Replica { id: String, what: String },
}

/// Why a rule gave no verdict of its own.
#[derive(Debug, Clone, PartialEq)]
pub enum Absent {
    /// An input it needs was not given: no result at all.
    NotGiven,
    Missing(Gap),
    Unusable(InputError),
}

impl From<Gap> for Absent {
    fn from(g: Gap) -> Absent {
        Absent::Missing(g)
    }
}

/// The evidence of a "can't tell" for an absent input: what was missing or why it was
/// unusable, and for a replica, which.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CantTell {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing_input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replica: Option<String>,
}

/// A rule's answer: its result, or why it has none.
pub type Judged = Result<CheckResult, Absent>;

impl Absent {
    /// The "can't tell" result that says what was absent; none for an input not given.
    pub fn into_result(self, tripwire: Tripwire) -> Option<CheckResult> {
        match self {
            Absent::NotGiven => None,
            Absent::Unusable(e) => Some(unusable(tripwire, &e)),
            Absent::Missing(Gap::Run(why)) => Some(
                CheckResult::new(tripwire, Status::Unknown, format!("can't tell: {why}")).found(
                    CantTell {
                        missing_input: Some(why),
                        ..CantTell::default()
                    },
                ),
            ),
            Absent::Missing(Gap::Phase(why)) => {
                Some(CheckResult::new(tripwire, Status::Unknown, why))
            }
            Absent::Missing(Gap::Replica { id, what }) => Some(
                CheckResult::new(
                    tripwire,
                    Status::Unknown,
                    format!(
                        "{}/{id}/ has no {what}, so this replica's {} can't be told",
                        crate::docs::REPLICAS_DIR,
                        tripwire.id()
                    ),
                )
                .found(CantTell {
                    replica: Some(id),
                    ..CantTell::default()
                }),
            ),
        }
    }
}

/// "Can't tell": an input is unusable; the message and evidence name the file and why.
pub fn unusable(tripwire: Tripwire, e: &InputError) -> CheckResult {
    CheckResult::new(tripwire, Status::Unknown, format!("unusable input: {e}")).found(CantTell {
        input_error: Some(e.to_string()),
        ..CantTell::default()
    })
}

/// Runs a rule and converts what it could not read.
pub fn settle(tripwire: Tripwire, judged: Judged) -> Option<CheckResult> {
    judged.or_else(|a| a.into_result(tripwire).ok_or(())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err() -> InputError {
        InputError::new("after.snapshot.json", None, "not JSON")
    }

    #[test]
    fn each_absence_is_said_one_way() {
        let t = Tripwire::SilentPreemption;
        assert_eq!(Absent::NotGiven.into_result(t), None);
        let r = Absent::Missing(Gap::Run("no snapshot after the load".into()))
            .into_result(t)
            .unwrap();
        assert_eq!(
            (r.status, r.message.as_str()),
            (Status::Unknown, "can't tell: no snapshot after the load")
        );
        let r = Absent::Unusable(err()).into_result(t).unwrap();
        assert!(r.message.starts_with("unusable input: after.snapshot.json"));
        let r = Absent::Missing(Gap::Replica {
            id: "a".into(),
            what: "series.jsonl".into(),
        })
        .into_result(Tripwire::FallingCeiling)
        .unwrap();
        assert_eq!(
            r.message,
            "replicas/a/ has no series.jsonl, so this replica's T9 can't be told"
        );
    }

    #[test]
    fn need_follows_the_input() {
        let v = 3;
        assert_eq!(Input::Present(&v).need(), Ok(&3));
        assert_eq!(Input::<i32>::NotGiven.need(), Err(Absent::NotGiven));
        let e = err();
        assert_eq!(
            Input::<i32>::Unusable(&e).need(),
            Err(Absent::Unusable(e.clone()))
        );
        let gap = Gap::Run("why".into());
        assert_eq!(
            Input::<i32>::NotGiven.or_missing(Some(gap.clone())).need(),
            Err(Absent::Missing(gap))
        );
    }
}
