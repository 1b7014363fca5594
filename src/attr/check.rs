//! Validation before the syscall: what the kernel would refuse with EINVAL
//! (or silently misread), found without asking it, each error naming the
//! field and saying what to do.

use super::Attr;
use crate::abi::bitfield::{attr_flags as flag, BitField};
use crate::abi::since::BRANCH_SAMPLE_TYPE_KNOWN;
use crate::abi::KernelVersion;
use crate::sys;
use core::fmt;

/// Why an attr cannot be opened as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttrError {
    /// `precise_ip` is a 2-bit field: 0 (arbitrary skid) to 3 (zero skid).
    PreciseIp {
        /// The value asked for.
        requested: u8,
    },
    /// `freq` is set but `sample_freq` is zero: no samples would ever come.
    ZeroFrequency,
    /// `sample_freq` is above `/proc/sys/kernel/perf_event_max_sample_rate`.
    FrequencyAboveMax {
        /// The frequency asked for.
        requested: u64,
        /// The system limit.
        max: u64,
    },
    /// `sample_period` has bit 63 set; the kernel refuses it.
    PeriodTooLarge {
        /// The period asked for.
        period: u64,
    },
    /// Bits the 7.2 ABI does not define in a bit-mask field.
    UnknownBits {
        /// `sample_type`, `read_format` or `branch_sample_type`.
        field: &'static str,
        /// The unknown bits.
        bits: u64,
    },
    /// Reserved space is not zero.
    Reserved {
        /// `__reserved_1` (flag bits 40..63), `__reserved_2` or `__reserved_3`.
        field: &'static str,
        /// The value found there.
        value: u64,
    },
    /// A flag or field that only works together with another one.
    Requires {
        /// What is set.
        field: &'static str,
        /// What it needs.
        needs: &'static str,
    },
    /// `sample_stack_user` must be a multiple of 8.
    StackSizeUnaligned {
        /// The size asked for.
        bytes: u32,
    },
    /// `clockid` is not one the kernel accepts for `use_clockid`.
    UnknownClock {
        /// The clock asked for.
        clockid: i32,
    },
    /// Something in use is newer than the running kernel.
    NewerThanKernel {
        /// The field, flag or bit.
        what: &'static str,
        /// The kernel that introduced it.
        since: KernelVersion,
        /// The running kernel.
        running: KernelVersion,
    },
}

impl fmt::Display for AttrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            AttrError::PreciseIp { requested } => write!(
                f,
                "precise_ip = {requested}: the field is 2 bits wide; use 0 (arbitrary skid) to 3 \
                 (zero skid required)"
            ),
            AttrError::ZeroFrequency => f.write_str(
                "freq is set with sample_freq = 0: no sample would ever be taken; give a \
                 frequency in Hz, or use sample_period",
            ),
            AttrError::FrequencyAboveMax { requested, max } => write!(
                f,
                "sample_freq = {requested} Hz is above kernel.perf_event_max_sample_rate = \
                 {max}: the kernel answers EINVAL; lower the frequency or raise the sysctl"
            ),
            AttrError::PeriodTooLarge { period } => write!(
                f,
                "sample_period = {period:#x} has bit 63 set, which the kernel refuses (EINVAL)"
            ),
            AttrError::UnknownBits { field, bits } => write!(
                f,
                "{field} has bits {bits:#x} that no kernel up to the crate's ABI (Linux 7.2) \
                 defines: the kernel answers EINVAL"
            ),
            AttrError::Reserved { field, value } => {
                write!(
                    f,
                    "{field} = {value:#x}: reserved space must be zero (EINVAL)"
                )
            }
            AttrError::Requires { field, needs } => {
                write!(
                    f,
                    "{field} is set without {needs}, which it requires (EINVAL)"
                )
            }
            AttrError::StackSizeUnaligned { bytes } => write!(
                f,
                "sample_stack_user = {bytes} is not a multiple of 8: the kernel answers EINVAL"
            ),
            AttrError::UnknownClock { clockid } => write!(
                f,
                "clockid = {clockid} is not one perf accepts (CLOCK_MONOTONIC, \
                 CLOCK_MONOTONIC_RAW, CLOCK_REALTIME, CLOCK_BOOTTIME, CLOCK_TAI)"
            ),
            AttrError::NewerThanKernel {
                what,
                since,
                running,
            } => write!(
                f,
                "{what} needs Linux {since}; this kernel is {running} and answers EINVAL: leave \
                 it unset here (KernelFeatures::detect() tells what this kernel accepts)"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for AttrError {}

/// Clocks `use_clockid` accepts (kernel/events/core.c, perf_event_set_clock).
const CLOCKS: [i32; 5] = crate::linux::system::PERF_CLOCKS;

/// `(flag, needs)` pairs the kernel enforces (measured on 6.18: EINVAL).
const NEEDS: [(BitField, BitField); 2] = [
    (flag::SIGTRAP, flag::REMOVE_ON_EXEC),
    (flag::INHERIT_THREAD, flag::INHERIT),
];

impl Attr {
    /// Checks everything that does not depend on the running kernel.
    pub fn check(&self) -> Result<(), AttrError> {
        if let Some(e) = self.invalid {
            return Err(e);
        }
        let raw = &self.raw;
        let period_or_freq = raw.sample_period();
        if self.get_flag(flag::FREQ) != 0 {
            if period_or_freq == 0 {
                return Err(AttrError::ZeroFrequency);
            }
        } else if period_or_freq & (1 << 63) != 0 {
            return Err(AttrError::PeriodTooLarge {
                period: period_or_freq,
            });
        }
        let masks = [
            (
                "sample_type",
                raw.sample_type,
                (sys::PERF_SAMPLE_MAX as u64) - 1,
            ),
            (
                "read_format",
                raw.read_format,
                (sys::PERF_FORMAT_MAX as u64) - 1,
            ),
            (
                "branch_sample_type",
                raw.branch_sample_type,
                BRANCH_SAMPLE_TYPE_KNOWN,
            ),
        ];
        for (field, value, known) in masks {
            if value & !known != 0 {
                return Err(AttrError::UnknownBits {
                    field,
                    bits: value & !known,
                });
            }
        }
        let reserved_3 = (self.get_aux_action() >> 3) as u64;
        for (field, value) in [
            ("__reserved_1", self.get_flag(flag::RESERVED_1)),
            ("__reserved_2", u64::from(raw.__reserved_2)),
            ("__reserved_3", reserved_3),
        ] {
            if value != 0 {
                return Err(AttrError::Reserved { field, value });
            }
        }
        for (what, needs) in NEEDS {
            if self.get_flag(what) != 0 && self.get_flag(needs) == 0 {
                return Err(AttrError::Requires {
                    field: what.name,
                    needs: needs.name,
                });
            }
        }
        let sample_type = raw.sample_type;
        let read = u64::from(sys::PERF_SAMPLE_READ);
        let tid = u64::from(sys::PERF_SAMPLE_TID);
        if self.get_flag(flag::INHERIT) != 0 && sample_type & read != 0 && sample_type & tid == 0 {
            return Err(AttrError::Requires {
                field: "inherit with PERF_SAMPLE_READ",
                needs: "PERF_SAMPLE_TID (and Linux 6.12)",
            });
        }
        if raw.sample_stack_user % 8 != 0 {
            return Err(AttrError::StackSizeUnaligned {
                bytes: raw.sample_stack_user,
            });
        }
        if self.get_flag(flag::USE_CLOCKID) != 0 && !CLOCKS.contains(&raw.clockid) {
            return Err(AttrError::UnknownClock {
                clockid: raw.clockid,
            });
        }
        Ok(())
    }

    /// [`Attr::check`], then refuses anything newer than `kernel`.
    pub fn check_for(&self, kernel: KernelVersion) -> Result<(), AttrError> {
        self.check()?;
        let inherit_read = self.get_flag(flag::INHERIT) != 0
            && self.raw.sample_type & u64::from(sys::PERF_SAMPLE_READ) != 0;
        let v6_12 = KernelVersion::new(6, 12, 0);
        if inherit_read && !kernel.at_least(v6_12) {
            return Err(AttrError::NewerThanKernel {
                what: "inherit with PERF_SAMPLE_READ",
                since: v6_12,
                running: kernel,
            });
        }
        match self.newer_than(kernel) {
            Some(r) => Err(AttrError::NewerThanKernel {
                what: r.what,
                since: r.version,
                running: kernel,
            }),
            None => Ok(()),
        }
    }

    /// [`Attr::check_for`] the running kernel, plus the system limits
    /// (`perf_event_max_sample_rate`).
    pub fn check_here(&self) -> Result<(), AttrError> {
        if let Some(kernel) = crate::linux::system::kernel_version() {
            self.check_for(kernel)?;
        } else {
            self.check()?;
        }
        if self.get_flag(flag::FREQ) != 0 {
            let hz = self.raw.sample_freq();
            let max = crate::linux::system::perf_event_max_sample_rate();
            if let Some(max) = max.filter(|max| hz > *max) {
                return Err(AttrError::FrequencyAboveMax { requested: hz, max });
            }
        }
        Ok(())
    }
}
