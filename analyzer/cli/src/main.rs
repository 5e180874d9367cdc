//! `inferlint`: checks a benchmark run folder and prints verdicts.

fn main() {
    // Die quietly when the reader of our output goes away (`inferlint ... | head`), as
    // other command-line tools do, instead of panicking on a failed print.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let code = inferlint::main_with_args(std::env::args_os().collect());
    std::process::exit(code);
}
