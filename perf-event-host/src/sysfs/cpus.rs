//! CPU lists: the machine's (`/sys/devices/system/cpu/online`, `possible`,
//! `present`) and the `cpumask` (since Linux 3.7) and `cpus` files of a PMU.
//!
//! `cpumask` names the CPUs an uncore or other socket-wide PMU's events must
//! be opened on, one representative CPU per socket (perf_event_open(2));
//! `cpus` names the CPUs a core PMU covers on heterogeneous systems (ARM
//! big.LITTLE, Intel hybrid since Linux 5.13). All use the kernel's list
//! format: `0-3,8,10-11`.

use super::{read_optional, read_text, Problem, SysfsError};
use core::fmt;
use std::path::Path;

/// A parsed CPU list, as ascending-or-not `(first, last)` ranges in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuList {
    ranges: Vec<(u32, u32)>,
}

impl CpuList {
    /// Where the kernel lists the machine's CPUs
    /// (Documentation/ABI/testing/sysfs-devices-system-cpu): `online` (the
    /// CPUs being scheduled), `possible` (those that can be brought online)
    /// and `present` (those identified as present), one list each, older
    /// than Linux 2.6.29 (which added `offline` and `kernel_max` beside
    /// them); and a directory `cpuN` per CPU.
    pub const DIR: &'static str = "/sys/devices/system/cpu";

    /// Reads a file holding one CPU list (`online`, a PMU's `cpumask`, a
    /// NUMA node's `cpulist`, ...): `Ok(None)` when it does not exist (an
    /// older kernel, or a PMU without one). A malformed list is an error
    /// naming the file, its text and the byte.
    pub fn read(path: &Path) -> Result<Option<CpuList>, SysfsError> {
        let Some(text) = read_optional(path)? else {
            return Ok(None);
        };
        CpuList::parse_file(path, &text).map(Some)
    }

    /// The online CPUs: `online` under [`CpuList::DIR`], the CPUs the
    /// kernel schedules now (perf_event_open on any other fails with
    /// ENODEV).
    pub fn online() -> Result<CpuList, SysfsError> {
        CpuList::read_required(&Path::new(CpuList::DIR).join("online"))
    }

    /// The present CPUs: `present` under [`CpuList::DIR`], every CPU
    /// identified as present in the system, online or not (perf's
    /// HEADER_NRCPUS counts the CPUs up to the highest of them).
    pub fn present() -> Result<CpuList, SysfsError> {
        CpuList::read_required(&Path::new(CpuList::DIR).join("present"))
    }

    /// A CPU list file that must exist.
    pub(crate) fn read_required(path: &Path) -> Result<CpuList, SysfsError> {
        CpuList::parse_file(path, &read_text(path)?)
    }

    /// `text`, read from `path`, as a list; a malformed one is an error
    /// naming the file.
    fn parse_file(path: &Path, text: &str) -> Result<CpuList, SysfsError> {
        CpuList::parse(text).map_err(|position| {
            SysfsError::new(
                path,
                Problem::CpuList {
                    text: text.trim_end().to_owned(),
                    position,
                },
            )
        })
    }

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
