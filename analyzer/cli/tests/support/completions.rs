//! The check both commands' completion tests share (`analyzer/cli/tests/completions.rs`,
//! `recorder/tests/completions.rs`): the scripts a binary prints offer exactly the
//! subcommands and flags of its clap definition, and bash loads its script and completes
//! with it.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The subcommands a user can type (hidden ones left out), and clap's own `help`.
pub fn subcommands(cmd: &clap::Command) -> BTreeSet<String> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .chain(["help".to_string()])
        .collect()
}

/// The long flags of a command as clap builds it (globals and --help included; hidden
/// ones too, which clap_complete's bash script offers as well).
pub fn long_flags(cmd: &clap::Command) -> BTreeSet<String> {
    cmd.get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
        .collect()
}

/// The script `exe completions SHELL` prints.
pub fn script(exe: &str, shell: &str) -> String {
    let out = Command::new(exe)
        .args(["completions", shell])
        .output()
        .unwrap();
    assert!(out.status.success(), "{exe} completions {shell} failed");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Words bash offers after `words` (the last one being completed), with the script loaded.
pub fn bash_complete(script_file: &Path, name: &str, words: &[&str]) -> BTreeSet<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{file}' || exit 9\n\
         COMP_WORDS=({name} {words}); COMP_CWORD={cword}\n\
         COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}\n\
         func=$(complete -p {name} | sed -E 's/.*-F ([^ ]+) .*/\\1/')\n\
         \"$func\" {name} \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file = script_file.display(),
        words = quoted.join(" "),
        cword = words.len(),
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(program)
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "bash could not load or run {name}'s completion: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// The whole check for one command: bash completes its subcommands and each one's flags
/// from the script it prints; zsh's and fish's scripts list exactly the subcommands.
pub fn check_command(exe: &str, cmd: clap::Command) {
    let mut cmd = cmd;
    cmd.build();
    let name = cmd.get_name().to_string();
    let subs = subcommands(&cmd);

    let dir = std::env::temp_dir().join(format!("completions-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.bash"));
    std::fs::write(&file, script(exe, "bash")).unwrap();
    let offered = bash_complete(&file, &name, &[""]);
    let words: BTreeSet<String> = offered
        .iter()
        .filter(|w| !w.starts_with('-'))
        .cloned()
        .collect();
    assert_eq!(words, subs, "bash offers other subcommands than {name} has");
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let flags: BTreeSet<String> = bash_complete(&file, &name, &[sub.get_name(), "-"])
            .into_iter()
            .filter(|w| w.starts_with("--"))
            .collect();
        assert_eq!(
            flags,
            long_flags(sub),
            "bash offers other flags than {name} {} has",
            sub.get_name()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);

    let zsh = script(exe, "zsh");
    assert!(
        zsh.starts_with(&format!("#compdef {name}")),
        "{name}'s zsh script: no #compdef line"
    );
    // The first `commands=(` list is the top level's: one `'name:description'` a line.
    let listed: BTreeSet<String> = zsh
        .split("commands=(")
        .nth(1)
        .unwrap()
        .split("\n)")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix('\'')?
                .split(':')
                .next()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(listed, subs, "{name}'s zsh script lists other subcommands");

    let fish = script(exe, "fish");
    let needs = format!("__fish_{}_needs_command", name.replace('-', "_"));
    let listed: BTreeSet<String> = fish
        .lines()
        .filter(|l| l.starts_with(&format!("complete -c {name} -n \"{needs}\"")))
        .filter_map(|l| {
            l.split(" -a \"")
                .nth(1)?
                .split('"')
                .next()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(listed, subs, "{name}'s fish script lists other subcommands");
}
