//! A run entry of the merge (`run::Run`): the record's time and a packed
//! `meta` word (length, whether it carried a time, event), and the
//! [`Front`] made back from them.

use super::run::Front;

/// A run entry's `meta`: length (low 16 bits: a record is at most 64 KiB),
/// whether it carried a time (bit 16), event (high 32 bits).
pub(super) const TIMED: u64 = 1 << 16;

#[inline]
pub(super) fn meta(len: u32, timed: bool, event: Option<usize>) -> u64 {
    let event = event.map_or(u32::MAX, |e| e.min(u32::MAX as usize - 1) as u32);
    u64::from(len & 0xffff) | if timed { TIMED } else { 0 } | u64::from(event) << 32
}

/// A run entry's `meta` for a record of `event` with a time of its own,
/// its length left out (for [`Run::push_timed`]).
#[inline]
pub(crate) fn timed_meta(event: Option<usize>) -> u64 {
    meta(0, true, event)
}

#[inline]
pub(super) fn front(pos: u64, time: u64, meta: u64) -> Front {
    Front {
        pos,
        time,
        len: (meta & 0xffff) as u32,
        event: (meta >> 32) as u32,
        timed: meta & TIMED != 0,
    }
}
