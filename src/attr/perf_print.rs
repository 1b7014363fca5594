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
#[derive(Clone, Copy, Debug)]
pub struct PerfPrint<'a>(&'a Attr);

const RULE: &str = "------------------------------------------------------------";

impl Attr {
    /// This attr as `perf -vv` prints it ([`PerfPrint`]).
    pub const fn perf_print(&self) -> PerfPrint<'_> {
        PerfPrint(self)
    }
}

impl fmt::Display for PerfPrint<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raw = self.0.to_raw();
        writeln!(f, "{RULE}\nperf_event_attr:")?;
        let mut put = |name: &str, value: &dyn fmt::Display| writeln!(f, "  {name:<32} {value}");
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
            let v = self.0.get_flag(flag.flag);
            if v != 0 {
                put(flag.flag.name, &v)?;
            }
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
