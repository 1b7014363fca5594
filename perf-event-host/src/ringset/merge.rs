//! [`Merge`]: the time-ordered merge of records from several rings, the
//! one engine [`super::RingSet`] uses, public so that a reader of its own
//! rings can apply the same rule (and so that it is fuzzed alone:
//! positions and times in, releases out, no ring access).
//!
//! The merge keeps, per ring, only its *run* (`run.rs`): the records read and not yet
//! released, which the ring holds in time order already (the position of
//! the oldest, how many follow, and the front's key), and releases a record
//! by lending it straight from its ring and reading the next front in
//! place. Per record a fill round does the walk, the id/time peek, one
//! compare and a count; a release puts the ring's next front back into the
//! selection (`select.rs`: a sorted list, one compare when the rings are
//! written in turn, or a tree, one match per level) and reads the next
//! front's entry. The rare record older than its ring's latest time (a ring
//! shared by CPUs that interleave) waits in a small sorted side queue of
//! its ring, and the run steps over it (`skips`); so does a corrupt stretch
//! the walk skipped. Nothing is allocated per record once those (usually
//! empty) queues exist. Ties between rings go to the lower ring; within a
//! ring, ring order. `merge_model.rs` checks it against a model written the
//! plain way.

use super::entry::front;
use super::run::{key, NO_POS};
use super::run::{Front, Run};
use super::select::{Select, EMPTY};

/// A record [`Merge::pop`] or [`Merge::flush`] released: where it is and
/// what it was keyed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The time the merge orders by (a record without a time takes the
    /// latest time its ring showed before it).
    pub time: u64,
    /// Index of the ring.
    pub ring: u32,
    /// Position of the record in its ring.
    pub pos: u64,
    /// The record's size in bytes.
    pub len: u32,
    /// Its event, when known (`u32::MAX`: unknown).
    pub event: u32,
    /// Whether the record carried a time of its own.
    pub timed: bool,
}

/// What the merge did, for reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeStats {
    /// Records released.
    pub released: u64,
    /// Releases made because the capacity was reached, not because it was
    /// safe.
    pub forced: u64,
    /// Records released with a time older than one released before.
    pub out_of_order: u64,
    /// The most records held at once.
    pub max_held: usize,
    /// Fill rounds that began with a round barrier (module docs).
    pub barriers: u64,
    /// Rounds that needed a barrier the kernel refused, so perf's timing
    /// rule stood in for it (records may then come out of order, counted
    /// in `out_of_order`).
    pub unguarded_rounds: u64,
}

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RingClock {
    /// The latest time this ring showed.
    pub(crate) last_seen: Option<u64>,
    /// Every record of this ring with a time up to this one is in the
    /// merge (or was released): the ring was read to its head after a
    /// round barrier that began once this time had been seen.
    pub(crate) covered_to: Option<u64>,
}

impl RingClock {
    /// The newest time up to which this ring can bring nothing older:
    /// `t` is safe for it when `t <= limit` (`None`: nothing is).
    #[inline]
    pub(crate) fn limit(&self) -> Option<u64> {
        // `None < Some(_)`: the larger of the two known bounds.
        self.last_seen.max(self.covered_to)
    }
}

/// The time-ordered merge of records from several rings (perf's
/// `util/ordered-events.c` and the rounds of `perf record`).
///
/// Each ring is written by the kernel in the order its records were made,
/// so per ring the times do not go down (a ring shared by several CPUs
/// through PERF_EVENT_IOC_SET_OUTPUT may interleave them slightly). The
/// merge holds the records it has seen (their positions only: the bytes
/// stay in the rings) and releases the oldest one, of time `T`, only when
/// it is safe, meaning no record older than `T` can still come:
///
/// - every ring has shown a record at `T` or later (what comes next from it
///   is later still), or
/// - the ring was read up to its `data_head` after a *round barrier* that
///   began once `T` had been seen: `membarrier(MEMBARRIER_CMD_GLOBAL)`
///   (one RCU grace period, [`perf_event_core::linux::membarrier`]). The kernel takes
///   a record's time and publishes it in one section that runs with
///   preemption disabled; the barrier returns only after every such section
///   that was running when it began has ended, so every record whose time is
///   at most the newest time seen before the barrier is in its ring when the
///   ring is read after it. This is perf's round rule (`perf record`'s
///   FINISHED_ROUND: a record written while one round reads is there by the
///   end of the next) with the timing assumption replaced by a guarantee,
///   which matters where a CPU can stall mid-write for longer than a round
///   (a virtual CPU descheduled by its host; measured: 1 record in 34,279
///   out of order in a 4-vCPU TCG guest without the barrier).
///
/// The barrier costs one grace period (8-20 ms measured on a 2-CPU VM), so
/// the ring set asks for it only when a held record is blocked by a ring
/// that has not shown a later time ([`Merge::blocked`]); when the kernel
/// refuses the call (`nohz_full` CPUs, no `CONFIG_MEMBARRIER`, a seccomp
/// filter) the round falls back to perf's timing rule, counted in
/// [`MergeStats::unguarded_rounds`].
///
/// [`Merge::flush`] releases everything once no ring can produce more (the
/// targets are gone or the events disabled).
///
/// **Memory is bounded** by `capacity` held records. When it is full and
/// nothing is safe to release, the oldest record is released anyway (as
/// perf does when `ordered_events` reaches its memory limit); each such
/// release is counted in [`MergeStats::forced`] and any record that then
/// comes out older than one already released is counted in
/// [`MergeStats::out_of_order`]. Holding records also keeps them in their
/// ring (the tail cannot pass them), so a large capacity fills the rings and
/// makes the kernel drop records, counted as lost: the bound trades order
/// against loss, and both are reported.
///
/// The merge state: per ring the run of records taken and not released
/// (their times and lengths only; the positions follow from the lengths,
/// and the bytes stay in the ring). [`Merge::push`] takes a ring's records in ring order,
/// each at the position where the one before it ended (a gap is a stretch
/// the run steps over, as a corrupt header's); [`Merge::pop`] releases the
/// oldest when it is safe (or forced, the merge being full),
/// [`Merge::flush`] whatever is oldest.
#[derive(Debug)]
pub struct Merge {
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

impl Merge {
    /// A merge over `rings` rings holding at most `capacity` (>= 1) records.
    pub fn new(rings: usize, capacity: usize) -> Merge {
        Merge {
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

    /// Records held now.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Whether another record can be taken without a forced release.
    pub fn has_room(&self) -> bool {
        self.held < self.capacity
    }

    /// What the merge did so far.
    pub fn stats(&self) -> MergeStats {
        self.stats
    }

    /// The newest time seen so far: the bound a round barrier that begins
    /// now will cover.
    pub fn seen_max(&self) -> Option<u64> {
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

    /// Whether the oldest held record waits for a ring that has not shown a
    /// later time: the next round needs a barrier to release it.
    pub fn blocked(&self) -> bool {
        let horizon = if self.horizon_stale {
            self.compute_horizon()
        } else {
            self.horizon
        };
        self.oldest()
            .is_some_and(|(t, _)| horizon.is_none_or(|h| t > h))
    }

    /// Starts a fill round. `bound`: `Some(m)` when a round barrier began
    /// after `m` ([`Merge::seen_max`]) had been seen and has returned, so
    /// every ring read to its head in this round ([`Merge::drained`]) is
    /// covered up to `m`; `guarded: false` says the barrier was refused and
    /// `m` rests on perf's timing rule alone (counted).
    pub fn begin_round(&mut self, bound: Option<u64>, guarded: bool) {
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

    /// Says ring `r` was read up to its head in this round.
    pub fn drained(&mut self, r: usize) {
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

    /// Takes a record of `ring` at `pos`, `len` bytes, with `time` (if it
    /// has one) and `event`, read in ring order: at the position where the
    /// ring's previous record ended, or after it (the bytes between are
    /// stepped over, as a corrupt stretch is). Refused (`false`) when the
    /// merge is full ([`Merge::has_room`]), `ring` is out of range, or `pos`
    /// lies before the end of the ring's previous record: leave the record
    /// in its ring and take it later.
    pub fn push(
        &mut self,
        ring: usize,
        pos: u64,
        len: u32,
        time: Option<u64>,
        event: Option<usize>,
    ) -> bool {
        if self.held >= self.capacity {
            return false;
        }
        let Some(run) = self.runs.get_mut(ring) else {
            return false;
        };
        if run.n() > 0 && pos != run.end {
            // Positions count bytes in the ring's laps (mod 2^64).
            let ahead = (pos as usize).wrapping_sub(run.end as usize);
            if ahead > isize::MAX as usize {
                return false;
            }
            run.skipped(run.end, pos);
        }
        let stale = run.push(pos, len, time, event);
        run.end = (pos as usize).wrapping_add(len as usize) as u64;
        self.taken(1, 0, stale);
        self.end_ring(ring, false);
        true
    }

    /// Releases the oldest record if it is safe (or the merge is full: a
    /// forced release, counted): `None` while it may still come after a
    /// record a ring has not shown yet.
    pub fn pop(&mut self) -> Option<Pending> {
        self.take(false, false).map(|(r, f)| pending(r, f))
    }

    /// Releases the oldest record whether or not it is safe: once no ring
    /// can produce more (the targets are gone or the events disabled).
    pub fn flush(&mut self) -> Option<Pending> {
        self.take(true, false).map(|(r, f)| pending(r, f))
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

    /// The newest time [`Merge::take_safe`] may release now: every held
    /// record up to it is safe (every record, with `flush`). `None` when
    /// nothing is, or when a run has side records or skipped stretches
    /// ([`Merge::take`] handles those).
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
    /// [`Merge::safe_limit`] (no fill since, so every run is still plain:
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

    /// [`Merge::next`], the record noted as lent only when `lend` (a
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

/// The public form of a released front of ring `r`.
#[inline]
fn pending(r: usize, f: Front) -> Pending {
    Pending {
        time: f.time,
        ring: r as u32,
        pos: f.pos,
        len: f.len,
        event: f.event,
        timed: f.timed,
    }
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "merge_model.rs"]
mod model;
