//! The rules against perf 6.1's, simulated: each errno and context given
//! (the kernel's own answers are in tests/perf_oracle/fallback_matrix.rs,
//! which compares the final attrs with perf's).

use super::*;
use crate::abi::KernelVersion;
use crate::attr::Attr;
use crate::event::{Event, Hardware, Software};
use crate::linux::errno as e;
use crate::sys;

const P2: Conditions = Conditions {
    paranoid: Some(Paranoid(2)),
    kernel: Some(KernelVersion::new(6, 1, 0)),
};

fn cycles() -> Attr {
    Attr::new(Event::Hardware(Hardware::CpuCycles))
}

#[test]
fn cycles_fall_back_to_cpu_clock_on_enoent_enxio_enodev_only() {
    for errno in [e::ENOENT, e::ENXIO, e::ENODEV] {
        let mut a = Attempt::new(cycles(), Policy::PERF);
        let f = a.next(Errno(errno), P2).expect("cycles -> cpu-clock");
        assert_eq!((f.rule, f.field), (Rule::CyclesToCpuClock, Field::Event));
        assert_eq!(f.from, sys::PERF_TYPE_HARDWARE as u64);
        assert_eq!(
            f.to,
            (sys::PERF_TYPE_SOFTWARE as u64) << 32 | sys::PERF_COUNT_SW_CPU_CLOCK as u64
        );
        assert_eq!(a.attr().to_raw().type_, sys::PERF_TYPE_SOFTWARE);
        assert_eq!(a.fallbacks().len(), 1);
        // cpu-clock refused too: no rule left.
        assert_eq!(a.next(Errno(errno), P2), None);
    }
    for errno in [e::EOPNOTSUPP, e::EINVAL, e::EBUSY] {
        assert_eq!(
            Attempt::new(cycles(), Policy::PERF).next(Errno(errno), P2),
            None
        );
    }
    // Not for instructions, nor under perf stat's or the strict policy.
    let instructions = Attr::new(Event::Hardware(Hardware::Instructions));
    assert_eq!(
        Attempt::new(instructions, Policy::PERF).next(Errno(e::ENOENT), P2),
        None
    );
    assert_eq!(
        Attempt::new(cycles(), Policy::PERF_STAT).next(Errno(e::ENOENT), P2),
        None
    );
    assert_eq!(
        Attempt::new(cycles(), Policy::STRICT).next(Errno(e::ENOENT), P2),
        None
    );
}

#[test]
fn eacces_above_paranoid_one_excludes_kernel_and_hv_once() {
    let task_clock = Attr::new(Event::Software(Software::TaskClock));
    for level in [2, 3, 4] {
        let ctx = Conditions {
            paranoid: Some(Paranoid(level)),
            ..P2
        };
        let mut a = Attempt::new(task_clock, Policy::PERF);
        let f = a.next(Errno(e::EACCES), ctx).expect(":u");
        assert_eq!(
            (f.rule, f.paranoid),
            (Rule::ExcludeKernel, Some(Paranoid(level)))
        );
        assert_eq!(a.attr().get_flag(flag::EXCLUDE_KERNEL), 1);
        assert_eq!(a.attr().get_flag(flag::EXCLUDE_HV), 1);
        assert!(
            f.to_string()
                .contains(&format!("kernel.perf_event_paranoid={level}")),
            "{f}"
        );
        // Refused again (CPU-wide, say): the refusal is final.
        assert_eq!(a.next(Errno(e::EACCES), ctx), None);
    }
    // Unreadable: perf takes it as restrictive.
    let unknown = Conditions {
        paranoid: None,
        kernel: None,
    };
    assert!(Attempt::new(task_clock, Policy::PERF)
        .next(Errno(e::EACCES), unknown)
        .is_some());
    for (attr, ctx, errno) in [
        (
            task_clock,
            Conditions {
                paranoid: Some(Paranoid(1)),
                ..P2
            },
            e::EACCES,
        ),
        (task_clock, P2, e::EPERM),
        (task_clock.exclude_kernel(true), P2, e::EACCES),
        (task_clock.exclude_user(true), P2, e::EACCES),
    ] {
        assert_eq!(
            Attempt::new(attr, Policy::PERF).next(Errno(errno), ctx),
            None,
            "{attr:?} {errno}"
        );
    }
    assert_eq!(
        Attempt::new(task_clock, Policy::STRICT).next(Errno(e::EACCES), P2),
        None
    );
}

#[test]
fn max_precise_goes_down_then_back_up_for_the_next_rule() {
    // perf record -e cycles:P as an ordinary user in a VM (perf -vv):
    // 3 2 1 0 refused (EACCES), :u at 3, 3 2 1 0 refused (ENOENT),
    // cpu-clock with precise_ip 3.
    let mut a = Attempt::new(cycles(), Policy::PERF).max_precise();
    let mut tried = vec![a.attr().get_flag(flag::PRECISE_IP)];
    let mut rules = vec![];
    for errno in [e::EACCES; 4].into_iter().chain([e::ENOENT; 4]) {
        let f = a.next(Errno(errno), P2).expect("a rule fits");
        rules.push(f.rule);
        tried.push(a.attr().get_flag(flag::PRECISE_IP));
    }
    assert_eq!(tried, [3, 2, 1, 0, 3, 2, 1, 0, 3]);
    use Rule::*;
    assert_eq!(
        rules,
        [
            MaxPrecise,
            MaxPrecise,
            MaxPrecise,
            ExcludeKernel,
            MaxPrecise,
            MaxPrecise,
            MaxPrecise,
            CyclesToCpuClock
        ]
    );
    // The precision came back to 3: not a change. Two fallbacks remain.
    let kept: Vec<_> = a.fallbacks().iter().map(|f| f.rule).collect();
    assert_eq!(kept, [ExcludeKernel, CyclesToCpuClock]);
    assert_eq!(
        a.next(Errno(e::ENOENT), P2).map(|f| f.rule),
        Some(MaxPrecise)
    );
    // One level kept: one entry from 3 to that level.
    let mut b = Attempt::new(cycles(), Policy::PERF).max_precise();
    b.next(Errno(e::EOPNOTSUPP), P2);
    b.next(Errno(e::EOPNOTSUPP), P2);
    let f = b.fallbacks().find(MaxPrecise).copied().expect("kept");
    assert_eq!((f.from, f.to, b.fallbacks().len()), (3, 1, 1));
    // Errors about the call, not the attr: no rule.
    assert_eq!(
        Attempt::new(cycles(), Policy::PERF)
            .max_precise()
            .next(Errno(e::ESRCH), P2),
        None
    );
}

#[test]
fn missing_side_band_flags_are_dropped_newest_first_on_einval() {
    let attr = Attr::new(Event::Software(Software::CpuClock))
        .flag(flag::MMAP2, 1)
        .flag(flag::KSYMBOL, 1)
        .flag(flag::SAMPLE_ID_ALL, 1)
        .flag(flag::CGROUP, 1);
    let old = Conditions {
        kernel: Some(KernelVersion::new(4, 19, 0)),
        ..P2
    };
    let mut a = Attempt::new(attr, Policy::PERF);
    let mut dropped = vec![];
    while let Some(f) = a.next(Errno(e::EINVAL), old) {
        dropped.push(f.field.name());
    }
    // 4.19 has mmap2 (3.16) and sample_id_all (2.6.38).
    assert_eq!(dropped, ["cgroup", "ksymbol"]);
    assert_eq!(a.attr().get_flag(flag::MMAP2), 1);
    // Unknown kernel: nothing guessed. Another errno: nothing.
    let unknown = Conditions { kernel: None, ..P2 };
    assert_eq!(
        Attempt::new(attr, Policy::PERF).next(Errno(e::EINVAL), unknown),
        None
    );
    assert_eq!(
        Attempt::new(attr, Policy::PERF).next(Errno(e::EOPNOTSUPP), old),
        None
    );
    // CLOEXEC before 3.14.
    let ancient = Conditions {
        kernel: Some(KernelVersion::new(3, 10, 0)),
        ..P2
    };
    let mut c = Attempt::new(Attr::new(Event::Software(Software::CpuClock)), Policy::PERF);
    let f = c.next(Errno(e::EINVAL), ancient).expect("cloexec");
    assert_eq!(f.field, Field::OpenFlags);
    assert_eq!(c.flags().bits() & sys::PERF_FLAG_FD_CLOEXEC as u64, 0);
}

#[test]
fn names_follow_perf() {
    let mut a = Attempt::new(
        Attr::new(Event::Software(Software::TaskClock)),
        Policy::PERF,
    );
    a.next(Errno(e::EACCES), P2);
    assert_eq!(
        renamed("task-clock", a.fallbacks(), &a.attr()).to_string(),
        "task-clock:u"
    );
    assert_eq!(
        renamed("cpu/cycles/", a.fallbacks(), &a.attr()).to_string(),
        "cpu/cycles/u"
    );
    assert_eq!(
        renamed("cycles:p", a.fallbacks(), &a.attr()).to_string(),
        "cycles:pu"
    );
    // perf record -e cycles:P as a user in a VM: cpu-clock:uppp.
    let mut b = Attempt::new(cycles(), Policy::PERF).max_precise();
    for errno in [e::EACCES; 4].into_iter().chain([e::ENOENT; 4]) {
        b.next(Errno(errno), P2);
    }
    assert_eq!(
        renamed("cycles:P", b.fallbacks(), &b.attr()).to_string(),
        "cpu-clock:uppp"
    );
    // As root: plain cycles with exclude_guest (perf's default) -> cpu-clock.
    let mut c = Attempt::new(cycles().exclude_guest(true), Policy::PERF);
    c.next(Errno(e::ENOENT), P2);
    assert_eq!(
        renamed("cycles", c.fallbacks(), &c.attr()).to_string(),
        "cpu-clock"
    );
    let none = Fallbacks::default();
    assert_eq!(renamed("cycles", &none, &cycles()).to_string(), "cycles");
}
