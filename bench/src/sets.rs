//! BENCHMARKS.md section 8, event sets: 4 software events in one group x every online CPU x 8
//! threads of this process (one group per (cpu, thread), 4 fds each),
//! opened, enabled, read and closed, by perf-event-core's `set::EventSet`
//! and by perf-event2's `Group` API doing the same; then the read-all step
//! alone, and the system calls it makes (counted by a
//! `raw_syscalls:sys_enter` tracepoint on this thread).

use crate::timing;
use perf_event::events::Software as Sw2;
use perf_event::{Builder, Counter, Group, ReadFormat};
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_host::set::{BudgetPolicy, Cpus, EventSet, EventSpec, Target, ThreadSet};
use std::hint::black_box;
use std::sync::mpsc;

const EVENTS: [(&str, Software); 4] = [
    ("task-clock", Software::TaskClock),
    ("context-switches", Software::ContextSwitches),
    ("page-faults", Software::PageFaults),
    ("cpu-migrations", Software::CpuMigrations),
];
const EVENTS2: [Sw2; 4] = [
    Sw2::TASK_CLOCK,
    Sw2::CONTEXT_SWITCHES,
    Sw2::PAGE_FAULTS,
    Sw2::CPU_MIGRATIONS,
];

fn core_set(target: &Target) -> EventSet {
    let group = EVENTS
        .iter()
        .map(|&(name, sw)| EventSpec::new(name, Attr::new(Event::Software(sw))))
        .collect();
    EventSet::open(vec![group], target.clone(), BudgetPolicy::Fail).expect("EventSet::open")
}

/// One group per placement, with its member counters (dropping them closes
/// their fds).
fn perf_event2_groups(cpus: &[u32], tids: &[i32]) -> Vec<(Group, Vec<Counter>)> {
    let mut groups = Vec::new();
    for &tid in tids {
        for &cpu in cpus {
            let mut leader = Builder::new(EVENTS2[0]);
            leader
                .read_format(
                    ReadFormat::GROUP
                        | ReadFormat::TOTAL_TIME_ENABLED
                        | ReadFormat::TOTAL_TIME_RUNNING,
                )
                .observe_pid(tid)
                .one_cpu(cpu as usize)
                .enabled(false);
            let mut group = leader.build_group().expect("perf-event2 group");
            let members = EVENTS2[1..]
                .iter()
                .map(|e| {
                    let mut b = Builder::new(*e);
                    b.observe_pid(tid).one_cpu(cpu as usize);
                    group.add(&b).expect("perf-event2 member")
                })
                .collect();
            groups.push((group, members));
        }
    }
    groups
}

pub fn run() {
    let cpus = Cpus::read().expect("online CPUs").online().clone();
    // 8 parked threads to measure.
    let (tx, rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let stop_rx = std::sync::Arc::new(std::sync::Mutex::new(stop_rx));
    let parked: Vec<_> = (0..8)
        .map(|_| {
            let (tx, stop) = (tx.clone(), stop_rx.clone());
            std::thread::spawn(move || {
                // SAFETY: gettid has no arguments.
                tx.send(unsafe { libc::syscall(libc::SYS_gettid) } as i32)
                    .unwrap();
                let _ = stop.lock().unwrap().recv();
            })
        })
        .collect();
    let tids: Vec<i32> = (0..8).map(|_| rx.recv().unwrap()).collect();
    let target = Target::Threads {
        threads: ThreadSet::from_tids(tids.iter().copied()),
        cpus: Some(cpus.clone()),
        inherit: false,
    };
    let fds = 4 * cpus.len() * tids.len();
    println!(
        "\n## Event sets: 4 events x {} CPUs x 8 threads = {} groups, {fds} fds \
         (ns per whole cycle, median of rounds)\n",
        cpus.len(),
        cpus.len() * 8
    );
    let results = timing::compare(
        15,
        20,
        &mut [
            (
                "perf-event-core set: open + enable + read_all + close",
                &mut || {
                    let mut set = core_set(&target);
                    set.enable().unwrap();
                    black_box(set.read_all().unwrap().len());
                },
            ),
            ("perf-event2 Group per (cpu, thread): same", &mut || {
                let mut groups = perf_event2_groups(cpus.as_slice(), &tids);
                for (g, _) in &mut groups {
                    g.enable().unwrap();
                }
                for (g, _) in &mut groups {
                    black_box(g.read().unwrap());
                }
            }),
        ],
    );
    timing::print(&results);

    let mut set = core_set(&target);
    set.enable().unwrap();
    let mut groups = perf_event2_groups(cpus.as_slice(), &tids);
    for (g, _) in &mut groups {
        g.enable().unwrap();
    }
    println!("\n### read-all alone ({} groups)\n", set.group_count());
    let results = timing::compare(
        31,
        200,
        &mut [
            ("perf-event-core EventSet::read_all", &mut || {
                black_box(set.read_all().unwrap().len());
            }),
            ("perf-event2 Group::read on each group", &mut || {
                for (g, _) in &mut groups {
                    black_box(g.read().unwrap());
                }
            }),
        ],
    );
    timing::print(&results);
    syscalls_of_read_all(&mut set);
    drop(stop_tx);
    for t in parked {
        t.join().unwrap();
    }
}

/// Counts the system calls of one read_all with a tracepoint on this thread.
fn syscalls_of_read_all(set: &mut EventSet) {
    let id = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .find_map(|d| std::fs::read_to_string(format!("{d}/events/raw_syscalls/sys_enter/id")).ok())
        .and_then(|s| s.trim().parse().ok());
    let Some(id) = id else {
        println!("\nsyscalls of read_all: not measured (tracefs not mounted)");
        return;
    };
    let counter = open(
        &Attr::new(Event::Tracepoint(id)),
        Scope::this_thread(),
        None,
        OpenFlags::new(),
    )
    .expect("raw_syscalls:sys_enter on this thread");
    // The two reads of the counter itself are syscalls too: measure them.
    let a = counter.read_counts().unwrap().value;
    let b = counter.read_counts().unwrap().value;
    let own = b - a;
    set.read_all().unwrap();
    let c = counter.read_counts().unwrap().value;
    let made = c - b - own;
    println!(
        "\nsyscalls of one read_all: {made} for {} groups (one read(2) per group: {})",
        set.group_count(),
        if made as usize == set.group_count() {
            "met"
        } else {
            "NOT met"
        }
    );
}
