//! Shell completions and man pages, generated from the clap definitions of a command
//! (`inferlint` and `inferlint-recorder` both use these), so they can never list a
//! command or flag the binary does not have.

use std::path::Path;

use clap::Command;
pub use clap_complete::Shell;

/// Writes the completion script for `shell` to `out`.
pub fn completions(
    mut cmd: Command,
    shell: Shell,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let name = cmd.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, name.clone(), &mut script);
    if shell == Shell::Bash {
        script = bash_hyphen_fix(&String::from_utf8_lossy(&script), &name).into_bytes();
    }
    out.write_all(&script)
}

/// clap_complete 4.6's bash script names the state of a subcommand of a hyphenated
/// command two ways: the loop that reads the words escapes `inferlint-recorder record` as
/// `inferlint__recorder__subcmd__record`, the branches that offer the words as
/// `inferlint__subcmd__recorder__subcmd__record`, so no branch matched and nothing was
/// offered after a subcommand. The branches are respelled as the loop spells them.
fn bash_hyphen_fix(script: &str, name: &str) -> String {
    let wrong = name.replace('-', "__subcmd__");
    let right = name.replace('-', "__");
    if wrong == right {
        return script.to_string();
    }
    script.replace(&format!("{wrong}__subcmd__"), &format!("{right}__subcmd__"))
}

/// Writes one man page per command and subcommand into `dir` (`inferlint.1`,
/// `inferlint-analyze.1`, …).
pub fn man_pages(cmd: Command, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    // Each page's header names the version; subcommands carry none of their own (both
    // commands are built together: one version).
    let cmd = cmd.mut_subcommands(|s| s.version(crate::version::VERSION));
    clap_mangen::generate_to(cmd, dir)
}
