//! Compile-time layout assertions over [`crate::sys`].
//!
//! The numbers below are the kernel ABI as perf_event_open(2) and
//! `linux/perf_event.h` define it. They are evaluated whenever the crate is
//! compiled, so `cargo check --target T` proves them for the vendored
//! bindings of `T` (and with feature `bindgen`, for the installed headers).
//! A mismatch is a compile error naming the item.

use crate::sys;
use core::mem::{align_of, offset_of, size_of};
use static_assertions::const_assert_eq;

/// `sizeof(struct perf_event_attr)` of the newest ABI this crate is generated
/// from: `PERF_ATTR_SIZE_VER9` (144 bytes; the version that adds `config4`).
pub const ATTR_SIZE_LATEST: usize = sys::PERF_ATTR_SIZE_VER9 as usize;

/// Size of `struct perf_event_mmap_page`: the metadata page fields the
/// kernel defines, up to and including `aux_size` (since Linux 4.1).
pub const MMAP_PAGE_SIZE: usize = 1088;

/// Size of `struct perf_event_header`, which starts every ring-buffer record.
pub const HEADER_SIZE: usize = 8;

// struct perf_event_attr: every field up to config4 (VER9).
#[cfg(not(feature = "bindgen"))]
const_assert_eq!(size_of::<sys::perf_event_attr>(), ATTR_SIZE_LATEST);
// Newer installed headers (feature `bindgen`) may extend the attr further.
#[cfg(feature = "bindgen")]
static_assertions::const_assert!(size_of::<sys::perf_event_attr>() >= ATTR_SIZE_LATEST);
const_assert_eq!(sys::PERF_ATTR_SIZE_VER9, 144);
// __u64 is 4-aligned on i386, 8-aligned elsewhere: the attr follows it.
const_assert_eq!(align_of::<sys::perf_event_attr>(), align_of::<u64>());
const_assert_eq!(offset_of!(sys::perf_event_attr, type_), 0);
const_assert_eq!(offset_of!(sys::perf_event_attr, size), 4);
const_assert_eq!(offset_of!(sys::perf_event_attr, config), 8);
const_assert_eq!(offset_of!(sys::perf_event_attr, sample_type), 24);
const_assert_eq!(offset_of!(sys::perf_event_attr, read_format), 32);
const_assert_eq!(offset_of!(sys::perf_event_attr, config3), 128);
const_assert_eq!(offset_of!(sys::perf_event_attr, config4), 136);

// struct perf_event_mmap_page: what the seqlock reader and the ring reader use.
const_assert_eq!(size_of::<sys::perf_event_mmap_page>(), MMAP_PAGE_SIZE);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, version), 0);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, compat_version), 4);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, lock), 8);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, index), 12);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, offset), 16);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, time_enabled), 24);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, time_running), 32);
// The capabilities word (cap_user_rdpmc, cap_user_time, ...) is an anonymous union.
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, __bindgen_anon_1), 40);
const_assert_eq!(size_of::<sys::perf_event_mmap_page__bindgen_ty_1>(), 8);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, pmc_width), 48);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, time_shift), 50);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, time_mult), 52);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, time_offset), 56);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, time_zero), 64);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, size), 72);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, time_cycles), 80);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, time_mask), 88);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, data_head), 1024);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, data_tail), 1032);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, data_offset), 1040);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, data_size), 1048);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, aux_head), 1056);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, aux_tail), 1064);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, aux_offset), 1072);
const_assert_eq!(offset_of!(sys::perf_event_mmap_page, aux_size), 1080);

// struct perf_event_header: type (u32), misc (u16), size (u16).
const_assert_eq!(size_of::<sys::perf_event_header>(), HEADER_SIZE);
const_assert_eq!(offset_of!(sys::perf_event_header, type_), 0);
const_assert_eq!(offset_of!(sys::perf_event_header, misc), 4);
const_assert_eq!(offset_of!(sys::perf_event_header, size), 6);

/// The `perf_event_open` syscall number this target's headers define
/// (`__NR_perf_event_open`, since Linux 2.6.31).
pub const SYS_PERF_EVENT_OPEN: core::ffi::c_long = sys::__NR_perf_event_open;

// And with the number every architecture's syscall table assigns: see
// `super::arch`, where each architecture's file states it.

// The ioctl numbers composed by const fn equal those clang computed.
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_ENABLE,
    sys::PERF_EVENT_IOC_ENABLE
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_DISABLE,
    sys::PERF_EVENT_IOC_DISABLE
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_REFRESH,
    sys::PERF_EVENT_IOC_REFRESH
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_RESET,
    sys::PERF_EVENT_IOC_RESET
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_PERIOD,
    sys::PERF_EVENT_IOC_PERIOD
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_SET_OUTPUT,
    sys::PERF_EVENT_IOC_SET_OUTPUT
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_SET_FILTER,
    sys::PERF_EVENT_IOC_SET_FILTER
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_ID,
    sys::PERF_EVENT_IOC_ID
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_SET_BPF,
    sys::PERF_EVENT_IOC_SET_BPF
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_PAUSE_OUTPUT,
    sys::PERF_EVENT_IOC_PAUSE_OUTPUT
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_QUERY_BPF,
    sys::PERF_EVENT_IOC_QUERY_BPF
);
const_assert_eq!(
    super::ioctl_numbers::PERF_EVENT_IOC_MODIFY_ATTRIBUTES,
    sys::PERF_EVENT_IOC_MODIFY_ATTRIBUTES
);

// The published attr sizes equal the header's PERF_ATTR_SIZE_VERn.
const_assert_eq!(super::AttrSize::Ver0.bytes(), sys::PERF_ATTR_SIZE_VER0);
const_assert_eq!(super::AttrSize::Ver1.bytes(), sys::PERF_ATTR_SIZE_VER1);
const_assert_eq!(super::AttrSize::Ver2.bytes(), sys::PERF_ATTR_SIZE_VER2);
const_assert_eq!(super::AttrSize::Ver3.bytes(), sys::PERF_ATTR_SIZE_VER3);
const_assert_eq!(super::AttrSize::Ver4.bytes(), sys::PERF_ATTR_SIZE_VER4);
const_assert_eq!(super::AttrSize::Ver5.bytes(), sys::PERF_ATTR_SIZE_VER5);
const_assert_eq!(super::AttrSize::Ver6.bytes(), sys::PERF_ATTR_SIZE_VER6);
const_assert_eq!(super::AttrSize::Ver7.bytes(), sys::PERF_ATTR_SIZE_VER7);
const_assert_eq!(super::AttrSize::Ver8.bytes(), sys::PERF_ATTR_SIZE_VER8);
const_assert_eq!(super::AttrSize::Ver9.bytes(), sys::PERF_ATTR_SIZE_VER9);
