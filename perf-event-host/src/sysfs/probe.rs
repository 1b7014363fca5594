//! kprobe and uprobe events through the `kprobe` and `uprobe` PMUs (since
//! Linux 4.17): the probe lives as long as the fd, no tracefs needed.
//!
//! perf_event_open(2): "For kprobe: use kprobe_func and probe_offset, or use
//! kprobe_addr and leave kprobe_func as NULL. For uprobe: use uprobe_path and
//! probe_offset." Set `retprobe` (the PMU's `format/retprobe`, bit 0 of
//! `config`) for a kretprobe / uretprobe. `kprobe_func` and `uprobe_path`
//! share storage with `config1`, `kprobe_addr` and `probe_offset` with
//! `config2`.

use super::encode::{EncodeError, Encoder};
use super::pmu::Pmu;
use super::terms::{Term, TermValue};
use core::ffi::CStr;
use core::marker::PhantomData;
use perf_event_core::attr::Attr;
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenError, OpenFlags, Scope};

#[derive(Clone, Copy, Debug)]
enum Target<'t> {
    KprobeFunc { func: &'t CStr, offset: u64 },
    KprobeAddr { addr: u64 },
    Uprobe { path: &'t CStr, offset: u64 },
}

/// A kprobe or uprobe to create.
#[derive(Clone, Copy, Debug)]
pub struct Probe<'t> {
    target: Target<'t>,
    retprobe: bool,
    ref_ctr_offset: Option<u64>,
}

/// A probe's attr, borrowing the function name or path its pointer names.
#[derive(Clone, Copy, Debug)]
pub struct ProbeEvent<'t> {
    attr: Attr,
    _target: PhantomData<&'t CStr>,
}

impl<'t> Probe<'t> {
    /// A uprobe at file offset `offset` of the binary `path` (the offset in
    /// the file, not the virtual address: for an ELF symbol, its address
    /// minus its `PT_LOAD` segment's `p_vaddr` plus `p_offset`).
    pub fn uprobe(path: &'t CStr, offset: u64) -> Probe<'t> {
        Probe {
            target: Target::Uprobe { path, offset },
            retprobe: false,
            ref_ctr_offset: None,
        }
    }

    /// A kprobe at `func + offset` (a kernel symbol; needs CAP_PERFMON or
    /// CAP_SYS_ADMIN).
    pub fn kprobe(func: &'t CStr, offset: u64) -> Probe<'t> {
        Probe {
            target: Target::KprobeFunc { func, offset },
            retprobe: false,
            ref_ctr_offset: None,
        }
    }

    /// A kprobe at kernel address `addr`.
    pub fn kprobe_addr(addr: u64) -> Probe<'t> {
        Probe {
            target: Target::KprobeAddr { addr },
            retprobe: false,
            ref_ctr_offset: None,
        }
    }

    /// Fire on return instead of entry (kretprobe / uretprobe): sets the
    /// PMU's `retprobe` format bit.
    pub fn retprobe(mut self, on: bool) -> Probe<'t> {
        self.retprobe = on;
        self
    }

    /// uprobe only: the offset of an SDT semaphore the kernel increments
    /// while the probe exists (`format/ref_ctr_offset`, since Linux 4.20).
    pub fn ref_ctr_offset(mut self, offset: u64) -> Probe<'t> {
        self.ref_ctr_offset = Some(offset);
        self
    }

    /// The attr for `pmu` (the `kprobe` or `uprobe` PMU): its type, the
    /// format bits asked for, and the target pointer and offset. Errors name
    /// a format the PMU lacks.
    pub fn event(&self, pmu: &Pmu) -> Result<ProbeEvent<'t>, EncodeError> {
        let mut encoder = Encoder::new(pmu);
        if self.retprobe {
            encoder.term(&Term {
                name: "retprobe",
                value: TermValue::Flag,
                at: 0,
                value_at: 0,
            })?;
        }
        if let Some(n) = self.ref_ctr_offset {
            encoder.term(&Term {
                name: "ref_ctr_offset",
                value: TermValue::Number(n),
                at: 0,
                value_at: 0,
            })?;
        }
        let words = encoder.finish()?;
        let base = Attr::new(perf_event_core::event::Event::pmu(
            pmu.type_id(),
            words.0[0],
        ));
        let attr = match self.target {
            Target::KprobeFunc { func, offset } => base
                .kprobe_func(func.as_ptr() as usize as u64)
                .probe_offset(offset),
            Target::KprobeAddr { addr } => base.kprobe_func(0).kprobe_addr(addr),
            Target::Uprobe { path, offset } => base
                .uprobe_path(path.as_ptr() as usize as u64)
                .probe_offset(offset),
        };
        Ok(ProbeEvent {
            attr,
            _target: PhantomData,
        })
    }
}

impl<'t> ProbeEvent<'t> {
    /// The attr. It holds a pointer to the function name or path: pass it
    /// to the kernel while that string lives (the kernel copies it during
    /// `perf_event_open`); [`ProbeEvent::open`] makes sure of it.
    pub fn attr(&self) -> Attr {
        self.attr
    }

    /// Changes the attr's other fields (`disabled`, `sample_period`, ...).
    pub fn with(mut self, change: impl FnOnce(Attr) -> Attr) -> ProbeEvent<'t> {
        self.attr = change(self.attr);
        self
    }

    /// Opens the probe (while the borrowed name or path is alive).
    pub fn open(
        &self,
        scope: Scope,
        group: Option<&EventFd>,
        flags: OpenFlags,
    ) -> Result<EventFd, OpenError> {
        open(&self.attr, scope, group, flags)
    }
}
