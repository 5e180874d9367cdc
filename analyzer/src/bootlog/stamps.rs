//! Time stamps `MM-DD HH:MM:SS` for the start-up seconds (the facts' `boot_seconds`).

use super::lines::{word_at, word_before};

/// Days per month in the fixed leap year the stamps are read in.
const DAYS: [i64; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

fn two(b: &[u8], at: usize) -> Option<i64> {
    let (x, y) = (*b.get(at)?, *b.get(at + 1)?);
    (x.is_ascii_digit() && y.is_ascii_digit())
        .then(|| i64::from(x - b'0') * 10 + i64::from(y - b'0'))
}

/// The first stamp on the line, its digits bounded by non-word characters. `None`: no
/// stamp; `Some(None)`: the first stamp is not a valid date; else seconds into the year.
pub(crate) fn first_stamp(line: &str) -> Option<Option<i64>> {
    let b = line.as_bytes();
    for (dash, _) in line.match_indices('-') {
        let Some(start) = dash.checked_sub(2) else {
            continue;
        };
        let shape = (|| {
            let month = two(b, start)?;
            let day = two(b, dash + 1)?;
            (b.get(dash + 3) == Some(&b' ')).then_some(())?;
            let hour = two(b, dash + 4)?;
            (b.get(dash + 6) == Some(&b':')).then_some(())?;
            let minute = two(b, dash + 7)?;
            (b.get(dash + 9) == Some(&b':')).then_some(())?;
            let second = two(b, dash + 10)?;
            Some((month, day, hour, minute, second))
        })();
        let Some((month, day, hour, minute, second)) = shape else {
            continue;
        };
        let end = dash + 12;
        if word_before(line, start) || word_at(line, end) {
            continue;
        }
        let valid = (1..=12).contains(&month)
            && day >= 1
            && day <= DAYS[(month - 1) as usize]
            && hour < 24
            && minute < 60
            && second < 60;
        if !valid {
            return Some(None);
        }
        let doy: i64 = DAYS[..(month - 1) as usize].iter().sum::<i64>() + day - 1;
        return Some(Some(((doy * 24 + hour) * 60 + minute) * 60 + second));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vllm_and_sglang_stamps() {
        let a = first_stamp("(APIServer pid=1) INFO 09-07 23:13:25 [x.py:1] hi")
            .unwrap()
            .unwrap();
        let b = first_stamp("(APIServer pid=1) INFO 09-07 23:15:20 [x.py:1] hi")
            .unwrap()
            .unwrap();
        assert_eq!(b - a, 115);
        let s = first_stamp("[2026-10-01 01:40:36] Attention backend")
            .unwrap()
            .unwrap();
        let e = first_stamp("[2026-10-01 01:41:34] INFO:     Application")
            .unwrap()
            .unwrap();
        assert_eq!(e - s, 58);
    }

    #[test]
    fn non_stamps() {
        assert_eq!(first_stamp("[10/01/2026-01:43:04] [TRT-LLM] [I] x"), None);
        assert_eq!(first_stamp("a09-07 23:13:25"), None);
        assert_eq!(first_stamp("09-07 23:13:250"), None);
        assert_eq!(
            first_stamp("09-07 23:13:25.5 x"),
            Some(Some(first_stamp("09-07 23:13:25").unwrap().unwrap()))
        );
        assert_eq!(first_stamp("02-30 00:00:00"), Some(None));
        assert_eq!(first_stamp("13-01 00:00:00"), Some(None));
        assert_eq!(
            first_stamp("02-29 23:59:59").map(|x| x.is_some()),
            Some(true)
        );
        assert_eq!(first_stamp("-"), None);
        assert_eq!(first_stamp("é-07 23:13:25"), None);
    }
}
