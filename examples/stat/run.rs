//! Opening the events on a forked command and running it.

use crate::args::usage;
use perf_event_core::attr::Attr;
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::parse::{parse, Builtin, Resolver, System};
use perf_event_core::read_format::Counts;
use perf_event_core::sys;
use std::ffi::CString;
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
    NotSupported,
    Counted(Counts),
}

pub fn wanted(events: &str) -> Vec<Wanted> {
    let system = System::discover();
    let resolver: &dyn Resolver = match &system {
        Ok(s) => s,
        Err(_) => &Builtin,
    };
    let list = parse(events, resolver).unwrap_or_else(|e| usage(&format!("{e}")));
    let mut out = Vec::new();
    for group in list.groups() {
        let leader = out.len();
        for (i, ev) in group.iter().enumerate() {
            let attr = ev.attr.read_format(TIMES).inherit(true);
            // Only group leaders wait for exec; members follow their leader.
            let attr = if i == 0 {
                attr.disabled(true).enable_on_exec(true)
            } else {
                attr
            };
            out.push(Wanted {
                name: ev.name.unwrap_or(ev.text).to_owned(),
                attr,
                leader,
            });
        }
    }
    out
}

/// Forks the command, opens the events on it, lets it exec, waits.
/// Returns the outcomes, the elapsed time and the exit status.
pub fn run_once(events: &[Wanted], argv: &[CString]) -> (Vec<Outcome>, Duration, i32) {
    let mut pipe = [0; 2];
    // SAFETY: pipe2 fills two fds.
    assert_eq!(
        unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) },
        0,
        "pipe2"
    );
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: the child only calls async-signal-safe functions (read,
    // execvp, write, _exit) on memory prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let mut go = 0u8;
        // SAFETY: see above; exec failure exits 127 like a shell.
        unsafe {
            libc::read(pipe[0], (&mut go as *mut u8).cast(), 1);
            libc::execvp(ptrs[0], ptrs.as_ptr());
            let msg = b"stat: cannot execute the command\n";
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::_exit(127);
        }
    }
    assert!(pid > 0, "fork failed");
    let mut fds: Vec<Option<EventFd>> = Vec::with_capacity(events.len());
    for (i, ev) in events.iter().enumerate() {
        let group = if ev.leader == i {
            None
        } else {
            fds[ev.leader].as_ref()
        };
        let fd = match open(&ev.attr, Scope::thread(pid), group, OpenFlags::new()) {
            Ok(fd) => Some(fd),
            Err(e) => {
                if std::env::var_os("STAT_VERBOSE").is_some() {
                    eprintln!("stat: {}: {e}", ev.name);
                }
                None
            }
        };
        fds.push(fd);
    }
    let start = Instant::now();
    // SAFETY: one byte to our pipe releases the child into exec.
    unsafe {
        libc::write(pipe[1], [1u8].as_ptr().cast(), 1);
        libc::close(pipe[0]);
        libc::close(pipe[1]);
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let elapsed = start.elapsed();
    let outcomes = fds
        .iter()
        .map(|fd| match fd.as_ref().map(|fd| fd.read_counts()) {
            Some(Ok(c)) => Outcome::Counted(c),
            _ => Outcome::NotSupported,
        })
        .collect();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    (outcomes, elapsed, code)
}
