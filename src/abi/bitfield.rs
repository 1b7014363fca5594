//! Bit fields of the kernel's structures as constants over the raw word.
//!
//! bindgen's bitfield setters are not `const`, so the crate sets flags by
//! OR-ing masks into the raw storage word. A [`BitField`] names a field by
//! its position in declaration order (bit 0 is the first declared field),
//! which is what C and bindgen agree on; [`BitField::mask`] turns that into
//! a mask of the word as it is stored in memory and read with a native
//! load. C compilers allocate bit fields from the least significant bit on
//! little-endian targets and from the most significant bit on big-endian
//! ones, so the mask depends on the target's byte order.

/// A field of `width` bits starting at declaration-order bit `bit` of a
/// `word_bits`-wide storage word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitField {
    /// The C name of the field.
    pub name: &'static str,
    /// Declaration-order position of the first bit.
    pub bit: u32,
    /// Number of bits.
    pub width: u32,
    /// Width of the storage word (32 or 64).
    pub word_bits: u32,
}

impl BitField {
    /// A field of a 64-bit word.
    #[inline]
    pub const fn in_u64(name: &'static str, bit: u32, width: u32) -> Self {
        BitField {
            name,
            bit,
            width,
            word_bits: 64,
        }
    }

    /// A field of a 32-bit word.
    #[inline]
    pub const fn in_u32(name: &'static str, bit: u32, width: u32) -> Self {
        BitField {
            name,
            bit,
            width,
            word_bits: 32,
        }
    }

    /// The mask of the field in the raw word of a target with the given
    /// byte order (`big_endian`), as that target reads the word natively.
    #[inline]
    pub const fn mask_for(self, big_endian: bool) -> u64 {
        let ones = if self.width >= 64 {
            u64::MAX
        } else {
            (1u64 << self.width) - 1
        };
        let shift = if big_endian {
            self.word_bits - self.bit - self.width
        } else {
            self.bit
        };
        ones << shift
    }

    /// The mask of the field in the raw word on the compilation target.
    #[inline]
    pub const fn mask(self) -> u64 {
        self.mask_for(cfg!(target_endian = "big"))
    }

    /// The raw-word bits that store `value` in this field on the target;
    /// bits of `value` beyond the field's width are dropped.
    #[inline]
    pub const fn encode(self, value: u64) -> u64 {
        let shift = self.mask().trailing_zeros();
        (value << shift) & self.mask()
    }

    /// The field's value in a raw word read on the target.
    #[inline]
    pub const fn decode(self, word: u64) -> u64 {
        (word & self.mask()) >> self.mask().trailing_zeros()
    }
}

/// The flag bits of `perf_event_attr` (the 64-bit word after `read_format`),
/// in declaration order, as of the Linux 7.2 UAPI.
pub mod attr_flags {
    use super::BitField;

    macro_rules! flags {
        ($($(#[$doc:meta])* $id:ident = $name:literal, $bit:literal, $width:literal;)*) => {
            $( $(#[$doc])* pub const $id: BitField = BitField::in_u64($name, $bit, $width); )*
            /// Every field of the word, in declaration order, including
            /// the reserved tail.
            pub const ALL: &[BitField] = &[$($id),*];
        };
    }

    flags! {
        /// `disabled`: start disabled (enable with ioctl or enable_on_exec).
        DISABLED = "disabled", 0, 1;
        /// `inherit`: count in children created after the event.
        INHERIT = "inherit", 1, 1;
        /// `pinned`: always on the PMU; error state when it cannot be.
        PINNED = "pinned", 2, 1;
        /// `exclusive`: the group is alone on the PMU when on.
        EXCLUSIVE = "exclusive", 3, 1;
        /// `exclude_user`: do not count user space.
        EXCLUDE_USER = "exclude_user", 4, 1;
        /// `exclude_kernel`: do not count the kernel.
        EXCLUDE_KERNEL = "exclude_kernel", 5, 1;
        /// `exclude_hv`: do not count the hypervisor.
        EXCLUDE_HV = "exclude_hv", 6, 1;
        /// `exclude_idle`: do not count while idle.
        EXCLUDE_IDLE = "exclude_idle", 7, 1;
        /// `mmap`: PERF_RECORD_MMAP for executable mappings.
        MMAP = "mmap", 8, 1;
        /// `comm`: PERF_RECORD_COMM on exec / prctl(PR_SET_NAME).
        COMM = "comm", 9, 1;
        /// `freq`: `sample_freq` instead of `sample_period`.
        FREQ = "freq", 10, 1;
        /// `inherit_stat`: per-task counts on context switch.
        INHERIT_STAT = "inherit_stat", 11, 1;
        /// `enable_on_exec`: enable at the next exec.
        ENABLE_ON_EXEC = "enable_on_exec", 12, 1;
        /// `task`: fork/exit records.
        TASK = "task", 13, 1;
        /// `watermark`: wake up at `wakeup_watermark` bytes.
        WATERMARK = "watermark", 14, 1;
        /// `precise_ip`: skid constraint, 0..=3 (2 bits).
        PRECISE_IP = "precise_ip", 15, 2;
        /// `mmap_data`: PERF_RECORD_MMAP for data mappings.
        MMAP_DATA = "mmap_data", 17, 1;
        /// `sample_id_all`: sample_id trailer on non-sample records.
        SAMPLE_ID_ALL = "sample_id_all", 18, 1;
        /// `exclude_host`: do not count the host (KVM).
        EXCLUDE_HOST = "exclude_host", 19, 1;
        /// `exclude_guest`: do not count guests (KVM).
        EXCLUDE_GUEST = "exclude_guest", 20, 1;
        /// `exclude_callchain_kernel`: no kernel callchains.
        EXCLUDE_CALLCHAIN_KERNEL = "exclude_callchain_kernel", 21, 1;
        /// `exclude_callchain_user`: no user callchains.
        EXCLUDE_CALLCHAIN_USER = "exclude_callchain_user", 22, 1;
        /// `mmap2`: PERF_RECORD_MMAP2 instead of MMAP.
        MMAP2 = "mmap2", 23, 1;
        /// `comm_exec`: flag COMM records caused by exec.
        COMM_EXEC = "comm_exec", 24, 1;
        /// `use_clockid`: timestamps from `clockid`.
        USE_CLOCKID = "use_clockid", 25, 1;
        /// `context_switch`: PERF_RECORD_SWITCH records.
        CONTEXT_SWITCH = "context_switch", 26, 1;
        /// `write_backward`: ring buffer written backward (overwrite mode).
        WRITE_BACKWARD = "write_backward", 27, 1;
        /// `namespaces`: PERF_RECORD_NAMESPACES records.
        NAMESPACES = "namespaces", 28, 1;
        /// `ksymbol`: PERF_RECORD_KSYMBOL records.
        KSYMBOL = "ksymbol", 29, 1;
        /// `bpf_event`: PERF_RECORD_BPF_EVENT records.
        BPF_EVENT = "bpf_event", 30, 1;
        /// `aux_output`: generate AUX records instead of events.
        AUX_OUTPUT = "aux_output", 31, 1;
        /// `cgroup`: PERF_RECORD_CGROUP records.
        CGROUP = "cgroup", 32, 1;
        /// `text_poke`: PERF_RECORD_TEXT_POKE records.
        TEXT_POKE = "text_poke", 33, 1;
        /// `build_id`: MMAP2 records carry a build id.
        BUILD_ID = "build_id", 34, 1;
        /// `inherit_thread`: inherit to threads only (CLONE_THREAD).
        INHERIT_THREAD = "inherit_thread", 35, 1;
        /// `remove_on_exec`: remove the event on exec.
        REMOVE_ON_EXEC = "remove_on_exec", 36, 1;
        /// `sigtrap`: send SIGTRAP on overflow.
        SIGTRAP = "sigtrap", 37, 1;
        /// `defer_callchain`: request PERF_RECORD_CALLCHAIN_DEFERRED records.
        DEFER_CALLCHAIN = "defer_callchain", 38, 1;
        /// `defer_output`: output PERF_RECORD_CALLCHAIN_DEFERRED records.
        DEFER_OUTPUT = "defer_output", 39, 1;
        /// `__reserved_1`: must be zero.
        RESERVED_1 = "__reserved_1", 40, 24;
    }
}

/// The bits of `perf_event_attr.aux_action` (a 32-bit word).
pub mod aux_action {
    use super::BitField;

    /// `aux_start_paused`: start AUX area tracing paused.
    pub const START_PAUSED: BitField = BitField::in_u32("aux_start_paused", 0, 1);
    /// `aux_pause`: on overflow, pause AUX area tracing.
    pub const PAUSE: BitField = BitField::in_u32("aux_pause", 1, 1);
    /// `aux_resume`: on overflow, resume AUX area tracing.
    pub const RESUME: BitField = BitField::in_u32("aux_resume", 2, 1);
    /// `__reserved_3`: must be zero.
    pub const RESERVED_3: BitField = BitField::in_u32("__reserved_3", 3, 29);
    /// Every field of the word, in declaration order.
    pub const ALL: &[BitField] = &[START_PAUSED, PAUSE, RESUME, RESERVED_3];
}

/// The capability bits of `perf_event_mmap_page.capabilities` (64-bit word).
pub mod mmap_caps {
    use super::BitField;

    /// `cap_bit0`: always 0 (deprecated).
    pub const CAP_BIT0: BitField = BitField::in_u64("cap_bit0", 0, 1);
    /// `cap_bit0_is_deprecated`: always 1, says the bits below are valid.
    pub const CAP_BIT0_IS_DEPRECATED: BitField = BitField::in_u64("cap_bit0_is_deprecated", 1, 1);
    /// `cap_user_rdpmc`: user space may read the counter (rdpmc / mrs / csrr).
    pub const CAP_USER_RDPMC: BitField = BitField::in_u64("cap_user_rdpmc", 2, 1);
    /// `cap_user_time`: `time_shift`, `time_mult`, `time_offset` are valid.
    pub const CAP_USER_TIME: BitField = BitField::in_u64("cap_user_time", 3, 1);
    /// `cap_user_time_zero`: `time_zero` is valid.
    pub const CAP_USER_TIME_ZERO: BitField = BitField::in_u64("cap_user_time_zero", 4, 1);
    /// `cap_user_time_short`: `time_cycles`, `time_mask` are valid.
    pub const CAP_USER_TIME_SHORT: BitField = BitField::in_u64("cap_user_time_short", 5, 1);
    /// `cap_____res`: reserved.
    pub const RESERVED: BitField = BitField::in_u64("cap_____res", 6, 58);
    /// Every field of the word, in declaration order.
    pub const ALL: &[BitField] = &[
        CAP_BIT0,
        CAP_BIT0_IS_DEPRECATED,
        CAP_USER_RDPMC,
        CAP_USER_TIME,
        CAP_USER_TIME_ZERO,
        CAP_USER_TIME_SHORT,
        RESERVED,
    ];
}
