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
use std::ffi::CString;
use std::sync::atomic::{AtomicI32, Ordering};
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

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    RECEIVED.store(sig, Ordering::SeqCst);
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let from_terminal = !info.is_null() && unsafe { (*info).si_code } == libc::SI_KERNEL;
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 && !from_terminal {
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

/// A pipe, both ends close-on-exec.
fn pipe() -> [libc::c_int; 2] {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        eprintln!("stat: pipe2: {}", std::io::Error::last_os_error());
        std::process::exit(255);
    }
    fds
}

/// Waits for `pid` (through EINTR); its wait status and resource usage.
fn wait(pid: libc::pid_t) -> (i32, libc::rusage) {
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child.
    while unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } < 0
        && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
    {}
    (status, usage)
}

fn close(fd: libc::c_int) {
    // SAFETY: closing our own pipe end once.
    unsafe { libc::close(fd) };
}

fn duration(tv: libc::timeval) -> Duration {
    Duration::new(tv.tv_sec.max(0) as u64, (tv.tv_usec.max(0) as u32) * 1000)
}

/// Forks the command, opens the events on it, lets it exec, waits.
pub fn run_once(events: &[Wanted], argv: &[CString], verbose: bool) -> Result<Run, Failure> {
    let go = pipe();
    let failed = pipe();
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: the child only calls async-signal-safe functions (close,
    // read, execvp, write, _exit) on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: see above. Without the go byte the child exits unexecuted.
        unsafe {
            libc::close(go[1]);
            libc::close(failed[0]);
            let mut byte = 0u8;
            if libc::read(go[0], (&mut byte as *mut u8).cast(), 1) == 1 {
                libc::execvp(ptrs[0], ptrs.as_ptr());
                let errno = *libc::__errno_location();
                libc::write(failed[1], (&errno as *const i32).cast(), 4);
            }
            libc::_exit(127);
        }
    }
    if pid < 0 {
        eprintln!("stat: fork: {}", std::io::Error::last_os_error());
        std::process::exit(255);
    }
    CHILD.store(pid, Ordering::SeqCst);
    close(go[0]);
    close(failed[1]);
    let opened = open_all(events, pid, verbose);
    let fds = match opened {
        Ok(fds) => fds,
        Err(failure) => {
            close(go[1]); // the child exits without exec
            close(failed[0]);
            wait(pid);
            CHILD.store(0, Ordering::SeqCst);
            return Err(failure);
        }
    };
    let start = Instant::now();
    let mut errno = [0u8; 4];
    // SAFETY: one byte releases the child into exec; the failure pipe then
    // yields 4 bytes (exec failed) or end of file (exec succeeded).
    let exec_failed = unsafe {
        libc::write(go[1], [1u8].as_ptr().cast(), 1);
        libc::close(go[1]);
        let mut got = 0;
        loop {
            let n = libc::read(failed[0], errno[got..].as_mut_ptr().cast(), 4 - got);
            if n > 0 {
                got += n as usize;
                if got == 4 {
                    break true;
                }
            } else if n == 0
                || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                break false;
            }
        }
    };
    close(failed[0]);
    // A signal that came while the events were being opened reached the
    // child before exec, where it was caught: pass it on now.
    let early = RECEIVED.load(Ordering::SeqCst);
    if early != 0 && !exec_failed {
        // SAFETY: signalling our own child, which has not been waited for.
        unsafe { libc::kill(pid, early) };
    }
    let (status, usage) = wait(pid);
    let elapsed = start.elapsed();
    CHILD.store(0, Ordering::SeqCst);
    if exec_failed {
        return Err(Failure::Exec(i32::from_ne_bytes(errno)));
    }
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
        status,
        user: duration(usage.ru_utime),
        sys: duration(usage.ru_stime),
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
