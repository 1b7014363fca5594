//! Opening the events on a forked command, running it, and the signals
//! around it.
//!
//! The child waits on a pipe while the events are opened on it (leaders
//! `disabled` + `enable_on_exec`, every event `inherit`), then execs:
//! counting starts exactly at exec. An exec failure comes back through a
//! close-on-exec pipe (the errno), and nothing is reported but perf's
//! "Workload failed" line. A group whose leader cannot be opened stops
//! everything before the command runs (perf's "Error: The ... event is not
//! supported."); a group member that cannot be opened closes its whole
//! group (reported `<not counted>`, the member `<not supported>`), so no
//! event ever counts outside its group or before exec.
//!
//! SIGINT and SIGTERM to this tool are passed on to the command (unless
//! the terminal sent them to the whole foreground group, so the command
//! has them already); the tool keeps waiting for the command, as perf
//! does, then prints what was counted and stops repeating.

use crate::args::usage;
use perf_event_core::attr::Attr;
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenError, OpenFlags, Scope};
use perf_event_core::parse::{parse, Builtin, Resolver, System};
use perf_event_core::read_format::Counts;
use perf_event_core::sys;
use perf_event_core::workload::{Workload, WorkloadError};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

const TIMES: u64 =
    (sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;

/// One event as requested: its name and attr, its group leader's index.
pub struct Wanted {
    pub name: String,
    pub attr: Attr,
    pub leader: usize,
}

/// One event's result in one run.
#[derive(Clone, Copy)]
pub enum Outcome {
    /// The event could not be opened.
    NotSupported,
    /// Opened but never ran, or its group lost a member.
    NotCounted,
    Counted(Counts),
}

/// One finished run of the command.
pub struct Run {
    pub outcomes: Vec<Outcome>,
    pub elapsed: Duration,
    /// The wait status.
    pub status: i32,
    pub user: Duration,
    pub sys: Duration,
}

/// Why a run produced no counts.
pub enum Failure {
    /// exec failed with this errno.
    Exec(i32),
    /// The leader of a group could not be opened.
    Leader { name: String, error: Box<OpenError> },
}

/// The signal received (0: none).
pub static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The running command (0: none).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// Whether a signal to this tool is passed on to the command.
static FORWARD: AtomicBool = AtomicBool::new(true);

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    RECEIVED.store(sig, Ordering::SeqCst);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let from_terminal = !info.is_null() && unsafe { (*info).si_code } == libc::SI_KERNEL;
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 && !from_terminal && FORWARD.load(Ordering::SeqCst) {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(child, sig) };
    }
}

/// Catches SIGINT and SIGTERM for the whole session.
pub fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with our handler and an empty mask.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// The events of `events`, with the settings every run needs.
pub fn wanted(events: &str, inherit: bool) -> Vec<Wanted> {
    let system = System::discover();
    let resolver: &dyn Resolver = match &system {
        Ok(s) => s,
        Err(_) => &Builtin,
    };
    let list = parse(events, resolver).unwrap_or_else(|e| {
        eprintln!("event syntax error: {e}");
        usage("bad event list (-e)")
    });
    let mut out = Vec::new();
    for group in list.groups() {
        let leader = out.len();
        for (i, ev) in group.iter().enumerate() {
            let attr = ev.attr.read_format(TIMES).inherit(inherit);
            // Only group leaders wait for exec; members follow their leader.
            let attr = if i == 0 {
                attr.disabled(true).enable_on_exec(true)
            } else {
                attr
            };
            out.push(Wanted {
                name: ev.name.or(ev.expanded).unwrap_or(ev.text).to_owned(),
                attr,
                leader,
            });
        }
    }
    out
}

/// Forks the command held before exec, opens the events on it, releases
/// it, waits.
pub fn run_once(events: &[Wanted], argv: &[String], verbose: bool) -> Result<Run, Failure> {
    let mut workload = Workload::hold(argv).unwrap_or_else(|e| {
        eprintln!("stat: {e}");
        std::process::exit(255)
    });
    let pid = workload.pid();
    CHILD.store(pid, Ordering::SeqCst);
    let fds = match open_all(events, pid, verbose) {
        Ok(fds) => fds,
        Err(failure) => {
            drop(workload); // the child exits without exec
            CHILD.store(0, Ordering::SeqCst);
            return Err(failure);
        }
    };
    let start = Instant::now();
    let released = workload.release();
    if let Err(WorkloadError::Exec { errno, .. }) = released {
        CHILD.store(0, Ordering::SeqCst);
        return Err(Failure::Exec(errno.0));
    }
    // A signal that came while the events were being opened reached the
    // child before exec, where it was caught: pass it on now.
    let early = RECEIVED.load(Ordering::SeqCst);
    if early != 0 && FORWARD.load(Ordering::SeqCst) {
        let _ = workload.signal(early);
    }
    let exit = workload.reap().unwrap_or_else(|e| {
        eprintln!("stat: {e}");
        std::process::exit(255)
    });
    let elapsed = start.elapsed();
    CHILD.store(0, Ordering::SeqCst);
    let outcomes = fds
        .iter()
        .map(|fd| match fd {
            Slot::Open(fd) => match fd.read_counts() {
                Ok(c) => Outcome::Counted(c),
                Err(_) => Outcome::NotCounted,
            },
            Slot::Failed => Outcome::NotSupported,
            Slot::GroupLost => Outcome::NotCounted,
        })
        .collect();
    Ok(Run {
        outcomes,
        elapsed,
        status: exit.status,
        user: exit.user,
        sys: exit.sys,
    })
}

/// An event's fd, or why it has none.
enum Slot {
    Open(EventFd),
    Failed,
    /// Its group lost a member: closed, so it counts nothing.
    GroupLost,
}

/// Opens every event on `pid`. A failed leader of a group with members is
/// fatal; a failed member closes its group.
fn open_all(events: &[Wanted], pid: libc::pid_t, verbose: bool) -> Result<Vec<Slot>, Failure> {
    let mut slots: Vec<Slot> = Vec::with_capacity(events.len());
    for (i, ev) in events.iter().enumerate() {
        let members = events.iter().filter(|e| e.leader == ev.leader).count();
        let group = match slots.get(ev.leader) {
            Some(Slot::Open(fd)) if ev.leader != i => Some(fd),
            Some(_) if ev.leader != i => {
                // The group is already lost: not tried, not counted.
                slots.push(Slot::GroupLost);
                continue;
            }
            _ => None,
        };
        match open(&ev.attr, Scope::thread(pid), group, OpenFlags::new()) {
            Ok(fd) => slots.push(Slot::Open(fd)),
            Err(error) => {
                if verbose {
                    eprintln!("stat: {}: {error}", ev.name);
                }
                if ev.leader == i && members > 1 {
                    return Err(Failure::Leader {
                        name: ev.name.clone(),
                        error: Box::new(error),
                    });
                }
                slots.push(Slot::Failed);
                if ev.leader != i {
                    for slot in &mut slots[ev.leader..i] {
                        if matches!(slot, Slot::Open(_)) {
                            *slot = Slot::GroupLost;
                        }
                    }
                }
            }
        }
    }
    Ok(slots)
}
