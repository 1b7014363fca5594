//! The Linux version that introduced each `perf_event_attr` field, flag and
//! format bit.
//!
//! Sources, in order of authority (DESIGN.md): the pinned 7.2 header and the
//! ABI history checked by `cargo xtask abi` (`abi-tests/ABI-HISTORY.md`: what
//! 6.12 and 7.2 added over 6.1), the kernel's git history, the
//! perf_event_open(2) man page. Where the man page is wrong the entry says so.

use super::bitfield::{attr_flags as flag, BitField};
use super::{AttrSize, KernelVersion};

const fn v(major: u16, minor: u16) -> KernelVersion {
    KernelVersion::new(major, minor, 0)
}
const fn v3(major: u16, minor: u16, patch: u16) -> KernelVersion {
    KernelVersion::new(major, minor, patch)
}

/// A plain (non-bit-field) field of `perf_event_attr`: its bytes and the
/// kernel that introduced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrField {
    /// The C name (union members: the name the crate's builder uses).
    pub name: &'static str,
    /// Byte offset in the attr.
    pub offset: usize,
    /// Size in bytes.
    pub len: usize,
    /// The first kernel that knows the field.
    pub since: KernelVersion,
    /// The attr size that first covers the field.
    pub size: AttrSize,
}

const fn field(name: &'static str, offset: usize, len: usize, since: KernelVersion) -> AttrField {
    let size = match AttrSize::covering(offset + len) {
        Some(s) => s,
        None => panic!("field beyond the newest attr size"),
    };
    AttrField {
        name,
        offset,
        len,
        since,
        size,
    }
}

/// Every plain field, in offset order. Union members share bytes; the
/// entry is the union's oldest meaning (a union member is "in use" when its
/// bytes are non-zero, whichever name set them).
pub const FIELDS: &[AttrField] = &[
    field("type", 0, 4, KernelVersion::PERF_EVENT_OPEN),
    field("size", 4, 4, KernelVersion::PERF_EVENT_OPEN),
    field("config", 8, 8, KernelVersion::PERF_EVENT_OPEN),
    field(
        "sample_period / sample_freq",
        16,
        8,
        KernelVersion::PERF_EVENT_OPEN,
    ),
    field("sample_type", 24, 8, KernelVersion::PERF_EVENT_OPEN),
    field("read_format", 32, 8, KernelVersion::PERF_EVENT_OPEN),
    // 40..48: the flag word, see FLAGS.
    field(
        "wakeup_events / wakeup_watermark",
        48,
        4,
        KernelVersion::PERF_EVENT_OPEN,
    ),
    field("bp_type", 52, 4, v3(2, 6, 33)),
    field(
        "bp_addr / kprobe_func / uprobe_path / config1",
        56,
        8,
        v3(2, 6, 33),
    ),
    field(
        "bp_len / kprobe_addr / probe_offset / config2",
        64,
        8,
        v3(2, 6, 33),
    ),
    field("branch_sample_type", 72, 8, v(3, 4)),
    field("sample_regs_user", 80, 8, v(3, 7)),
    field("sample_stack_user", 88, 4, v(3, 7)),
    field("clockid", 92, 4, v(4, 1)),
    field("sample_regs_intr", 96, 8, v(3, 19)),
    field("aux_watermark", 104, 4, v(4, 1)),
    field("sample_max_stack", 108, 2, v(4, 8)),
    field("__reserved_2", 110, 2, v(4, 8)),
    field("aux_sample_size", 112, 4, v(5, 5)),
    // 116..120: aux_action (6.13), see AUX_ACTION_SINCE; before, __reserved_3.
    field("sig_data", 120, 8, v(5, 13)),
    field("config3", 128, 8, v(6, 3)),
    field("config4", 136, 8, v(7, 0)),
];

/// The aux_action word (`aux_start_paused`, `aux_pause`, `aux_resume`):
/// Linux 6.13. (Debian's 6.12.107 headers carry it as a backport; see
/// ABI-HISTORY.md.)
pub const AUX_ACTION_SINCE: KernelVersion = v(6, 13);

/// The kernel version of one flag bit field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlagSince {
    /// The flag.
    pub flag: BitField,
    /// The first kernel that accepts it set.
    pub since: KernelVersion,
}

const fn f(flag: BitField, since: KernelVersion) -> FlagSince {
    FlagSince { flag, since }
}

/// Every flag of the attr flag word with the kernel that introduced it.
/// Man-page differences: ksymbol and bpf_event are listed there as 5.0 and
/// text_poke as 5.8; they were merged for 5.1 and 5.9. defer_callchain and
/// defer_output: after 6.18 (the 6.18 host answers EINVAL), merged for 6.19.
pub const FLAGS: &[FlagSince] = &[
    f(flag::DISABLED, KernelVersion::PERF_EVENT_OPEN),
    f(flag::INHERIT, KernelVersion::PERF_EVENT_OPEN),
    f(flag::PINNED, KernelVersion::PERF_EVENT_OPEN),
    f(flag::EXCLUSIVE, KernelVersion::PERF_EVENT_OPEN),
    f(flag::EXCLUDE_USER, KernelVersion::PERF_EVENT_OPEN),
    f(flag::EXCLUDE_KERNEL, KernelVersion::PERF_EVENT_OPEN),
    f(flag::EXCLUDE_HV, KernelVersion::PERF_EVENT_OPEN),
    f(flag::EXCLUDE_IDLE, KernelVersion::PERF_EVENT_OPEN),
    f(flag::MMAP, KernelVersion::PERF_EVENT_OPEN),
    f(flag::COMM, KernelVersion::PERF_EVENT_OPEN),
    f(flag::FREQ, KernelVersion::PERF_EVENT_OPEN),
    f(flag::INHERIT_STAT, KernelVersion::PERF_EVENT_OPEN),
    f(flag::ENABLE_ON_EXEC, KernelVersion::PERF_EVENT_OPEN),
    f(flag::TASK, KernelVersion::PERF_EVENT_OPEN),
    f(flag::WATERMARK, KernelVersion::PERF_EVENT_OPEN),
    f(flag::PRECISE_IP, v3(2, 6, 35)),
    f(flag::MMAP_DATA, v3(2, 6, 36)),
    f(flag::SAMPLE_ID_ALL, v3(2, 6, 38)),
    f(flag::EXCLUDE_HOST, v(3, 2)),
    f(flag::EXCLUDE_GUEST, v(3, 2)),
    f(flag::EXCLUDE_CALLCHAIN_KERNEL, v(3, 7)),
    f(flag::EXCLUDE_CALLCHAIN_USER, v(3, 7)),
    f(flag::MMAP2, v(3, 16)),
    f(flag::COMM_EXEC, v(3, 16)),
    f(flag::USE_CLOCKID, v(4, 1)),
    f(flag::CONTEXT_SWITCH, v(4, 3)),
    f(flag::WRITE_BACKWARD, v(4, 6)),
    f(flag::NAMESPACES, v(4, 11)),
    f(flag::KSYMBOL, v(5, 1)),
    f(flag::BPF_EVENT, v(5, 1)),
    f(flag::AUX_OUTPUT, v(5, 4)),
    f(flag::CGROUP, v(5, 7)),
    f(flag::TEXT_POKE, v(5, 9)),
    f(flag::BUILD_ID, v(5, 12)),
    f(flag::INHERIT_THREAD, v(5, 13)),
    f(flag::REMOVE_ON_EXEC, v(5, 13)),
    f(flag::SIGTRAP, v(5, 13)),
    f(flag::DEFER_CALLCHAIN, v(6, 19)),
    f(flag::DEFER_OUTPUT, v(6, 19)),
];

/// `(bit mask, name, since)` of every `PERF_SAMPLE_*` bit of the 7.2 UAPI.
pub const SAMPLE_TYPE: &[(u64, &str, KernelVersion)] = &[
    (1 << 0, "PERF_SAMPLE_IP", KernelVersion::PERF_EVENT_OPEN),
    (1 << 1, "PERF_SAMPLE_TID", KernelVersion::PERF_EVENT_OPEN),
    (1 << 2, "PERF_SAMPLE_TIME", KernelVersion::PERF_EVENT_OPEN),
    (1 << 3, "PERF_SAMPLE_ADDR", KernelVersion::PERF_EVENT_OPEN),
    (1 << 4, "PERF_SAMPLE_READ", KernelVersion::PERF_EVENT_OPEN),
    (
        1 << 5,
        "PERF_SAMPLE_CALLCHAIN",
        KernelVersion::PERF_EVENT_OPEN,
    ),
    (1 << 6, "PERF_SAMPLE_ID", KernelVersion::PERF_EVENT_OPEN),
    (1 << 7, "PERF_SAMPLE_CPU", KernelVersion::PERF_EVENT_OPEN),
    (1 << 8, "PERF_SAMPLE_PERIOD", KernelVersion::PERF_EVENT_OPEN),
    (
        1 << 9,
        "PERF_SAMPLE_STREAM_ID",
        KernelVersion::PERF_EVENT_OPEN,
    ),
    (1 << 10, "PERF_SAMPLE_RAW", KernelVersion::PERF_EVENT_OPEN),
    (1 << 11, "PERF_SAMPLE_BRANCH_STACK", v(3, 4)),
    (1 << 12, "PERF_SAMPLE_REGS_USER", v(3, 7)),
    (1 << 13, "PERF_SAMPLE_STACK_USER", v(3, 7)),
    (1 << 14, "PERF_SAMPLE_WEIGHT", v(3, 10)),
    (1 << 15, "PERF_SAMPLE_DATA_SRC", v(3, 10)),
    (1 << 16, "PERF_SAMPLE_IDENTIFIER", v(3, 12)),
    (1 << 17, "PERF_SAMPLE_TRANSACTION", v(3, 13)),
    (1 << 18, "PERF_SAMPLE_REGS_INTR", v(3, 19)),
    (1 << 19, "PERF_SAMPLE_PHYS_ADDR", v(4, 13)),
    (1 << 20, "PERF_SAMPLE_AUX", v(5, 5)),
    (1 << 21, "PERF_SAMPLE_CGROUP", v(5, 7)),
    (1 << 22, "PERF_SAMPLE_DATA_PAGE_SIZE", v(5, 11)),
    (1 << 23, "PERF_SAMPLE_CODE_PAGE_SIZE", v(5, 11)),
    (1 << 24, "PERF_SAMPLE_WEIGHT_STRUCT", v(5, 12)),
];

/// `(bit mask, name, since)` of every `PERF_FORMAT_*` bit of the 7.2 UAPI.
pub const READ_FORMAT: &[(u64, &str, KernelVersion)] = &[
    (
        1 << 0,
        "PERF_FORMAT_TOTAL_TIME_ENABLED",
        KernelVersion::PERF_EVENT_OPEN,
    ),
    (
        1 << 1,
        "PERF_FORMAT_TOTAL_TIME_RUNNING",
        KernelVersion::PERF_EVENT_OPEN,
    ),
    (1 << 2, "PERF_FORMAT_ID", KernelVersion::PERF_EVENT_OPEN),
    (1 << 3, "PERF_FORMAT_GROUP", KernelVersion::PERF_EVENT_OPEN),
    (1 << 4, "PERF_FORMAT_LOST", v(6, 0)),
];

/// Every known `PERF_SAMPLE_BRANCH_*` bit of the 7.2 UAPI (the kernel
/// refuses bits at or above `PERF_SAMPLE_BRANCH_MAX`).
pub const BRANCH_SAMPLE_TYPE_KNOWN: u64 = (crate::sys::PERF_SAMPLE_BRANCH_MAX as u64) - 1;
