//! `perf_event_attr`, built by `const fn` and sized for the kernel at hand.
//!
//! [`Attr`] wraps [`sys::perf_event_attr`] with a builder whose every method
//! is `const`, so an attr can be a `const` item:
//!
//! ```
//! use perf_event_core::attr::Attr;
//! use perf_event_core::abi::AttrSize;
//! use perf_event_core::event::{Event, Software};
//!
//! const TASK_CLOCK: Attr = Attr::new(Event::Software(Software::TaskClock))
//!     .disabled(true)
//!     .exclude_kernel(true)
//!     .read_format(perf_event_core::read_format::ReadFormat::TOTAL_TIME_ENABLED);
//!
//! // Only first-version fields are set: 64 bytes, right on every kernel.
//! assert_eq!(TASK_CLOCK.size(), AttrSize::Ver0);
//! assert_eq!(TASK_CLOCK.to_raw().size, 64);
//! ```
//!
//! Flags are set as masks over the raw flag word ([`crate::abi::bitfield`]),
//! because bindgen's bitfield setters are not `const`. `attr.size` is never
//! set by hand: [`Attr::to_raw`] writes the smallest `PERF_ATTR_SIZE_VERn`
//! that covers every non-zero byte, so code built against the 7.2 ABI opens
//! events on older kernels as long as it uses nothing newer.

mod check;
mod diagnose;
mod perf_print;
mod since;

pub use check::AttrError;
pub use diagnose::{BeyondKernel, Diagnosis};
pub use perf_print::PerfPrint;
pub use since::Requirement;

use crate::abi::bitfield::{attr_flags as flag, aux_action, BitField};
use crate::abi::{AttrSize, BranchSampleType, SampleType};
use crate::event::Event;
use crate::read_format::ReadFormat;
use crate::sys;

/// A `perf_event_attr` under construction. See the [module docs](self).
#[derive(Clone, Copy)]
pub struct Attr {
    raw: sys::perf_event_attr,
    /// A value the builder could not store (reported by [`Attr::check`]).
    invalid: Option<AttrError>,
}

impl core::fmt::Debug for Attr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Attr")
            .field("type", &self.raw.type_)
            .field("config", &self.raw.config)
            .field("flags", &format_args!("{:#018x}", self.flags()))
            .field("size", &self.size())
            .finish_non_exhaustive()
    }
}

/// `sizeof(struct perf_event_attr)` of the vendored ABI.
const RAW_SIZE: usize = core::mem::size_of::<sys::perf_event_attr>();

impl Attr {
    /// An attr for `event`, every other field zero (counting, enabled, all
    /// privilege levels).
    pub const fn new(event: Event) -> Attr {
        let raw = sys::perf_event_attr::ZERO;
        let mut attr = Attr { raw, invalid: None };
        attr.raw.type_ = event.type_id();
        attr.raw.config = event.config();
        match event {
            Event::Breakpoint { kind, addr, len } => {
                attr.raw.bp_type = kind as u32;
                attr = attr.bp_addr(addr).bp_len(len);
            }
            Event::Pmu {
                config1,
                config2,
                config3,
                config4,
                ..
            } => {
                attr = attr
                    .config1(config1)
                    .config2(config2)
                    .config3(config3)
                    .config4(config4);
            }
            _ => {}
        }
        attr
    }

    /// Wraps a raw attr (its `size` field is ignored and recomputed).
    pub const fn from_raw(raw: sys::perf_event_attr) -> Attr {
        Attr { raw, invalid: None }
    }

    /// The attr as the kernel reads it, with `size` set to [`Attr::size`].
    pub const fn to_raw(&self) -> sys::perf_event_attr {
        let mut raw = self.raw;
        raw.size = self.size().bytes();
        raw
    }

    /// The raw bytes, `size` field as stored (zero unless set by `from_raw`).
    pub(crate) const fn bytes(&self) -> [u8; RAW_SIZE] {
        self.raw.to_bytes()
    }

    /// The smallest published size that covers every non-zero byte other
    /// than `size` itself (at least [`AttrSize::Ver0`]).
    pub const fn size(&self) -> AttrSize {
        let bytes = self.bytes();
        let mut end = RAW_SIZE;
        while end > 0 && (bytes[end - 1] == 0 || (end > 4 && end <= 8)) {
            end -= 1;
        }
        match AttrSize::covering(end) {
            Some(size) => size,
            None => AttrSize::LATEST,
        }
    }

    /// Whether the event needs a hardware PMU (hardware, cache and raw
    /// events; absent in most virtual machines).
    pub const fn needs_hardware_pmu(&self) -> bool {
        matches!(
            self.raw.type_,
            sys::PERF_TYPE_HARDWARE | sys::PERF_TYPE_HW_CACHE | sys::PERF_TYPE_RAW
        )
    }

    /// The `read_format` word.
    pub const fn read_format_word(&self) -> u64 {
        self.raw.read_format
    }

    /// `sample_type` as a typed set (set it with [`Attr::sample_type`]).
    pub const fn get_sample_type(&self) -> SampleType {
        SampleType(self.raw.sample_type)
    }

    /// `read_format` as a typed set (set it with [`Attr::read_format`]).
    pub const fn get_read_format(&self) -> ReadFormat {
        ReadFormat(self.raw.read_format)
    }

    /// `branch_sample_type` as a typed set (set it with
    /// [`Attr::branch_sample_type`]).
    pub const fn get_branch_sample_type(&self) -> BranchSampleType {
        BranchSampleType(self.raw.branch_sample_type)
    }

    /// `sample_type`: what each sample records (`PERF_SAMPLE_*`), e.g.
    /// `.sample_type(SampleType::IP.union(SampleType::TID))`; the raw bits
    /// with [`Attr::sample_type_raw`].
    pub const fn sample_type(mut self, set: SampleType) -> Attr {
        self.raw.sample_type = set.0;
        self
    }

    /// `read_format`: what `read(2)` returns (`PERF_FORMAT_*`), e.g.
    /// `.read_format(ReadFormat::TOTAL_TIME_ENABLED)`; the raw bits with
    /// [`Attr::read_format_raw`].
    pub const fn read_format(mut self, set: ReadFormat) -> Attr {
        self.raw.read_format = set.0;
        self
    }

    /// `branch_sample_type`: which branches a sample's branch stack
    /// records (`PERF_SAMPLE_BRANCH_*`, since Linux 3.4); the raw bits with
    /// [`Attr::branch_sample_type_raw`].
    pub const fn branch_sample_type(mut self, set: BranchSampleType) -> Attr {
        self.raw.branch_sample_type = set.0;
        self
    }

    /// The raw flag word (the 64 bits after `read_format`).
    pub const fn flags(&self) -> u64 {
        self.raw.flag_word()
    }

    /// Replaces the raw flag word.
    pub const fn with_flags(mut self, word: u64) -> Attr {
        self.raw._bitfield_1 = sys::__BindgenBitfieldUnit::new(word.to_ne_bytes());
        self
    }

    /// Sets or clears a one-bit flag, or stores `value` in a wider field.
    pub const fn flag(self, field: BitField, value: u64) -> Attr {
        let word = (self.flags() & !field.mask()) | field.encode(value);
        self.with_flags(word)
    }

    /// Reads a flag field.
    pub const fn get_flag(&self, field: BitField) -> u64 {
        field.decode(self.flags())
    }

    /// `precise_ip`: the skid constraint, 0 (arbitrary skid) to 3 (zero
    /// skid required); since Linux 2.6.35. Values above 3 are reported by
    /// [`Attr::check`] as [`AttrError::PreciseIp`].
    pub const fn precise_ip(mut self, level: u8) -> Attr {
        if level > 3 {
            self.invalid = Some(AttrError::PreciseIp { requested: level });
            return self;
        }
        self.flag(flag::PRECISE_IP, level as u64)
    }

    /// `sample_period`: sample every `period` events (clears `freq`).
    pub const fn sample_period(mut self, period: u64) -> Attr {
        self.raw.__bindgen_anon_1 = sys::perf_event_attr__bindgen_ty_1 {
            sample_period: period,
        };
        self.flag(flag::FREQ, 0)
    }

    /// `sample_freq`: sample `hz` times a second (sets `freq`).
    pub const fn sample_freq(mut self, hz: u64) -> Attr {
        self.raw.__bindgen_anon_1 = sys::perf_event_attr__bindgen_ty_1 { sample_freq: hz };
        self.flag(flag::FREQ, 1)
    }

    /// `wakeup_events`: wake poll() every `n` samples (clears `watermark`).
    pub const fn wakeup_events(mut self, n: u32) -> Attr {
        self.raw.__bindgen_anon_2 = sys::perf_event_attr__bindgen_ty_2 { wakeup_events: n };
        self.flag(flag::WATERMARK, 0)
    }

    /// `wakeup_watermark`: wake poll() at `bytes` of ring data (sets `watermark`).
    pub const fn wakeup_watermark(mut self, bytes: u32) -> Attr {
        self.raw.__bindgen_anon_2 = sys::perf_event_attr__bindgen_ty_2 {
            wakeup_watermark: bytes,
        };
        self.flag(flag::WATERMARK, 1)
    }

    /// `clockid`: the clock of sample timestamps (sets `use_clockid`; since Linux 4.1).
    pub const fn clockid(mut self, clock: i32) -> Attr {
        self.raw.clockid = clock;
        self.flag(flag::USE_CLOCKID, 1)
    }

    /// The `aux_action` word at once (`aux_start_paused | aux_pause | aux_resume`).
    pub const fn aux_action(mut self, word: u32) -> Attr {
        self.raw.__bindgen_anon_5 = sys::perf_event_attr__bindgen_ty_5 { aux_action: word };
        self
    }

    /// The `aux_action` word.
    pub const fn get_aux_action(&self) -> u32 {
        self.raw.aux_action()
    }

    const fn aux_bit(self, field: BitField, on: bool) -> Attr {
        let word = self.get_aux_action() as u64;
        let word = (word & !field.mask()) | field.encode(on as u64);
        self.aux_action(word as u32)
    }

    /// `aux_start_paused`: start AUX area tracing paused (since Linux 6.13).
    pub const fn aux_start_paused(self, on: bool) -> Attr {
        self.aux_bit(aux_action::START_PAUSED, on)
    }

    /// `aux_pause`: on overflow, pause AUX area tracing (since Linux 6.13).
    pub const fn aux_pause(self, on: bool) -> Attr {
        self.aux_bit(aux_action::PAUSE, on)
    }

    /// `aux_resume`: on overflow, resume AUX area tracing (since Linux 6.13).
    pub const fn aux_resume(self, on: bool) -> Attr {
        self.aux_bit(aux_action::RESUME, on)
    }
}

/// Setters of plain fields: `name(value)` stores `value`.
macro_rules! plain {
    ($($(#[$doc:meta])* $name:ident: $ty:ty => $($path:ident).+;)*) => {
        impl Attr {
            $( $(#[$doc])* pub const fn $name(mut self, value: $ty) -> Attr {
                self.raw.$($path).+ = value;
                self
            } )*
        }
    };
}

plain! {
    /// `config`: the event within its type.
    config: u64 => config;
    /// `sample_type` as raw `PERF_SAMPLE_*` bits (bits this crate has no
    /// name for included); [`Attr::sample_type`] takes the typed set.
    sample_type_raw: u64 => sample_type;
    /// `read_format` as raw `PERF_FORMAT_*` bits; [`Attr::read_format`]
    /// takes the typed set.
    read_format_raw: u64 => read_format;
    /// `branch_sample_type` as raw `PERF_SAMPLE_BRANCH_*` bits (since
    /// Linux 3.4); [`Attr::branch_sample_type`] takes the typed set.
    branch_sample_type_raw: u64 => branch_sample_type;
    /// `sample_regs_user`: user registers to sample, a mask of `asm/perf_regs.h` (since Linux 3.7).
    sample_regs_user: u64 => sample_regs_user;
    /// `sample_stack_user`: bytes of user stack to sample, a multiple of 8 (since Linux 3.7).
    sample_stack_user: u32 => sample_stack_user;
    /// `sample_regs_intr`: registers to sample at the interrupt (since Linux 3.19).
    sample_regs_intr: u64 => sample_regs_intr;
    /// `aux_watermark`: AUX bytes between wakeups (since Linux 4.1).
    aux_watermark: u32 => aux_watermark;
    /// `sample_max_stack`: callchain depth limit (since Linux 4.8).
    sample_max_stack: u16 => sample_max_stack;
    /// `aux_sample_size`: AUX bytes per sample (since Linux 5.5).
    aux_sample_size: u32 => aux_sample_size;
    /// `sig_data`: `si_perf_data` of SIGTRAP (since Linux 5.13).
    sig_data: u64 => sig_data;
    /// `config3`: extension of `config2` (since Linux 6.3).
    config3: u64 => config3;
    /// `config4`: extension of `config3` (since Linux 7.0).
    config4: u64 => config4;
    /// `bp_addr`: breakpoint address (since Linux 2.6.33).
    bp_addr: u64 => __bindgen_anon_3.bp_addr;
    /// `kprobe_func`: pointer to the kprobe's function name (since Linux 4.17).
    kprobe_func: u64 => __bindgen_anon_3.kprobe_func;
    /// `uprobe_path`: pointer to the uprobe's binary path (since Linux 4.17).
    uprobe_path: u64 => __bindgen_anon_3.uprobe_path;
    /// `config1`: extension of `config` (since Linux 2.6.39).
    config1: u64 => __bindgen_anon_3.config1;
    /// `bp_len`: breakpoint length (since Linux 2.6.33).
    bp_len: u64 => __bindgen_anon_4.bp_len;
    /// `kprobe_addr`: kprobe address when `kprobe_func` is null (since Linux 4.17).
    kprobe_addr: u64 => __bindgen_anon_4.kprobe_addr;
    /// `probe_offset`: offset from `kprobe_func` or into `uprobe_path` (since Linux 4.17).
    probe_offset: u64 => __bindgen_anon_4.probe_offset;
    /// `config2`: extension of `config1` (since Linux 2.6.39).
    config2: u64 => __bindgen_anon_4.config2;
}

/// One-bit flag setters: `name(true)` sets the bit.
macro_rules! flags {
    ($($(#[$doc:meta])* $name:ident => $field:ident;)*) => {
        impl Attr {
            $( $(#[$doc])* pub const fn $name(self, on: bool) -> Attr {
                self.flag(flag::$field, on as u64)
            } )*
        }
    };
}

flags! {
    /// `disabled`: start disabled; enable with an ioctl or `enable_on_exec`.
    disabled => DISABLED;
    /// `inherit`: also count children created afterwards.
    inherit => INHERIT;
    /// `pinned`: always on the PMU; read() returns EOF when it cannot be.
    pinned => PINNED;
    /// `exclusive`: the group is alone on the PMU when on.
    exclusive => EXCLUSIVE;
    /// `exclude_user`: do not count user space.
    exclude_user => EXCLUDE_USER;
    /// `exclude_kernel`: do not count the kernel.
    exclude_kernel => EXCLUDE_KERNEL;
    /// `exclude_hv`: do not count the hypervisor.
    exclude_hv => EXCLUDE_HV;
    /// `exclude_idle`: do not count while idle.
    exclude_idle => EXCLUDE_IDLE;
    /// `mmap`: PERF_RECORD_MMAP for executable mappings.
    mmap => MMAP;
    /// `comm`: PERF_RECORD_COMM records.
    comm => COMM;
    /// `inherit_stat`: save per-task counts on context switch.
    inherit_stat => INHERIT_STAT;
    /// `enable_on_exec`: enable at the next exec (a mini `perf stat`).
    enable_on_exec => ENABLE_ON_EXEC;
    /// `task`: PERF_RECORD_FORK / EXIT records.
    task => TASK;
    /// `mmap_data`: PERF_RECORD_MMAP for data mappings (since Linux 2.6.36).
    mmap_data => MMAP_DATA;
    /// `sample_id_all`: sample_id trailer on non-sample records (since Linux 2.6.38).
    sample_id_all => SAMPLE_ID_ALL;
    /// `exclude_host`: do not count the host (since Linux 3.2).
    exclude_host => EXCLUDE_HOST;
    /// `exclude_guest`: do not count guests (since Linux 3.2).
    exclude_guest => EXCLUDE_GUEST;
    /// `exclude_callchain_kernel`: no kernel callchains (since Linux 3.7).
    exclude_callchain_kernel => EXCLUDE_CALLCHAIN_KERNEL;
    /// `exclude_callchain_user`: no user callchains (since Linux 3.7).
    exclude_callchain_user => EXCLUDE_CALLCHAIN_USER;
    /// `mmap2`: MMAP records in the PERF_RECORD_MMAP2 format; `mmap` (or
    /// `mmap_data`) must be set too, or no record is written (since Linux 3.16).
    mmap2 => MMAP2;
    /// `comm_exec`: mark COMM records caused by exec (since Linux 3.16).
    comm_exec => COMM_EXEC;
    /// `context_switch`: PERF_RECORD_SWITCH records (since Linux 4.3).
    context_switch => CONTEXT_SWITCH;
    /// `write_backward`: overwrite mode, ring written backward (since Linux 4.6).
    write_backward => WRITE_BACKWARD;
    /// `namespaces`: PERF_RECORD_NAMESPACES records (since Linux 4.11).
    namespaces => NAMESPACES;
    /// `ksymbol`: PERF_RECORD_KSYMBOL records (since Linux 5.1).
    ksymbol => KSYMBOL;
    /// `bpf_event`: PERF_RECORD_BPF_EVENT records (since Linux 5.1).
    bpf_event => BPF_EVENT;
    /// `aux_output`: AUX records instead of events (since Linux 5.4).
    aux_output => AUX_OUTPUT;
    /// `cgroup`: PERF_RECORD_CGROUP records (since Linux 5.7).
    cgroup => CGROUP;
    /// `text_poke`: PERF_RECORD_TEXT_POKE records (since Linux 5.9).
    text_poke => TEXT_POKE;
    /// `build_id`: MMAP2 records carry a build id (since Linux 5.12).
    build_id => BUILD_ID;
    /// `inherit_thread`: inherit to threads only; needs `inherit` (since Linux 5.13).
    inherit_thread => INHERIT_THREAD;
    /// `remove_on_exec`: remove the event on exec (since Linux 5.13).
    remove_on_exec => REMOVE_ON_EXEC;
    /// `sigtrap`: SIGTRAP on overflow; needs `remove_on_exec` (since Linux 5.13).
    sigtrap => SIGTRAP;
    /// `defer_callchain`: defer user callchains to PERF_RECORD_CALLCHAIN_DEFERRED (since Linux 6.19).
    defer_callchain => DEFER_CALLCHAIN;
    /// `defer_output`: output PERF_RECORD_CALLCHAIN_DEFERRED records (since Linux 6.19).
    defer_output => DEFER_OUTPUT;
}

#[cfg(test)]
mod tests;
