//! The attr fields an event string decides, as tables of expectations
//! (`Want`) and the parser's results in the same shape (`got`), for the
//! event-string tests. Flag constants follow perf 6.1: `u` and `p` also set
//! `exclude_guest` unless `G` / `H` is written.
#![allow(dead_code)] // each test binary uses part of it

use perf_event_core::abi::bitfield::attr_flags as flag;
use perf_event_core::sys;

pub const EU: u64 = flag::EXCLUDE_USER.mask();
pub const EK: u64 = flag::EXCLUDE_KERNEL.mask();
pub const EH: u64 = flag::EXCLUDE_HV.mask();
pub const EI: u64 = flag::EXCLUDE_IDLE.mask();
pub const EHOST: u64 = flag::EXCLUDE_HOST.mask();
pub const EG: u64 = flag::EXCLUDE_GUEST.mask();
pub const PINNED: u64 = flag::PINNED.mask();
pub const EXCL: u64 = flag::EXCLUSIVE.mask();
pub const INHERIT: u64 = flag::INHERIT.mask();
pub const FREQ: u64 = flag::FREQ.mask();
pub const WB: u64 = flag::WRITE_BACKWARD.mask();
pub const ECU: u64 = flag::EXCLUDE_CALLCHAIN_USER.mask();
pub const P1: u64 = flag::PRECISE_IP.encode(1) | EG;
pub const P2: u64 = flag::PRECISE_IP.encode(2) | EG;
pub const P3: u64 = flag::PRECISE_IP.encode(3) | EG;
pub const U: u64 = EK | EH | EG;
pub const K: u64 = EU | EH;
pub const H: u64 = EU | EK;

pub const HW: u32 = sys::PERF_TYPE_HARDWARE;
pub const SW: u32 = sys::PERF_TYPE_SOFTWARE;
pub const TP: u32 = sys::PERF_TYPE_TRACEPOINT;
pub const CACHE: u32 = sys::PERF_TYPE_HW_CACHE;
pub const RAW: u32 = sys::PERF_TYPE_RAW;
pub const BP: u32 = sys::PERF_TYPE_BREAKPOINT;
pub const CALLCHAIN: u64 = sys::PERF_SAMPLE_CALLCHAIN as u64;
pub const TIME: u64 = sys::PERF_SAMPLE_TIME as u64;
pub const READ: u64 = sys::PERF_SAMPLE_READ as u64;
pub const ID: u64 = sys::PERF_FORMAT_ID as u64;
pub const GROUP: u64 = sys::PERF_FORMAT_GROUP as u64;
pub const L1D_MISS: u64 = 1 << 16; // L1-dcache, read, miss

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Want {
    pub ty: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
    pub flags: u64,
    pub period: u64,
    pub bp_type: u32,
    pub sample_type: u64,
    pub read_format: u64,
    pub branch: u64,
    pub max_stack: u16,
    pub regs_user: u64,
    pub stack_user: u32,
    pub name: Option<&'static str>,
}

pub const fn w(ty: u32, config: u64) -> Want {
    Want {
        ty,
        config,
        config1: 0,
        config2: 0,
        flags: 0,
        period: 0,
        bp_type: 0,
        sample_type: 0,
        read_format: 0,
        branch: 0,
        max_stack: 0,
        regs_user: 0,
        stack_user: 0,
        name: None,
    }
}

pub const fn tp(id: u64) -> Want {
    w(TP, id)
}

/// A breakpoint at 0: `bp_addr` / `bp_len` share storage with config1/2.
pub const fn bp(kind: u32, len: u64) -> Want {
    bp_at(kind, 0, len)
}

/// A breakpoint at `addr`.
pub const fn bp_at(kind: u32, addr: u64, len: u64) -> Want {
    let mut want = w(BP, 0).c1(addr).c2(len);
    want.bp_type = kind;
    want
}

impl Want {
    pub const fn f(mut self, flags: u64) -> Want {
        self.flags = flags;
        self
    }
    pub const fn c1(mut self, v: u64) -> Want {
        self.config1 = v;
        self
    }
    pub const fn c2(mut self, v: u64) -> Want {
        self.config2 = v;
        self
    }
    pub const fn period(mut self, v: u64) -> Want {
        self.period = v;
        self
    }
    pub const fn st(mut self, v: u64) -> Want {
        self.sample_type = v;
        self
    }
    /// `:S` alone: PERF_SAMPLE_READ with PERF_FORMAT_ID.
    pub const fn read(mut self) -> Want {
        self.sample_type = READ;
        self.read_format = ID;
        self
    }
    /// `:S` on a group of two or more: PERF_FORMAT_GROUP too.
    pub const fn group_read(mut self) -> Want {
        self.sample_type = READ;
        self.read_format = ID | GROUP;
        self
    }
    pub const fn named(mut self, name: &'static str) -> Want {
        self.name = Some(name);
        self
    }
}

pub fn got(e: &perf_event_host::parse::ParsedEvent<'_, '_>) -> Want {
    let raw = e.attr.to_raw();
    // SAFETY: the unions are plain u64 storage; every member is valid.
    let (config1, config2, period) = unsafe {
        (
            raw.__bindgen_anon_3.config1,
            raw.__bindgen_anon_4.config2,
            raw.__bindgen_anon_1.sample_period,
        )
    };
    Want {
        ty: raw.type_,
        config: raw.config,
        config1,
        config2,
        flags: e.attr.flags(),
        period,
        bp_type: raw.bp_type,
        sample_type: raw.sample_type,
        read_format: raw.read_format,
        branch: raw.branch_sample_type,
        max_stack: raw.sample_max_stack,
        regs_user: raw.sample_regs_user,
        stack_user: raw.sample_stack_user,
        name: e
            .name
            .map(|n| -> &'static str { Box::leak(n.to_owned().into_boxed_str()) }),
    }
}
