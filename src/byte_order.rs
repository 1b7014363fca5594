//! The byte order of bytes the kernel wrote on some machine: records,
//! `read(2)` values and attrs are native-endian where they are produced, so
//! a reader of a perf.data file or of a capture from another machine must
//! know which order they are in. Everything that parses them takes a
//! [`ByteOrder`]; for [`ByteOrder::NATIVE`] the swap compiles to a branch
//! that is never taken.

/// The byte order of the bytes being parsed: the machine's own (records
/// from this machine's ring buffers) or the other one (a perf.data file or a
/// capture from a big-endian s390x/powerpc machine read on x86_64, or the
/// reverse). perf.data files say which through their magic
/// (`PERFILE2` read as a little- or big-endian u64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ByteOrder {
    /// Least significant byte first (x86, arm64, riscv, loongarch, ...).
    Little,
    /// Most significant byte first (s390x, powerpc64 BE, mips BE, sparc64).
    Big,
}

impl ByteOrder {
    /// The byte order of the machine this code runs on.
    pub const NATIVE: ByteOrder = if cfg!(target_endian = "little") {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    };

    /// Whether values must be byte-swapped to be read on this machine.
    #[inline(always)]
    pub const fn is_foreign(self) -> bool {
        !matches!(
            (self, ByteOrder::NATIVE),
            (ByteOrder::Little, ByteOrder::Little) | (ByteOrder::Big, ByteOrder::Big)
        )
    }
}

impl Default for ByteOrder {
    fn default() -> Self {
        ByteOrder::NATIVE
    }
}

impl ByteOrder {
    /// The other byte order.
    pub const fn reversed(self) -> ByteOrder {
        match self {
            ByteOrder::Little => ByteOrder::Big,
            ByteOrder::Big => ByteOrder::Little,
        }
    }
}
