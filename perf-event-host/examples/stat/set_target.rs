//! What the event-set mode counts: the target of `-C LIST`, `-a`,
//! `-p PID[,PID]`, `-t TID[,TID]` or, with none of them, the command, and
//! how the report's header names it.

use crate::args::usage;
use crate::set_mode::{fail, SetOptions};
use perf_event_host::set::{Cpus, Target, ThreadSet};
use perf_event_host::sysfs::CpuList;

/// The numbers of a `-p` / `-t` list (`1,2,3`).
fn ids(list: &str, what: &str) -> Vec<i32> {
    list.split(',')
        .map(|p| {
            p.trim()
                .parse()
                .unwrap_or_else(|_| usage(&format!("bad {what} `{p}' (expected a number)")))
        })
        .collect()
}

/// What is measured, and how the report names it.
pub struct Chosen {
    pub target: Target,
    /// `'system wide'`, `process id '1234'`, ...
    pub label: String,
    /// Processes/threads whose exit ends counting.
    pub watched: Vec<i32>,
    /// `watched` are thread ids (`-t`), watched as threads where the
    /// kernel can (Linux 6.9), not as whole processes.
    pub threads: bool,
}

/// The target the options name; `child`: the held command's pid when it
/// is the target (no `-a`, `-C`, `-p` or `-t`).
pub fn choose(s: &SetOptions, inherit: bool, child: Option<i32>) -> Chosen {
    if let Some(list) = &s.cpus {
        let list = CpuList::parse(list)
            .unwrap_or_else(|at| usage(&format!("bad CPU list `{list}' at byte {at}")));
        let sel = cpus().select(&list);
        for r in &sel.rejected {
            eprintln!("stat: {r}: left out");
        }
        if sel.cpus.is_empty() {
            usage("no usable CPU in -C");
        }
        return Chosen {
            target: Target::Cpus(sel.cpus),
            label: "'CPU(s) ".to_owned() + &list.to_string() + "'",
            watched: Vec::new(),
            threads: false,
        };
    }
    if s.all_cpus {
        return Chosen {
            target: Target::Cpus(cpus().online().clone()),
            label: "'system wide'".to_owned(),
            watched: Vec::new(),
            threads: false,
        };
    }
    if let Some(list) = &s.pids {
        let pids = ids(list, "pid");
        let target = match pids.as_slice() {
            [pid] => Target::Process {
                pid: *pid,
                cpus: None,
                inherit,
            },
            _ => {
                let mut tids = Vec::new();
                for &pid in &pids {
                    let t = ThreadSet::of_process(pid).unwrap_or_else(|e| fail(&e.to_string()));
                    tids.extend_from_slice(t.as_slice());
                }
                Target::Threads {
                    threads: ThreadSet::from_tids(tids),
                    cpus: None,
                    inherit,
                }
            }
        };
        return Chosen {
            target,
            label: format!("process id '{list}'"),
            watched: pids,
            threads: false,
        };
    }
    let (tids, label) = match (&s.tids, child) {
        (Some(list), _) => (ids(list, "tid"), format!("thread id '{list}'")),
        (None, Some(pid)) => (vec![pid], String::new()),
        (None, None) => usage("--per-thread and -I need a target (-a, -C, -p, -t) or a command"),
    };
    Chosen {
        target: Target::Threads {
            threads: ThreadSet::from_tids(tids.iter().copied()),
            cpus: None,
            inherit,
        },
        label,
        watched: tids,
        threads: child.is_none(),
    }
}

/// The machine's CPUs, or perf's error (status 255).
fn cpus() -> Cpus {
    Cpus::read().unwrap_or_else(|e| fail(&e.to_string()))
}
