//! [`PerfPrint`]: an attr as perf prints the ones it opens with `-vv`.

use super::Attr;
use crate::abi::since::FLAGS;
use core::fmt;

/// An attr displayed as `perf -vv` prints each attr it opens (perf's
/// `perf_event_attr__fprintf`): a dashed line, `perf_event_attr:`, then
/// the non-zero fields by the kernel's names (`size` always), each as
/// `  NAME<padded to 32> VALUE`, and a closing dashed line. A tool's `-vv`
/// output then compares field by field with perf's. `sample_type` and
/// `read_format` are numbers (`0x3`) where perf 6.1 names the bits
/// (`TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING`). Made by
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
            put("sample_type", &hex(raw.sample_type))?;
        }
        if raw.read_format != 0 {
            put("read_format", &hex(raw.read_format))?;
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

/// `{:#x}`, as perf prints these fields.
struct Hex(u64);

impl fmt::Display for Hex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}
