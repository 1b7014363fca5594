//! perf's `evlist` control command output, one line per event.

use super::command::EvlistDetail;
use perf_event_core::abi::bitfield::attr_flags;
use perf_event_core::attr::Attr;
use std::io::Write;

/// Writes event `name`'s line of `evlist` as perf's `evsel__fprintf`
/// does: the name ([`EvlistDetail::Names`]); the name and every non-zero
/// attr field ([`EvlistDetail::Verbose`], [`Attr::perf_print_inline`]);
/// the name and `sample_freq=N` or `sample_period=N`
/// ([`EvlistDetail::Freq`]). [`EvlistDetail::Groups`] lists groups: see
/// [`write_evlist_group`].
pub fn write_evlist_line(
    out: &mut dyn Write,
    detail: EvlistDetail,
    name: &str,
    attr: &Attr,
) -> std::io::Result<()> {
    match detail {
        EvlistDetail::Verbose => writeln!(out, "{name}{}", attr.perf_print_inline()),
        EvlistDetail::Freq => {
            let term = if attr.get_flag(attr_flags::FREQ) != 0 {
                "sample_freq"
            } else {
                "sample_period"
            };
            writeln!(out, "{name}: {term}={}", attr.to_raw().sample_period())
        }
        _ => writeln!(out, "{name}"),
    }
}

/// Writes a group's line of `evlist -g`: `{leader,member,...}`, or the
/// leader's name alone for a group of one (perf lists group leaders only).
pub fn write_evlist_group(out: &mut dyn Write, names: &[&str]) -> std::io::Result<()> {
    match names {
        [one] => writeln!(out, "{one}"),
        _ => writeln!(out, "{{{}}}", names.join(",")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perf_event_core::event::{Event, Software};

    #[test]
    fn lines_as_perf_prints_them() {
        let attr = Attr::new(Event::Software(Software::TaskClock)).sample_period(4000);
        let mut out = Vec::new();
        write_evlist_line(&mut out, EvlistDetail::Freq, "task-clock", &attr).unwrap();
        write_evlist_line(&mut out, EvlistDetail::Names, "task-clock", &attr).unwrap();
        write_evlist_group(&mut out, &["cycles", "instructions"]).unwrap();
        write_evlist_group(&mut out, &["cycles"]).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "task-clock: sample_period=4000\ntask-clock\n{cycles,instructions}\ncycles\n"
        );
    }
}
