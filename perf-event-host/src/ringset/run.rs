//! One ring's part of the [`Merge`](super::Merge): its *run* of records
//! taken and not released (positions follow from the lengths), the side
//! queue of records older than the ring's latest time, the stretches the
//! run steps over, and what is lent from it.

use super::entry::{front, meta};
use super::merge::RingClock;
use super::select::EMPTY;
use std::collections::VecDeque;

/// A front's key: time, then ring.
#[inline]
pub(crate) fn key(time: u64, ring: usize) -> u128 {
    (u128::from(time) << 64) | ring as u128
}

/// A record the merge knows of: where it is and what it is keyed by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Front {
    /// Position in the ring.
    pub(crate) pos: u64,
    /// The merge time (a record without a time takes its ring's latest).
    pub(crate) time: u64,
    /// Length in bytes.
    pub(crate) len: u32,
    /// Event (`u32::MAX`: unknown).
    pub(crate) event: u32,
    /// Whether the record carried a time of its own.
    pub(crate) timed: bool,
}

/// No position: records are 8-aligned (the kernel keeps them so and the
/// walk checks each size is a multiple of 8), so a record never starts at
/// `u64::MAX` unless the ring's first tail was not aligned; such a record
/// is then not kept from the kernel while lent, and reading it fails once
/// the tail passed it (never a read of bytes being written).
pub(crate) const NO_POS: u64 = u64::MAX;

/// One ring's part of the merge.
#[derive(Debug, Default)]
pub(crate) struct Run {
    /// The run's records in ring order, (merge time, meta); those before
    /// `first` were released. Their positions follow from the lengths.
    pub(crate) entries: Vec<(u64, u64)>,
    /// The run's oldest record not released.
    pub(crate) first: usize,
    /// Its position in the ring.
    pub(crate) front_pos: u64,
    /// Stretches of the ring inside the run that are not run records
    /// (side records, corrupt bytes skipped): (from, to), in ring order.
    pub(crate) skips: VecDeque<(u64, u64)>,
    /// Records older than the ring's latest time when read, sorted by time
    /// (ties: read order).
    pub(crate) side: VecDeque<Front>,
    /// The position of the oldest record lent and not yet given back
    /// ([`NO_POS`]: none).
    pub(crate) out_first: u64,
    /// The records lent after it: (position, given back), in the order
    /// lent (empty while `out_first` is [`NO_POS`]).
    pub(crate) out: VecDeque<(u64, bool)>,
    /// Where the last record [`Merge::push`] took ends (the public path
    /// only: the ring set's fill knows its positions itself).
    pub(crate) end: u64,
    /// Bytes given back since `data_tail` last moved.
    pub(crate) freed: u64,
    pub(crate) clock: RingClock,
}

impl Run {
    /// Records in the run not released.
    #[inline]
    pub(crate) fn n(&self) -> usize {
        self.entries.len() - self.first
    }

    /// The oldest position the ring must keep (`None`: nothing held).
    pub(crate) fn oldest(&self, tail: u64) -> Option<u64> {
        let d = |p: u64| (p as usize).wrapping_sub(tail as usize);
        let mut best: Option<u64> = (self.n() > 0).then_some(self.front_pos);
        let mut take = |p: u64| {
            if best.is_none_or(|b| d(p) < d(b)) {
                best = Some(p);
            }
        };
        for s in &self.side {
            take(s.pos);
        }
        if self.out_first != NO_POS {
            take(self.out_first);
        }
        for &(p, given) in &self.out {
            if !given {
                take(p);
            }
        }
        best
    }

    /// Notes the record at `pos` as lent.
    #[inline(always)]
    pub(crate) fn lend(&mut self, pos: u64) {
        if self.out_first == NO_POS {
            self.out_first = pos;
        } else {
            self.out.push_back((pos, false));
        }
    }

    /// The record at `pos` was given back; `false` if it was not lent.
    #[inline(always)]
    pub(crate) fn give_back(&mut self, pos: u64) -> bool {
        if self.out_first == pos && pos != NO_POS {
            // Given back in the order lent (the usual case).
            self.out_first = NO_POS;
            while let Some((p, given)) = self.out.pop_front() {
                if !given {
                    self.out_first = p;
                    break;
                }
            }
            return true;
        }
        match self.out.iter_mut().find(|o| o.0 == pos && !o.1) {
            Some(o) => {
                o.1 = true;
                true
            }
            None => false,
        }
    }

    /// Nothing lent can pin the tail any more (the ring overran: its bytes
    /// are gone).
    pub(crate) fn forget_lent(&mut self) {
        self.out_first = NO_POS;
        self.out.clear();
    }

    /// Whether the merge still holds records of this ring (not lent yet).
    #[inline]
    pub(crate) fn pending(&self) -> bool {
        self.n() > 0 || !self.side.is_empty()
    }

    /// Releases the run's front `e`: the next one is the following entry,
    /// at the position after it (and after what the run skips).
    #[inline(always)]
    pub(crate) fn take_front(&mut self, e: (u64, u64)) -> Front {
        let f = front(self.front_pos, e.0, e.1);
        self.first += 1;
        let mut at = (f.pos as usize).wrapping_add(f.len as usize) as u64;
        while let Some(&(from, to)) = self.skips.front() {
            if from != at {
                break;
            }
            at = to;
            self.skips.pop_front();
        }
        self.front_pos = at;
        f
    }

    /// The key of the ring's front (it is ring `r`).
    #[inline(always)]
    pub(crate) fn front_key(&self, r: usize) -> u128 {
        let a = match self.entries.get(self.first) {
            Some(e) => key(e.0, r),
            None => EMPTY,
        };
        // A side record goes first only when strictly older (it was read
        // after the run records of the same time).
        match self.side.front() {
            Some(s) if key(s.time, r) < a => key(s.time, r),
            _ => a,
        }
    }

    /// Takes the ring's record at `pos`, read in ring order; `true` when
    /// the ring's front changed (the tree must be rebuilt). The caller
    /// counts it with [`Merge::taken`].
    #[inline(always)]
    pub(crate) fn push(
        &mut self,
        pos: u64,
        len: u32,
        time: Option<u64>,
        event: Option<usize>,
    ) -> bool {
        let last = self.clock.last_seen;
        if let (Some(t), Some(l)) = (time, last) {
            if t < l {
                return self.push_side(pos, len, t, event);
            }
        }
        let fresh = self.start_if_empty(pos);
        let t = time.or(last);
        self.clock.last_seen = t;
        self.entries
            .push((t.unwrap_or(0), meta(len, time.is_some(), event)));
        fresh
    }

    /// An empty run starts anew at `pos` (whatever was skipped lies before
    /// it); whether it did.
    #[inline(always)]
    pub(crate) fn start_if_empty(&mut self, pos: u64) -> bool {
        if self.first != self.entries.len() {
            return false;
        }
        self.entries.clear();
        self.first = 0;
        self.front_pos = pos;
        self.skips.clear();
        true
    }

    /// [`Run::push`] for a record with a time of its own and `meta` made
    /// by [`timed_meta`] (the fill's fast path for samples).
    #[inline(always)]
    pub(crate) fn push_timed(&mut self, pos: u64, len: u32, t: u64, meta: u64) -> bool {
        if self.clock.last_seen.is_some_and(|l| t < l) {
            let event = meta >> 32;
            let event = (event != u64::from(u32::MAX)).then_some(event as usize);
            return self.push_side(pos, len, t, event);
        }
        let fresh = self.start_if_empty(pos);
        self.clock.last_seen = Some(t);
        self.entries.push((t, meta | u64::from(len & 0xffff)));
        fresh
    }

    /// A record older than its ring's latest time: into the side queue, in
    /// time order, and the run steps over it.
    #[cold]
    pub(crate) fn push_side(&mut self, pos: u64, len: u32, t: u64, event: Option<usize>) -> bool {
        let at = self.side.partition_point(|x| x.time <= t);
        self.side.insert(at, front(pos, t, meta(len, true, event)));
        if self.n() > 0 {
            self.skips
                .push_back((pos, (pos as usize).wrapping_add(len as usize) as u64));
        }
        at == 0
    }

    /// The walk skipped the bytes from `from` to `to` (a corrupt header):
    /// the run steps over them.
    pub(crate) fn skipped(&mut self, from: u64, to: u64) {
        if self.n() > 0 && from != to {
            self.skips.push_back((from, to));
        }
        self.end = to;
    }

    /// The ring's bytes are gone (an overrun): what the merge held of it
    /// is dropped (returns how many; count them with [`Merge::taken`]) and
    /// nothing lent can pin its tail.
    pub(crate) fn drop_all(&mut self) -> usize {
        let n = self.n() + self.side.len();
        self.entries.clear();
        self.first = 0;
        self.skips.clear();
        self.side.clear();
        self.forget_lent();
        n
    }
}
