//! Processes: a child held before `exec`, pipes, `pidfd_open(2)`,
//! `waitid(2)` / `wait4(2)` and `kill(2)` — what perf-event-host's `workload` is
//! built on. `no_std` and allocation-free: the fds are [`Fd`]s (with feature
//! `std`, `AsFd` and `Into<OwnedFd>`), the argv `&CStr`s with a slot array
//! the caller provides.
//!
//! Kernel facts used here:
//! - `pipe2(2)` with `O_CLOEXEC` (Linux 2.6.27): a pipe end marked
//!   close-on-exec is closed by a successful `execve(2)`, so the parent
//!   reads end of file exactly when the exec succeeded.
//! - `pidfd_open(2)` (Linux 5.3): an fd that polls readable (`POLLIN`)
//!   when the process exits; older kernels answer `ENOSYS`.
//! - `waitid(2)` with `WNOWAIT` (Linux 2.6.9): waits for the exit without
//!   reaping, so the pid stays valid until [`wait4`].

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use super::io::Fd;
use super::types::{c_int, pid_t};
use crate::linux::errno::Errno;
use core::ffi::{c_char, CStr};
use core::fmt;

/// A forked child blocked before `execvp(3)` (see [`fork_held`]).
#[derive(Debug)]
pub struct HeldChild {
    /// The child's pid.
    pub pid: pid_t,
    /// Writing one byte here (or closing it) releases the child: with a
    /// byte it execs, without one (closed) it exits with status 127
    /// unexecuted.
    pub go: Fd,
    /// After the release: 4 bytes (the exec errno, native endian) if the
    /// exec failed, end of file if it succeeded (see [`read_exec_errno`]).
    pub exec_errno: Fd,
}

/// A pipe, both ends close-on-exec: `(read end, write end)`.
pub fn pipe() -> Result<(Fd, Fd), Errno> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: pipe2 writes two fds into a valid 2-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Errno::last());
    }
    // SAFETY: both fds are new and owned by nobody else.
    Ok(unsafe { (Fd::from_raw(fds[0]), Fd::from_raw(fds[1])) })
}

/// Forks a child that waits for a byte on a pipe before
/// `execvp(argv[0], argv)` (`PATH` searched as the shell does).
///
/// The child inherits the caller's signal dispositions until `exec` (which
/// resets caught signals to their default; `SIGPIPE` is reset to its
/// default before the exec, as `std::process::Command` does) and its
/// signal mask. Between
/// `fork` and `exec` it only calls async-signal-safe functions (`close`,
/// `read`, `execvp`, `write`, `_exit`) on memory prepared before the fork,
/// so this is safe in a multi-threaded program.
///
/// `slots` is where the NULL-terminated `char *argv[]` that `execvp` takes
/// is built (no allocation here): at least `argv.len() + 1` entries, their
/// contents overwritten. `EINVAL` if `argv` is empty, `E2BIG` if `slots`
/// is too short; nothing is forked then.
pub fn fork_held(argv: &[&CStr], slots: &mut [*const c_char]) -> Result<HeldChild, Errno> {
    if argv.is_empty() {
        return Err(Errno(super::errno::EINVAL));
    }
    let Some(ptrs) = slots.get_mut(..argv.len() + 1) else {
        return Err(Errno(super::errno::E2BIG));
    };
    for (slot, arg) in ptrs.iter_mut().zip(argv) {
        *slot = arg.as_ptr();
    }
    ptrs[argv.len()] = core::ptr::null();
    let ptrs: &[*const c_char] = ptrs;
    let (go_read, go_write) = pipe()?;
    let (failed_read, failed_write) = pipe()?;
    let (go_fd, failed_fd) = (go_read.raw(), failed_write.raw());
    // The child closes the parent's ends: its own copy of `go`'s write end
    // would keep the read from ever seeing end of file.
    let (parent_go, parent_failed) = (go_write.raw(), failed_read.raw());
    // SAFETY: fork has no memory preconditions; the child branch below
    // only calls async-signal-safe functions and never returns.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: raw fds and a NULL-terminated argv of live CStrings,
        // all prepared before the fork; _exit never returns, so no Rust
        // destructor runs in the child.
        unsafe {
            libc::close(parent_go);
            libc::close(parent_failed);
            let mut byte = 0u8;
            let got = loop {
                let n = libc::read(go_fd, (&mut byte as *mut u8).cast(), 1);
                if n >= 0 || *libc::__errno_location() != libc::EINTR {
                    break n;
                }
            };
            if got == 1 {
                // As std::process::Command does: the command starts with
                // SIGPIPE at its default action (Rust programs ignore it,
                // and an ignored signal stays ignored across exec).
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::execvp(ptrs[0], ptrs.as_ptr());
                let errno = *libc::__errno_location();
                libc::write(failed_fd, (&errno as *const c_int).cast(), 4);
            }
            libc::_exit(127);
        }
    }
    if pid < 0 {
        return Err(Errno::last());
    }
    drop(go_read);
    drop(failed_write);
    Ok(HeldChild {
        pid,
        go: go_write,
        exec_errno: failed_read,
    })
}

/// `write(fd, bytes)` once, retried on `EINTR`: the bytes written.
pub fn write(fd: &Fd, bytes: &[u8]) -> Result<usize, Errno> {
    loop {
        // SAFETY: `bytes` is readable for its whole length; `fd` is
        // borrowed open for the call.
        let n = unsafe { libc::write(fd.raw(), bytes.as_ptr().cast(), bytes.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = Errno::last();
        if e.0 != libc::EINTR {
            return Err(e);
        }
    }
}

/// Reads [`HeldChild::exec_errno`] to its end: `Some(errno)` if the exec
/// failed, `None` if it succeeded (end of file at once).
pub fn read_exec_errno(fd: &Fd) -> Result<Option<c_int>, Errno> {
    let mut buf = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        // SAFETY: `fd` is borrowed open for the call.
        match unsafe { super::io::read(fd.raw(), &mut buf[got..]) } {
            Ok(0) => return Ok(None),
            Ok(n) => got += n,
            Err(e) if e.0 == libc::EINTR => {}
            Err(e) => return Err(e),
        }
    }
    Ok(Some(c_int::from_ne_bytes(buf)))
}

/// `pidfd_open(pid, 0)` (Linux 5.3): an fd that polls readable once the
/// process has exited. `ENOSYS` before 5.3, `ESRCH` for no such process.
pub fn pidfd_open(pid: pid_t) -> Result<Fd, Errno> {
    // SAFETY: pidfd_open takes two integers and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: the fd is new and owned by nobody else.
    Ok(unsafe { Fd::from_raw(fd as c_int) })
}

/// `pidfd_open(tid, PIDFD_THREAD)` (Linux 6.9): an fd that polls readable
/// once the thread `tid` has exited, whether or not it leads its thread
/// group. `EINVAL` before 6.9 (the flag is unknown there) and, on every
/// kernel, `ENOSYS` before 5.3; `ESRCH` for no such thread.
pub fn pidfd_open_thread(tid: pid_t) -> Result<Fd, Errno> {
    // PIDFD_THREAD is O_EXCL (its value differs per architecture).
    let flags = libc::O_EXCL as libc::c_uint;
    // SAFETY: pidfd_open takes two integers and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid, flags) };
    if fd < 0 {
        return Err(Errno::last());
    }
    // SAFETY: the fd is new and owned by nobody else.
    Ok(unsafe { Fd::from_raw(fd as c_int) })
}

/// `waitid(P_PID, pid, WEXITED | WNOWAIT)`: whether the child `pid` has
/// exited, without reaping it. `block` waits for the exit (retried on
/// `EINTR`); otherwise `WNOHANG` answers at once.
pub fn exited_unreaped(pid: pid_t, block: bool) -> Result<bool, Errno> {
    let flags = libc::WEXITED | libc::WNOWAIT | if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: siginfo_t is plain C data; all-zero is valid (si_pid 0
        // is how WNOHANG says "not yet").
        let mut info: libc::siginfo_t = unsafe { core::mem::zeroed() };
        // SAFETY: `info` is a valid, writable siginfo_t.
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
        if r == 0 {
            // SAFETY: waitid filled the SIGCHLD fields (or left zeros).
            return Ok(unsafe { info.si_pid() } != 0);
        }
        let e = Errno::last();
        if e.0 != libc::EINTR {
            return Err(e);
        }
    }
}

/// What [`wait4`] reports of a reaped child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reaped {
    /// The wait status (`WIFEXITED`, `WEXITSTATUS`, `WTERMSIG` decode it;
    /// see [`exit_code`] and [`term_signal`]).
    pub status: c_int,
    /// User CPU time of the child and its waited-for children, in µs.
    pub user_us: u64,
    /// System CPU time, in µs.
    pub sys_us: u64,
}

/// `wait4(pid, &status, 0, &rusage)`, retried on `EINTR`: reaps the child.
pub fn wait4(pid: pid_t) -> Result<Reaped, Errno> {
    let mut status = 0;
    // SAFETY: rusage is plain C data; all-zero is valid.
    let mut usage: libc::rusage = unsafe { core::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid and writable.
        if unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } == pid {
            break;
        }
        let e = Errno::last();
        if e.0 != libc::EINTR {
            return Err(e);
        }
    }
    let us = |tv: libc::timeval| tv.tv_sec.max(0) as u64 * 1_000_000 + tv.tv_usec.max(0) as u64;
    Ok(Reaped {
        status,
        user_us: us(usage.ru_utime),
        sys_us: us(usage.ru_stime),
    })
}

/// `SIGKILL`: cannot be caught or ignored.
pub const SIGKILL: c_int = libc::SIGKILL;
/// `SIGINT`: what Ctrl-C sends.
pub const SIGINT: c_int = libc::SIGINT;
/// `SIGTERM`: the default of kill(1).
pub const SIGTERM: c_int = libc::SIGTERM;

/// `kill(pid, sig)`.
pub fn kill(pid: pid_t, sig: c_int) -> Result<(), Errno> {
    // SAFETY: kill takes two integers.
    if unsafe { libc::kill(pid, sig) } != 0 {
        return Err(Errno::last());
    }
    Ok(())
}

/// The exit code of a wait status, if the child exited (`WIFEXITED`).
pub const fn exit_code(status: c_int) -> Option<c_int> {
    if libc::WIFEXITED(status) {
        Some(libc::WEXITSTATUS(status))
    } else {
        None
    }
}

/// The signal that killed the child, if one did (`WIFSIGNALED`).
pub const fn term_signal(status: c_int) -> Option<c_int> {
    if libc::WIFSIGNALED(status) {
        Some(libc::WTERMSIG(status))
    } else {
        None
    }
}

/// `strerror(errno)`: the C library's text for an errno ("No such file or
/// directory"), as perf prints it; written when displayed (XSI
/// `strerror_r(3)` into a buffer on the stack: nothing shared, nothing
/// allocated).
pub fn strerror(errno: c_int) -> impl fmt::Display {
    struct Text(c_int);
    impl fmt::Display for Text {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let mut buf = [0u8; 256];
            // SAFETY: the XSI strerror_r writes at most `buf.len()` bytes,
            // NUL-terminated, into `buf` (or fails and leaves it zeroed).
            let failed = unsafe { libc::strerror_r(self.0, buf.as_mut_ptr().cast(), buf.len()) };
            match CStr::from_bytes_until_nul(&buf) {
                Ok(text) if failed == 0 && !text.is_empty() => lossy(f, text),
                _ => write!(f, "Unknown error {}", self.0),
            }
        }
    }
    Text(errno)
}

/// `strsignal(sig)`: the C library's text for a signal ("Terminated"),
/// copied out when displayed.
pub fn strsignal(sig: c_int) -> impl fmt::Display {
    struct Text(c_int);
    impl fmt::Display for Text {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            // SAFETY: strsignal returns a NUL-terminated string, read at
            // once (before this thread calls strsignal again).
            lossy(f, unsafe { CStr::from_ptr(libc::strsignal(self.0)) })
        }
    }
    Text(sig)
}

/// Writes a C string's bytes as text, invalid UTF-8 as U+FFFD.
fn lossy(f: &mut fmt::Formatter<'_>, text: &CStr) -> fmt::Result {
    for chunk in text.to_bytes().utf8_chunks() {
        f.write_str(chunk.valid())?;
        if !chunk.invalid().is_empty() {
            f.write_str("\u{FFFD}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_library_texts_of_an_errno_and_a_signal() {
        assert_eq!(
            strerror(libc::ENOENT).to_string(),
            "No such file or directory"
        );
        assert_eq!(strerror(100_000).to_string(), "Unknown error 100000");
        assert_eq!(strsignal(SIGTERM).to_string(), "Terminated");
    }

    #[test]
    fn argv_slots_too_short_or_no_argv_fork_nothing() {
        let argv = [c"true", c"x"];
        let mut slots = [core::ptr::null(); 2];
        assert_eq!(
            fork_held(&argv, &mut slots).unwrap_err().0,
            crate::linux::errno::E2BIG
        );
        assert_eq!(
            fork_held(&[], &mut slots).unwrap_err().0,
            crate::linux::errno::EINVAL
        );
    }

    #[test]
    fn a_held_child_execs_once_released() {
        let argv = [c"true"];
        let mut slots = [core::ptr::null(); 4];
        let child = fork_held(&argv, &mut slots).unwrap();
        assert_eq!(write(&child.go, &[1]), Ok(1));
        assert_eq!(read_exec_errno(&child.exec_errno), Ok(None));
        let reaped = wait4(child.pid).unwrap();
        assert_eq!(exit_code(reaped.status), Some(0));
    }

    #[test]
    fn an_exec_that_fails_reports_its_errno() {
        let argv = [c"/no/such/program"];
        let mut slots = [core::ptr::null(); 2];
        let child = fork_held(&argv, &mut slots).unwrap();
        write(&child.go, &[1]).unwrap();
        assert_eq!(read_exec_errno(&child.exec_errno), Ok(Some(libc::ENOENT)));
        assert_eq!(exit_code(wait4(child.pid).unwrap().status), Some(127));
    }
}
