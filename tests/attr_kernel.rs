//! The attr layer against the running kernel: minimal sizes open, E2BIG and
//! EINVAL are explained with the fields and versions involved. Expectations
//! are keyed by the running kernel's version, so the same tests hold on the
//! host (6.18) and in the lab's older guests (6.1: attr size 128).

use perf_event_core::abi::KernelVersion;
use perf_event_core::attr::{Attr, Diagnosis};
use perf_event_core::event::{Event, Software};

const TASK_CLOCK: Attr = Attr::new(Event::Software(Software::TaskClock)).disabled(true);

fn running() -> KernelVersion {
    KernelVersion::running().expect("uname gives a version")
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
    assert_eq!(beyond.kernel_size, 128);
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
    let attr = TASK_CLOCK.read_format(perf_event_core::sys::PERF_FORMAT_LOST as u64);
    let result = attr.try_open();
    if k.at_least(KernelVersion::new(6, 0, 0)) {
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
    let features = perf_event_core::features::KernelFeatures::detect();
    println!("{features}");
    let k = running();
    assert_eq!(features.attr_size, kernel_attr_size(k));
    for (name, since, support) in &features.flags {
        use perf_event_core::features::Support;
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
