//! CPU lists: the `cpumask` (since Linux 3.7) and `cpus` files of a PMU.
//!
//! `cpumask` names the CPUs an uncore or other socket-wide PMU's events must
//! be opened on, one representative CPU per socket (perf_event_open(2));
//! `cpus` names the CPUs a core PMU covers on heterogeneous systems (ARM
//! big.LITTLE, Intel hybrid since Linux 5.13). Both use the kernel's list
//! format: `0-3,8,10-11`.

use core::fmt;

/// A parsed CPU list, as ascending-or-not `(first, last)` ranges in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuList {
    ranges: Vec<(u32, u32)>,
}

impl CpuList {
    /// Parses `0-3,8`; one trailing newline is allowed and an empty list is
    /// valid. On error returns the byte position.
    pub fn parse(text: &str) -> Result<CpuList, usize> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let mut ranges = Vec::new();
        if text.is_empty() {
            return Ok(CpuList { ranges });
        }
        let mut at = 0;
        for part in text.split(',') {
            let (first, last) = match part.split_once('-') {
                Some((a, b)) => (
                    a.parse::<u32>().map_err(|_| at)?,
                    b.parse::<u32>().map_err(|_| at + a.len() + 1)?,
                ),
                None => {
                    let n = part.parse::<u32>().map_err(|_| at)?;
                    (n, n)
                }
            };
            if last < first || !part.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
                return Err(at);
            }
            ranges.push((first, last));
            at += part.len() + 1;
        }
        Ok(CpuList { ranges })
    }

    /// The ranges, inclusive.
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    /// Every CPU in the list, in file order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.ranges.iter().flat_map(|&(a, b)| a..=b)
    }

    /// Whether `cpu` is in the list.
    pub fn contains(&self, cpu: u32) -> bool {
        self.ranges.iter().any(|&(a, b)| (a..=b).contains(&cpu))
    }

    /// How many CPUs the list names.
    pub fn len(&self) -> usize {
        self.ranges.iter().map(|&(a, b)| (b - a) as usize + 1).sum()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// Renders the list in the kernel's format.
impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &(a, b)) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if a == b {
                write!(f, "{a}")?;
            } else {
                write!(f, "{a}-{b}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::CpuList;

    #[test]
    fn lists_parse_and_render() {
        let l = CpuList::parse("0-3,8,10-11\n").unwrap();
        assert_eq!(l.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!((l.len(), l.contains(8), l.contains(9)), (7, true, false));
        assert_eq!(l.to_string(), "0-3,8,10-11");
        assert!(CpuList::parse("\n").unwrap().is_empty());
        assert_eq!(CpuList::parse("0,24").unwrap().ranges(), [(0, 0), (24, 24)]);
        for (bad, at) in [
            ("0-", 2),
            ("a", 0),
            ("3-1", 0),
            ("0,,1", 2),
            ("0 ", 0),
            ("1--2", 2),
            ("-1", 0),
        ] {
            assert_eq!(CpuList::parse(bad), Err(at), "{bad:?}");
        }
    }
}
