//! A tracepoint storm shared by the ring benchmarks (`ringset`,
//! `record_vs_perf`): threads pinned one per CPU, each making a known
//! number of `prctl(2)` calls as fast as it can, so the number of
//! `syscalls:sys_enter_prctl` firings is known exactly.

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;

/// `n` calls of `prctl(option, 0, 0, 0, 0)` (an option the kernel does not
/// know returns EINVAL, after the sys_enter tracepoint fired).
pub fn prctls(option: i32, n: u32) {
    for _ in 0..n {
        // SAFETY: prctl with integer arguments only; the options used here
        // (PR_GET_DUMPABLE, an unknown option) take no pointer.
        unsafe { libc::prctl(option, 0, 0, 0, 0) };
    }
}

/// The id of tracepoint `group:name`, mounting tracefs at
/// /sys/kernel/tracing when it is not mounted yet.
pub fn tracepoint_id(group: &str, name: &str) -> u64 {
    let read = |dir: &str| std::fs::read_to_string(format!("{dir}/events/{group}/{name}/id")).ok();
    if let Some(s) = read("/sys/kernel/tracing").or_else(|| read("/sys/kernel/debug/tracing")) {
        return s.trim().parse().expect("a tracepoint id");
    }
    // SAFETY: mount(2) with valid C strings and no data.
    unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            c"/sys/kernel/tracing".as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    read("/sys/kernel/tracing")
        .unwrap_or_else(|| panic!("tracefs with {group}:{name}"))
        .trim()
        .parse()
        .expect("a tracepoint id")
}

/// The online CPUs (from sysfs: the affinity mask, which
/// `available_parallelism` reads, shrinks to one CPU once the reader pins
/// itself, and the storm would then share the reader's CPU).
pub fn cpus() -> Vec<usize> {
    let cpus = perf_event_host::set::Cpus::read().expect("/sys/devices/system/cpu/online");
    cpus.online()
        .as_slice()
        .iter()
        .map(|&c| c as usize)
        .collect()
}

/// Pins the calling thread to `cpu`.
pub fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set);
    }
}

/// Threads pinned per CPU: `n` prctls each after [`Storm::start`], then
/// one more each on [`Storm::last`] (after the reader emptied the rings,
/// so the kernel can write the PERF_RECORD_LOST it still owes). Each
/// thread fires `n + 1` times in all.
pub struct Storm {
    /// (cpu, tid) of each storm thread, by CPU.
    pub tids: Vec<(usize, i32)>,
    go: Arc<Barrier>,
    extra: Arc<Barrier>,
    done: Receiver<()>,
    running: usize,
    handles: Vec<JoinHandle<()>>,
}

impl Storm {
    /// One thread per CPU of `cpus`, each to make `n` `prctl(option)`
    /// calls; they wait for [`Storm::start`].
    pub fn new(n: u32, cpus: &[usize], option: i32) -> Storm {
        let go = Arc::new(Barrier::new(cpus.len() + 1));
        let extra = Arc::new(Barrier::new(cpus.len() + 1));
        let (tx, rx) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let handles = cpus
            .iter()
            .map(|&c| {
                let (go, extra, tx, done_tx) =
                    (go.clone(), extra.clone(), tx.clone(), done_tx.clone());
                std::thread::spawn(move || {
                    pin(c);
                    // SAFETY: gettid has no preconditions.
                    tx.send((c, unsafe { libc::gettid() })).unwrap();
                    go.wait();
                    prctls(option, n);
                    done_tx.send(()).unwrap();
                    extra.wait();
                    prctls(option, 1);
                    done_tx.send(()).unwrap();
                })
            })
            .collect();
        let mut tids: Vec<(usize, i32)> = (0..cpus.len()).map(|_| rx.recv().unwrap()).collect();
        tids.sort();
        Storm {
            running: tids.len(),
            tids,
            go,
            extra,
            done,
            handles,
        }
    }

    /// Lets every thread go.
    pub fn start(&self) {
        self.go.wait();
    }

    /// Whether a thread is still making its `n` calls (never blocks).
    pub fn running(&mut self) -> bool {
        self.running -= self.done.try_iter().count().min(self.running);
        self.running > 0
    }

    /// Blocks until every thread made its `n` calls.
    pub fn wait_done(&mut self) {
        while self.running > 0 {
            self.done.recv().unwrap();
            self.running -= 1;
        }
    }

    /// The last call of each thread; returns when all threads ended.
    pub fn last(self) {
        self.extra.wait();
        for _ in &self.tids {
            self.done.recv().unwrap();
        }
        for h in self.handles {
            h.join().unwrap();
        }
    }
}
