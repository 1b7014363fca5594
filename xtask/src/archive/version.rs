//! Debian version ordering (`dpkg --compare-versions`, Debian Policy 5.6.12):
//! `[epoch:]upstream[-revision]`, each part compared as alternating runs of
//! non-digits (letters before other characters, `~` before everything,
//! even the end) and numbers.

use std::cmp::Ordering;

/// Compares two Debian version strings as dpkg does.
pub fn compare(a: &str, b: &str) -> Ordering {
    let (ea, ua, ra) = split(a);
    let (eb, ub, rb) = split(b);
    ea.cmp(&eb)
        .then_with(|| part(ua, ub))
        .then_with(|| part(ra, rb))
}

/// `(epoch, upstream, revision)`.
fn split(v: &str) -> (u64, &str, &str) {
    let (epoch, rest) = match v.split_once(':') {
        Some((e, rest)) if e.bytes().all(|c| c.is_ascii_digit()) => (e.parse().unwrap_or(0), rest),
        _ => (0, v),
    };
    match rest.rsplit_once('-') {
        Some((upstream, revision)) => (epoch, upstream, revision),
        None => (epoch, rest, ""),
    }
}

/// The weight of one non-digit character: `~` sorts first, then the end of
/// the run, then letters, then everything else.
fn weight(c: Option<u8>) -> i32 {
    match c {
        None => 0,
        Some(b'~') => -1,
        Some(c) if c.is_ascii_digit() => 0,
        Some(c) if c.is_ascii_alphabetic() => i32::from(c),
        Some(c) => i32::from(c) + 256,
    }
}

fn part(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    while !a.is_empty() || !b.is_empty() {
        // The non-digit runs, character by character.
        while a.first().is_some_and(|c| !c.is_ascii_digit())
            || b.first().is_some_and(|c| !c.is_ascii_digit())
        {
            let (ca, cb) = (weight(a.first().copied()), weight(b.first().copied()));
            if ca != cb {
                return ca.cmp(&cb);
            }
            a = &a[1.min(a.len())..];
            b = &b[1.min(b.len())..];
        }
        // The digit runs, as numbers (leading zeros do not count).
        let na = a.iter().take_while(|c| c.is_ascii_digit()).count();
        let nb = b.iter().take_while(|c| c.is_ascii_digit()).count();
        let (da, db) = (trim_zeros(&a[..na]), trim_zeros(&b[..nb]));
        let by_number = da.len().cmp(&db.len()).then_with(|| da.cmp(db));
        if by_number != Ordering::Equal {
            return by_number;
        }
        a = &a[na..];
        b = &b[nb..];
    }
    Ordering::Equal
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|c| **c == b'0').count();
    &digits[zeros..]
}

#[cfg(test)]
mod tests {
    use super::compare;
    use std::cmp::Ordering::{Equal, Greater, Less};

    #[test]
    fn orders_as_dpkg_does() {
        // Each pair checked with `dpkg --compare-versions A lt B` on bookworm.
        for (a, b) in [
            ("6.1.176-1", "6.1.192-2"),
            ("6.12.107-1", "6.12.117-1~deb12u1"),
            ("6.12.117-1~deb12u1", "6.12.117-1"),
            ("1:1.35.0-4+deb12u1+b1", "1:1.37.0-6+b9"),
            ("1.37.0-6+b9", "1:1.35.0-4"),
            ("7.2.13-1", "7.2.13-1+b1"),
            ("1.0~rc1-1", "1.0-1"),
            ("1.0-1", "1.0a-1"),
            ("1.0a-1", "1.0+a-1"),
            ("5.10.223-1", "5.10.1000-1"),
            ("2.0", "2.0-1"),
        ] {
            assert_eq!(compare(a, b), Less, "{a} < {b}");
            assert_eq!(compare(b, a), Greater, "{b} > {a}");
        }
        assert_eq!(compare("1.01-1", "1.1-1"), Equal);
        assert_eq!(compare("0:6.1-1", "6.1-1"), Equal);
    }

    #[test]
    fn agrees_with_dpkg_where_it_is_installed() {
        if !crate::shell::have("dpkg") {
            eprintln!("dpkg is not installed: the comparison with it was skipped");
            return;
        }
        let versions = [
            "6.1.176-1",
            "6.1.192-2",
            "6.12.117-1~deb12u1",
            "6.12.117-1",
            "1:1.35.0-4",
            "1.37.0-6+b9",
            "1.0~~a",
            "1.0~",
            "1.0",
            "1.0a",
            "1.0.0",
            "1.0+",
            "1.0-0",
            "2:0",
        ];
        for a in versions {
            for b in versions {
                let lt = std::process::Command::new("dpkg")
                    .args(["--compare-versions", a, "lt", b])
                    .status()
                    .expect("dpkg runs")
                    .success();
                assert_eq!(compare(a, b) == Less, lt, "{a} lt {b}");
            }
        }
    }
}
