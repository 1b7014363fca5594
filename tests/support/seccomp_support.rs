//! A seccomp filter that answers `perf_event_open` with an errno (EPERM:
//! what Docker's and podman's default profile does), installed on the
//! calling thread or on a command before it execs; and a thread that runs
//! with the credentials of an ordinary user (uid/gid 65534). For the tests
//! of the explained access errors.
#![allow(dead_code)] // each test binary uses part of it

use std::os::unix::process::CommandExt;
use std::process::Command;

/// `AUDIT_ARCH_*` of this target (linux/audit.h): the filter checks it
/// before it trusts the system call number.
fn audit_arch() -> Option<u32> {
    const LE: u32 = 0x4000_0000;
    const B64: u32 = 0x8000_0000;
    Some(match () {
        _ if cfg!(target_arch = "x86_64") => 62 | B64 | LE,
        _ if cfg!(target_arch = "x86") => 3 | LE,
        _ if cfg!(target_arch = "aarch64") => 183 | B64 | LE,
        _ if cfg!(target_arch = "arm") => 40 | LE,
        _ if cfg!(target_arch = "riscv64") => 243 | B64 | LE,
        _ if cfg!(all(target_arch = "powerpc64", target_endian = "little")) => 21 | B64 | LE,
        _ if cfg!(all(target_arch = "powerpc64", target_endian = "big")) => 21 | B64,
        _ if cfg!(target_arch = "s390x") => 22 | B64,
        _ if cfg!(all(target_arch = "mips64", target_endian = "little")) => 8 | B64 | LE,
        _ if cfg!(all(target_arch = "mips64", target_endian = "big")) => 8 | B64,
        _ if cfg!(target_arch = "loongarch64") => 258 | B64 | LE,
        _ => return None,
    })
}

/// The BPF program: other architectures pass; `perf_event_open` gets
/// `errno`; every other call passes.
fn program(errno: i32) -> Option<Vec<libc::sock_filter>> {
    const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let stmt = |code, k| libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |k, jt, jf| libc::sock_filter {
        code: JEQ_K,
        jt,
        jf,
        k,
    };
    // struct seccomp_data: int nr at 0, __u32 arch at 4.
    Some(vec![
        stmt(LD_W_ABS, 4),
        jump(audit_arch()?, 1, 0),
        stmt(RET_K, libc::SECCOMP_RET_ALLOW),
        stmt(LD_W_ABS, 0),
        jump(libc::SYS_perf_event_open as u32, 0, 1),
        stmt(
            RET_K,
            libc::SECCOMP_RET_ERRNO | (errno as u32 & libc::SECCOMP_RET_DATA),
        ),
        stmt(RET_K, libc::SECCOMP_RET_ALLOW),
    ])
}

/// Installs `filter` on the calling thread (no_new_privs first, which an
/// unprivileged thread needs). Async-signal-safe: usable in `pre_exec`.
fn install(filter: &[libc::sock_filter]) -> std::io::Result<()> {
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: prctl with integer arguments; then with a pointer to a
    // program that lives for the call (the kernel copies it).
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Why a filter cannot be installed here (an architecture this helper has
/// no `AUDIT_ARCH` for), or `None`.
pub fn unsupported() -> Option<String> {
    audit_arch()
        .is_none()
        .then(|| format!("no AUDIT_ARCH value for {}", std::env::consts::ARCH))
}

/// Filters `perf_event_open` (answered with `errno`) for the calling
/// thread and the threads and processes it creates from now on. Other
/// threads of the process are not affected: run it on a thread of its own.
pub fn deny_on_this_thread(errno: i32) -> std::io::Result<()> {
    let filter = program(errno).ok_or_else(|| std::io::Error::other(unsupported().unwrap()))?;
    install(&filter)
}

/// `cmd` runs under the filter (installed in the child before exec).
pub fn deny_in(cmd: &mut Command, errno: i32) -> &mut Command {
    let filter = program(errno).expect("a filter for this architecture");
    // SAFETY: the closure only makes two prctl calls (async-signal-safe)
    // on memory allocated before the fork.
    unsafe { cmd.pre_exec(move || install(&filter)) }
}

/// Runs `f` on a new thread whose credentials are those of uid/gid 65534
/// with no supplementary groups and no capabilities. The raw system calls
/// change only that thread (the C library's setuid would change every
/// thread of the test binary); the thread ends with `f`. `None` when this
/// process is not root (it cannot change them; it is unprivileged already
/// unless it holds capabilities).
pub fn as_nobody<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let thread = std::thread::spawn(move || {
        // SAFETY: raw credential system calls on integers, for this thread
        // only.
        unsafe {
            assert_eq!(
                libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>()),
                0
            );
            assert_eq!(libc::syscall(libc::SYS_setresgid, 65534, 65534, 65534), 0);
            assert_eq!(libc::syscall(libc::SYS_setresuid, 65534, 65534, 65534), 0);
        }
        f()
    });
    Some(thread.join().unwrap())
}
