//! The raw structs by their kernel names: the anonymous unions of
//! `perf_event_attr` read and written by member name, the flag word whole,
//! and the struct as bytes, so no code needs bindgen's `__bindgen_anon_N` /
//! `_bitfield_1` names (which depend on the order of anonymous members and
//! can change when the bindings are regenerated from a newer header).
//!
//! Every union here is of plain integers of one size, so reading any member
//! is reading the same bytes: the getters are safe.

use crate::sys;

/// `sizeof(struct perf_event_attr)` of these bindings.
pub const ATTR_SIZE: usize = core::mem::size_of::<sys::perf_event_attr>();

/// Union members, read and written by their kernel names.
macro_rules! union_members {
    ($($(#[$doc:meta])* $get:ident / $set:ident : $ty:ty => $union:ident . $member:ident;)*) => {
        impl sys::perf_event_attr {
            $(
                $(#[$doc])*
                #[inline]
                pub const fn $get(&self) -> $ty {
                    // SAFETY: every member of this union is a plain integer
                    // of the same size: all bit patterns are valid for each.
                    unsafe { self.$union.$member }
                }

                #[doc = concat!("Sets `", stringify!($member), "` (see [`Self::", stringify!($get), "`]).")]
                #[inline]
                pub fn $set(&mut self, value: $ty) {
                    self.$union.$member = value;
                }
            )*
        }
    };
}

union_members! {
    /// `sample_period`: sample every N events (when `freq` is clear).
    sample_period / set_sample_period: u64 => __bindgen_anon_1.sample_period;
    /// `sample_freq`: samples a second (when `freq` is set).
    sample_freq / set_sample_freq: u64 => __bindgen_anon_1.sample_freq;
    /// `wakeup_events`: wake poll() every N samples (when `watermark` is clear).
    wakeup_events / set_wakeup_events: u32 => __bindgen_anon_2.wakeup_events;
    /// `wakeup_watermark`: wake poll() at N bytes of ring data (when `watermark` is set).
    wakeup_watermark / set_wakeup_watermark: u32 => __bindgen_anon_2.wakeup_watermark;
    /// `bp_addr`: breakpoint address (since Linux 2.6.33).
    bp_addr / set_bp_addr: u64 => __bindgen_anon_3.bp_addr;
    /// `kprobe_func`: pointer to the kprobe's function name (since Linux 4.17).
    kprobe_func / set_kprobe_func: u64 => __bindgen_anon_3.kprobe_func;
    /// `uprobe_path`: pointer to the uprobe's binary path (since Linux 4.17).
    uprobe_path / set_uprobe_path: u64 => __bindgen_anon_3.uprobe_path;
    /// `config1`: extension of `config` (since Linux 2.6.39).
    config1 / set_config1: u64 => __bindgen_anon_3.config1;
    /// `bp_len`: breakpoint length (since Linux 2.6.33).
    bp_len / set_bp_len: u64 => __bindgen_anon_4.bp_len;
    /// `kprobe_addr`: kprobe address when `kprobe_func` is null (since Linux 4.17).
    kprobe_addr / set_kprobe_addr: u64 => __bindgen_anon_4.kprobe_addr;
    /// `probe_offset`: offset from `kprobe_func` or into `uprobe_path` (since Linux 4.17).
    probe_offset / set_probe_offset: u64 => __bindgen_anon_4.probe_offset;
    /// `config2`: extension of `config1` (since Linux 2.6.39).
    config2 / set_config2: u64 => __bindgen_anon_4.config2;
    /// `aux_action`: the word holding `aux_start_paused`, `aux_pause`,
    /// `aux_resume` (since Linux 6.13).
    aux_action / set_aux_action: u32 => __bindgen_anon_5.aux_action;
}

impl sys::perf_event_attr {
    /// The all-zero attr (the kernel's "nothing set"; `size` 0 means
    /// `PERF_ATTR_SIZE_VER0`). The same value as `Default::default()`,
    /// usable in `const` context.
    pub const ZERO: sys::perf_event_attr = Self::from_bytes([0; ATTR_SIZE]);

    /// The attr's bytes, as the kernel reads them.
    #[inline]
    pub const fn to_bytes(&self) -> [u8; ATTR_SIZE] {
        // SAFETY: perf_event_attr is ATTR_SIZE bytes of integers with no
        // padding (its size is the sum of its fields, checked in abi::layout).
        unsafe { core::mem::transmute::<sys::perf_event_attr, [u8; ATTR_SIZE]>(*self) }
    }

    /// An attr from its bytes (any bytes are a valid attr: the struct is
    /// integers and unions of integers).
    #[inline]
    pub const fn from_bytes(bytes: [u8; ATTR_SIZE]) -> sys::perf_event_attr {
        // SAFETY: as in `to_bytes`: every bit pattern is a valid value.
        unsafe { core::mem::transmute::<[u8; ATTR_SIZE], sys::perf_event_attr>(bytes) }
    }

    /// The 64-bit flag word after `read_format` (`disabled` is bit 0 ...),
    /// in the layout [`crate::abi::bitfield`] describes.
    #[inline]
    pub const fn flag_word(&self) -> u64 {
        // SAFETY: the bitfield unit is exactly eight bytes of storage
        // (checked by abi::layout), any bit pattern valid.
        u64::from_ne_bytes(unsafe {
            core::mem::transmute::<sys::__BindgenBitfieldUnit<[u8; 8]>, [u8; 8]>(self._bitfield_1)
        })
    }

    /// Replaces the 64-bit flag word.
    #[inline]
    pub fn set_flag_word(&mut self, word: u64) {
        self._bitfield_1 = sys::__BindgenBitfieldUnit::new(word.to_ne_bytes());
    }
}
