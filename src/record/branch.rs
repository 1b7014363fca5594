//! PERF_SAMPLE_BRANCH_STACK entries decoded (`struct perf_branch_entry` in
//! perf_event.h): from/to and every flag of the 7.2 ABI, plus the per-entry
//! branch counters of PERF_SAMPLE_BRANCH_COUNTERS.
//!
//! The flags word is a C bit-field, so its bit numbering follows the
//! producing machine's byte order: on a little-endian machine `mispred` is
//! bit 0, on a big-endian one it is bit 63 (perf's `bitfield_swap` does the
//! same when it reads a foreign perf.data file).

use super::cursor::ByteOrder;
use super::sample::BranchStack;
use crate::sys;

/// The flags of one branch entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct BranchFlags {
    /// Branch target was mispredicted.
    pub mispred: bool,
    /// Branch target was predicted.
    pub predicted: bool,
    /// Branch was in a transaction (Intel TSX).
    pub in_tx: bool,
    /// Branch was a transaction abort.
    pub abort: bool,
    /// Cycles since the last branch (0: not supported), 16 bits.
    pub cycles: u16,
    /// `PERF_BR_*` branch type (since Linux 4.14), 4 bits.
    pub kind: u8,
    /// `PERF_BR_SPEC_*` speculation outcome (since Linux 6.1), 2 bits.
    pub spec: u8,
    /// `PERF_BR_NEW_*` extended type, valid when `kind` is
    /// `PERF_BR_EXTEND_ABI` (since Linux 6.1), 4 bits.
    pub new_type: u8,
    /// `PERF_BR_PRIV_*` privilege level of the target (since Linux 6.1), 3 bits.
    pub privilege: u8,
}

/// (bit offset, width) of each flag on a little-endian machine, in the
/// order of `struct perf_branch_entry`.
const MISPRED: (u32, u32) = (0, 1);
const PREDICTED: (u32, u32) = (1, 1);
const IN_TX: (u32, u32) = (2, 1);
const ABORT: (u32, u32) = (3, 1);
const CYCLES: (u32, u32) = (4, 16);
const TYPE: (u32, u32) = (20, 4);
const SPEC: (u32, u32) = (24, 2);
const NEW_TYPE: (u32, u32) = (26, 4);
const PRIV: (u32, u32) = (30, 3);

#[inline]
const fn field(v: u64, (off, width): (u32, u32), order: ByteOrder) -> u64 {
    // On big-endian machines bit-fields fill from the most significant bit.
    let shift = match order {
        ByteOrder::Little => off,
        ByteOrder::Big => 64 - off - width,
    };
    (v >> shift) & ((1 << width) - 1)
}

#[inline]
const fn place(v: u64, (off, width): (u32, u32), order: ByteOrder) -> u64 {
    let shift = match order {
        ByteOrder::Little => off,
        ByteOrder::Big => 64 - off - width,
    };
    (v & ((1 << width) - 1)) << shift
}

impl BranchFlags {
    /// Decodes the flags word as laid out by a machine of byte order `order`
    /// (the word's value already read in that order).
    pub const fn from_word(v: u64, order: ByteOrder) -> BranchFlags {
        BranchFlags {
            mispred: field(v, MISPRED, order) != 0,
            predicted: field(v, PREDICTED, order) != 0,
            in_tx: field(v, IN_TX, order) != 0,
            abort: field(v, ABORT, order) != 0,
            cycles: field(v, CYCLES, order) as u16,
            kind: field(v, TYPE, order) as u8,
            spec: field(v, SPEC, order) as u8,
            new_type: field(v, NEW_TYPE, order) as u8,
            privilege: field(v, PRIV, order) as u8,
        }
    }

    /// The flags word a machine of byte order `order` would write (values
    /// wider than their field are truncated to it).
    pub const fn to_word(&self, order: ByteOrder) -> u64 {
        place(self.mispred as u64, MISPRED, order)
            | place(self.predicted as u64, PREDICTED, order)
            | place(self.in_tx as u64, IN_TX, order)
            | place(self.abort as u64, ABORT, order)
            | place(self.cycles as u64, CYCLES, order)
            | place(self.kind as u64, TYPE, order)
            | place(self.spec as u64, SPEC, order)
            | place(self.new_type as u64, NEW_TYPE, order)
            | place(self.privilege as u64, PRIV, order)
    }

    /// Whether `kind` is `PERF_BR_EXTEND_ABI`, so `new_type` holds the type.
    pub const fn is_extended(&self) -> bool {
        self.kind as u32 == sys::PERF_BR_EXTEND_ABI
    }
}

/// One decoded `struct perf_branch_entry`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct BranchEntry {
    /// Source address.
    pub from: u64,
    /// Target address.
    pub to: u64,
    /// The flags.
    pub flags: BranchFlags,
    /// PERF_SAMPLE_BRANCH_COUNTERS: this entry's packed counters word.
    pub counters: Option<u64>,
}

impl BranchEntry {
    /// Counter `index` of this entry's PERF_SAMPLE_BRANCH_COUNTERS word,
    /// each `width` bits wide (the PMU's `caps/branch_counter_width` in
    /// sysfs; the counted events are the group members with
    /// PERF_SAMPLE_BRANCH_COUNTERS in their `branch_sample_type`, in group
    /// order). `None` without counters or when the counter lies outside
    /// the 64-bit word.
    pub const fn counter(&self, index: u32, width: u32) -> Option<u64> {
        let Some(word) = self.counters else {
            return None;
        };
        if width == 0 || width > 64 {
            return None;
        }
        let Some(shift) = index.checked_mul(width) else {
            return None;
        };
        if shift + width > 64 {
            return None;
        }
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1 << width) - 1
        };
        Some((word >> shift) & mask)
    }
}

impl<'a> BranchStack<'a> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len() / 3
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `i` (0 is the most recent branch).
    pub fn get(&self, i: usize) -> Option<BranchEntry> {
        let b = i.checked_mul(3)?;
        Some(BranchEntry {
            from: self.entries.get(b)?,
            to: self.entries.get(b + 1)?,
            flags: BranchFlags::from_word(self.entries.get(b + 2)?, self.order),
            counters: match self.counters {
                Some(c) => Some(c.get(i)?),
                None => None,
            },
        })
    }

    /// The entries in order, most recent first.
    pub fn iter(&self) -> impl Iterator<Item = BranchEntry> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
}
