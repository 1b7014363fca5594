//! The published sizes of `struct perf_event_attr` (`PERF_ATTR_SIZE_VERn`).
//!
//! User space tells the kernel how much of the attr it passes in `attr.size`.
//! A kernel accepts any size up to its own; for a larger size it accepts the
//! call only if every byte beyond its own size is zero, and otherwise fails
//! with E2BIG after writing its own size back into `attr.size`.

/// One published size of `struct perf_event_attr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum AttrSize {
    /// 64 bytes: the first published attr.
    Ver0 = 64,
    /// 72 bytes: adds `config2`.
    Ver1 = 72,
    /// 80 bytes: adds `branch_sample_type`.
    Ver2 = 80,
    /// 96 bytes: adds `sample_regs_user`, `sample_stack_user`, `clockid`.
    Ver3 = 96,
    /// 104 bytes: adds `sample_regs_intr`.
    Ver4 = 104,
    /// 112 bytes: adds `aux_watermark`, `sample_max_stack`.
    Ver5 = 112,
    /// 120 bytes: adds `aux_sample_size` and the `aux_action` word.
    Ver6 = 120,
    /// 128 bytes: adds `sig_data`.
    Ver7 = 128,
    /// 136 bytes: adds `config3`.
    Ver8 = 136,
    /// 144 bytes: adds `config4`.
    Ver9 = 144,
}

impl AttrSize {
    /// Every published size, smallest first.
    pub const ALL: [AttrSize; 10] = [
        AttrSize::Ver0,
        AttrSize::Ver1,
        AttrSize::Ver2,
        AttrSize::Ver3,
        AttrSize::Ver4,
        AttrSize::Ver5,
        AttrSize::Ver6,
        AttrSize::Ver7,
        AttrSize::Ver8,
        AttrSize::Ver9,
    ];

    /// The newest size this crate knows (the size of [`crate::sys::perf_event_attr`]).
    pub const LATEST: AttrSize = AttrSize::Ver9;

    /// The size in bytes.
    pub const fn bytes(self) -> u32 {
        self as u32
    }

    /// The `n` of `PERF_ATTR_SIZE_VERn`.
    pub const fn version(self) -> u32 {
        let mut i = 0;
        while i < Self::ALL.len() {
            if Self::ALL[i] as u32 == self as u32 {
                return i as u32;
            }
            i += 1;
        }
        unreachable!()
    }

    /// The C names of the named fields this size adds over the previous one
    /// (padding and reserved fields left out).
    pub const fn adds(self) -> &'static [&'static str] {
        match self {
            AttrSize::Ver0 => &[
                "type",
                "size",
                "config",
                "sample_period",
                "sample_freq",
                "sample_type",
                "read_format",
                "wakeup_events",
                "wakeup_watermark",
                "bp_type",
                "bp_addr",
                "kprobe_func",
                "uprobe_path",
                "config1",
            ],
            AttrSize::Ver1 => &["bp_len", "kprobe_addr", "probe_offset", "config2"],
            AttrSize::Ver2 => &["branch_sample_type"],
            AttrSize::Ver3 => &["sample_regs_user", "sample_stack_user", "clockid"],
            AttrSize::Ver4 => &["sample_regs_intr"],
            AttrSize::Ver5 => &["aux_watermark", "sample_max_stack"],
            AttrSize::Ver6 => &["aux_sample_size", "aux_action"],
            AttrSize::Ver7 => &["sig_data"],
            AttrSize::Ver8 => &["config3"],
            AttrSize::Ver9 => &["config4"],
        }
    }

    /// The smallest published size that holds `bytes` bytes, if any.
    pub const fn covering(bytes: usize) -> Option<AttrSize> {
        let mut i = 0;
        while i < Self::ALL.len() {
            if Self::ALL[i] as usize >= bytes {
                return Some(Self::ALL[i]);
            }
            i += 1;
        }
        None
    }
}
