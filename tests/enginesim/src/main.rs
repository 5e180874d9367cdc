fn main() {
    eprintln!("inferlint-enginesim: not built yet (issue 5)");
    std::process::exit(2);
}
