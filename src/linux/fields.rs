//! The raw structs by their kernel names: the anonymous unions of
//! `perf_event_attr` read and written by member name, the flag word whole,
//! and the struct as bytes, so no code needs bindgen's `__bindgen_anon_N` /
//! `_bitfield_1` names (which depend on the order of anonymous members and
//! can change when the bindings are regenerated from a newer header).
//!
//! Every union here is of plain integers of one size, so reading any member
//! is reading the same bytes: the getters are safe.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

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

/// Getters and setters of one bit field of a word reached through a union
/// member, named after the kernel's field.
macro_rules! word_bits {
    ($ty:ty, $word:ident / $set_word:ident : $w:ty, $module:path {
        $($(#[$doc:meta])* $get:ident / $set:ident => $field:ident;)*
    }) => {
        impl $ty {
            $(
                $(#[$doc])*
                #[inline]
                pub const fn $get(&self) -> $w {
                    use $module as m;
                    m::$field.decode(self.$word() as u64) as $w
                }

                #[doc = concat!("Sets `", stringify!($get), "` (see [`Self::", stringify!($get), "`]).")]
                #[inline]
                pub fn $set(&mut self, value: $w) {
                    use $module as m;
                    let word = self.$word() as u64;
                    let word = (word & !m::$field.mask()) | m::$field.encode(value as u64);
                    self.$set_word(word as $w);
                }
            )*
        }
    };
}

word_bits!(sys::perf_event_attr, aux_action / set_aux_action: u32, crate::abi::bitfield::aux_action {
    /// `aux_start_paused`: the AUX event starts paused (since Linux 6.13).
    aux_start_paused / set_aux_start_paused => START_PAUSED;
    /// `aux_pause`: on overflow, pause the group's AUX event (since Linux 6.13).
    aux_pause / set_aux_pause => PAUSE;
    /// `aux_resume`: on overflow, resume the group's AUX event (since Linux 6.13).
    aux_resume / set_aux_resume => RESUME;
});

impl sys::perf_event_mmap_page {
    /// The `capabilities` word (the union of the word and its bit fields;
    /// since Linux 3.12, before that only `cap_usr_time` / `cap_usr_rdpmc`
    /// in bit 0 and 1).
    ///
    /// On a copy of the page. The live, mapped page is written by the
    /// kernel at any time: read it with the seqlock protocol of
    /// [`crate::userpage`], never through a reference.
    #[inline]
    pub const fn capabilities(&self) -> u64 {
        // SAFETY: both members are the same 64 bits of plain integer storage.
        unsafe { self.__bindgen_anon_1.capabilities }
    }

    /// Sets the `capabilities` word (for simulations of the kernel's side).
    #[inline]
    pub fn set_capabilities(&mut self, word: u64) {
        self.__bindgen_anon_1.capabilities = word;
    }
}

word_bits!(sys::perf_event_mmap_page, capabilities / set_capabilities: u64, crate::abi::bitfield::mmap_caps {
    /// `cap_bit0`: always 0 since Linux 3.12 (was `cap_usr_time`/`cap_usr_rdpmc`).
    cap_bit0 / set_cap_bit0 => CAP_BIT0;
    /// `cap_bit0_is_deprecated`: 1 since Linux 3.12: the bits below are valid.
    cap_bit0_is_deprecated / set_cap_bit0_is_deprecated => CAP_BIT0_IS_DEPRECATED;
    /// `cap_user_rdpmc`: user space may read the counter (since Linux 3.12).
    cap_user_rdpmc / set_cap_user_rdpmc => CAP_USER_RDPMC;
    /// `cap_user_time`: `time_shift`, `time_mult`, `time_offset` are valid (since Linux 3.12).
    cap_user_time / set_cap_user_time => CAP_USER_TIME;
    /// `cap_user_time_zero`: `time_zero` is valid (since Linux 3.12).
    cap_user_time_zero / set_cap_user_time_zero => CAP_USER_TIME_ZERO;
    /// `cap_user_time_short`: `time_cycles`, `time_mask` are valid (since Linux 5.12).
    cap_user_time_short / set_cap_user_time_short => CAP_USER_TIME_SHORT;
});

/// Members of a union whose second member is bindgen's bit-field struct:
/// the word, and each field through bindgen's own accessor on a copy.
macro_rules! union_bitfields {
    ($ty:ty, $word:ident / $set_word:ident : $w:ty {
        $($(#[$doc:meta])* $get:ident / $set:ident;)*
    }) => {
        impl $ty {
            #[doc = concat!("The whole word, `", stringify!($word), "`.")]
            #[inline]
            pub const fn $word(&self) -> $w {
                // SAFETY: both members are the same plain integer storage.
                unsafe { self.$word }
            }

            #[doc = concat!("Sets the whole word, `", stringify!($word), "`.")]
            #[inline]
            pub fn $set_word(&mut self, value: $w) {
                self.$word = value;
            }

            $(
                $(#[$doc])*
                #[inline]
                pub fn $get(&self) -> u64 {
                    // SAFETY: both members are the same plain integer
                    // storage: any bit pattern is a valid struct value.
                    (unsafe { self.__bindgen_anon_1 }).$get() as u64
                }

                #[doc = concat!("Sets `", stringify!($get), "`.")]
                #[inline]
                pub fn $set(&mut self, value: u64) {
                    // SAFETY: as in the getter.
                    let mut bits = unsafe { self.__bindgen_anon_1 };
                    bits.$set(value as _);
                    self.__bindgen_anon_1 = bits;
                }
            )*
        }
    };
}

union_bitfields!(sys::perf_mem_data_src, val / set_val: u64 {
    /// `mem_op`: `PERF_MEM_OP_*`, the type of access.
    mem_op / set_mem_op;
    /// `mem_lvl`: `PERF_MEM_LVL_*`, the memory hierarchy level (deprecated for `mem_lvl_num`).
    mem_lvl / set_mem_lvl;
    /// `mem_snoop`: `PERF_MEM_SNOOP_*`.
    mem_snoop / set_mem_snoop;
    /// `mem_lock`: `PERF_MEM_LOCK_*`.
    mem_lock / set_mem_lock;
    /// `mem_dtlb`: `PERF_MEM_TLB_*`.
    mem_dtlb / set_mem_dtlb;
    /// `mem_lvl_num`: `PERF_MEM_LVLNUM_*` (since Linux 4.14).
    mem_lvl_num / set_mem_lvl_num;
    /// `mem_remote`: remote access (since Linux 4.14).
    mem_remote / set_mem_remote;
    /// `mem_snoopx`: `PERF_MEM_SNOOPX_*` (since Linux 4.14).
    mem_snoopx / set_mem_snoopx;
    /// `mem_blk`: `PERF_MEM_BLK_*`, why the access was blocked (since Linux 5.12).
    mem_blk / set_mem_blk;
    /// `mem_hops`: `PERF_MEM_HOPS_*` (since Linux 5.16).
    mem_hops / set_mem_hops;
    /// `mem_region`: `PERF_MEM_REGION_*` (since Linux 6.17).
    mem_region / set_mem_region;
});

impl sys::perf_sample_weight {
    /// `full`: the whole 64-bit weight (`PERF_SAMPLE_WEIGHT`).
    #[inline]
    pub const fn full(&self) -> u64 {
        // SAFETY: both members are the same 64 bits of plain integers.
        unsafe { self.full }
    }

    /// Sets `full`.
    #[inline]
    pub fn set_full(&mut self, value: u64) {
        self.full = value;
    }

    /// `var1_dw`, `var2_w`, `var3_w`: the three parts of
    /// `PERF_SAMPLE_WEIGHT_STRUCT` (since Linux 5.12).
    #[inline]
    pub const fn parts(&self) -> sys::perf_sample_weight__bindgen_ty_1 {
        // SAFETY: as in `full`.
        unsafe { self.__bindgen_anon_1 }
    }

    /// Sets the three parts.
    #[inline]
    pub fn set_parts(&mut self, parts: sys::perf_sample_weight__bindgen_ty_1) {
        self.__bindgen_anon_1 = parts;
    }
}
