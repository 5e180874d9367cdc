//! Reading a load command's argument vector as its tool reads it: `--flag value` and
//! `--flag=value` (the last one given wins), and several commands joined by `--then`.
//! The recorder plans the load with these; the analyzer reads what the load asked for.

/// The token that separates load commands run one after another in one `record`
/// (`-- vllm bench serve … --then vllm bench serve …`): each becomes a phase of the run.
pub const THEN: &str = "--then";

/// A value flag in `--flag value` or `--flag=value` form (the last one given wins).
pub fn flag_value<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    let mut found = None;
    let eq = format!("{flag}=");
    for (i, t) in argv.iter().enumerate() {
        if t == flag {
            found = argv.get(i + 1).map(String::as_str);
        } else if let Some(v) = t.strip_prefix(&eq) {
            found = Some(v);
        }
    }
    found
}

/// Every value of a repeatable flag, in order.
pub fn flag_values<'a>(argv: &'a [String], flag: &str) -> Vec<&'a str> {
    let eq = format!("{flag}=");
    let mut out = Vec::new();
    for (i, t) in argv.iter().enumerate() {
        if t == flag {
            out.extend(argv.get(i + 1).map(String::as_str));
        } else if let Some(v) = t.strip_prefix(&eq) {
            out.push(v);
        }
    }
    out
}

/// The flag is given, as a switch or with a value.
pub fn has_flag(argv: &[String], flag: &str) -> bool {
    let eq = format!("{flag}=");
    argv.iter().any(|t| t == flag || t.starts_with(&eq))
}

/// `key` of a `kind=…,key=value` option string (GuideLLM's options).
pub fn option_key<'a>(value: &'a str, key: &str) -> Option<&'a str> {
    value
        .split(',')
        .find_map(|kv| kv.split_once('=').filter(|(k, _)| k.trim() == key))
        .map(|(_, v)| v.trim())
}

/// The load commands of a load vector: split at each standalone [`THEN`]; empty commands
/// (a leading, trailing or doubled `--then`) are dropped.
pub fn split_commands(argv: &[String]) -> Vec<Vec<String>> {
    argv.split(|t| t == THEN)
        .filter(|c| !c.is_empty())
        .map(<[String]>::to_vec)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn flags_in_both_spellings_the_last_wins() {
        let a = v("x --n 1 --n=2 --m 3 --sw");
        assert_eq!(flag_value(&a, "--n"), Some("2"));
        assert_eq!(flag_value(&a, "--m"), Some("3"));
        assert_eq!(flag_value(&a, "--q"), None);
        assert_eq!(flag_values(&a, "--n"), ["1", "2"]);
        assert!(has_flag(&a, "--sw") && has_flag(&a, "--n") && !has_flag(&a, "--s"));
        assert_eq!(option_key("kind=a, b = 3", "b"), Some("3"));
        assert_eq!(
            split_commands(&v("--then a --then --then b c --then")),
            vec![v("a"), v("b c")]
        );
    }
}
