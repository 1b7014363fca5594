//! Memory-sampling words decoded: PERF_SAMPLE_DATA_SRC (`union
//! perf_mem_data_src`), PERF_SAMPLE_WEIGHT_STRUCT (`union
//! perf_sample_weight`) and PERF_SAMPLE_TRANSACTION (`PERF_TXN_*`).
//!
//! The kernel declares both unions with the fields in reverse order on
//! big-endian machines (`__BITFIELD_FIELD`), so the bit positions within the
//! u64 value are the same on every machine: the decoding below needs no
//! byte order once the word has been read.

// The PERF_TXN_* enum's C type is u64 on some architectures, u32 on others.
#![allow(clippy::unnecessary_cast)]

use crate::sys;

const fn bits(v: u64, shift: u32, width: u32) -> u64 {
    (v >> shift) & ((1 << width) - 1)
}

const fn put(v: u64, shift: u32, width: u32) -> u64 {
    (v & ((1 << width) - 1)) << shift
}

/// `union perf_mem_data_src` split into its fields (the `PERF_MEM_*`
/// constants give each field's values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct DataSrc {
    /// `mem_op`: `PERF_MEM_OP_*` (5 bits).
    pub op: u8,
    /// `mem_lvl`: `PERF_MEM_LVL_*` (14 bits, deprecated by `lvl_num`).
    pub lvl: u16,
    /// `mem_snoop`: `PERF_MEM_SNOOP_*` (5 bits).
    pub snoop: u8,
    /// `mem_lock`: `PERF_MEM_LOCK_*` (2 bits).
    pub lock: u8,
    /// `mem_dtlb`: `PERF_MEM_TLB_*` (7 bits).
    pub dtlb: u8,
    /// `mem_lvl_num`: `PERF_MEM_LVLNUM_*` (4 bits, since Linux 4.14).
    pub lvl_num: u8,
    /// `mem_remote`: remote access (1 bit, since Linux 4.14).
    pub remote: bool,
    /// `mem_snoopx`: `PERF_MEM_SNOOPX_*` (2 bits, since Linux 4.14).
    pub snoopx: u8,
    /// `mem_blk`: `PERF_MEM_BLK_*` (3 bits, since Linux 5.12).
    pub blk: u8,
    /// `mem_hops`: `PERF_MEM_HOPS_*` (3 bits, since Linux 5.16).
    pub hops: u8,
    /// `mem_region`: `PERF_MEM_REGION_*` (5 bits, since Linux 6.15).
    pub region: u8,
}

impl DataSrc {
    /// Splits a PERF_SAMPLE_DATA_SRC value.
    pub const fn from_word(v: u64) -> DataSrc {
        DataSrc {
            op: bits(v, sys::PERF_MEM_OP_SHIFT, 5) as u8,
            lvl: bits(v, sys::PERF_MEM_LVL_SHIFT, 14) as u16,
            snoop: bits(v, sys::PERF_MEM_SNOOP_SHIFT, 5) as u8,
            lock: bits(v, sys::PERF_MEM_LOCK_SHIFT, 2) as u8,
            dtlb: bits(v, sys::PERF_MEM_TLB_SHIFT, 7) as u8,
            lvl_num: bits(v, sys::PERF_MEM_LVLNUM_SHIFT, 4) as u8,
            remote: bits(v, sys::PERF_MEM_REMOTE_SHIFT, 1) != 0,
            snoopx: bits(v, sys::PERF_MEM_SNOOPX_SHIFT, 2) as u8,
            blk: bits(v, sys::PERF_MEM_BLK_SHIFT, 3) as u8,
            hops: bits(v, sys::PERF_MEM_HOPS_SHIFT, 3) as u8,
            region: bits(v, sys::PERF_MEM_REGION_SHIFT, 5) as u8,
        }
    }

    /// The value the kernel would write (fields truncated to their width).
    pub const fn to_word(&self) -> u64 {
        put(self.op as u64, sys::PERF_MEM_OP_SHIFT, 5)
            | put(self.lvl as u64, sys::PERF_MEM_LVL_SHIFT, 14)
            | put(self.snoop as u64, sys::PERF_MEM_SNOOP_SHIFT, 5)
            | put(self.lock as u64, sys::PERF_MEM_LOCK_SHIFT, 2)
            | put(self.dtlb as u64, sys::PERF_MEM_TLB_SHIFT, 7)
            | put(self.lvl_num as u64, sys::PERF_MEM_LVLNUM_SHIFT, 4)
            | put(self.remote as u64, sys::PERF_MEM_REMOTE_SHIFT, 1)
            | put(self.snoopx as u64, sys::PERF_MEM_SNOOPX_SHIFT, 2)
            | put(self.blk as u64, sys::PERF_MEM_BLK_SHIFT, 3)
            | put(self.hops as u64, sys::PERF_MEM_HOPS_SHIFT, 3)
            | put(self.region as u64, sys::PERF_MEM_REGION_SHIFT, 5)
    }
}

/// `union perf_sample_weight` (PERF_SAMPLE_WEIGHT_STRUCT, since Linux 5.12):
/// `var1_dw` is the latency on every architecture; x86 puts the instruction
/// latency in `var2_w`, powerpc its own values in `var2_w` / `var3_w`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Weight {
    /// Low 32 bits.
    pub var1_dw: u32,
    /// Bits 32..48.
    pub var2_w: u16,
    /// Bits 48..64.
    pub var3_w: u16,
}

impl Weight {
    /// Splits a PERF_SAMPLE_WEIGHT_STRUCT value.
    pub const fn from_word(v: u64) -> Weight {
        Weight {
            var1_dw: v as u32,
            var2_w: (v >> 32) as u16,
            var3_w: (v >> 48) as u16,
        }
    }

    /// The u64 value.
    pub const fn to_word(&self) -> u64 {
        self.var1_dw as u64 | (self.var2_w as u64) << 32 | (self.var3_w as u64) << 48
    }
}

/// PERF_SAMPLE_TRANSACTION: `PERF_TXN_*` flags and the abort code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Txn(pub u64);

impl Txn {
    const fn has(self, b: u32) -> bool {
        self.0 & b as u64 != 0
    }
    /// PERF_TXN_ELISION: from an elision (HLE).
    pub const fn elision(self) -> bool {
        self.has(sys::PERF_TXN_ELISION as u32)
    }
    /// PERF_TXN_TRANSACTION: from a transaction (RTM).
    pub const fn transaction(self) -> bool {
        self.has(sys::PERF_TXN_TRANSACTION as u32)
    }
    /// PERF_TXN_SYNC: the abort was synchronous (caused by the instruction).
    pub const fn sync(self) -> bool {
        self.has(sys::PERF_TXN_SYNC as u32)
    }
    /// PERF_TXN_ASYNC: the abort was asynchronous.
    pub const fn is_async(self) -> bool {
        self.has(sys::PERF_TXN_ASYNC as u32)
    }
    /// PERF_TXN_RETRY: retrying may succeed.
    pub const fn retry(self) -> bool {
        self.has(sys::PERF_TXN_RETRY as u32)
    }
    /// PERF_TXN_CONFLICT: a conflict with another thread.
    pub const fn conflict(self) -> bool {
        self.has(sys::PERF_TXN_CONFLICT as u32)
    }
    /// PERF_TXN_CAPACITY_WRITE: write capacity exceeded.
    pub const fn capacity_write(self) -> bool {
        self.has(sys::PERF_TXN_CAPACITY_WRITE as u32)
    }
    /// PERF_TXN_CAPACITY_READ: read capacity exceeded.
    pub const fn capacity_read(self) -> bool {
        self.has(sys::PERF_TXN_CAPACITY_READ as u32)
    }
    /// The user-specified abort code (PERF_TXN_ABORT_MASK >> SHIFT).
    pub const fn abort_code(self) -> u32 {
        ((self.0 & sys::PERF_TXN_ABORT_MASK as u64) >> sys::PERF_TXN_ABORT_SHIFT) as u32
    }
    /// Bits this crate does not know (below the abort code, from PERF_TXN_MAX).
    pub const fn unknown_bits(self) -> u64 {
        self.0 & !(sys::PERF_TXN_ABORT_MASK as u64) & !(sys::PERF_TXN_MAX as u64 - 1)
    }
}
