//! [`PerfPrint`]: an attr as perf prints the ones it opens with `-vv`.

use super::Attr;
use crate::abi::since::FLAGS;
use core::fmt;

/// An attr displayed as `perf -vv` prints each attr it opens (perf's
/// `perf_event_attr__fprintf`): a dashed line, `perf_event_attr:`, then
/// the non-zero fields by the kernel's names (`size` always), each as
/// `  NAME<padded to 32> VALUE`, and a closing dashed line. A tool's `-vv`
/// output then compares field by field with perf's. `sample_type`,
/// `read_format` and `branch_sample_type` name their bits as perf does
/// (`TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING`; a bit perf has no name for is
/// left out, as perf leaves it out). Made by
/// [`Attr::perf_print`]; allocates nothing.
///
/// [`Attr::perf_print_inline`] gives the same fields on one line, as
/// perf's control command `evlist -v` prints them after the event's name
/// (`: type: 1, size: 128, config: 0x1, ...`).
#[derive(Clone, Copy, Debug)]
pub struct PerfPrint<'a> {
    attr: &'a Attr,
    inline: bool,
}

const RULE: &str = "------------------------------------------------------------";

impl Attr {
    /// This attr as `perf -vv` prints it ([`PerfPrint`]).
    pub const fn perf_print(&self) -> PerfPrint<'_> {
        PerfPrint {
            attr: self,
            inline: false,
        }
    }

    /// The same fields on one line, each `, NAME: VALUE` (the first
    /// `: NAME: VALUE`), as perf's `evlist -v` control command prints
    /// them after the event's name ([`PerfPrint`]).
    pub const fn perf_print_inline(&self) -> PerfPrint<'_> {
        PerfPrint {
            attr: self,
            inline: true,
        }
    }
}

impl fmt::Display for PerfPrint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raw = self.attr.to_raw();
        let inline = self.inline;
        if !inline {
            writeln!(f, "{RULE}\nperf_event_attr:")?;
        }
        let mut first = true;
        let mut put = |name: &str, value: &dyn fmt::Display| {
            if inline {
                let sep = if first { ":" } else { "," };
                first = false;
                write!(f, "{sep} {name}: {value}")
            } else {
                writeln!(f, "  {name:<32} {value}")
            }
        };
        let hex = |v: u64| Hex(v);
        if raw.type_ != 0 {
            put("type", &raw.type_)?;
        }
        put("size", &raw.size)?;
        if raw.config != 0 {
            put("config", &hex(raw.config))?;
        }
        let period = raw.sample_period();
        if period != 0 {
            put("{ sample_period, sample_freq }", &period)?;
        }
        if raw.sample_type != 0 {
            put("sample_type", &Bits(raw.sample_type, SAMPLE_TYPE))?;
        }
        if raw.read_format != 0 {
            put("read_format", &Bits(raw.read_format, READ_FORMAT))?;
        }
        if raw.config1() != 0 {
            put("{ bp_addr, config1 }", &hex(raw.config1()))?;
        }
        if raw.config2() != 0 {
            put("{ bp_len, config2 }", &hex(raw.config2()))?;
        }
        if raw.bp_type != 0 {
            put("bp_type", &raw.bp_type)?;
        }
        for flag in FLAGS {
            let v = self.attr.get_flag(flag.flag);
            if v != 0 {
                put(flag.flag.name, &v)?;
            }
        }
        if inline {
            return Ok(());
        }
        write!(f, "{RULE}")
    }
}

/// Bits by perf's names, `|`-separated, in perf's order
/// (`perf_event_attr_fprintf.c`'s `__p_bits`).
struct Bits(u64, &'static [(u64, &'static str)]);

impl fmt::Display for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for &(bit, name) in self.1 {
            if self.0 & bit != 0 {
                f.write_str(if first { "" } else { "|" })?;
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// `sample_type`'s bits, as perf names and orders them.
const SAMPLE_TYPE: &[(u64, &str)] = {
    use crate::sys::*;
    &[
        (PERF_SAMPLE_IP as u64, "IP"),
        (PERF_SAMPLE_TID as u64, "TID"),
        (PERF_SAMPLE_TIME as u64, "TIME"),
        (PERF_SAMPLE_ADDR as u64, "ADDR"),
        (PERF_SAMPLE_READ as u64, "READ"),
        (PERF_SAMPLE_CALLCHAIN as u64, "CALLCHAIN"),
        (PERF_SAMPLE_ID as u64, "ID"),
        (PERF_SAMPLE_CPU as u64, "CPU"),
        (PERF_SAMPLE_PERIOD as u64, "PERIOD"),
        (PERF_SAMPLE_STREAM_ID as u64, "STREAM_ID"),
        (PERF_SAMPLE_RAW as u64, "RAW"),
        (PERF_SAMPLE_BRANCH_STACK as u64, "BRANCH_STACK"),
        (PERF_SAMPLE_REGS_USER as u64, "REGS_USER"),
        (PERF_SAMPLE_STACK_USER as u64, "STACK_USER"),
        (PERF_SAMPLE_IDENTIFIER as u64, "IDENTIFIER"),
        (PERF_SAMPLE_REGS_INTR as u64, "REGS_INTR"),
        (PERF_SAMPLE_DATA_SRC as u64, "DATA_SRC"),
        (PERF_SAMPLE_WEIGHT as u64, "WEIGHT"),
        (PERF_SAMPLE_PHYS_ADDR as u64, "PHYS_ADDR"),
        (PERF_SAMPLE_AUX as u64, "AUX"),
        (PERF_SAMPLE_CGROUP as u64, "CGROUP"),
        (PERF_SAMPLE_DATA_PAGE_SIZE as u64, "DATA_PAGE_SIZE"),
        (PERF_SAMPLE_CODE_PAGE_SIZE as u64, "CODE_PAGE_SIZE"),
        (PERF_SAMPLE_WEIGHT_STRUCT as u64, "WEIGHT_STRUCT"),
    ]
};

/// `read_format`'s bits, as perf names and orders them.
const READ_FORMAT: &[(u64, &str)] = {
    use crate::sys::*;
    &[
        (PERF_FORMAT_TOTAL_TIME_ENABLED as u64, "TOTAL_TIME_ENABLED"),
        (PERF_FORMAT_TOTAL_TIME_RUNNING as u64, "TOTAL_TIME_RUNNING"),
        (PERF_FORMAT_ID as u64, "ID"),
        (PERF_FORMAT_GROUP as u64, "GROUP"),
        (PERF_FORMAT_LOST as u64, "LOST"),
    ]
};

/// `{:#x}`, as perf prints these fields.
struct Hex(u64);

impl fmt::Display for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}
