//! Shared by the ring set's kernel tests: tracepoint attrs, threads pinned
//! to each CPU firing syscalls on cue, record parsing that fails loudly.
#![allow(dead_code)] // each test binary uses part of it

use crate::kernel_support::tracepoint_id;
use crate::lab_support::{not_applicable, Need};
use perf_event_core::attr::Attr;
use perf_event_core::event::Event;
use perf_event_core::record::{self, Record, SampleLayout};
use perf_event_core::ring::RawRecord;
use perf_event_core::sys;
use std::sync::{mpsc, Arc, Barrier};

pub const SAMPLE: u64 = (sys::PERF_SAMPLE_IDENTIFIER
    | sys::PERF_SAMPLE_TID
    | sys::PERF_SAMPLE_TIME
    | sys::PERF_SAMPLE_CPU) as u64;

pub fn prctl() {
    // SAFETY: PR_GET_DUMPABLE has no pointer arguments.
    unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
}

pub fn getppid() {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() };
}

pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

pub fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set),
            0,
            "pinning to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// The CPUs this process may run on.
pub fn cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is valid; the kernel fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        assert_eq!(
            libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set),
            0
        );
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// The two tracepoint attrs, or `None` after reporting the test as not
/// applicable here (no tracefs, or syscall tracepoints that do not fire):
/// `not_applicable` names the running test itself.
pub fn tracepoints() -> Option<(Attr, Attr)> {
    if let Err(why) = crate::kernel_support::syscall_tracepoints() {
        not_applicable(Need::SyscallTracepoints, &why);
        return None;
    }
    let attr = |name: &str| {
        Attr::new(Event::Tracepoint(tracepoint_id("syscalls", name)))
            .disabled(true)
            .sample_period(1)
            .sample_type_raw(SAMPLE)
            .sample_id_all(true)
    };
    Some((attr("sys_enter_prctl"), attr("sys_enter_getppid")))
}

pub fn parse<'a>(
    layout: &SampleLayout,
    rec: &'a RawRecord<'_>,
    scratch: &'a mut [u8],
) -> Record<'a> {
    let bytes = rec.bytes(scratch).unwrap();
    record::parse(layout, bytes)
        .unwrap_or_else(|e| panic!("torn or malformed record {:?}: {e}", rec.header))
        .record
}

/// Threads pinned to each CPU, waiting for a go; each reports its tid.
pub struct Workers {
    pub tids: Vec<(usize, i32)>,
    pub go: Arc<Barrier>,
    /// With a held burst (see [`workers`]): the workers wait here, with
    /// the reader, once each has made its burst; the rest follow.
    pub held: Option<Arc<Barrier>>,
    pub extra: Arc<Barrier>,
    pub done: mpsc::Receiver<usize>,
    pub handles: Vec<std::thread::JoinHandle<()>>,
}

/// One thread per CPU: after `go`, `per_cpu` of each syscall in `work`;
/// after `extra`, one more of each (so the kernel writes any pending
/// PERF_RECORD_LOST into the emptied ring).
///
/// With `held: Some(burst)`, each worker makes the first `burst` rounds and
/// then waits at [`Workers::held`] until the reader does too: a reader that
/// does not drain before it meets the workers there has let `burst` rounds
/// into its ring, whatever the two sides' pace.
pub fn workers(cpus: &[usize], per_cpu: u32, held: Option<u32>, work: &'static [fn()]) -> Workers {
    let go = Arc::new(Barrier::new(cpus.len() + 1));
    assert!(
        held.is_none_or(|burst| burst < per_cpu),
        "the held burst {held:?} must leave rounds after it (per_cpu {per_cpu})"
    );
    let held_at = held.map(|_| Arc::new(Barrier::new(cpus.len() + 1)));
    let burst = held.unwrap_or(0);
    let extra = Arc::new(Barrier::new(cpus.len() + 1));
    let (tid_tx, tid_rx) = mpsc::channel();
    let (done_tx, done) = mpsc::channel();
    let handles = cpus
        .iter()
        .map(|&cpu| {
            let (go, extra, tid_tx, done_tx) =
                (go.clone(), extra.clone(), tid_tx.clone(), done_tx.clone());
            let held_at = held_at.clone();
            std::thread::spawn(move || {
                pin_to(cpu);
                tid_tx.send((cpu, gettid())).unwrap();
                go.wait();
                for round in 0..per_cpu {
                    if round == burst {
                        if let Some(h) = &held_at {
                            h.wait();
                        }
                    }
                    for f in work {
                        f();
                    }
                }
                done_tx.send(cpu).unwrap();
                extra.wait();
                for f in work {
                    f();
                }
                done_tx.send(cpu).unwrap();
            })
        })
        .collect();
    let mut tids: Vec<(usize, i32)> = (0..cpus.len()).map(|_| tid_rx.recv().unwrap()).collect();
    tids.sort();
    Workers {
        tids,
        go,
        held: held_at,
        extra,
        done,
        handles,
    }
}
