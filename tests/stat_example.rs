//! The stat example against the library's own direct measurement of the
//! same command, and its exit status passed through.

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::open::{open, OpenFlags, Scope};
use std::process::Command;

const WORKLOAD: [&str; 5] = ["dd", "if=/dev/zero", "of=/dev/null", "bs=4M", "count=16"];

/// Runs the stat example (built by cargo for this test run) with `args`.
fn stat(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--example", "stat", "--"])
        .args(args)
        .output()
        .expect("cargo run --example stat")
}

/// page-faults of one run of the workload, measured directly: fork, open
/// on the child with enable_on_exec + inherit, exec, wait.
fn direct_page_faults() -> u64 {
    let attr = Attr::new(Event::Software(Software::PageFaults))
        .disabled(true)
        .enable_on_exec(true)
        .inherit(true);
    let mut pipe = [0; 2];
    // SAFETY: pipe2 fills two fds.
    let rc = unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0);
    let args: Vec<std::ffi::CString> = WORKLOAD
        .iter()
        .map(|a| std::ffi::CString::new(*a).unwrap())
        .collect();
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let devnull = std::ffi::CString::new("/dev/null").unwrap();
    // SAFETY: the child only makes async-signal-safe calls on prepared memory.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            let mut b = 0u8;
            libc::read(pipe[0], (&mut b as *mut u8).cast(), 1);
            let null = libc::open(devnull.as_ptr(), libc::O_WRONLY);
            libc::dup2(null, 2);
            libc::execvp(argv[0], argv.as_ptr());
            libc::_exit(127);
        }
    }
    let fd = open(&attr, Scope::thread(pid), None, OpenFlags::new()).unwrap();
    // SAFETY: release the child; wait for it.
    unsafe {
        libc::write(pipe[1], [1u8].as_ptr().cast(), 1);
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        libc::close(pipe[0]);
        libc::close(pipe[1]);
    }
    fd.read_counts().unwrap().value
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

#[test]
fn software_counts_agree_with_a_direct_measurement() {
    let direct = median((0..5).map(|_| direct_page_faults()).collect());
    let mut args = vec!["-x", ",", "-e", "page-faults,task-clock,cycles", "--"];
    args.extend(WORKLOAD);
    let mut from_stat = Vec::new();
    for _ in 0..5 {
        let out = stat(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let line = |event: &str| {
            text.lines()
                .find(|l| l.split(',').nth(2) == Some(event))
                .unwrap_or_else(|| panic!("{event} in {text}"))
                .to_owned()
        };
        from_stat.push(
            line("page-faults")
                .split(',')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap(),
        );
        let clock: f64 = line("task-clock")
            .split(',')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(clock > 0.1, "task-clock {clock} ms");
        assert!(
            line("cycles").starts_with("<not supported>")
                || line("cycles")
                    .split(',')
                    .next()
                    .unwrap()
                    .parse::<u64>()
                    .is_ok()
        );
    }
    let stat = median(from_stat);
    // 16 x 4 MiB through one 4 MiB buffer: about 1024 faults plus the
    // loader's; both sides measure the same program the same way.
    assert!(
        stat >= 1024 && direct >= 1024,
        "stat {stat}, direct {direct}"
    );
    let diff = stat.abs_diff(direct) as f64 / direct as f64;
    assert!(
        diff < 0.05,
        "stat {stat} vs direct {direct}: {:.1}% apart",
        diff * 100.0
    );
}

#[test]
fn the_commands_exit_status_is_passed_through() {
    let out = stat(&["-e", "task-clock", "--", "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Performance counter stats for 'sh -c exit 3'"),
        "{text}"
    );
    let missing = stat(&["--", "/nonexistent/command"]);
    assert_eq!(missing.status.code(), Some(127));
}
