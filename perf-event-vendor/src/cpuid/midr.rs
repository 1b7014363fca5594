//! arm64's `strcmp_cpuid_str` (`tools/perf/arch/arm64/util/header.c`): MIDRs
//! compared field by field.

/// MIDR_EL1's variant (`rN`), bits 23:20.
const VARIANT: u64 = 0xf << 20;
/// MIDR_EL1's revision (`pM`), bits 3:0.
const REVISION: u64 = 0xf;

/// C's `strtoull(s, NULL, 16)`: leading white space, a sign, an optional
/// `0x` before a hex digit, hex digits up to the first other character;
/// `ULLONG_MAX` on overflow; 0 when there is no digit.
fn strtoull16(s: &str) -> u64 {
    let b = s.as_bytes();
    let mut i = 0;
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
    {
        i += 1;
    }
    let negative = b.get(i) == Some(&b'-');
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    if b.get(i) == Some(&b'0')
        && matches!(b.get(i + 1), Some(b'x' | b'X'))
        && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        i += 2;
    }
    let mut value: u64 = 0;
    while let Some(digit) = b.get(i).and_then(|&c| char::from(c).to_digit(16)) {
        match value
            .checked_mul(16)
            .and_then(|v| v.checked_add(u64::from(digit)))
        {
            Some(v) => value = v,
            None => return u64::MAX,
        }
        i += 1;
    }
    if negative {
        value.wrapping_neg()
    } else {
        value
    }
}

/// Whether the CPU's MIDR `idstr` is the mapfile row's part `mapcpuid`,
/// at the row's variant and revision or later.
pub(super) fn matches(mapcpuid: &str, idstr: &str) -> bool {
    let map_id = strtoull16(mapcpuid);
    let id = strtoull16(idstr);
    let fields = !(VARIANT | REVISION);
    if map_id & fields != id & fields {
        return false;
    }
    let variant = |v: u64| (v & VARIANT) >> 20;
    let revision = |v: u64| v & REVISION;
    variant(id) > variant(map_id)
        || (variant(id) == variant(map_id) && revision(id) >= revision(map_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf's own cases: `tools/perf/arch/arm64/tests/cpuid-match.c`.
    #[test]
    fn perfs_cpuid_match_test() {
        assert!(
            matches("0x410fd0c0", "0x00000000410fd0c0"),
            "no leading zeros"
        );
        assert!(matches("0x410fd0c0", "0x00000000410FD0C0"), "upper case");
        assert!(
            matches("0x00000000410fd480", "0x00000000410fd480"),
            "r0p0 = r0p0"
        );
        assert!(
            matches("0x00000000410fd480", "0x00000000410fd481"),
            "r0p1 > r0p0"
        );
        assert!(
            matches("0x00000000410fd480", "0x00000000411fd480"),
            "r1p0 > r0p0"
        );
        assert!(
            !matches("0x00000000410fd481", "0x00000000410fd480"),
            "r0p0 < r0p1"
        );
        assert!(
            !matches("0x00000000411fd480", "0x00000000410fd480"),
            "r0p0 < r1p0"
        );
        assert!(
            !matches("0x00000000410fd4c0", "0x00000000430f0af0"),
            "another CPU"
        );
    }

    #[test]
    fn strtoull_as_c_reads_it() {
        assert_eq!(strtoull16("0x00000000410fd0c1\n"), 0x410f_d0c1);
        assert_eq!(strtoull16("  410fd0c1"), 0x410f_d0c1);
        assert_eq!(strtoull16("0xg"), 0, "0 then an x that is no prefix");
        assert_eq!(strtoull16("-1"), u64::MAX);
        assert_eq!(strtoull16("0x1ffffffffffffffff"), u64::MAX, "overflow");
        assert_eq!(strtoull16(""), 0);
    }

    #[test]
    fn a_later_variant_with_an_earlier_revision_matches() {
        // r1p0 of a part whose row is r0p3: the variant decides.
        assert!(matches("0x00000000410fd083", "0x00000000411fd080"));
        // r0p2 against r0p3: too early.
        assert!(!matches("0x00000000410fd083", "0x00000000410fd082"));
    }
}
