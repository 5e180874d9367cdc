//! GitHub Actions workflow commands, one line per result worth a look, so failures show as
//! annotations on the run and the pull request: `::error` for a failed tripwire, a
//! regression or an unusable file, `::warning` for a warning that does not fail the run,
//! `::notice` for "can't tell". Passes and "does not apply" print nothing.
//!
//! Escaping, as the runner reads it: in the message `%`, CR and LF become `%25`, `%0D`,
//! `%0A`; in a property (`title`, `file`) also `:` and `,` become `%3A` and `%2C`.

use super::{Outcome, Suite};

/// A workflow command's message.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Every annotation of the suites, one per line (each line ends with a newline).
pub fn github(suites: &[Suite]) -> String {
    let mut out = String::new();
    for s in suites {
        for c in &s.cases {
            let (level, message) = match &c.outcome {
                Outcome::Failed { message, .. } | Outcome::Errored { message } => {
                    ("error", message.clone())
                }
                Outcome::Passed {
                    warning: Some(text),
                } => ("warning", text.lines().next().unwrap_or("").to_string()),
                Outcome::Skipped {
                    message,
                    cant_tell: true,
                } => ("notice", message.clone()),
                _ => continue,
            };
            // Several suites (a comparison): the title says which run.
            let title = if suites.len() > 1 {
                format!("{} ({})", c.name, s.name)
            } else {
                c.name.clone()
            };
            let mut props = vec![format!("title={}", escape_property(&title))];
            if let Some(f) = &c.file {
                props.push(format!("file={}", escape_property(f)));
            }
            out.push_str(&format!(
                "::{level} {}::{}\n",
                props.join(","),
                escape_data(&message)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_and_properties_are_escaped_as_the_runner_reads_them() {
        assert_eq!(
            escape_data("50% of a\r\nb: c, d"),
            "50%25 of a%0D%0Ab: c, d"
        );
        assert_eq!(escape_property("T8 x: y, 5%\n"), "T8 x%3A y%2C 5%25%0A");
    }
}
