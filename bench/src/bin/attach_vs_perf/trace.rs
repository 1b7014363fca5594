//! A tool's system calls, traced by `perf record -e raw_syscalls:sys_enter,
//! raw_syscalls:sys_exit -- CMD` (the same tracer for both tools: a
//! tracepoint sample per call, about a microsecond, instead of strace's
//! two ptrace stops), read back with `perf script`, and cut into the
//! phases of counting: open, enable, disable, read, close.

use std::path::Path;
use std::process::{Command, Stdio};

/// One system call of the traced thread.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    pub nr: i64,
    pub args: [u64; 6],
    pub ret: i64,
    /// Entry and exit, ns (perf's clock).
    pub enter: u64,
    pub exit: u64,
}

/// The phases, in the order a counting tool goes through them.
pub const PHASES: [&str; 5] = ["open", "enable", "disable", "read", "close"];

/// One phase of one run: its own calls, every call of the thread from its
/// first to its last (with the `sched_getaffinity` / `sched_setaffinity`
/// calls in between and around it), and the time from the first call's
/// entry to the last call's exit.
#[derive(Clone, Copy, Debug, Default)]
pub struct Phase {
    pub calls: usize,
    pub all_calls: usize,
    pub ns: u64,
}

/// Runs `cmd` under the tracer; returns the calls of the thread that
/// opened perf events (the tool's main thread), in order, and the trace
/// file's path is `data`.
pub fn trace(cmd: &[String], data: &Path) -> Vec<Call> {
    let status = Command::new("perf")
        .args([
            "record",
            "-q",
            "-e",
            "raw_syscalls:sys_enter,raw_syscalls:sys_exit",
        ])
        .arg("-o")
        .arg(data)
        .arg("--")
        .args(cmd)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("perf record");
    assert!(status.success(), "perf record -- {cmd:?}: {status}");
    let out = Command::new("perf")
        .args(["script", "-F", "tid,time,event,trace", "--ns", "-i"])
        .arg(data)
        .stderr(Stdio::null())
        .output()
        .expect("perf script");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut calls: Vec<(i32, Call)> = Vec::new();
    let mut open: Vec<(i32, Call)> = Vec::new();
    for line in text.lines() {
        let Some((tid, time, enter, nr, rest)) = split(line) else {
            continue;
        };
        if enter {
            let mut args = [0u64; 6];
            let inner = rest.trim().trim_start_matches('(').trim_end_matches(')');
            for (a, v) in args.iter_mut().zip(inner.split(", ")) {
                *a = u64::from_str_radix(v.trim(), 16).unwrap_or(0);
            }
            open.retain(|(t, _)| *t != tid);
            let call = Call {
                nr,
                args,
                ret: 0,
                enter: time,
                exit: time,
            };
            open.push((tid, call));
        } else if let Some(i) = open.iter().position(|(t, c)| *t == tid && c.nr == nr) {
            let (_, mut call) = open.swap_remove(i);
            call.ret = rest
                .trim()
                .trim_start_matches('=')
                .trim()
                .parse()
                .unwrap_or(-1);
            call.exit = time;
            calls.push((tid, call));
        }
    }
    let main = calls
        .iter()
        .find(|(_, c)| c.nr == libc::SYS_perf_event_open)
        .map(|(t, _)| *t)
        .expect("the traced tool opened no perf event");
    calls.sort_by_key(|(_, c)| c.enter);
    calls
        .into_iter()
        .filter(|(t, _)| *t == main)
        .map(|(_, c)| c)
        .collect()
}

/// `TID TIME: raw_syscalls:sys_enter: NR n (args)` or `...sys_exit: NR n
/// = ret` -> (tid, ns, is_enter, nr, the rest).
fn split(line: &str) -> Option<(i32, u64, bool, i64, &str)> {
    let mut w = line.split_whitespace();
    let tid = w.next()?.parse().ok()?;
    let time = w.next()?.trim_end_matches(':');
    let (s, ns) = time.split_once('.')?;
    let time = s.parse::<u64>().ok()? * 1_000_000_000 + ns.parse::<u64>().ok()?;
    let event = w.next()?;
    let enter = event.contains("sys_enter");
    let at = line.find(" NR ")? + 4;
    let (nr, rest) = line[at..].split_once(' ')?;
    Some((tid, time, enter, nr.parse().ok()?, rest))
}

/// Which phase a call belongs to, `perf_fds` being the perf fds open
/// before it (updated).
fn phase_of(c: &Call, perf_fds: &mut Vec<i64>) -> Option<usize> {
    let fd = c.args[0] as i64;
    let on_perf = perf_fds.contains(&fd);
    match c.nr {
        libc::SYS_perf_event_open if c.ret >= 0 => {
            perf_fds.push(c.ret);
            Some(0)
        }
        libc::SYS_perf_event_open => Some(0),
        libc::SYS_ioctl if on_perf => match c.args[1] {
            0x2400 => Some(1),
            0x2401 => Some(2),
            _ => None,
        },
        libc::SYS_read if on_perf => Some(3),
        libc::SYS_close if on_perf => {
            perf_fds.retain(|&f| f != fd);
            Some(4)
        }
        _ => None,
    }
}

/// The five phases of a traced run.
pub fn phases(calls: &[Call]) -> [Phase; 5] {
    let mut perf_fds = Vec::new();
    let tagged: Vec<Option<usize>> = calls.iter().map(|c| phase_of(c, &mut perf_fds)).collect();
    let mut out = [Phase::default(); 5];
    for (p, phase) in out.iter_mut().enumerate() {
        let first = tagged.iter().position(|t| *t == Some(p));
        let last = tagged.iter().rposition(|t| *t == Some(p));
        let (Some(mut first), Some(mut last)) = (first, last) else {
            continue;
        };
        // perf moves itself to each CPU before working on that CPU's
        // events (so the kernel needs no cross-CPU call) and back after:
        // the affinity calls around a phase belong to it.
        let affinity =
            |c: &Call| c.nr == libc::SYS_sched_setaffinity || c.nr == libc::SYS_sched_getaffinity;
        while first > 0 && affinity(&calls[first - 1]) {
            first -= 1;
        }
        while last + 1 < calls.len() && calls[last + 1].nr == libc::SYS_sched_setaffinity {
            last += 1;
        }
        *phase = Phase {
            calls: tagged.iter().filter(|t| **t == Some(p)).count(),
            all_calls: last - first + 1,
            ns: calls[last].exit - calls[first].enter,
        };
    }
    out
}

/// The calls between the markers (`getppid`, which the crate's side
/// makes before and after each library call): per library call, (calls,
/// ns from the marker's exit to the next marker's entry).
pub fn between_markers(calls: &[Call]) -> Vec<(usize, u64)> {
    let marks: Vec<usize> = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| c.nr == libc::SYS_getppid)
        .map(|(i, _)| i)
        .collect();
    marks
        .chunks_exact(2)
        .map(|m| {
            let (a, b) = (m[0], m[1]);
            (b - a - 1, calls[b].enter - calls[a].exit)
        })
        .collect()
}
