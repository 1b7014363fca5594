//! `Monitor` as an ordinary user: under `perf_event_paranoid` 2 an event
//! that counts the kernel is refused, and the monitor counts user space
//! (perf stat's `:u`), saying so in its fallbacks; the strict policy
//! refuses. Run in a child of this test binary that drops to uid/gid
//! 65534 before exec (the test itself runs as root on the host and in the
//! lab's guests; as a non-root user it runs the body directly).

use crate::seccomp_support;
use perf_event_core::abi::Paranoid;
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::fallback::{Policy, Rule};
use perf_event_core::linux::errno::EACCES;
use perf_event_core::monitor::{Monitor, MonitorError, Threads};
use std::os::unix::process::CommandExt;
use std::process::Command;

const CHILD: &str = "MONITOR_UNPRIVILEGED_CHILD";

fn attrs() -> [Attr; 2] {
    [
        Attr::new(Event::Software(Software::TaskClock)),
        Attr::new(Event::Software(Software::PageFaults)),
    ]
}

/// The body, as the ordinary user.
fn as_user() {
    let paranoid = perf_event_core::linux::system::perf_event_paranoid().unwrap_or(Paranoid(2));
    let opened = Monitor::open(attrs());
    let strict = Monitor::open_with(attrs(), Threads::Caller, Policy::STRICT);
    if paranoid.0 < 2 {
        let m = opened.expect("the kernel may be counted below paranoid 2");
        assert!(
            m.fallbacks().iter().all(|f| f.is_empty()),
            "{:?}",
            m.fallbacks()
        );
        assert!(strict.is_ok());
        println!("paranoid {}: counted as asked, no fallback", paranoid.0);
        return;
    }
    // Paranoid 2 and above: the kernel refuses the attrs as given.
    match strict {
        Err(MonitorError::Open { error, .. }) => {
            assert_eq!(error.errno.map(|e| e.0), Some(EACCES), "{error}")
        }
        other => panic!(
            "the strict policy opened at paranoid {}: {other:?}",
            paranoid.0
        ),
    }
    match opened {
        Ok(mut m) => {
            for f in m.fallbacks() {
                let taken = f.find(Rule::ExcludeKernel).expect("the :u fallback");
                assert_eq!(taken.paranoid, Some(paranoid));
                assert_eq!(f.len(), 1, "{f:?}");
            }
            // A region that faults in fresh pages counts them.
            let (_, [clock, faults]) = m
                .measure(|| {
                    let v = vec![1u8; 64 << 12];
                    v.iter().map(|b| *b as u64).sum::<u64>()
                })
                .unwrap();
            assert!(clock.counts.value > 0, "{clock:?}");
            assert!(faults.counts.value >= 1, "{faults:?}");
            println!(
                "paranoid {}: user space counted ({} ns, {} faults), {}",
                paranoid.0,
                clock.counts.value,
                faults.counts.value,
                m.fallbacks()[0].find(Rule::ExcludeKernel).unwrap()
            );
        }
        // Debian's paranoid 3 closes perf_event_open to users entirely:
        // refused even with the kernel excluded.
        Err(MonitorError::Open { error, .. }) if paranoid.0 >= 3 => {
            assert_eq!(error.errno.map(|e| e.0), Some(EACCES), "{error}");
            println!(
                "paranoid {}: refused to users even with :u ({error})",
                paranoid.0
            );
        }
        Err(e) => panic!("paranoid {}: {e}", paranoid.0),
    }
}

#[test]
fn an_ordinary_user_counts_user_space_with_the_fallback_reported() {
    let root = perf_event_core::linux::access::Caller::current().perfmon;
    if std::env::var_os(CHILD).is_some() || !root {
        return as_user();
    }
    let exe = std::env::current_exe().unwrap();
    // libtest names the test's thread with the test's full name (it has
    // the area's prefix where the lab runs every area in one binary).
    let name = std::thread::current().name().unwrap().to_owned();
    let mut child = Command::new(exe);
    child
        .args(["--exact", &name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1");
    // SAFETY: between fork and exec only async-signal-safe system calls
    // (setgroups, setresgid, setresuid) are made.
    unsafe {
        child.pre_exec(|| {
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setresgid(65534, 65534, 65534) != 0
                || libc::setresuid(65534, 65534, 65534) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = child.output().expect("run the test as uid 65534");
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the child failed");
    assert!(
        text.contains("1 passed"),
        "the child did not run the test: {text}"
    );
}

/// In a container whose seccomp profile denies `perf_event_open` (EPERM,
/// Docker's and podman's default): the monitor fails, its message names the
/// seccomp filter, and no fallback hides it (perf's rules never retry on
/// EPERM).
#[test]
fn under_a_seccomp_filter_the_monitor_names_it() {
    if let Some(why) = seccomp_support::unsupported() {
        crate::lab_support::skip("under_a_seccomp_filter_the_monitor_names_it", &why);
        return;
    }
    let err = std::thread::spawn(|| {
        seccomp_support::deny_on_this_thread(libc::EPERM).expect("install the filter");
        Monitor::open(attrs()).expect_err("perf_event_open is denied")
    })
    .join()
    .unwrap();
    let text = err.to_string();
    assert!(
        text.contains("a seccomp filter denies perf_event_open"),
        "{text}"
    );
    assert!(matches!(err, MonitorError::Open { .. }), "{err:?}");
    println!("{text}");
}
