//! The ring set's time-ordered merge over *runs*: the same rule as
//! [`super::merge::Merge`] (the module docs there: safety, round barriers,
//! the capacity bound and its counts), without copying records into
//! queues.
//!
//! A ring's records are written in time order, so what a fill round reads
//! of a ring is already sorted: the merge keeps, per ring, only its *run*
//! (the position of its oldest record not yet released, how many follow,
//! and the front's key), and releases a record by lending it straight from
//! its ring and reading the next front in place. Per record a fill round
//! does the walk, the id/time peek, one compare and a count; a release
//! puts the ring's next front back into the selection (`select.rs`: a
//! sorted list, one compare when the rings are written in turn, or a
//! tree, one match per level) and reads the next front's entry. The rare
//! record older than its ring's latest time (a ring shared by CPUs that
//! interleave) waits in a small sorted side queue of its ring, and the run
//! steps over it (`skips`); so does a corrupt stretch the walk skipped.
//! Nothing is allocated per record once those (usually empty) queues
//! exist.
//!
//! Ties between rings go to the lower ring (the queue-based [`Merge`]
//! orders them by arrival); within a ring, ring order.
//!
//! [`Merge`]: super::merge::Merge

use super::entry::{front, meta};
use super::merge::{MergeStats, RingClock};
use super::select::{Select, EMPTY};
use std::collections::VecDeque;

/// A front's key: time, then ring.
#[inline]
fn key(time: u64, ring: usize) -> u128 {
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
const NO_POS: u64 = u64::MAX;

/// One ring's part of the merge.
#[derive(Debug, Default)]
pub(crate) struct Run {
    /// The run's records in ring order, (merge time, meta); those before
    /// `first` were released. Their positions follow from the lengths.
    entries: Vec<(u64, u64)>,
    /// The run's oldest record not released.
    first: usize,
    /// Its position in the ring.
    front_pos: u64,
    /// Stretches of the ring inside the run that are not run records
    /// (side records, corrupt bytes skipped): (from, to), in ring order.
    skips: VecDeque<(u64, u64)>,
    /// Records older than the ring's latest time when read, sorted by time
    /// (ties: read order).
    side: VecDeque<Front>,
    /// The position of the oldest record lent and not yet given back
    /// ([`NO_POS`]: none).
    out_first: u64,
    /// The records lent after it: (position, given back), in the order
    /// lent (empty while `out_first` is [`NO_POS`]).
    out: VecDeque<(u64, bool)>,
    /// Bytes given back since `data_tail` last moved.
    pub(crate) freed: u64,
    clock: RingClock,
}

impl Run {
    /// Records in the run not released.
    #[inline]
    fn n(&self) -> usize {
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
    fn lend(&mut self, pos: u64) {
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
    fn take_front(&mut self, e: (u64, u64)) -> Front {
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
    fn front_key(&self, r: usize) -> u128 {
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
    /// counts it with [`Order::taken`].
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
    fn start_if_empty(&mut self, pos: u64) -> bool {
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
    fn push_side(&mut self, pos: u64, len: u32, t: u64, event: Option<usize>) -> bool {
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
    }

    /// The ring's bytes are gone (an overrun): what the merge held of it
    /// is dropped (returns how many; count them with [`Order::taken`]) and
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

/// The merge state of a ring set.
#[derive(Debug)]
pub(crate) struct Order {
    pub(crate) runs: Vec<Run>,
    held: usize,
    capacity: usize,
    seen_max: Option<u64>,
    round_bound: Option<u64>,
    /// The newest time released (0: none yet, which nothing is older than).
    last_released: u64,
    stats: MergeStats,
    /// Which front is the oldest.
    select: Select,
    /// A front changed other than by a release of the winner.
    tree_stale: bool,
    /// Every record with a time up to this is safe (min over the rings'
    /// limits), valid unless `horizon_stale`.
    horizon: Option<u64>,
    horizon_stale: bool,
}

impl Order {
    pub(crate) fn new(rings: usize, capacity: usize) -> Order {
        Order {
            runs: (0..rings)
                .map(|_| Run {
                    out_first: NO_POS,
                    ..Run::default()
                })
                .collect(),
            held: 0,
            capacity: capacity.max(1),
            seen_max: None,
            round_bound: None,
            last_released: 0,
            stats: MergeStats::default(),
            select: Select::new(rings),
            tree_stale: true,
            horizon: None,
            horizon_stale: true,
        }
    }

    pub(crate) fn stats(&self) -> MergeStats {
        self.stats
    }

    pub(crate) fn seen_max(&self) -> Option<u64> {
        self.seen_max
    }

    fn compute_horizon(&self) -> Option<u64> {
        let mut h = Some(u64::MAX);
        for r in &self.runs {
            h = h.min(r.clock.limit());
        }
        h
    }

    /// The key of ring `r`'s front.
    #[inline]
    fn front_key(&self, r: usize) -> u128 {
        self.runs[r].front_key(r)
    }

    /// The oldest front's (time, ring).
    fn oldest(&self) -> Option<(u64, usize)> {
        let (k, r) = if self.tree_stale {
            (0..self.runs.len())
                .map(|r| (self.front_key(r), r as u32))
                .min()
                .unwrap_or((EMPTY, 0))
        } else {
            self.select.winner()
        };
        (k != EMPTY).then_some(((k >> 64) as u64, r as usize))
    }

    /// Whether the oldest record waits for a ring that has not shown a
    /// later time (the next round needs a barrier).
    pub(crate) fn blocked(&self) -> bool {
        let horizon = if self.horizon_stale {
            self.compute_horizon()
        } else {
            self.horizon
        };
        self.oldest()
            .is_some_and(|(t, _)| horizon.is_none_or(|h| t > h))
    }

    /// Starts a fill round (see [`super::merge::Merge::begin_round`]).
    pub(crate) fn begin_round(&mut self, bound: Option<u64>, guarded: bool) {
        for run in &mut self.runs {
            // Drop what was released once it is most of the run: each
            // entry moves at most once per time the run doubles.
            if run.first > 0 && run.first >= run.n() {
                run.entries.drain(..run.first);
                run.first = 0;
            }
        }
        self.round_bound = bound;
        if bound.is_some() {
            if guarded {
                self.stats.barriers += 1;
            } else {
                self.stats.unguarded_rounds += 1;
            }
        }
    }

    /// Ring `r` was read to its head in this round.
    fn drained(&mut self, r: usize) {
        if let (Some(run), Some(b)) = (self.runs.get_mut(r), self.round_bound) {
            let c = &mut run.clock.covered_to;
            *c = Some(c.map_or(b, |c| c.max(b)));
            self.horizon_stale = true;
        }
    }

    /// Records that can be taken before the merge is full.
    #[inline]
    pub(crate) fn room(&self) -> usize {
        self.capacity.saturating_sub(self.held)
    }

    /// Takes the record of ring `r` at `pos`, read in ring order (for the
    /// tests; a fill round pushes into the run and calls
    /// [`Order::end_ring`] once).
    #[cfg(test)]
    pub(crate) fn push(
        &mut self,
        r: usize,
        pos: u64,
        len: u32,
        time: Option<u64>,
        event: Option<usize>,
    ) {
        if let Some(run) = self.runs.get_mut(r) {
            let stale = run.push(pos, len, time, event);
            self.taken(1, 0, stale);
        }
    }

    /// `n` records were pushed into runs and `dropped` dropped from them
    /// ([`Run::drop_all`]); `stale`: a front changed.
    #[inline]
    pub(crate) fn taken(&mut self, n: usize, dropped: usize, stale: bool) {
        self.held = (self.held + n).saturating_sub(dropped);
        self.tree_stale |= stale;
    }

    /// Ring `r`'s pushes of this round are done (`drained`: it was read to
    /// its head): the newest time seen, the most held, and the ring's
    /// limit are brought up to date once here rather than per record.
    pub(crate) fn end_ring(&mut self, r: usize, drained: bool) {
        let Some(run) = self.runs.get(r) else {
            return;
        };
        if let Some(t) = run.clock.last_seen {
            if self.seen_max.is_none_or(|m| t > m) {
                self.seen_max = Some(t);
            }
        }
        self.horizon_stale = true;
        self.stats.max_held = self.stats.max_held.max(self.held);
        if drained {
            self.drained(r);
        }
    }

    /// Rebuilds the selection from every ring's front.
    #[cold]
    fn rebuild(&mut self) {
        let runs = &self.runs;
        self.select.rebuild(runs.len(), |r| runs[r].front_key(r));
        self.tree_stale = false;
    }

    /// The newest time [`Order::take_safe`] may release now: every held
    /// record up to it is safe (every record, with `flush`). `None` when
    /// nothing is, or when a run has side records or skipped stretches
    /// ([`Order::take`] handles those).
    pub(crate) fn safe_limit(&mut self, flush: bool) -> Option<u64> {
        if self.tree_stale {
            self.rebuild();
        }
        if self
            .runs
            .iter()
            .any(|r| !r.side.is_empty() || !r.skips.is_empty())
        {
            return None;
        }
        if flush {
            return Some(u64::MAX);
        }
        if self.horizon_stale {
            self.horizon = self.compute_horizon();
            self.horizon_stale = false;
        }
        self.horizon
    }

    /// The oldest record if its time is at most `limit`, from
    /// [`Order::safe_limit`] (no fill since, so every run is still plain:
    /// its front is its next entry), not lent.
    #[inline(always)]
    pub(crate) fn take_safe(&mut self, limit: u64) -> Option<(usize, Front)> {
        // Something held: the winner is a front (not EMPTY).
        let (k, r) = self.select.winner();
        if self.held == 0 || (k >> 64) as u64 > limit {
            return None;
        }
        let r = r as usize;
        let run = self.runs.get_mut(r)?;
        let e = *run.entries.get(run.first)?;
        run.first += 1;
        let pos = run.front_pos;
        run.front_pos = (pos as usize).wrapping_add((e.1 & 0xffff) as usize) as u64;
        let next = match run.entries.get(run.first) {
            Some(n) => key(n.0, r),
            None => EMPTY,
        };
        self.select.replay(next);
        self.held -= 1;
        if e.0 < self.last_released {
            self.stats.out_of_order += 1;
        } else {
            self.last_released = e.0;
        }
        self.stats.released += 1;
        Some((r, front(pos, e.0, e.1)))
    }

    /// The oldest record, if it is safe to release (or the merge is full,
    /// counted as forced, or `flush`), noted as lent in its ring.
    #[inline(always)]
    pub(crate) fn next(&mut self, flush: bool) -> Option<(usize, Front)> {
        self.take(flush, true)
    }

    /// [`Order::next`], the record noted as lent only when `lend` (a
    /// caller that is done with it before the next call does not lend it:
    /// it counts the bytes as given back itself).
    #[inline(always)]
    pub(crate) fn take(&mut self, flush: bool, lend: bool) -> Option<(usize, Front)> {
        if self.tree_stale {
            self.rebuild();
        }
        // Nothing held: every front is empty.
        if self.held == 0 {
            return None;
        }
        let (k, r) = self.select.winner();
        let t = (k >> 64) as u64;
        let r = r as usize;
        if !flush {
            if self.horizon_stale {
                self.horizon = self.compute_horizon();
                self.horizon_stale = false;
            }
            if self.horizon.is_none_or(|h| t > h) {
                if self.held < self.capacity {
                    return None;
                }
                self.stats.forced += 1;
            }
        }
        let run = self.runs.get_mut(r)?;
        let f = match (run.side.front(), run.entries.get(run.first).copied()) {
            (Some(s), Some(e)) if s.time >= e.0 => run.take_front(e),
            (Some(_), _) => run.side.pop_front()?,
            (None, Some(e)) => run.take_front(e),
            (None, None) => return None,
        };
        if lend {
            run.lend(f.pos);
        }
        let next = run.front_key(r);
        self.select.replay(next);
        self.held -= 1;
        if f.time < self.last_released {
            self.stats.out_of_order += 1;
        } else {
            self.last_released = f.time;
        }
        self.stats.released += 1;
        Some((r, f))
    }
}

#[cfg(test)]
#[path = "order_model.rs"]
mod model;
