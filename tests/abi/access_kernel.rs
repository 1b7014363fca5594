//! Why an open is refused, against the real kernel: a seccomp filter that
//! answers `perf_event_open` (the container default) is named as the cause,
//! and only when there is one; the paranoid level with the missing
//! capabilities for an ordinary user; the seccomp probe itself.

use crate::lab_support;
use crate::seccomp_support;

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::linux::access::{perf_event_open_intercepted, Seccomp};
use perf_event_core::linux::errno::Errno;
use perf_event_core::open::{open, AccessCause, OpenError, OpenFlags, Scope};

/// task-clock of the calling thread, user space only: what paranoid 2
/// allows an ordinary user.
fn task_clock_user() -> Attr {
    Attr::new(Event::Software(Software::TaskClock))
        .exclude_kernel(true)
        .exclude_hv(true)
}

fn open_self(attr: &Attr) -> Result<(), OpenError> {
    open(attr, Scope::this_thread(), None, OpenFlags::new()).map(drop)
}

#[test]
fn the_kernel_answers_the_probe_with_einval() {
    // The flag check comes before the attr is read: EINVAL, not EFAULT
    // for the null attr, and not a permission error.
    // SAFETY: a null attr the kernel never reads (it refuses the flag first).
    let rc = unsafe {
        perf_event_core::linux::perf_event_open(core::ptr::null_mut(), 0, -1, -1, 1 << 30)
    };
    assert_eq!(rc, -1);
    assert_eq!(Errno::last(), Errno(libc::EINVAL));
    assert_eq!(perf_event_open_intercepted(), None);
    // As an ordinary user too: the answer comes before any permission check.
    if let Some(r) = seccomp_support::as_nobody(perf_event_open_intercepted) {
        assert_eq!(r, None);
    }
}

/// Opens task-clock on a thread of its own under a filter answering
/// `errno`; the error.
fn open_under_filter(errno: i32) -> OpenError {
    std::thread::spawn(move || {
        seccomp_support::deny_on_this_thread(errno).expect("install the seccomp filter");
        open_self(&task_clock_user()).expect_err("the filter refuses every perf_event_open")
    })
    .join()
    .unwrap()
}

#[test]
fn a_seccomp_filter_is_named_as_the_cause() {
    if let Some(why) = seccomp_support::unsupported() {
        lab_support::skip("a_seccomp_filter_is_named_as_the_cause", &why);
        return;
    }
    for errno in [libc::EPERM, libc::EACCES, libc::ENOSYS] {
        let err = open_under_filter(errno);
        assert_eq!(err.errno, Some(Errno(errno)), "{err}");
        let access = err.access().expect("the access facts");
        assert_eq!(access.seccomp, Seccomp::FilterDenies, "{err}");
        assert_eq!(access.cause(), AccessCause::SeccompFilter, "{err}");
        let text = err.to_string();
        assert!(
            text.contains("a seccomp filter denies perf_event_open"),
            "{text}"
        );
        assert!(text.contains("--cap-add PERFMON"), "{text}");
        println!("{text}");
    }
    // Without the filter, the same open from this thread is not refused
    // by seccomp (it succeeds, or fails for another reason).
    if let Err(err) = open_self(&task_clock_user()) {
        assert!(!err.access().is_some_and(|a| a.seccomp.denies()), "{err}");
        assert!(!err.to_string().contains("seccomp filter denies"), "{err}");
    }
}

#[test]
fn an_ordinary_user_is_told_the_paranoid_level_and_the_missing_capability() {
    let name = "an_ordinary_user_is_told_the_paranoid_level_and_the_missing_capability";
    let paranoid = perf_event_core::linux::system::perf_event_paranoid();
    let Some(level) = paranoid.filter(|p| p.0 >= 2) else {
        lab_support::skip(
            name,
            "perf_event_paranoid is below 2: an ordinary user may count the kernel",
        );
        return;
    };
    // Counting the kernel (exclude_kernel unset) needs CAP_PERFMON at 2.
    let attr = Attr::new(Event::Software(Software::TaskClock));
    let Some(result) = seccomp_support::as_nobody(move || open_self(&attr)) else {
        lab_support::skip(name, "not root: cannot run a thread as uid 65534");
        return;
    };
    let err = result.expect_err("paranoid >= 2 refuses the kernel to an ordinary user");
    assert_eq!(err.errno, Some(Errno(libc::EACCES)), "{err}");
    let access = err.access().expect("the access facts");
    assert!(!access.caller.perfmon, "{err}");
    assert!(!access.seccomp.denies(), "{err}");
    assert_eq!(access.cause(), AccessCause::Paranoid(Some(level)), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(&format!("kernel.perf_event_paranoid = {}", level.0)),
        "{text}"
    );
    assert!(
        text.contains("neither CAP_PERFMON nor CAP_SYS_ADMIN"),
        "{text}"
    );
    assert!(text.contains("exclude_kernel"), "{text}");
    assert!(!text.contains("seccomp"), "{text}");
    // The user-only event is allowed at 2: the level, not the user, refused.
    if level.0 == 2 {
        let ok = seccomp_support::as_nobody(|| open_self(&task_clock_user())).unwrap();
        assert!(ok.is_ok(), "{ok:?}");
    }
}
