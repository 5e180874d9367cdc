//! Which starts are compared: logs of starts with the same settings form a group (the
//! rules T4 and T11 compare within it).

use super::jsoneq::same;
use super::BootLog;

/// Groups of two or more comparable logs (indexes into `logs`), ordered by their first
/// member, and the labels of the logs that take no part.
pub fn groups(logs: &[BootLog]) -> (Vec<Vec<usize>>, Vec<String>) {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut not_compared = Vec::new();
    for (i, log) in logs.iter().enumerate() {
        let f = &log.facts;
        let Some(args) = f.config_args.as_ref().filter(|_| f.ready) else {
            not_compared.push(log.label.clone());
            continue;
        };
        let home = groups.iter_mut().find(|g| {
            let first = &logs[g[0]].facts;
            first.engine == f.engine && first.config_args.as_ref().is_some_and(|a| same(a, args))
        });
        match home {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups.retain(|g| g.len() > 1);
    (groups, not_compared)
}
