//! Property tests of the user-space read arithmetic against references in
//! `u128` / `i128` (no wrapping, no overflow): pmc_width 32, 40, 48, 64;
//! time_shift 0..=31; time_mult up to u32::MAX; timestamps across the
//! time_mask wrap; scaling with huge counts.

use perf_event_core::read_format::Counts;
use perf_event_core::userpage::time::{
    correct_negative_count, counter_value, cycles_to_ns, extrapolate, short_cycles, sign_extend,
    TimeConversion,
};
use proptest::prelude::*;

const WIDTHS: [u16; 4] = [32, 40, 48, 64];

fn width() -> impl Strategy<Value = u16> {
    prop::sample::select(&WIDTHS[..])
}

/// The value of the low `w` bits of `raw` as a signed `w`-bit number.
fn signed_reference(raw: u64, w: u16) -> i128 {
    let m = 1i128 << w;
    let low = i128::from(raw) & (m - 1);
    if low >= m / 2 {
        low - m
    } else {
        low
    }
}

fn wrap64(x: i128) -> u64 {
    x.rem_euclid(1i128 << 64) as u64
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn sign_extension_matches_the_signed_reference(raw in any::<u64>(), w in width()) {
        prop_assert_eq!(sign_extend(raw, w) as i64 as i128, signed_reference(raw, w));
    }

    #[test]
    fn offset_plus_counter_wraps_like_the_kernel(offset in any::<i64>(), raw in any::<u64>(), w in width()) {
        let reference = wrap64(i128::from(offset) + signed_reference(raw, w));
        prop_assert_eq!(counter_value(offset, raw, w), reference);
    }

    /// The kernel programs `-left` (sign-extended into prev_count) and sets
    /// offset = count - prev_count; the register counts up from there and
    /// may show anything above pmc_width (zeros on x86 and cortex-a72,
    /// ones under QEMU -cpu max). The reader must recover count + events.
    #[test]
    fn the_count_is_recovered_whatever_the_register_holds_above_the_width(
        w in width(),
        count in 0u64..(1 << 62),
        left_bits in any::<u64>(),
        events_bits in any::<u64>(),
        garbage_ones in any::<bool>(),
    ) {
        let half = if w == 64 { 1u128 << 63 } else { 1u128 << (w - 1) };
        let left = (u128::from(left_bits) % half) as u64 + 1; // 1..=2^(w-1)
        let events = (u128::from(events_bits) % u128::from(left)) as u64; // before the overflow
        let prev = 0u64.wrapping_sub(left); // -left, sign-extended
        let offset = count.wrapping_sub(prev) as i64;
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        let mut register = prev.wrapping_add(events) & mask;
        if garbage_ones {
            register |= !mask;
        }
        prop_assert_eq!(counter_value(offset, register, w), count + events);
        prop_assert_eq!(correct_negative_count(count + events, w), (count + events, false));
    }

    /// The rdpmc_jump transient: prev_count holds the raw, unextended
    /// register after RESET; the sum is then 2^w too small, and the
    /// correction restores it whenever the true count is below 2^w.
    #[test]
    fn the_reset_transient_is_corrected_below_two_to_the_width(
        w in prop::sample::select(&[32u16, 40, 48][..]),
        left_bits in any::<u64>(),
        events_bits in any::<u64>(),
    ) {
        let half = 1u64 << (w - 1);
        let left = left_bits % half + 1;
        let events = events_bits % left;
        let mask = (1u64 << w) - 1;
        let prev_raw = 0u64.wrapping_sub(left) & mask; // top bit of the width set
        let offset = 0u64.wrapping_sub(prev_raw) as i64; // RESET: count 0
        let register = prev_raw.wrapping_add(events) & mask;
        let sum = counter_value(offset, register, w);
        prop_assert_eq!(sum, events.wrapping_sub(1 << w));
        prop_assert_eq!(correct_negative_count(sum, w), (events, true));
    }

    #[test]
    fn cycles_to_ns_is_the_full_product_and_the_man_page_formula(
        cycles in any::<u64>(), mult in any::<u32>(), shift in 0u16..32,
    ) {
        let reference = ((u128::from(cycles) * u128::from(mult)) >> shift) as u64;
        prop_assert_eq!(cycles_to_ns(cycles, mult, shift), reference);
        // perf_event_open(2): quot * mult + ((rem * mult) >> shift).
        let quot = cycles >> shift;
        let rem = cycles & ((1u64 << shift) - 1);
        let man = quot.wrapping_mul(u64::from(mult)).wrapping_add((rem * u64::from(mult)) >> shift);
        prop_assert_eq!(cycles_to_ns(cycles, mult, shift), man);
    }

    #[test]
    fn short_timestamps_carry_across_the_mask_wrap(
        bits in 32u32..=64, at_update in any::<u64>(), elapsed in any::<u64>(),
    ) {
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let time_cycles = at_update & mask;
        let elapsed = elapsed & (mask >> 1); // less than half the counter's range
        let register = time_cycles.wrapping_add(elapsed) & mask; // may have wrapped
        prop_assert_eq!(short_cycles(register, time_cycles, mask), time_cycles.wrapping_add(elapsed));
    }

    #[test]
    fn the_time_delta_matches_a_u128_reference(
        cycles in any::<u64>(), mult in any::<u32>(), shift in 0u16..32,
        time_offset in any::<u64>(), short in any::<Option<(u64, u32)>>(),
    ) {
        let short = short.map(|(tc, bits)| {
            let bits = 32 + bits % 33;
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            (tc & mask, mask)
        });
        let conv = TimeConversion { time_shift: shift, time_mult: mult, time_offset, short };
        let effective = match short {
            Some((tc, mask)) => u128::from(tc) + (u128::from(cycles.wrapping_sub(tc)) & u128::from(mask)),
            None => u128::from(cycles),
        } % (1u128 << 64);
        let reference = (u128::from(time_offset) + ((effective * u128::from(mult)) >> shift) % (1u128 << 64)) as u64;
        prop_assert_eq!(conv.delta_ns(cycles), reference);
    }

    #[test]
    fn running_only_advances_on_the_pmu(enabled in any::<u64>(), running in any::<u64>(), delta in any::<u64>(), index in any::<u32>()) {
        let (e, r) = extrapolate(enabled, running, index, delta);
        prop_assert_eq!(e, enabled.wrapping_add(delta));
        prop_assert_eq!(r, if index == 0 { running } else { running.wrapping_add(delta) });
    }

    #[test]
    fn scaling_matches_u128_and_never_divides_by_zero(
        count in any::<u64>(), enabled in any::<u64>(), running in any::<u64>(),
    ) {
        // running > enabled is inconsistent: the raw count, unscaled.
        let reference = if running == 0 {
            None
        } else if running > enabled {
            Some(count)
        } else {
            u64::try_from(u128::from(count) * u128::from(enabled) / u128::from(running)).ok()
        };
        prop_assert_eq!(scale(count, enabled, running), reference);
    }

    #[test]
    fn scaling_huge_counts_of_a_multiplexed_event(
        count in (u64::MAX / 4)..=u64::MAX, running in 1u64..=u64::MAX,
    ) {
        // Ran a quarter of the time it was enabled: the estimate is 4x, or
        // no estimate when that does not fit.
        let enabled = running.saturating_mul(4);
        let reference = u64::try_from(u128::from(count) * u128::from(enabled) / u128::from(running)).ok();
        prop_assert_eq!(scale(count, enabled, running), reference);
        prop_assert_eq!(scale(count, running, running), Some(count));
    }
}

/// The scaled value of `Counts::scaled`, the crate's one scaling rule.
fn scale(count: u64, enabled: u64, running: u64) -> Option<u64> {
    Counts::with_times(count, enabled, running).scaled().value()
}
