//! `Debug` for the raw structs bindgen cannot derive it for (those holding
//! unions): every field by its kernel name, each union as all of its
//! members (they are the same bytes read as the kernel names them), and
//! bit fields by name.

#![allow(unsafe_code)] // every unsafe block here says why it is sound (SAFETY:)

use crate::abi::bitfield::{self, BitField};
use crate::sys;
use core::fmt;

/// Bit fields of `word` as a map of their names to their values.
struct Bits(&'static [BitField], u64);

impl fmt::Debug for Bits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for field in self.0 {
            map.entry(&field.name, &field.decode(self.1));
        }
        map.finish()
    }
}

impl fmt::Debug for sys::perf_event_attr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("perf_event_attr")
            .field("type", &self.type_)
            .field("size", &self.size)
            .field("config", &format_args!("{:#x}", self.config))
            .field("sample_period", &self.sample_period())
            .field("sample_freq", &self.sample_freq())
            .field("sample_type", &format_args!("{:#x}", self.sample_type))
            .field("read_format", &format_args!("{:#x}", self.read_format))
            .field("flags", &Bits(bitfield::attr_flags::ALL, self.flag_word()))
            .field("wakeup_events", &self.wakeup_events())
            .field("wakeup_watermark", &self.wakeup_watermark())
            .field("bp_type", &self.bp_type)
            .field("bp_addr", &format_args!("{:#x}", self.bp_addr()))
            .field("kprobe_func", &format_args!("{:#x}", self.kprobe_func()))
            .field("uprobe_path", &format_args!("{:#x}", self.uprobe_path()))
            .field("config1", &format_args!("{:#x}", self.config1()))
            .field("bp_len", &self.bp_len())
            .field("kprobe_addr", &format_args!("{:#x}", self.kprobe_addr()))
            .field("probe_offset", &self.probe_offset())
            .field("config2", &format_args!("{:#x}", self.config2()))
            .field(
                "branch_sample_type",
                &format_args!("{:#x}", self.branch_sample_type),
            )
            .field(
                "sample_regs_user",
                &format_args!("{:#x}", self.sample_regs_user),
            )
            .field("sample_stack_user", &self.sample_stack_user)
            .field("clockid", &self.clockid)
            .field(
                "sample_regs_intr",
                &format_args!("{:#x}", self.sample_regs_intr),
            )
            .field("aux_watermark", &self.aux_watermark)
            .field("sample_max_stack", &self.sample_max_stack)
            .field("__reserved_2", &self.__reserved_2)
            .field("aux_sample_size", &self.aux_sample_size)
            .field(
                "aux_action",
                &Bits(bitfield::aux_action::ALL, self.aux_action() as u64),
            )
            .field("sig_data", &format_args!("{:#x}", self.sig_data))
            .field("config3", &format_args!("{:#x}", self.config3))
            .field("config4", &format_args!("{:#x}", self.config4))
            .finish()
    }
}

impl fmt::Debug for sys::perf_event_mmap_page {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("perf_event_mmap_page")
            .field("version", &self.version)
            .field("compat_version", &self.compat_version)
            .field("lock", &self.lock)
            .field("index", &self.index)
            .field("offset", &self.offset)
            .field("time_enabled", &self.time_enabled)
            .field("time_running", &self.time_running)
            .field(
                "capabilities",
                &Bits(bitfield::mmap_caps::ALL, self.capabilities()),
            )
            .field("pmc_width", &self.pmc_width)
            .field("time_shift", &self.time_shift)
            .field("time_mult", &self.time_mult)
            .field("time_offset", &self.time_offset)
            .field("time_zero", &self.time_zero)
            .field("size", &self.size)
            .field("time_cycles", &self.time_cycles)
            .field("time_mask", &format_args!("{:#x}", self.time_mask))
            .field("data_head", &self.data_head)
            .field("data_tail", &self.data_tail)
            .field("data_offset", &self.data_offset)
            .field("data_size", &self.data_size)
            .field("aux_head", &self.aux_head)
            .field("aux_tail", &self.aux_tail)
            .field("aux_offset", &self.aux_offset)
            .field("aux_size", &self.aux_size)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for sys::perf_mem_data_src {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("perf_mem_data_src")
            .field("val", &format_args!("{:#x}", self.val()))
            .field("mem_op", &self.mem_op())
            .field("mem_lvl", &self.mem_lvl())
            .field("mem_snoop", &self.mem_snoop())
            .field("mem_lock", &self.mem_lock())
            .field("mem_dtlb", &self.mem_dtlb())
            .field("mem_lvl_num", &self.mem_lvl_num())
            .field("mem_remote", &self.mem_remote())
            .field("mem_snoopx", &self.mem_snoopx())
            .field("mem_blk", &self.mem_blk())
            .field("mem_hops", &self.mem_hops())
            .field("mem_region", &self.mem_region())
            .finish()
    }
}

impl fmt::Debug for sys::perf_sample_weight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = self.parts();
        f.debug_struct("perf_sample_weight")
            .field("full", &self.full())
            .field("var1_dw", &parts.var1_dw)
            .field("var2_w", &parts.var2_w)
            .field("var3_w", &parts.var3_w)
            .finish()
    }
}

/// `Debug` for the anonymous unions themselves: every member.
macro_rules! union_debug {
    ($($ty:ident { $($member:ident),* })*) => {
        $(
            impl fmt::Debug for sys::$ty {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.debug_struct(stringify!($ty))
                        $(
                            // SAFETY: every member of this union is plain
                            // integer storage of the same size.
                            .field(stringify!($member), &unsafe { self.$member })
                        )*
                        .finish()
                }
            }
        )*
    };
}

union_debug! {
    perf_event_attr__bindgen_ty_1 { sample_period, sample_freq }
    perf_event_attr__bindgen_ty_2 { wakeup_events, wakeup_watermark }
    perf_event_attr__bindgen_ty_3 { bp_addr, kprobe_func, uprobe_path, config1 }
    perf_event_attr__bindgen_ty_4 { bp_len, kprobe_addr, probe_offset, config2 }
    perf_event_attr__bindgen_ty_5 { aux_action, __bindgen_anon_1 }
    perf_event_mmap_page__bindgen_ty_1 { capabilities, __bindgen_anon_1 }
}
