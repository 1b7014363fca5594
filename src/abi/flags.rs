//! Typed flag sets over the attr's raw words: [`SampleType`]
//! (`PERF_SAMPLE_*`) and [`BranchSampleType`] (`PERF_SAMPLE_BRANCH_*`);
//! `read_format` is [`crate::read_format::ReadFormat`], built by the same
//! macro. Each set names its bits as associated constants, combines them in
//! `const` context, and shows them by name in `Debug`.

use crate::sys;

/// Defines the constants and operations of a flag set over a `u64` word.
/// The type itself (a `pub struct Name(pub u64)`) is declared by the caller.
macro_rules! flag_set {
    ($ty:ident { $($(#[$doc:meta])* $name:ident = $value:expr;)* }) => {
        impl $ty {
            $( $(#[$doc])* pub const $name: $ty = $ty($value as u64); )*

            /// Every named bit with its kernel name (without the prefix).
            pub const NAMED: &'static [(&'static str, $ty)] = &[$((stringify!($name), $ty::$name)),*];

            /// No bit set.
            pub const EMPTY: $ty = $ty(0);

            /// The set of exactly these raw bits (unknown bits are kept: a
            /// newer kernel may know them).
            pub const fn from_bits(bits: u64) -> $ty {
                $ty(bits)
            }

            /// The raw word.
            pub const fn bits(self) -> u64 {
                self.0
            }

            /// Whether every bit of `other` is set here.
            pub const fn contains(self, other: $ty) -> bool {
                self.0 & other.0 == other.0
            }

            /// Both sets' bits (`const` `|`).
            pub const fn union(self, other: $ty) -> $ty {
                $ty(self.0 | other.0)
            }

            /// The bits of `self` not in `other`.
            pub const fn difference(self, other: $ty) -> $ty {
                $ty(self.0 & !other.0)
            }

            /// Whether no bit is set.
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }

            /// Bits set here that have no name in this crate's bindings.
            pub const fn unknown(self) -> u64 {
                let mut known = 0u64;
                let mut i = 0;
                while i < Self::NAMED.len() {
                    known |= Self::NAMED[i].1 .0;
                    i += 1;
                }
                self.0 & !known
            }
        }

        impl core::ops::BitOr for $ty {
            type Output = $ty;
            fn bitor(self, rhs: $ty) -> $ty {
                self.union(rhs)
            }
        }

        impl core::ops::BitOrAssign for $ty {
            fn bitor_assign(&mut self, rhs: $ty) {
                *self = self.union(rhs);
            }
        }

        impl From<$ty> for u64 {
            fn from(set: $ty) -> u64 {
                set.0
            }
        }

        impl core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(concat!(stringify!($ty), "("))?;
                let mut first = true;
                for (name, bit) in Self::NAMED {
                    if self.contains(*bit) && bit.0 != 0 {
                        if !first {
                            f.write_str(" | ")?;
                        }
                        f.write_str(name)?;
                        first = false;
                    }
                }
                let unknown = self.unknown();
                if unknown != 0 {
                    if !first {
                        f.write_str(" | ")?;
                    }
                    write!(f, "{unknown:#x}")?;
                    first = false;
                }
                if first {
                    f.write_str("empty")?;
                }
                f.write_str(")")
            }
        }
    };
}
pub(crate) use flag_set;

/// `sample_type`: what each sample records (`PERF_SAMPLE_*`,
/// perf_event_open(2)). Set it with [`crate::attr::Attr::sample_type`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SampleType(pub u64);

flag_set!(SampleType {
    /// `PERF_SAMPLE_IP` (since Linux 2.6.31).
    IP = sys::PERF_SAMPLE_IP;
    /// `PERF_SAMPLE_TID` (2.6.31).
    TID = sys::PERF_SAMPLE_TID;
    /// `PERF_SAMPLE_TIME` (2.6.31).
    TIME = sys::PERF_SAMPLE_TIME;
    /// `PERF_SAMPLE_ADDR` (2.6.31).
    ADDR = sys::PERF_SAMPLE_ADDR;
    /// `PERF_SAMPLE_READ` (2.6.31).
    READ = sys::PERF_SAMPLE_READ;
    /// `PERF_SAMPLE_CALLCHAIN` (2.6.31).
    CALLCHAIN = sys::PERF_SAMPLE_CALLCHAIN;
    /// `PERF_SAMPLE_ID` (2.6.31).
    ID = sys::PERF_SAMPLE_ID;
    /// `PERF_SAMPLE_CPU` (2.6.31).
    CPU = sys::PERF_SAMPLE_CPU;
    /// `PERF_SAMPLE_PERIOD` (2.6.31).
    PERIOD = sys::PERF_SAMPLE_PERIOD;
    /// `PERF_SAMPLE_STREAM_ID` (2.6.31).
    STREAM_ID = sys::PERF_SAMPLE_STREAM_ID;
    /// `PERF_SAMPLE_RAW` (2.6.31).
    RAW = sys::PERF_SAMPLE_RAW;
    /// `PERF_SAMPLE_BRANCH_STACK` (3.4).
    BRANCH_STACK = sys::PERF_SAMPLE_BRANCH_STACK;
    /// `PERF_SAMPLE_REGS_USER` (3.7).
    REGS_USER = sys::PERF_SAMPLE_REGS_USER;
    /// `PERF_SAMPLE_STACK_USER` (3.7).
    STACK_USER = sys::PERF_SAMPLE_STACK_USER;
    /// `PERF_SAMPLE_WEIGHT` (3.10).
    WEIGHT = sys::PERF_SAMPLE_WEIGHT;
    /// `PERF_SAMPLE_DATA_SRC` (3.10).
    DATA_SRC = sys::PERF_SAMPLE_DATA_SRC;
    /// `PERF_SAMPLE_IDENTIFIER` (3.12).
    IDENTIFIER = sys::PERF_SAMPLE_IDENTIFIER;
    /// `PERF_SAMPLE_TRANSACTION` (3.13).
    TRANSACTION = sys::PERF_SAMPLE_TRANSACTION;
    /// `PERF_SAMPLE_REGS_INTR` (3.19).
    REGS_INTR = sys::PERF_SAMPLE_REGS_INTR;
    /// `PERF_SAMPLE_PHYS_ADDR` (4.13).
    PHYS_ADDR = sys::PERF_SAMPLE_PHYS_ADDR;
    /// `PERF_SAMPLE_AUX` (5.5).
    AUX = sys::PERF_SAMPLE_AUX;
    /// `PERF_SAMPLE_CGROUP` (5.7).
    CGROUP = sys::PERF_SAMPLE_CGROUP;
    /// `PERF_SAMPLE_DATA_PAGE_SIZE` (5.11).
    DATA_PAGE_SIZE = sys::PERF_SAMPLE_DATA_PAGE_SIZE;
    /// `PERF_SAMPLE_CODE_PAGE_SIZE` (5.11).
    CODE_PAGE_SIZE = sys::PERF_SAMPLE_CODE_PAGE_SIZE;
    /// `PERF_SAMPLE_WEIGHT_STRUCT` (5.12).
    WEIGHT_STRUCT = sys::PERF_SAMPLE_WEIGHT_STRUCT;
});

/// `branch_sample_type`: which branches a branch stack records and what
/// it says of them (`PERF_SAMPLE_BRANCH_*`, since Linux 3.4). Set it with
/// [`crate::attr::Attr::branch_sample_type`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BranchSampleType(pub u64);

flag_set!(BranchSampleType {
    /// `PERF_SAMPLE_BRANCH_USER`: branch target in user space (3.4).
    USER = sys::PERF_SAMPLE_BRANCH_USER;
    /// `PERF_SAMPLE_BRANCH_KERNEL` (3.4).
    KERNEL = sys::PERF_SAMPLE_BRANCH_KERNEL;
    /// `PERF_SAMPLE_BRANCH_HV` (3.4).
    HV = sys::PERF_SAMPLE_BRANCH_HV;
    /// `PERF_SAMPLE_BRANCH_ANY` (3.4).
    ANY = sys::PERF_SAMPLE_BRANCH_ANY;
    /// `PERF_SAMPLE_BRANCH_ANY_CALL` (3.4).
    ANY_CALL = sys::PERF_SAMPLE_BRANCH_ANY_CALL;
    /// `PERF_SAMPLE_BRANCH_ANY_RETURN` (3.4).
    ANY_RETURN = sys::PERF_SAMPLE_BRANCH_ANY_RETURN;
    /// `PERF_SAMPLE_BRANCH_IND_CALL` (3.4).
    IND_CALL = sys::PERF_SAMPLE_BRANCH_IND_CALL;
    /// `PERF_SAMPLE_BRANCH_ABORT_TX` (3.11).
    ABORT_TX = sys::PERF_SAMPLE_BRANCH_ABORT_TX;
    /// `PERF_SAMPLE_BRANCH_IN_TX` (3.11).
    IN_TX = sys::PERF_SAMPLE_BRANCH_IN_TX;
    /// `PERF_SAMPLE_BRANCH_NO_TX` (3.11).
    NO_TX = sys::PERF_SAMPLE_BRANCH_NO_TX;
    /// `PERF_SAMPLE_BRANCH_COND` (3.16).
    COND = sys::PERF_SAMPLE_BRANCH_COND;
    /// `PERF_SAMPLE_BRANCH_CALL_STACK` (4.1).
    CALL_STACK = sys::PERF_SAMPLE_BRANCH_CALL_STACK;
    /// `PERF_SAMPLE_BRANCH_IND_JUMP` (4.2).
    IND_JUMP = sys::PERF_SAMPLE_BRANCH_IND_JUMP;
    /// `PERF_SAMPLE_BRANCH_CALL` (4.4).
    CALL = sys::PERF_SAMPLE_BRANCH_CALL;
    /// `PERF_SAMPLE_BRANCH_NO_FLAGS` (4.5).
    NO_FLAGS = sys::PERF_SAMPLE_BRANCH_NO_FLAGS;
    /// `PERF_SAMPLE_BRANCH_NO_CYCLES` (4.5).
    NO_CYCLES = sys::PERF_SAMPLE_BRANCH_NO_CYCLES;
    /// `PERF_SAMPLE_BRANCH_TYPE_SAVE` (4.14).
    TYPE_SAVE = sys::PERF_SAMPLE_BRANCH_TYPE_SAVE;
    /// `PERF_SAMPLE_BRANCH_HW_INDEX` (5.7).
    HW_INDEX = sys::PERF_SAMPLE_BRANCH_HW_INDEX;
    /// `PERF_SAMPLE_BRANCH_PRIV_SAVE` (6.1).
    PRIV_SAVE = sys::PERF_SAMPLE_BRANCH_PRIV_SAVE;
    /// `PERF_SAMPLE_BRANCH_COUNTERS` (6.8).
    COUNTERS = sys::PERF_SAMPLE_BRANCH_COUNTERS;
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_format::ReadFormat;
    use std::format;

    #[test]
    fn sets_combine_and_show_their_names() {
        const S: SampleType = SampleType::IP
            .union(SampleType::TID)
            .union(SampleType::TIME);
        assert_eq!(S.bits(), 0b111);
        assert!(S.contains(SampleType::IP | SampleType::TIME));
        assert!(!S.contains(SampleType::CPU));
        assert_eq!(
            S.difference(SampleType::TID),
            SampleType::IP | SampleType::TIME
        );
        assert_eq!(format!("{S:?}"), "SampleType(IP | TID | TIME)");
        let odd = SampleType::from_bits(SampleType::CPU.bits() | 1 << 62);
        assert_eq!(odd.unknown(), 1 << 62);
        assert_eq!(format!("{odd:?}"), "SampleType(CPU | 0x4000000000000000)");
        assert_eq!(
            format!("{:?}", BranchSampleType::EMPTY),
            "BranchSampleType(empty)"
        );
        let rf = ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING;
        assert_eq!(rf.size(1), 24);
        assert_eq!(
            format!("{rf:?}"),
            "ReadFormat(TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING)"
        );
        // Every named bit is one distinct bit.
        let mut all = 0u64;
        for (name, bit) in SampleType::NAMED {
            assert_eq!(bit.bits().count_ones(), 1, "{name}");
            assert_eq!(all & bit.bits(), 0, "{name}");
            all |= bit.bits();
        }
        assert_eq!(
            all,
            sys::PERF_SAMPLE_MAX as u64 - 1,
            "every PERF_SAMPLE_* bit is named"
        );
        let branch = BranchSampleType::NAMED
            .iter()
            .fold(0, |a, (_, b)| a | b.bits());
        assert_eq!(branch, sys::PERF_SAMPLE_BRANCH_MAX as u64 - 1);
        let formats = ReadFormat::NAMED.iter().fold(0, |a, (_, b)| a | b.bits());
        assert_eq!(formats, sys::PERF_FORMAT_MAX as u64 - 1);
    }
}
