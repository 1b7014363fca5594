//! An attr printed as `perf -vv` prints the ones it opens (its
//! `perf_event_attr__fprintf`: the non-zero fields, by the kernel's names),
//! so the tools' `-vv` output compares field by field with perf's.

use perf_event_core::abi::since::FLAGS;
use perf_event_core::attr::Attr;
use perf_event_core::fallback::Fallbacks;

/// The attr block and the open's outcome, to stderr.
pub fn print(attr: &Attr, outcome: &str) {
    let raw = attr.to_raw();
    let mut out = String::from(
        "------------------------------------------------------------\nperf_event_attr:\n",
    );
    let mut put = |name: &str, value: String| out.push_str(&format!("  {name:<32} {value}\n"));
    if raw.type_ != 0 {
        put("type", raw.type_.to_string());
    }
    put("size", raw.size.to_string());
    if raw.config != 0 {
        put("config", format!("{:#x}", raw.config));
    }
    let period = raw.sample_period();
    if period != 0 {
        put("{ sample_period, sample_freq }", period.to_string());
    }
    if raw.sample_type != 0 {
        put("sample_type", format!("{:#x}", raw.sample_type));
    }
    if raw.read_format != 0 {
        put("read_format", format!("{:#x}", raw.read_format));
    }
    if raw.config1() != 0 {
        put("{ bp_addr, config1 }", format!("{:#x}", raw.config1()));
    }
    if raw.config2() != 0 {
        put("{ bp_len, config2 }", format!("{:#x}", raw.config2()));
    }
    if raw.bp_type != 0 {
        put("bp_type", raw.bp_type.to_string());
    }
    for f in FLAGS {
        let v = attr.get_flag(f.flag);
        if v != 0 {
            put(f.flag.name, v.to_string());
        }
    }
    out.push_str("------------------------------------------------------------\n");
    out.push_str(outcome);
    out.push('\n');
    eprint!("{out}");
}

/// perf's `-v` warnings for the fallbacks taken (`Warning:` and perf's
/// message, one per fallback).
pub fn warn(fallbacks: &Fallbacks) {
    for f in fallbacks.iter() {
        eprintln!("Warning:\n{f}");
    }
}
