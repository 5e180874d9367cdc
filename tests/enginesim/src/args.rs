//! Command-line reading shared by every personality. The engines accept `--flag value`,
//! `--flag=value` and `--flag_name` spellings, so lookups normalise `_` to `-`.

/// One parsed flag or positional argument, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Flag { name: String, value: Option<String> },
    Positional(String),
}

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub items: Vec<Item>,
}

fn norm(name: &str) -> String {
    name.trim_start_matches('-').replace('_', "-")
}

/// Flags that never take a value (so the next token is not swallowed).
const SWITCHES: &[&str] = &[
    "enable-metrics",
    "ignore-eos",
    "save-result",
    "trust-remote-code",
    "enforce-eager",
    "disable-tqdm",
    "enable-prefix-caching",
    "no-enable-prefix-caching",
    "disable-log-requests",
    "disable-log-stats",
    "disable-cuda-graph",
    "enable-chunked-prefill",
    "enable-prompt-tokens-details",
    "enable-server-load-tracking",
    "enable-force-include-usage",
    "sim-hybrid",
    "sim-pool-jitter",
    "sim-crash-on-first-request",
    "sim-metrics-stall",
    "sim-drafter-ignores-backend",
    "save-detailed",
    "skip-server-warmup",
    "no-test-input",
    "disable-radix-cache",
];

impl Args {
    pub fn parse(raw: &[String]) -> Args {
        let mut items = Vec::new();
        let mut i = 0;
        while i < raw.len() {
            let a = &raw[i];
            if a.starts_with("--") && a.len() > 2 {
                if let Some((n, v)) = a.split_once('=') {
                    items.push(Item::Flag {
                        name: norm(n),
                        value: Some(v.to_string()),
                    });
                } else {
                    let name = norm(a);
                    let takes = !SWITCHES.contains(&name.as_str())
                        && i + 1 < raw.len()
                        && !(raw[i + 1].starts_with("--") && raw[i + 1].len() > 2);
                    if takes {
                        items.push(Item::Flag {
                            name,
                            value: Some(raw[i + 1].clone()),
                        });
                        i += 1;
                    } else {
                        items.push(Item::Flag { name, value: None });
                    }
                }
            } else {
                items.push(Item::Positional(a.clone()));
            }
            i += 1;
        }
        Args { items }
    }

    /// The last value given for a flag (later flags win, as with argparse).
    pub fn get(&self, name: &str) -> Option<&str> {
        let want = norm(name);
        self.items.iter().rev().find_map(|it| match it {
            Item::Flag { name, value } if *name == want => Some(value.as_deref().unwrap_or("")),
            _ => None,
        })
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn positionals(&self) -> Vec<&str> {
        self.items
            .iter()
            .filter_map(|it| match it {
                Item::Positional(p) => Some(p.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn num<T: std::str::FromStr>(&self, name: &str) -> anyhow::Result<Option<T>> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v
                .parse::<T>()
                .map(Some)
                .map_err(|_| anyhow::anyhow!("argument --{}: invalid value: '{}'", norm(name), v)),
        }
    }

    /// Flags in order, excluding the simulator's own `--sim-*` switches.
    pub fn engine_flags(&self) -> Vec<(String, Option<String>)> {
        self.items
            .iter()
            .filter_map(|it| match it {
                Item::Flag { name, value } if !name.starts_with("sim-") => {
                    Some((name.clone(), value.clone()))
                }
                _ => None,
            })
            .collect()
    }
}

/// `--sim-speed`, else `INFERLINT_SIM_SPEED`, else 1.
pub fn sim_speed(args: &Args) -> anyhow::Result<f64> {
    let v = match args.get("sim-speed") {
        Some(v) => Some(v.to_string()),
        None => std::env::var("INFERLINT_SIM_SPEED")
            .ok()
            .filter(|s| !s.trim().is_empty()),
    };
    match v {
        None => Ok(1.0),
        Some(s) => {
            let f: f64 = s
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("sim speed must be a number, got '{s}'"))?;
            anyhow::ensure!(
                f > 0.0 && f.is_finite(),
                "sim speed must be positive, got {f}"
            );
            Ok(f)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(v: &[&str]) -> Args {
        Args::parse(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn spellings() {
        let x = a(&[
            "M",
            "--port=9",
            "--max_num_seqs",
            "4",
            "--enable-metrics",
            "--host",
            "h",
        ]);
        assert_eq!(x.get("port"), Some("9"));
        assert_eq!(x.get("max-num-seqs"), Some("4"));
        assert_eq!(x.get("enable-metrics"), Some(""));
        assert_eq!(x.get("host"), Some("h"));
        assert_eq!(x.positionals(), vec!["M"]);
    }
}
