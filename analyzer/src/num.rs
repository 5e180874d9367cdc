//! Rounding and number formatting by one rule (docs/run-folder.md#reading): round the exact
//! decimal value of the double, ties to even, as Python's `round(x, k)` does.

/// `x` rounded to `k` decimals (Python's `round(x, k)`).
///
/// Rust's `{:.k}` formatting rounds the exact binary value with ties to even, which is
/// Python's rule; parsing the text back gives the nearest double. `x * 10^k` would round
/// first and get 48.545 wrong.
pub fn round_dp(x: f64, k: usize) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if k == 0 {
        return x.round_ties_even();
    }
    format!("{x:.k$}").parse().unwrap_or(x)
}

/// Fixed decimals, as Python's `f"{x:.{k}f}"`.
pub fn fixed(x: f64, k: usize) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{x:.k$}");
    // Python prints -0.0 rounded as "-0.0" too; keep Rust's identical behaviour.
    s
}

/// Inserts thousands separators into the integer part of a decimal text.
fn group(s: &str) -> String {
    let (sign, rest) = match s.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", s),
    };
    let (int, frac) = match rest.find('.') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let mut out = String::with_capacity(s.len() + int.len() / 3);
    out.push_str(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out.push_str(frac);
    out
}

/// An integer-valued number with thousands separators (`{:,}` of a rounded value).
pub fn thousands(x: f64) -> String {
    if !x.is_finite() {
        return fixed(x, 0);
    }
    group(&format!("{:.0}", x.round_ties_even()))
}

/// `{:,.k}`: thousands separators and `k` decimals.
pub fn thousands_dp(x: f64, k: usize) -> String {
    if !x.is_finite() {
        return fixed(x, k);
    }
    group(&fixed(x, k))
}

/// An integer with thousands separators.
pub fn thousands_int(n: i64) -> String {
    group(&n.to_string())
}

/// The shortest text that reads back as `x` (Python's `repr` without a forced `.0`
/// for whole numbers: `0.25`, `2`, `0.5`).
pub fn shortest(x: f64) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// A count with its noun, pluralised with a plain `s`: `1 preemption`, `22 preemptions`.
pub fn plural(n: f64, noun: &str) -> String {
    let text = shortest(n);
    if n == 1.0 {
        format!("{text} {noun}")
    } else {
        format!("{text} {noun}s")
    }
}

/// A count spelled in words ("eighteen", "twenty-four") up to 99; digits beyond.
pub fn spelled(n: usize) -> String {
    const ONES: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    match n {
        0..=19 => ONES[n].to_string(),
        20..=99 if n.is_multiple_of(10) => TENS[n / 10].to_string(),
        20..=99 => format!("{}-{}", TENS[n / 10], ONES[n % 10]),
        _ => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_in_words() {
        assert_eq!(spelled(18), "eighteen");
        assert_eq!(spelled(19), "nineteen");
        assert_eq!(spelled(20), "twenty");
        assert_eq!(spelled(24), "twenty-four");
        assert_eq!(spelled(100), "100");
    }

    #[test]
    fn ties_go_to_even_on_the_exact_value() {
        assert_eq!(round_dp(0.125, 2), 0.12);
        assert_eq!(round_dp(0.375, 2), 0.38);
        assert_eq!(round_dp(48.545, 2), 48.55);
        assert_eq!(round_dp(73.455, 2), 73.45);
        assert_eq!(round_dp(2.5, 0), 2.0);
        assert_eq!(round_dp(3.5, 0), 4.0);
        assert_eq!(round_dp(2.2 + 2.2, 2), 4.4);
    }

    #[test]
    fn separators() {
        assert_eq!(thousands(32000.0), "32,000");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(-1234567.0), "-1,234,567");
        assert_eq!(thousands_dp(1234.5678, 1), "1,234.6");
        assert_eq!(thousands_int(34816), "34,816");
    }

    #[test]
    fn short_forms() {
        assert_eq!(shortest(0.25), "0.25");
        assert_eq!(shortest(32.0), "32");
        assert_eq!(plural(1.0, "preemption"), "1 preemption");
        assert_eq!(plural(22.0, "preemption"), "22 preemptions");
    }
}
