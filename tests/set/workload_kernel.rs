//! The workload launcher (`perf_event_host::workload`) against the
//! running kernel: a child burning a known amount of CPU, counted per task
//! (`enable_on_exec`) and CPU-wide (enabled right before the release,
//! disabled when the exit wakes us); an exec failure reported as perf
//! reports it. The child is this test binary re-run: its role and the file
//! for its exit time travel as `--skip ROLE:...` arguments, which libtest
//! accepts and the role reads back.

use crate::lab_support;
use crate::set_support::{child_argv, role_value};

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_host::set::{BudgetPolicy, Cpus, EventSet, EventSpec, SetError, Target, ThreadSet};
use perf_event_host::workload::{Workload, WorkloadError};
use std::time::Duration;

const BURN_TEST: &str = "burn_counted_per_task_and_cpu_wide_window_ends_at_exit";
/// The CPU time the child burns.
const BURN_MS: u64 = 150;

pub(crate) fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    assert_eq!(unsafe { libc::clock_gettime(clock, &mut ts) }, 0);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The child's own threads, and those it creates.
pub(crate) fn child_target(pid: i32) -> Target {
    Target::Threads {
        threads: ThreadSet::from_tids([pid]),
        cpus: None,
        inherit: true,
    }
}

/// In the child: `ROLE:burn` and `ROLE:file=PATH` among the arguments.
fn role_args() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .any(|a| a == "ROLE:burn")
        .then(|| role_value("file").unwrap_or_else(|| "/dev/null".to_owned()))
}

/// The child's work: `BURN_MS` of its own CPU time, then its
/// CLOCK_MONOTONIC exit time into `file`, then exit at once.
fn burn_and_exit(file: &str) -> ! {
    let start = clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID);
    let mut x = 1u64;
    while clock_ns(libc::CLOCK_PROCESS_CPUTIME_ID) - start < BURN_MS * 1_000_000 {
        for _ in 0..1000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
    std::fs::write(file, clock_ns(libc::CLOCK_MONOTONIC).to_string()).unwrap();
    std::process::exit(0)
}

fn task_clock(enable_on_exec: bool) -> EventSpec {
    let attr = Attr::new(Event::Software(Software::TaskClock)).enable_on_exec(enable_on_exec);
    EventSpec::new("task-clock", attr)
}

#[test]
fn burn_counted_per_task_and_cpu_wide_window_ends_at_exit() {
    if let Some(file) = role_args() {
        burn_and_exit(&file);
    }
    let file = std::env::temp_dir().join(format!("workload-exit-{}", std::process::id()));
    let roles = ["ROLE:burn".into(), format!("ROLE:file={}", file.display())];
    let argv = child_argv(module_path!(), BURN_TEST, &roles);
    let mut workload = Workload::hold(&argv).unwrap();
    let per_task = child_target(workload.pid());
    let mut task = EventSet::open(vec![vec![task_clock(true)]], per_task, BudgetPolicy::Fail)
        .expect("per-task task-clock on a child of ours");
    let online = Cpus::read().unwrap().online().clone();
    let mut wide = match EventSet::open(
        vec![vec![task_clock(false)]],
        Target::Cpus(online),
        BudgetPolicy::Fail,
    ) {
        Ok(set) => Some(set),
        Err(SetError::Open { error, .. }) => {
            lab_support::skip(
                "workload_kernel::burn (CPU-wide part)",
                &format!("CPU-wide events need CAP_PERFMON or perf_event_paranoid <= 0: {error}"),
            );
            None
        }
        Err(e) => panic!("{e}"),
    };
    // Nothing counts before the exec: the per-task leader waits for it.
    assert_eq!(task.read_all().unwrap()[0].counts.value, 0);
    let enabled_at = clock_ns(libc::CLOCK_MONOTONIC);
    if let Some(w) = &wide {
        w.enable().unwrap();
    }
    workload.release().unwrap();
    let blocked = blocked_while(|| assert!(workload.wait_exit(None).unwrap()));
    if let Some(w) = &wide {
        w.disable().unwrap();
    }
    let disabled_at = clock_ns(libc::CLOCK_MONOTONIC);
    let exit = workload.reap().unwrap();
    assert_eq!(exit.code(), Some(0), "{exit:?}");
    let exited_at: u64 = std::fs::read_to_string(&file).unwrap().parse().unwrap();
    let _ = std::fs::remove_file(&file);

    // Per task: at least the burn, and what the kernel charged the child.
    let per_task_ns: u64 = task
        .read_all()
        .unwrap()
        .iter()
        .map(|c| c.counts.value)
        .sum();
    let rusage_ns = (exit.user + exit.sys).as_nanos() as u64;
    assert!(
        per_task_ns >= BURN_MS * 1_000_000,
        "per-task task-clock {per_task_ns} ns < the {BURN_MS} ms burnt"
    );
    // And no more than the child could run: it ran (one thread busy at a
    // time) only between the enable and the disable, so its CPU time is
    // within that window, plus two scheduler ticks where the kernel
    // charges runtime in ticks (a jiffy-based sched_clock: 10 ms at HZ
    // 100). Containment, not agreement: a slower or loaded machine only
    // widens the window. (rusage is not compared: on tick-sampled kernels
    // such as the lab's mips64el 6.1 it was 18-25 % above task-clock.)
    let window = disabled_at - enabled_at;
    assert!(
        per_task_ns <= window + 20_000_000,
        "per-task task-clock {per_task_ns} ns beyond the {window} ns the child could run \
         (rusage {rusage_ns} ns)"
    );
    // The child's last instant lies inside the window (one clock, taken
    // by both), and the exit wakes the waiter: no polling period between.
    assert!(
        enabled_at <= exited_at && exited_at <= disabled_at,
        "the child's last instant {exited_at} outside the window {enabled_at}..{disabled_at}"
    );
    assert_woken_by_the_exit(blocked, BURN_MS);
    if let Some(w) = wide.as_mut() {
        let counts = w.read_all().unwrap();
        // Enabled no longer than from before the enable to after the
        // disable, which followed the wake-up at once.
        let window = disabled_at - enabled_at;
        for c in counts {
            let enabled = c.counts.enabled.unwrap_or(0);
            assert!(
                enabled <= window,
                "CPU {} enabled {enabled} ns, the window was {window} ns",
                c.placement.cpu
            );
        }
        let wide_ns: u64 = counts.iter().map(|c| c.counts.value).sum();
        assert!(
            wide_ns * 100 >= per_task_ns * 95,
            "CPU-wide task-clock {wide_ns} ns < per-task {per_task_ns} ns"
        );
    }
}

/// How many times this thread blocked (its voluntary context switches,
/// `/proc/thread-self/status`) while `f` ran.
pub fn blocked_while(f: impl FnOnce()) -> u64 {
    let switches = || -> u64 {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no voluntary_ctxt_switches in {status}"))
    };
    let before = switches();
    f();
    switches() - before
}

/// A wait for a child that ran for at least `ran_ms` of CPU time blocked
/// at most three times: the exit itself woke it. A polling period of
/// `ran_ms / 10` or shorter blocks ten times or more, whatever the pace of
/// the machine (a loaded one only lengthens the wait, adding wake-ups to a
/// poll and none to an event-driven wait).
pub fn assert_woken_by_the_exit(blocked: u64, ran_ms: u64) {
    println!("the wait for a child that ran {ran_ms} ms blocked {blocked} times");
    assert!(
        blocked <= 3,
        "the wait for a child that ran {ran_ms} ms blocked {blocked} times: woken by a polling \
         period, not by the exit"
    );
}

#[test]
fn exec_failure_is_reported_as_perf_does() {
    if role_args().is_some() {
        return;
    }
    let mut workload = Workload::hold(&["/nonexistent/perf-event-core-workload"]).unwrap();
    let err = workload.release().unwrap_err();
    assert!(
        matches!(err, WorkloadError::Exec { errno, .. } if errno.0 == libc::ENOENT),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "Workload failed: No such file or directory"
    );
    // The child was reaped: it ended with status 127, unexecuted.
    assert_eq!(workload.reap().unwrap().code(), Some(127));
}

#[test]
fn dropped_before_release_exits_unexecuted() {
    if role_args().is_some() {
        return;
    }
    let mut workload = Workload::hold(&["/nonexistent"]).unwrap();
    assert!(!workload.wait_exit(Some(Duration::from_millis(20))).unwrap());
    assert_eq!(workload.reap().unwrap().code(), Some(127));
}
