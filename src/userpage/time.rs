//! The arithmetic of a user-space read: counter sign extension, timestamp
//! to nanoseconds, time extrapolation and scaling.
//!
//! Everything here is a total function: no input panics, overflows in a way
//! the kernel does not, or divides by zero. Products that the kernel
//! computes in 96 or 128 bits are computed in `u128`; sums the kernel lets
//! wrap (`u64` arithmetic in C) wrap here too.

/// Sign-extends the low `width` bits of a raw counter value (the page's
/// `pmc_width`, since Linux 3.12): bits above `width` are whatever the
/// register holds (x86 returns zeros above 48 bits; an emulated or 64-bit
/// arm64 register may have ones) and are replaced by copies of bit
/// `width - 1`, as perf_event_open(2) prescribes
/// (`pmc <<= 64 - pmc_width; pmc >>= 64 - pmc_width`, arithmetic shift).
///
/// `width` 0 (a page that never said) and `width >= 64` leave the value
/// as it is.
pub const fn sign_extend(raw: u64, width: u16) -> u64 {
    if width == 0 || width >= 64 {
        return raw;
    }
    let shift = 64 - width as u32;
    (((raw << shift) as i64) >> shift) as u64
}

/// The event count from a snapshot: the page's `offset` plus the
/// sign-extended counter, with wrapping `u64` arithmetic as the kernel
/// defines `offset` (`count - prev_count`, which may be negative).
pub const fn counter_value(offset: i64, raw: u64, width: u16) -> u64 {
    (offset as u64).wrapping_add(sign_extend(raw, width))
}

/// Undoes the known `-2^pmc_width` transient (see the module docs of
/// [`crate::userpage`], "The rdpmc_jump case"): a count is never negative,
/// so a sum whose top bit is set while `width < 64` is moved up by
/// `2^width`. Returns the value and whether it was corrected.
pub const fn correct_negative_count(value: u64, width: u16) -> (u64, bool) {
    if (value as i64) < 0 && width != 0 && width < 64 {
        let corrected = value.wrapping_add(1u64 << width);
        if (corrected as i64) >= 0 {
            return (corrected, true);
        }
    }
    (value, false)
}

/// `(cycles * mult) >> shift` computed in full (the 96-bit product in
/// `u128`), truncated to `u64` as the kernel's `mul_u64_u32_shr` does.
/// Equal to the man page's `quot * mult + ((rem * mult) >> shift)` with
/// `quot = cycles >> shift`, `rem = cycles & ((1 << shift) - 1)`. A shift
/// of 128 or more (no kernel writes one) gives 0.
pub const fn cycles_to_ns(cycles: u64, mult: u32, shift: u16) -> u64 {
    let product = cycles as u128 * mult as u128;
    if shift >= 128 {
        0
    } else {
        (product >> shift) as u64
    }
}

/// `time_cycles + ((cycles - time_cycles) & time_mask)`: with
/// `cap_user_time_short` (arm64 and riscv, Linux 5.12+) the timestamp
/// counter is narrower than 64 bits; this carries a reading taken after the
/// counter wrapped past `time_mask` into the range the conversion expects.
pub const fn short_cycles(cycles: u64, time_cycles: u64, time_mask: u64) -> u64 {
    time_cycles.wrapping_add(cycles.wrapping_sub(time_cycles) & time_mask)
}

/// The time conversion of a page (`cap_user_time`, since Linux 3.12; the
/// short form since Linux 5.12), read in one seqlock section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeConversion {
    /// `time_shift`: the conversion's binary point.
    pub time_shift: u16,
    /// `time_mult`: nanoseconds per `2^time_shift` timestamp cycles.
    pub time_mult: u32,
    /// `time_offset`: added to the converted timestamp; the kernel stores
    /// `-now` (as `u64`) so the sum is the time since the page's update.
    pub time_offset: u64,
    /// `(time_cycles, time_mask)` when `cap_user_time_short` is set.
    pub short: Option<(u64, u64)>,
}

impl TimeConversion {
    /// Nanoseconds since the page was last updated at timestamp `cycles`:
    /// `time_offset + cycles_to_ns(cycles)`, wrapping, with the short-counter
    /// adjustment first when the page has one.
    pub const fn delta_ns(&self, cycles: u64) -> u64 {
        let cycles = match self.short {
            Some((time_cycles, time_mask)) => short_cycles(cycles, time_cycles, time_mask),
            None => cycles,
        };
        self.time_offset
            .wrapping_add(cycles_to_ns(cycles, self.time_mult, self.time_shift))
    }
}

/// `time_enabled` and `time_running` brought forward by `delta` ns: both
/// advance while the event is enabled, `running` only while the event is on
/// the PMU (`index != 0`), as perf_event_open(2) says. Wrapping, as in C.
pub const fn extrapolate(enabled: u64, running: u64, index: u32, delta: u64) -> (u64, u64) {
    let running = if index != 0 {
        running.wrapping_add(delta)
    } else {
        running
    };
    (enabled.wrapping_add(delta), running)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_extension_by_width() {
        assert_eq!(sign_extend(0xffff_ffff, 32), u64::MAX);
        assert_eq!(sign_extend(0x7fff_ffff, 32), 0x7fff_ffff);
        assert_eq!(sign_extend(0xdead_0000_ffff_ffff, 32), u64::MAX);
        assert_eq!(sign_extend(0x8000_0000_0000, 48), 0xffff_8000_0000_0000);
        assert_eq!(sign_extend(5, 0), 5);
        assert_eq!(sign_extend(u64::MAX, 64), u64::MAX);
        assert_eq!(sign_extend(u64::MAX, 200), u64::MAX);
    }

    #[test]
    fn offset_plus_negative_counter() {
        // The kernel programs -period; offset = count - prev_count.
        let prev = sign_extend((1u64 << 48) - 1000, 48);
        let offset = 500i64.wrapping_sub(prev as i64);
        let now = (1u64 << 48) - 900; // 100 events later
        assert_eq!(counter_value(offset, now, 48), 600);
    }

    #[test]
    fn negative_counts_are_corrected_by_one_period_of_the_width() {
        let bad = 10u64.wrapping_sub(1 << 32);
        assert_eq!(correct_negative_count(bad, 32), (10, true));
        assert_eq!(correct_negative_count(10, 32), (10, false));
        assert_eq!(correct_negative_count(u64::MAX, 64), (u64::MAX, false));
        // Too negative to be the transient: left alone.
        assert_eq!(correct_negative_count(1 << 63, 32), (1 << 63, false));
    }

    #[test]
    fn conversion_edges() {
        assert_eq!(
            cycles_to_ns(u64::MAX, u32::MAX, 0),
            u64::MAX.wrapping_mul(u32::MAX as u64)
        );
        assert_eq!(
            cycles_to_ns(u64::MAX, u32::MAX, 32),
            u64::MAX - (1u64 << 32)
        );
        assert_eq!(cycles_to_ns(1, 1, 127), 0);
        assert_eq!(cycles_to_ns(1, 1, u16::MAX), 0);
        // A 56-bit counter that wrapped 15 cycles after the page's update.
        let mask = (1u64 << 56) - 1;
        assert_eq!(short_cycles(5, mask - 9, mask), mask + 6);
        assert_eq!(short_cycles(5, u64::MAX - 2, u64::MAX), 5);
    }
}
