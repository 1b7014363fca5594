//! The matrix of `tests/unprivileged/fallback_matrix.rs` without perf: user
//! (root, uid 65534) x `perf_event_paranoid` (-1, 0, 1, 2, 3 where the
//! kernel takes it) x target (this thread, a whole CPU) x event (cycles,
//! instructions, task-clock, page-faults, a tracepoint, `cycles:P`) x
//! policy (perf record's, perf stat's). The host run pinned the rules
//! against perf 6.1; here each cell is checked against them, the kernel's
//! own answers deciding:
//!
//! - an attr the kernel takes as given takes no fallback;
//! - every fallback reported is true: the attr before it, opened as is,
//!   gets the errno the report names;
//! - `:u` (exclude_kernel + exclude_hv) is taken exactly when the kernel
//!   refused with EACCES an attr that counts the kernel, at paranoid > 1;
//! - cycles becomes cpu-clock exactly under perf record's policy, when the
//!   kernel answered ENOENT / ENXIO / ENODEV for cycles: never where the
//!   guest has a PMU that counts cycles;
//! - a refusal is final: the last attr, opened as is, is refused with the
//!   same errno.

use crate::kernel_support::tracepoint_id;
use crate::lab_support;
use crate::paranoid_support::ParanoidLevel;
use crate::seccomp_support::as_nobody;
use perf_event_core::abi::bitfield::attr_flags as flag;
use perf_event_core::abi::Paranoid;
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::fallback::{self, Attempt, Fallback, Field, Policy, Rule};
use perf_event_core::linux::errno::{Errno, EACCES, ENODEV, ENOENT, ENXIO};
use perf_event_core::open::{open, OpenFlags, Scope};

/// The attr opened as is on `scope`: `None` when it opens, else the errno.
fn refusal(attr: &Attr, scope: Scope, flags: OpenFlags) -> Option<Errno> {
    open(attr, scope, None, flags)
        .err()
        .map(|e| e.errno.unwrap_or(Errno(0)))
}

/// The attr before `f` from the attr after it.
fn undo(after: Attr, f: &Fallback) -> Attr {
    match f.field {
        Field::Event => {
            let mut raw = after.to_raw();
            raw.type_ = (f.from >> 32) as u32;
            raw.config = f.from & 0xffff_ffff;
            Attr::from_raw(raw)
        }
        Field::ExcludeKernelAndHv => after.exclude_kernel(false).exclude_hv(false),
        Field::Flag(b) => after.flag(b, f.from),
        Field::OpenFlags => after,
        other => panic!("a fallback of a field this test cannot undo: {other:?}"),
    }
}

/// One cell, on the calling thread (root's or the ordinary user's).
/// Returns a line on what was taken, or the rule it broke.
fn cell(
    attr: Attr,
    max_precise: bool,
    policy: Policy,
    scope: Scope,
    paranoid: Paranoid,
) -> Result<String, String> {
    let mut attempt = Attempt::new(attr, policy);
    if max_precise {
        attempt = attempt.max_precise();
    }
    let first = attempt.attr();
    let opened = fallback::open(&mut attempt, scope, None);
    let fallbacks: Vec<Fallback> = attempt.fallbacks().iter().copied().collect();
    let last = attempt.attr();
    // Nothing taken when the kernel takes the attr as given.
    let as_given = refusal(&first, scope, OpenFlags::new());
    if as_given.is_none() && !fallbacks.is_empty() {
        return Err(format!(
            "the attr opens as given, yet {fallbacks:?} were taken"
        ));
    }
    // Each report is true: the attr before it gets its errno. Walk back
    // from the last attr (precision changes are checked by level).
    let mut now = last;
    for f in fallbacks.iter().rev() {
        let before = undo(now, f);
        if f.rule != Rule::MaxPrecise {
            let errno = refusal(&before, scope, OpenFlags::new());
            // The precision search between may have tried other levels
            // first; the rule's errno is the kernel's for some level.
            let any_level = (0..=3u8)
                .any(|p| refusal(&before.precise_ip(p), scope, OpenFlags::new()) == Some(f.errno));
            if errno != Some(f.errno) && !(max_precise && any_level) {
                return Err(format!("{f:?}: the attr before it gets {errno:?}"));
            }
        }
        now = before;
    }
    let took = |r: Rule| fallbacks.iter().any(|f| f.rule == r);
    let counts_kernel =
        first.get_flag(flag::EXCLUDE_KERNEL) == 0 && first.get_flag(flag::EXCLUDE_USER) == 0;
    // :u exactly when EACCES refused an attr counting the kernel above 1.
    if took(Rule::ExcludeKernel) {
        let f = fallbacks
            .iter()
            .find(|f| f.rule == Rule::ExcludeKernel)
            .unwrap();
        if f.errno != Errno(EACCES)
            || paranoid.allows_kernel()
            || !counts_kernel
            || f.paranoid != Some(paranoid)
        {
            return Err(format!("{f:?} taken at paranoid {}", paranoid.0));
        }
        if last.get_flag(flag::EXCLUDE_KERNEL) != 1 || last.get_flag(flag::EXCLUDE_HV) != 1 {
            return Err("`:u` taken but the final attr counts the kernel".into());
        }
    } else if counts_kernel
        && !paranoid.allows_kernel()
        && opened.as_ref().err().and_then(|e| e.errno) == Some(Errno(EACCES))
    {
        let with_u = last.exclude_kernel(true).exclude_hv(true);
        if policy.exclude_kernel && last.get_flag(flag::EXCLUDE_KERNEL) == 0 {
            return Err(format!(
                "EACCES at paranoid {} without `:u` (it would give {:?})",
                paranoid.0,
                refusal(&with_u, scope, OpenFlags::new())
            ));
        }
    }
    // cycles -> cpu-clock only under perf record's policy, only after
    // ENOENT / ENXIO / ENODEV.
    if took(Rule::CyclesToCpuClock) {
        let f = fallbacks
            .iter()
            .find(|f| f.rule == Rule::CyclesToCpuClock)
            .unwrap();
        if !policy.cycles_to_cpu_clock || ![ENOENT, ENXIO, ENODEV].contains(&f.errno.0) {
            return Err(format!("{f:?} under {policy:?}"));
        }
    } else if policy.cycles_to_cpu_clock {
        let raw = last.to_raw();
        let cycles = raw.type_ == perf_event_core::sys::PERF_TYPE_HARDWARE && raw.config == 0;
        if let (true, Err(e)) = (cycles, &opened) {
            if matches!(e.errno.map(|e| e.0), Some(ENOENT | ENXIO | ENODEV)) {
                return Err(format!(
                    "cycles refused with {:?} and no cpu-clock fallback",
                    e.errno
                ));
            }
        }
    }
    // A refusal is final: the last attr, as is, gets the same errno.
    match &opened {
        Ok(_) => {}
        Err(e) => {
            let again = refusal(&last, scope, attempt.flags());
            if again != e.errno {
                return Err(format!(
                    "refused with {:?}, the last attr gets {again:?}",
                    e.errno
                ));
            }
        }
    }
    let rules: Vec<String> = fallbacks.iter().map(|f| format!("{:?}", f.rule)).collect();
    Ok(match opened {
        Ok(_) => format!("opened after [{}]", rules.join(", ")),
        Err(e) => format!("refused ({:?}) after [{}]", e.errno, rules.join(", ")),
    })
}

#[test]
fn fallback_reports_follow_perfs_rules_for_every_user_and_level() {
    let root = perf_event_core::linux::access::Caller::current().perfmon;
    if !root {
        lab_support::skip(
            "fallback rules as root and uid 65534",
            "not root: cannot set perf_event_paranoid or run a thread as uid 65534",
        );
        return;
    }
    let mut events: Vec<(&str, Attr, bool)> = vec![
        (
            "cycles",
            Attr::new(Event::Hardware(Hardware::CpuCycles)),
            false,
        ),
        (
            "instructions",
            Attr::new(Event::Hardware(Hardware::Instructions)),
            false,
        ),
        (
            "task-clock",
            Attr::new(Event::Software(Software::TaskClock)),
            false,
        ),
        (
            "page-faults",
            Attr::new(Event::Software(Software::PageFaults)),
            false,
        ),
        (
            "cycles:P",
            Attr::new(Event::Hardware(Hardware::CpuCycles)),
            true,
        ),
    ];
    match crate::kernel_support::tracefs() {
        Ok(_) => events.push((
            "sched:sched_switch",
            Attr::new(Event::Tracepoint(tracepoint_id("sched", "sched_switch"))),
            false,
        )),
        Err(why) => lab_support::not_applicable(lab_support::Need::Tracefs, &why),
    }
    // Whether this machine's PMU counts cycles (changes the cycles cells).
    let pmu = refusal(
        &Attr::new(Event::Hardware(Hardware::CpuCycles)).exclude_kernel(true),
        Scope::this_thread(),
        OpenFlags::new(),
    )
    .is_none();
    let mut failures = Vec::new();
    let mut cells = 0;
    let levels = ParanoidLevel::each(|level| {
        for nobody in [false, true] {
            for (scope, target) in [
                (Scope::this_thread(), "thread"),
                (Scope::all_tasks_on(0), "cpu 0"),
            ] {
                for &(name, attr, max_precise) in &events {
                    for (policy, tool) in [(Policy::PERF, "record"), (Policy::PERF_STAT, "stat")] {
                        let run = move || cell(attr, max_precise, policy, scope, Paranoid(level));
                        let result = if nobody {
                            as_nobody(run).expect("root")
                        } else {
                            run()
                        };
                        cells += 1;
                        let who = if nobody { "uid 65534" } else { "root" };
                        match result {
                            Ok(line) => {
                                println!("paranoid {level} {who} {target} {name} {tool}: {line}")
                            }
                            Err(why) => failures.push(format!(
                                "paranoid {level} {who} {target} {name} {tool}: {why}"
                            )),
                        }
                    }
                }
            }
        }
    });
    println!(
        "{cells} cells (paranoid {levels:?}, {}): {} broke a rule",
        if pmu {
            "a PMU counts cycles"
        } else {
            "no PMU for cycles"
        },
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
