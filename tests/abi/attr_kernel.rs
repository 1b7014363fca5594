//! The attr layer against the running kernel: minimal sizes open, E2BIG and
//! EINVAL are explained with the fields and versions involved. Expectations
//! are keyed by the running kernel's version, so the same tests hold on the
//! host (6.18) and in the lab's older guests (6.1: attr size 128; 5.10:
//! attr size 120).

use crate::lab_support;

use lab_support::{not_applicable, Need};
use perf_event_core::abi::KernelVersion;
use perf_event_core::attr::{Attr, Diagnosis};
use perf_event_core::event::{Event, Software};

const TASK_CLOCK: Attr = Attr::new(Event::Software(Software::TaskClock)).disabled(true);

fn running() -> KernelVersion {
    perf_event_core::linux::system::kernel_version().expect("uname gives a version")
}

/// The attr size the running kernel accepts, from the ABI history.
fn kernel_attr_size(k: KernelVersion) -> u32 {
    if k.at_least(KernelVersion::new(7, 0, 0)) {
        144
    } else if k.at_least(KernelVersion::new(6, 3, 0)) {
        136
    } else if k.at_least(KernelVersion::new(5, 13, 0)) {
        128
    } else {
        120
    }
}

#[test]
fn first_version_attr_opens() {
    assert_eq!(TASK_CLOCK.to_raw().size, 64);
    TASK_CLOCK.try_open().unwrap_or_else(|d| panic!("{d}"));
}

#[test]
fn config4_yields_the_e2big_diagnosis_where_the_kernel_lacks_it() {
    let k = running();
    let attr = TASK_CLOCK.config4(1);
    let result = attr.try_open();
    if kernel_attr_size(k) >= 144 {
        assert_eq!(result, Ok(()), "Linux {k} has config4");
        return;
    }
    let Err(Diagnosis::TooBig(beyond)) = result else {
        panic!("expected E2BIG on Linux {k}, got {result:?}");
    };
    assert_eq!(
        beyond.kernel_size,
        kernel_attr_size(k),
        "size written back by Linux {k}"
    );
    let text = beyond.to_string();
    assert!(
        text.starts_with("config4 needs PERF_ATTR_SIZE_VER9 (144 bytes, Linux 7.0)"),
        "{text}"
    );
    assert!(
        text.ends_with(&format!("this kernel accepts {} bytes", beyond.kernel_size)),
        "{text}"
    );
}

#[test]
fn config3_yields_the_e2big_diagnosis_before_6_3() {
    let k = running();
    let result = TASK_CLOCK.config3(1).try_open();
    if kernel_attr_size(k) >= 136 {
        assert_eq!(result, Ok(()), "Linux {k} has config3");
        return;
    }
    let Err(Diagnosis::TooBig(beyond)) = result else {
        panic!("expected E2BIG on Linux {k}, got {result:?}");
    };
    assert_eq!(beyond.kernel_size, kernel_attr_size(k));
    assert!(beyond
        .to_string()
        .starts_with("config3 needs PERF_ATTR_SIZE_VER8 (136 bytes, Linux 6.3)"));
}

#[test]
fn a_flag_newer_than_the_kernel_yields_the_einval_diagnosis() {
    let k = running();
    let attr = TASK_CLOCK.defer_callchain(true);
    let result = attr.try_open();
    if k.at_least(KernelVersion::new(6, 19, 0)) {
        assert_eq!(result, Ok(()), "Linux {k} has defer_callchain");
        return;
    }
    assert_eq!(
        result,
        Err(Diagnosis::NewerThanKernel {
            what: "defer_callchain",
            since: KernelVersion::new(6, 19, 0),
            running: k
        })
    );
    let text = result.unwrap_err().to_string();
    assert!(text.contains("defer_callchain needs Linux 6.19"), "{text}");
    // The same, found before any syscall:
    assert!(attr.check_for(k).is_err());
}

#[test]
fn read_format_lost_is_accepted_from_6_0() {
    let k = running();
    let attr = TASK_CLOCK.read_format_raw(perf_event_core::sys::PERF_FORMAT_LOST as u64);
    let result = attr.try_open();
    if k.at_least(KernelVersion::new(6, 0, 0)) || lab_support::read_format_lost_backported() {
        assert_eq!(result, Ok(()));
    } else {
        assert!(matches!(
            result,
            Err(Diagnosis::NewerThanKernel {
                what: "PERF_FORMAT_LOST",
                ..
            })
        ));
    }
}

#[test]
fn validation_errors_never_reach_the_kernel() {
    let result = TASK_CLOCK.sigtrap(true).try_open();
    assert!(matches!(result, Err(Diagnosis::Invalid(_))), "{result:?}");
}

#[test]
fn kernel_feature_probe_agrees_with_the_version_table() {
    let features = perf_event_host::features::KernelFeatures::detect();
    println!("{features}");
    let k = running();
    assert_eq!(features.attr_size, kernel_attr_size(k));
    for (name, since, support) in &features.flags {
        use perf_event_host::features::Support;
        // exclude_* and precise_ip may be refused by software events; flags
        // newer than the kernel must be refused, older ones known.
        if !k.at_least(*since) {
            assert!(
                matches!(support, Support::Refused(_)),
                "{name} (Linux {since}) on {k}: {support}"
            );
        } else if !["precise_ip", "exclude_host", "exclude_guest", "aux_output"].contains(name) {
            assert_ne!(
                std::mem::discriminant(support),
                std::mem::discriminant(&Support::Refused(Diagnosis::Errno(0))),
                "{name} (Linux {since}) refused on {k}: {support}"
            );
        }
    }
    assert!(features.syscalls >= 40);
}

/// What Linux 5.10 answers, asserted by name: the attr sizes up to VER6
/// (120 bytes, `aux_sample_size`, Linux 5.5) pass the size check; the VER7
/// field `sig_data` (Linux 5.13) is diagnosed before the syscall and, opened
/// unchecked, after the kernel's E2BIG, which writes back 120; the 5.13
/// flags are refused; and the feature probe's answers are 5.10's. Runs in
/// the lab's 5.10 guests (x86_64, aarch64); elsewhere it says so.
#[test]
fn linux_5_10_accepts_ver6_and_names_what_is_newer() {
    let k = running();
    let is_5_10 =
        k.at_least(KernelVersion::new(5, 10, 0)) && !k.at_least(KernelVersion::new(5, 11, 0));
    if !is_5_10 {
        not_applicable(
            Need::Linux510,
            &format!("asserts what Linux 5.10 answers; this kernel is {k}"),
        );
        return;
    }
    use perf_event_core::abi::AttrSize;
    use perf_event_host::features::{KernelFeatures, Support};

    // VER6: an attr of 120 bytes with aux_sample_size set passes the size
    // check (E2BIG would come first); the kernel may still refuse AUX
    // sampling on a software event, but not for its size.
    let ver6 = TASK_CLOCK.aux_sample_size(4096);
    assert_eq!(ver6.size(), AttrSize::Ver6);
    assert_eq!(ver6.to_raw().size, 120);
    let result = ver6.try_open_unchecked();
    println!("VER6 (aux_sample_size) on Linux {k}: {result:?}");
    assert!(
        !matches!(result, Err(Diagnosis::TooBig(_))),
        "Linux {k} refused a VER6 attr as too big: {result:?}"
    );
    // A 120-byte attr of a plain task-clock: opens.
    let mut raw = TASK_CLOCK.to_raw();
    raw.size = AttrSize::Ver6.bytes();
    // SAFETY: a whole perf_event_attr, longer than the size it declares.
    let fd = unsafe {
        lab_support::perf_event_open(
            &mut raw,
            0,
            -1,
            -1,
            libc::c_ulong::from(perf_event_core::sys::PERF_FLAG_FD_CLOEXEC),
        )
    }
    .unwrap_or_else(|e| panic!("size 120 on Linux {k}: {}", lab_support::errno_name(e)));
    lab_support::close(fd);

    // VER7's sig_data: named before the syscall...
    let ver7 = TASK_CLOCK.sig_data(0x5eed);
    assert_eq!(ver7.to_raw().size, 128);
    let before = ver7.check_for(k).expect_err("sig_data is newer than 5.10");
    let text = before.to_string();
    println!("before the syscall: {text}");
    assert!(text.contains("sig_data"), "{text}");
    assert!(text.contains("5.13"), "{text}");
    // ...and after E2BIG, which writes back 120.
    let Err(Diagnosis::TooBig(beyond)) = ver7.try_open_unchecked() else {
        panic!("Linux {k} did not answer E2BIG for sig_data");
    };
    assert_eq!(beyond.kernel_size, 120, "Linux 5.10 writes back VER6");
    assert_eq!(
        beyond.to_string(),
        "sig_data needs PERF_ATTR_SIZE_VER7 (128 bytes, Linux 5.13); this kernel accepts \
         120 bytes"
    );
    // The 5.13 flags: refused, named.
    let sigtrap = TASK_CLOCK.sigtrap(true).remove_on_exec(true);
    assert!(sigtrap.check_for(k).is_err());
    match sigtrap.try_open_unchecked() {
        Err(Diagnosis::NewerThanKernel { what, since, .. }) => {
            assert!(["sigtrap", "remove_on_exec"].contains(&what), "{what}");
            assert_eq!(since, KernelVersion::new(5, 13, 0));
        }
        other => panic!("sigtrap on Linux {k}: {other:?}"),
    }

    // The probe: 5.10's size and flags.
    let features = KernelFeatures::detect();
    println!("{features}");
    assert_eq!(features.attr_size, 120);
    for known in ["cgroup", "text_poke", "ksymbol", "bpf_event", "namespaces"] {
        assert!(
            features.accepts(known),
            "{known} is in Linux 5.10:\n{features}"
        );
    }
    for (name, _, support) in &features.flags {
        if ["build_id", "inherit_thread", "remove_on_exec", "sigtrap"].contains(name) {
            assert!(
                matches!(support, Support::Refused(_)),
                "{name} is newer than 5.10 yet {support}"
            );
        }
    }
    // PERF_FORMAT_LOST (6.0) is a stable backport in 5.10 (Debian's 5.10.223
    // accepts it); aux_action (6.13) is not.
    assert_eq!(features.read_format_lost, Support::Accepted);
    assert!(matches!(features.aux_action, Support::Refused(_)));
}
