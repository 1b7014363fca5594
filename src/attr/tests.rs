//! Builder, size and validation tests without a syscall.

use super::*;
use crate::abi::KernelVersion;
use crate::event::{Event, Software};

const BASE: Attr = Attr::new(Event::Software(Software::TaskClock));

#[test]
fn every_flag_constant_equals_bindgens_accessor() {
    for (i, field) in crate::abi::bitfield::attr_flags::ALL.iter().enumerate() {
        let ones = if field.width == 64 {
            u64::MAX
        } else {
            (1 << field.width) - 1
        };
        let attr = BASE.flag(*field, ones);
        let mut raw = BASE.to_raw();
        match field.name {
            "disabled" => raw.set_disabled(1),
            "inherit" => raw.set_inherit(1),
            "pinned" => raw.set_pinned(1),
            "exclusive" => raw.set_exclusive(1),
            "exclude_user" => raw.set_exclude_user(1),
            "exclude_kernel" => raw.set_exclude_kernel(1),
            "exclude_hv" => raw.set_exclude_hv(1),
            "exclude_idle" => raw.set_exclude_idle(1),
            "mmap" => raw.set_mmap(1),
            "comm" => raw.set_comm(1),
            "freq" => raw.set_freq(1),
            "inherit_stat" => raw.set_inherit_stat(1),
            "enable_on_exec" => raw.set_enable_on_exec(1),
            "task" => raw.set_task(1),
            "watermark" => raw.set_watermark(1),
            "precise_ip" => raw.set_precise_ip(3),
            "mmap_data" => raw.set_mmap_data(1),
            "sample_id_all" => raw.set_sample_id_all(1),
            "exclude_host" => raw.set_exclude_host(1),
            "exclude_guest" => raw.set_exclude_guest(1),
            "exclude_callchain_kernel" => raw.set_exclude_callchain_kernel(1),
            "exclude_callchain_user" => raw.set_exclude_callchain_user(1),
            "mmap2" => raw.set_mmap2(1),
            "comm_exec" => raw.set_comm_exec(1),
            "use_clockid" => raw.set_use_clockid(1),
            "context_switch" => raw.set_context_switch(1),
            "write_backward" => raw.set_write_backward(1),
            "namespaces" => raw.set_namespaces(1),
            "ksymbol" => raw.set_ksymbol(1),
            "bpf_event" => raw.set_bpf_event(1),
            "aux_output" => raw.set_aux_output(1),
            "cgroup" => raw.set_cgroup(1),
            "text_poke" => raw.set_text_poke(1),
            "build_id" => raw.set_build_id(1),
            "inherit_thread" => raw.set_inherit_thread(1),
            "remove_on_exec" => raw.set_remove_on_exec(1),
            "sigtrap" => raw.set_sigtrap(1),
            "defer_callchain" => raw.set_defer_callchain(1),
            "defer_output" => raw.set_defer_output(1),
            "__reserved_1" => raw.set___reserved_1(ones),
            other => panic!("flag {other} (#{i}) has no accessor case"),
        }
        assert_eq!(Attr::from_raw(raw).flags(), attr.flags(), "{}", field.name);
        assert_eq!(attr.get_flag(*field), ones, "{}", field.name);
    }
}

#[test]
fn aux_action_bits_equal_bindgens_accessors() {
    let attr = BASE.aux_start_paused(true).aux_resume(true);
    let mut raw = BASE.to_raw();
    // bindgen's bit-field setters on the union's struct member, written
    // back whole (a union write).
    let mut bits = sys::perf_event_attr__bindgen_ty_5__bindgen_ty_1::default();
    bits.set_aux_start_paused(1);
    bits.set_aux_resume(1);
    raw.__bindgen_anon_5 = sys::perf_event_attr__bindgen_ty_5 {
        __bindgen_anon_1: bits,
    };
    assert_eq!(Attr::from_raw(raw).get_aux_action(), attr.get_aux_action());
    assert_eq!(
        attr.aux_pause(true)
            .aux_start_paused(false)
            .get_aux_action(),
        raw_word(0b110)
    );
}

fn raw_word(bits: u32) -> u32 {
    let mut w = 0u64;
    for (i, f) in crate::abi::bitfield::aux_action::ALL
        .iter()
        .enumerate()
        .take(3)
    {
        if bits & (1 << i) != 0 {
            w |= f.mask();
        }
    }
    w as u32
}

#[test]
fn size_is_the_smallest_version_covering_every_nonzero_byte() {
    use AttrSize::*;
    assert_eq!(BASE.size(), Ver0);
    let cases = [
        (BASE.config1(1), Ver0),
        (BASE.config2(1), Ver1),
        (BASE.branch_sample_type_raw(1), Ver2),
        (BASE.sample_regs_user(1), Ver3),
        (BASE.sample_stack_user(8), Ver3),
        (BASE.clockid(1), Ver3),
        (BASE.sample_regs_intr(1), Ver4),
        (BASE.aux_watermark(1), Ver5),
        (BASE.sample_max_stack(1), Ver5),
        (BASE.aux_sample_size(1), Ver6),
        (BASE.aux_pause(true), Ver6),
        (BASE.sig_data(1), Ver7),
        (BASE.config3(1), Ver8),
        (BASE.config4(1), Ver9),
        (BASE.config4(1 << 63), Ver9),
    ];
    for (attr, want) in cases {
        assert_eq!(attr.size(), want, "{attr:?}");
        assert_eq!(attr.to_raw().size, want.bytes());
    }
    // Every boundary: the last byte of each version, then the first of the next.
    let raw_size = core::mem::size_of::<sys::perf_event_attr>();
    for byte in 8..raw_size {
        let mut bytes = [0u8; crate::linux::fields::ATTR_SIZE];
        bytes[byte] = 1;
        let raw = sys::perf_event_attr::from_bytes(bytes);
        let want = AttrSize::covering(byte + 1).unwrap();
        assert_eq!(Attr::from_raw(raw).size(), want, "byte {byte}");
    }
    // The size field itself does not count.
    let mut raw = BASE.to_raw();
    raw.size = 4096;
    assert_eq!(Attr::from_raw(raw).size(), Ver0);
}

#[test]
fn union_members_share_their_bytes() {
    let a = BASE.bp_addr(0x1000);
    let b = BASE.config1(0x1000);
    let c = BASE.kprobe_func(0x1000);
    assert_eq!(a.bytes(), b.bytes());
    assert_eq!(b.bytes(), c.bytes());
    assert_eq!(BASE.probe_offset(5).bytes(), BASE.config2(5).bytes());
    assert_eq!(
        BASE.sample_freq(99)
            .get_flag(crate::abi::bitfield::attr_flags::FREQ),
        1
    );
    assert_eq!(
        BASE.sample_freq(99)
            .sample_period(7)
            .get_flag(crate::abi::bitfield::attr_flags::FREQ),
        0
    );
    assert_eq!(
        BASE.wakeup_watermark(4096)
            .get_flag(crate::abi::bitfield::attr_flags::WATERMARK),
        1
    );
}

#[test]
fn min_kernel_is_the_newest_feature_in_use() {
    assert_eq!(BASE.min_kernel().version, KernelVersion::PERF_EVENT_OPEN);
    let cases = [
        (BASE.precise_ip(2), "precise_ip", (2, 6, 35)),
        (BASE.sample_id_all(true), "sample_id_all", (2, 6, 38)),
        (
            BASE.clockid(crate::linux::system::CLOCK_MONOTONIC),
            "clockid",
            (4, 1, 0),
        ),
        (BASE.write_backward(true), "write_backward", (4, 6, 0)),
        (BASE.aux_output(true), "aux_output", (5, 4, 0)),
        (BASE.cgroup(true), "cgroup", (5, 7, 0)),
        (BASE.text_poke(true), "text_poke", (5, 9, 0)),
        (BASE.build_id(true), "build_id", (5, 12, 0)),
        (BASE.sigtrap(true), "sigtrap", (5, 13, 0)),
        (BASE.config3(1), "config3", (6, 3, 0)),
        (BASE.aux_pause(true), "aux_action", (6, 13, 0)),
        (
            BASE.defer_callchain(true).sigtrap(true),
            "defer_callchain",
            (6, 19, 0),
        ),
        (BASE.config4(1).defer_callchain(true), "config4", (7, 0, 0)),
        (
            BASE.read_format_raw(sys::PERF_FORMAT_LOST as u64),
            "PERF_FORMAT_LOST",
            (6, 0, 0),
        ),
    ];
    for (attr, what, (a, b, c)) in cases {
        let r = attr.min_kernel();
        assert_eq!((r.what, r.version), (what, KernelVersion::new(a, b, c)));
    }
}

#[test]
fn each_validation_error_without_a_syscall() {
    let cases: [(Attr, AttrError); 11] = [
        (BASE.precise_ip(4), AttrError::PreciseIp { requested: 4 }),
        (BASE.sample_freq(0), AttrError::ZeroFrequency),
        (
            BASE.sample_period(1 << 63),
            AttrError::PeriodTooLarge { period: 1 << 63 },
        ),
        (
            BASE.sample_type_raw(1 << 40),
            AttrError::UnknownBits {
                field: "sample_type",
                bits: 1 << 40,
            },
        ),
        (
            BASE.read_format_raw(1 << 5),
            AttrError::UnknownBits {
                field: "read_format",
                bits: 1 << 5,
            },
        ),
        (
            BASE.branch_sample_type_raw(1 << 40),
            AttrError::UnknownBits {
                field: "branch_sample_type",
                bits: 1 << 40,
            },
        ),
        (
            BASE.flag(crate::abi::bitfield::attr_flags::RESERVED_1, 1),
            AttrError::Reserved {
                field: "__reserved_1",
                value: 1,
            },
        ),
        (
            BASE.sigtrap(true),
            AttrError::Requires {
                field: "sigtrap",
                needs: "remove_on_exec",
            },
        ),
        (
            BASE.inherit_thread(true),
            AttrError::Requires {
                field: "inherit_thread",
                needs: "inherit",
            },
        ),
        (
            BASE.sample_stack_user(7),
            AttrError::StackSizeUnaligned { bytes: 7 },
        ),
        (
            BASE.clockid(12345),
            AttrError::UnknownClock { clockid: 12345 },
        ),
    ];
    for (attr, want) in cases {
        assert_eq!(attr.check(), Err(want));
        assert!(!want.to_string().is_empty());
    }
    let mut raw = BASE.to_raw();
    raw.__reserved_2 = 3;
    assert_eq!(
        Attr::from_raw(raw).check(),
        Err(AttrError::Reserved {
            field: "__reserved_2",
            value: 3
        })
    );
    let inherit_read = BASE
        .inherit(true)
        .sample_period(1000)
        .sample_type_raw(sys::PERF_SAMPLE_READ as u64);
    assert!(matches!(
        inherit_read.check(),
        Err(AttrError::Requires { .. })
    ));
    let with_tid =
        inherit_read.sample_type_raw((sys::PERF_SAMPLE_READ | sys::PERF_SAMPLE_TID) as u64);
    assert_eq!(with_tid.check(), Ok(()));
    assert!(matches!(
        with_tid.check_for(KernelVersion::new(6, 1, 0)),
        Err(AttrError::NewerThanKernel {
            what: "inherit with PERF_SAMPLE_READ",
            ..
        })
    ));
    assert_eq!(
        BASE.config3(1).check_for(KernelVersion::new(6, 1, 0)),
        Err(AttrError::NewerThanKernel {
            what: "config3",
            since: KernelVersion::new(6, 3, 0),
            running: KernelVersion::new(6, 1, 0)
        })
    );
    assert_eq!(
        BASE.config3(1).check_for(KernelVersion::new(6, 3, 0)),
        Ok(())
    );
}

#[test]
fn e2big_diagnosis_names_the_fields_and_versions() {
    let attr = BASE.config4(1).config3(2);
    let d = BeyondKernel::new(&attr, 136);
    let text = d.to_string();
    assert_eq!(
        text,
        "config4 needs PERF_ATTR_SIZE_VER9 (144 bytes, Linux 7.0); this kernel accepts 136 bytes"
    );
    let d = BeyondKernel::new(&attr, 128);
    assert_eq!(
        d.fields().map(|f| f.0).collect::<std::vec::Vec<_>>(),
        ["config3", "config4"]
    );
}

#[test]
fn kernel_version_parsing() {
    assert_eq!(
        KernelVersion::parse(b"6.18.44-fc-v657"),
        Some(KernelVersion::new(6, 18, 44))
    );
    assert_eq!(
        KernelVersion::parse(b"6.1.0-56-arm64"),
        Some(KernelVersion::new(6, 1, 0))
    );
    assert_eq!(
        KernelVersion::parse(b"7.2"),
        Some(KernelVersion::new(7, 2, 0))
    );
    assert_eq!(KernelVersion::parse(b"6"), None);
    assert_eq!(KernelVersion::parse(b"abc"), None);
    assert_eq!(KernelVersion::parse(b"99999999.1"), None);
    assert_eq!(KernelVersion::new(6, 12, 0).to_string(), "6.12");
    assert!(KernelVersion::new(6, 19, 0).at_least(KernelVersion::new(6, 18, 44)));
}

#[test]
fn perf_print_lists_the_non_zero_fields_as_perf_vv_does() {
    // perf 6.1's `perf stat -vv -e task-clock:u true` prints the same
    // lines for these fields (its attr has more flags set).
    let attr = Attr::new(Event::Software(Software::TaskClock))
        .disabled(true)
        .exclude_kernel(true)
        .exclude_hv(true)
        .read_format_raw(3);
    let text = std::format!("{}", attr.perf_print());
    let size = attr.to_raw().size;
    let expected = std::format!(
        "------------------------------------------------------------\n\
         perf_event_attr:\n  \
         type                             1\n  \
         size                             {size}\n  \
         config                           0x1\n  \
         read_format                      TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING\n  \
         disabled                         1\n  \
         exclude_kernel                   1\n  \
         exclude_hv                       1\n\
         ------------------------------------------------------------"
    );
    assert_eq!(text, expected);
}

#[test]
fn perf_print_inline_is_the_same_fields_as_perf_evlist_v_prints_them() {
    // perf 6.1's `evlist -v` control command prints, after the name,
    // "task-clock: type: 1, size: 128, config: 0x1, ..." (the same
    // fields as -vv, on one line).
    let attr = Attr::new(Event::Software(Software::TaskClock))
        .disabled(true)
        .inherit(true)
        .read_format_raw(3)
        .sample_type_raw(sys::PERF_SAMPLE_IDENTIFIER as u64 | 1 << 62);
    let size = attr.to_raw().size;
    assert_eq!(
        std::format!("{}", attr.perf_print_inline()),
        std::format!(
            ": type: 1, size: {size}, config: 0x1, sample_type: IDENTIFIER, \
             read_format: TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING, disabled: 1, inherit: 1"
        )
    );
}
