//! JUnit XML in the shape Jenkins' `junit-10.xsd` accepts, which GitLab's
//! `artifacts:reports:junit` and the GitHub test-report actions read too: `<testsuites>`
//! holding one `<testsuite name tests failures errors skipped time>` per suite, its
//! `<properties>`, and one `<testcase classname name time>` per case with at most one
//! `<failure>`, `<error>` or `<skipped>` (`message`, `type`) and a `<system-out>`.
//!
//! Written with quick-xml, which escapes markup; characters XML 1.0 forbids (most control
//! characters) cannot be escaped at all, so [`xml_text`] replaces them first.

use std::borrow::Cow;

use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use super::{Outcome, Suite};

/// `s` with every character XML 1.0 does not allow (C0 controls other than tab, line
/// feed and carriage return; U+FFFE and U+FFFF) replaced by U+FFFD.
pub fn xml_text(s: &str) -> Cow<'_, str> {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r') || !(c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}')
    };
    if s.chars().all(allowed) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(
            s.chars()
                .map(|c| if allowed(c) { c } else { '\u{FFFD}' })
                .collect(),
        )
    }
}

/// The suites as one JUnit XML document.
pub fn junit(suites: &[Suite]) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing into memory cannot fail.
    let _ = write(&mut w, suites);
    let mut out = String::from_utf8(w.into_inner()).unwrap_or_default();
    out.push('\n');
    out
}

fn write(w: &mut Writer<Vec<u8>>, suites: &[Suite]) -> std::io::Result<()> {
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    for s in suites {
        let (f, e, _) = s.counts();
        tests += s.cases.len();
        failures += f;
        errors += e;
    }
    w.create_element("testsuites")
        .with_attributes([
            ("name", "inferlint"),
            ("tests", tests.to_string().as_str()),
            ("failures", failures.to_string().as_str()),
            ("errors", errors.to_string().as_str()),
            ("time", "0"),
        ])
        .write_inner_content(|w| {
            for s in suites {
                suite(w, s)?;
            }
            Ok(())
        })?;
    Ok(())
}

fn suite(w: &mut Writer<Vec<u8>>, s: &Suite) -> std::io::Result<()> {
    let (failures, errors, skipped) = s.counts();
    w.create_element("testsuite")
        .with_attributes([
            ("name", xml_text(&s.name).as_ref()),
            ("tests", s.cases.len().to_string().as_str()),
            ("failures", failures.to_string().as_str()),
            ("errors", errors.to_string().as_str()),
            ("skipped", skipped.to_string().as_str()),
            ("time", "0"),
        ])
        .write_inner_content(|w| {
            if !s.properties.is_empty() {
                w.create_element("properties").write_inner_content(|w| {
                    for (k, v) in &s.properties {
                        w.create_element("property")
                            .with_attributes([
                                ("name", xml_text(k).as_ref()),
                                ("value", xml_text(v).as_ref()),
                            ])
                            .write_empty()?;
                    }
                    Ok(())
                })?;
            }
            for c in &s.cases {
                let case = w.create_element("testcase").with_attributes([
                    ("classname", xml_text(&c.classname).as_ref()),
                    ("name", xml_text(&c.name).as_ref()),
                    ("time", "0"),
                ]);
                match &c.outcome {
                    Outcome::Passed { warning: None } => {
                        case.write_empty()?;
                    }
                    Outcome::Passed {
                        warning: Some(text),
                    } => {
                        case.write_inner_content(|w| {
                            w.create_element("system-out")
                                .write_text_content(BytesText::new(&xml_text(&format!(
                                    "Warning: {text}"
                                ))))?;
                            Ok(())
                        })?;
                    }
                    Outcome::Failed {
                        kind,
                        message,
                        detail,
                    } => {
                        case.write_inner_content(|w| {
                            w.create_element("failure")
                                .with_attributes([
                                    ("message", xml_text(message).as_ref()),
                                    ("type", kind),
                                ])
                                .write_text_content(BytesText::new(&xml_text(detail)))?;
                            Ok(())
                        })?;
                    }
                    Outcome::Skipped { message, .. } => {
                        case.write_inner_content(|w| {
                            w.create_element("skipped")
                                .with_attribute(("message", xml_text(message).as_ref()))
                                .write_empty()?;
                            Ok(())
                        })?;
                    }
                    Outcome::Errored { message } => {
                        case.write_inner_content(|w| {
                            w.create_element("error")
                                .with_attributes([
                                    ("message", xml_text(message).as_ref()),
                                    ("type", "unusable-input"),
                                ])
                                .write_empty()?;
                            Ok(())
                        })?;
                    }
                }
            }
            Ok(())
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forbidden_characters_are_replaced_and_the_rest_kept() {
        assert_eq!(xml_text("a\tb\nc\r"), "a\tb\nc\r");
        assert_eq!(
            xml_text("bell\u{7} nul\u{0} \u{FFFF}"),
            "bell\u{FFFD} nul\u{FFFD} \u{FFFD}"
        );
        assert!(matches!(xml_text("plain – text"), Cow::Borrowed(_)));
    }
}
