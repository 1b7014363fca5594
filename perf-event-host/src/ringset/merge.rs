//! [`Merge`]: the time-ordered merge of records from several rings.

use std::collections::VecDeque;

/// A record the merge holds: where it is and what it was keyed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pending {
    /// The time the merge orders by (a record without a time takes the
    /// latest time its ring showed before it).
    pub time: u64,
    /// Arrival order: ties keep the order records were read in.
    pub seq: u64,
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

/// The key of an empty ring's front in the selection tree: after every
/// real key (a real `seq` is never `u64::MAX`).
const EMPTY: u128 = u128::MAX;

/// The `seq` bit that says the record carried a time of its own.
const TIMED: u64 = 1 << 63;

/// A held record as the queues store it: four aligned words (copied whole,
/// where `Pending`'s mixed fields made each release shuffle bytes through
/// the stack); the ring is the queue's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    /// The merge time.
    pub(crate) time: u64,
    /// Arrival order, with [`TIMED`].
    seq: u64,
    /// Position in the ring.
    pub(crate) pos: u64,
    /// Length (low half) and event (high half, `u32::MAX`: unknown).
    meta: u64,
}

impl Slot {
    /// Arrival order.
    #[inline]
    fn seq(&self) -> u64 {
        self.seq & !TIMED
    }

    /// Whether the record carried a time of its own.
    #[inline]
    pub(crate) fn timed(&self) -> bool {
        self.seq & TIMED != 0
    }

    /// Its length in bytes.
    #[inline]
    pub(crate) fn len(&self) -> u32 {
        self.meta as u32
    }

    /// Its event (`u32::MAX`: unknown).
    #[inline]
    pub(crate) fn event(&self) -> u32 {
        (self.meta >> 32) as u32
    }

    /// The public form.
    #[inline]
    fn pending(&self, ring: usize) -> Pending {
        Pending {
            time: self.time,
            seq: self.seq(),
            ring: ring as u32,
            pos: self.pos,
            len: self.len(),
            event: self.event(),
            timed: self.timed(),
        }
    }
}

/// A front's key: time, then arrival order (one compare orders both).
#[inline]
fn key(time: u64, seq: u64) -> u128 {
    (u128::from(time) << 64) | u128::from(seq)
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
/// The merge state (pure: no ring access, so it can be fuzzed alone).
/// [`super::RingSet`] applies the same rule without this queue of
/// positions: it keeps per ring only the run of records read and not yet
/// released, which are already in time order, and lends them from the
/// ring (`order.rs`, checked against a plain model as this one is).
///
/// Each ring's records wait in a queue of their own, kept sorted (a record
/// is inserted from the back, so a ring in time order costs one compare).
/// The oldest record is the winner of a tournament (loser) tree over the
/// rings' fronts: releasing it replays one path, one compare per level
/// (log2 of the rings); the tree is rebuilt (one compare per ring) only
/// when another ring's front changed, once per round when rings are
/// filled and then emptied. Whether it is safe is one compare with the
/// *horizon*, the oldest of the rings' limits (a ring's limit: the later of
/// the newest time it showed and the time a barrier round covered it to,
/// as above), which only rises and is recomputed once after the pushes
/// and round changes that moved it, not per record. Nothing is allocated
/// per record once the queues have grown to the round's size.
#[derive(Debug)]
pub struct Merge {
    queues: Vec<VecDeque<Slot>>,
    held: usize,
    rings: Vec<RingClock>,
    capacity: usize,
    seq: u64,
    /// Newest time seen so far.
    seen_max: Option<u64>,
    /// What a ring read to its head in this round is covered to.
    round_bound: Option<u64>,
    last_released: Option<u64>,
    stats: MergeStats,
    /// The tree's width: the rings rounded up to a power of two.
    width: usize,
    /// The loser of the match at each inner node `1..width` (key, ring);
    /// node `i`'s children are `2i` and `2i + 1`, ring `r`'s leaf `width + r`.
    losers: Vec<(u128, u32)>,
    /// The overall winner: the oldest front (key [`EMPTY`]: none).
    winner: (u128, u32),
    /// A front changed other than by releasing the winner: rebuild first.
    tree_stale: bool,
    /// Scratch for rebuilding: the winners of each node.
    winners: Vec<(u128, u32)>,
    /// Every record with a time up to this is safe (min over the rings'
    /// limits; `None`: none is), valid unless `horizon_stale`.
    horizon: Option<u64>,
    horizon_stale: bool,
}

impl Merge {
    /// A merge over `rings` rings holding at most `capacity` (>= 1) records.
    pub fn new(rings: usize, capacity: usize) -> Merge {
        let width = rings.next_power_of_two().max(1);
        Merge {
            queues: vec![VecDeque::new(); rings],
            held: 0,
            rings: vec![RingClock::default(); rings],
            capacity: capacity.max(1),
            seq: 0,
            seen_max: None,
            round_bound: None,
            last_released: None,
            stats: MergeStats::default(),
            width,
            losers: vec![(EMPTY, 0); width],
            winner: (EMPTY, 0),
            tree_stale: false,
            winners: vec![(EMPTY, 0); 2 * width],
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
        self.round_bound = bound;
        if bound.is_some() {
            if guarded {
                self.stats.barriers += 1;
            } else {
                self.stats.unguarded_rounds += 1;
            }
        }
    }

    /// Says ring `ring` was read up to its head in this round.
    pub fn drained(&mut self, ring: usize) {
        if let (Some(r), Some(b)) = (self.rings.get_mut(ring), self.round_bound) {
            r.covered_to = Some(r.covered_to.map_or(b, |c| c.max(b)));
            self.horizon_stale = true;
        }
    }

    /// Takes a record of `ring` at `pos`, `len` bytes, with `time` (if it
    /// has one) and `event`. Refused (`false`) when the merge is full
    /// ([`Merge::has_room`]) or `ring` is out of range: leave the record in
    /// its ring and take it later.
    #[inline]
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
        let (Some(clock), Some(q)) = (self.rings.get_mut(ring), self.queues.get_mut(ring)) else {
            return false;
        };
        if let Some(t) = time {
            if clock.last_seen.is_none_or(|s| t > s) {
                clock.last_seen = Some(t);
                // The ring's limit may have risen, and with it the horizon.
                self.horizon_stale = true;
            }
            if self.seen_max.is_none_or(|m| t > m) {
                self.seen_max = Some(t);
            }
        }
        let key = time.or(clock.last_seen).unwrap_or(0);
        let event = event.map_or(u32::MAX, |e| e.min(u32::MAX as usize - 1) as u32);
        let seq = self.seq | if time.is_some() { TIMED } else { 0 };
        let meta = u64::from(len) | u64::from(event) << 32;
        self.seq += 1;
        self.held += 1;
        self.stats.max_held = self.stats.max_held.max(self.held);
        // Sorted insert from the back: O(1) when the ring is in time order.
        // (The slot is built in the call, so it goes from registers into
        // the queue, not through the stack.)
        match q.back() {
            Some(b) if b.time <= key => q.push_back(Slot {
                time: key,
                seq,
                pos,
                meta,
            }),
            None => {
                q.push_back(Slot {
                    time: key,
                    seq,
                    pos,
                    meta,
                });
                // A new front for a ring that had none.
                self.tree_stale = true;
            }
            Some(_) => {
                let at = q.partition_point(|x| x.time <= key);
                q.insert(
                    at,
                    Slot {
                        time: key,
                        seq,
                        pos,
                        meta,
                    },
                );
                self.tree_stale |= at == 0;
            }
        }
        true
    }

    /// The key of ring `r`'s front ([`EMPTY`] when it has none).
    #[inline]
    fn front_key(&self, r: usize) -> u128 {
        self.queues[r]
            .front()
            .map_or(EMPTY, |p| key(p.time, p.seq()))
    }

    /// Rebuilds the tree from every ring's front: one match per node.
    fn rebuild(&mut self) {
        let w = self.width;
        for r in 0..w {
            let k = if r < self.queues.len() {
                self.front_key(r)
            } else {
                EMPTY
            };
            self.winners[w + r] = (k, r as u32);
        }
        for i in (1..w).rev() {
            let (a, b) = (self.winners[2 * i], self.winners[2 * i + 1]);
            let (win, lose) = if b.0 < a.0 { (b, a) } else { (a, b) };
            self.winners[i] = win;
            self.losers[i] = lose;
        }
        // The root (or, with one leaf, the leaf itself).
        self.winner = self.winners[1];
        self.tree_stale = false;
    }

    /// The winner's front changed to `k` (it was released): replays its
    /// path to the root, one match per level.
    #[inline]
    fn replay_winner(&mut self, k: u128) {
        let mut carried = (k, self.winner.1);
        let mut i = (self.width + carried.1 as usize) >> 1;
        while i >= 1 {
            let node = &mut self.losers[i];
            if node.0 < carried.0 {
                core::mem::swap(node, &mut carried);
            }
            i >>= 1;
        }
        self.winner = carried;
    }

    /// The oldest front's (time, ring) (ties: read first).
    #[inline]
    fn oldest(&self) -> Option<(u64, usize)> {
        let (k, r) = if self.tree_stale {
            (0..self.queues.len())
                .map(|r| (self.front_key(r), r as u32))
                .min()
                .unwrap_or((EMPTY, 0))
        } else {
            self.winner
        };
        (k != EMPTY).then_some(((k >> 64) as u64, r as usize))
    }

    /// Min over the rings' limits (module docs): `Some(u64::MAX)` with no
    /// rings, `None` while any ring has neither shown a time nor been
    /// covered.
    fn compute_horizon(&self) -> Option<u64> {
        let mut h = Some(u64::MAX);
        for r in &self.rings {
            h = h.min(r.limit());
        }
        h
    }

    /// Releases ring `r`'s front.
    #[inline(always)]
    fn take(&mut self, r: usize) -> Option<Slot> {
        let q = &mut self.queues[r];
        let p = q.pop_front()?;
        let next = q.front().map_or(EMPTY, |n| key(n.time, n.seq()));
        // `r` is the winner (the tree is fresh: `pop` / `flush` rebuilt it).
        self.replay_winner(next);
        self.held -= 1;
        match self.last_released {
            Some(l) if p.time < l => self.stats.out_of_order += 1,
            _ => self.last_released = Some(p.time),
        }
        self.stats.released += 1;
        Some(p)
    }

    /// The oldest record and its ring: if it is safe to release, or when
    /// the merge is full (forced), or at once with `flush`.
    #[inline]
    pub(crate) fn next_slot(&mut self, flush: bool) -> Option<(usize, Slot)> {
        if self.tree_stale {
            self.rebuild();
        }
        let (t, r) = self.oldest()?;
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
        self.take(r).map(|s| (r, s))
    }

    /// The oldest record, if it is safe to release; when the merge is full
    /// and nothing is safe, the oldest anyway (counted as forced).
    pub fn pop(&mut self) -> Option<Pending> {
        self.next_slot(false).map(|(r, s)| s.pending(r))
    }

    /// The oldest record, safe or not: for the end, when no ring can
    /// produce more.
    pub fn flush(&mut self) -> Option<Pending> {
        self.next_slot(true).map(|(r, s)| s.pending(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_that_has_not_shown_a_later_time_holds_the_others_back() {
        let mut m = Merge::new(2, 16);
        m.begin_round(None, true);
        m.push(0, 0, 8, Some(10), None);
        m.push(0, 8, 8, Some(30), None);
        m.drained(0);
        // Ring 1 has shown nothing and no barrier has passed: nothing is safe.
        assert!(m.blocked());
        assert_eq!(m.pop(), None);
        m.push(1, 0, 8, Some(20), None);
        assert_eq!(m.pop().map(|p| p.time), Some(10));
        assert_eq!(m.pop().map(|p| p.time), Some(20));
        // 30: ring 1 has shown only 20 and no barrier round covered it.
        assert_eq!(m.pop(), None);
        m.drained(1);
        assert_eq!(m.pop(), None, "read to its head, but without a barrier");
        // A round after a barrier that began once 30 had been seen.
        assert!(m.blocked());
        let bound = m.seen_max();
        assert_eq!(bound, Some(30));
        m.begin_round(bound, true);
        m.drained(0);
        assert_eq!(m.pop(), None, "ring 1 not yet read in this round");
        m.drained(1);
        assert_eq!(m.pop().map(|p| p.time), Some(30));
        assert_eq!(m.stats().forced, 0);
        assert_eq!((m.stats().barriers, m.stats().unguarded_rounds), (1, 0));
    }

    #[test]
    fn a_record_newer_than_the_barrier_s_bound_waits_for_the_next_one() {
        let mut m = Merge::new(2, 16);
        m.begin_round(None, true);
        m.push(0, 0, 8, Some(10), None);
        let bound = m.seen_max();
        // Round after a barrier covering 10; ring 0 shows 40 in it.
        m.begin_round(bound, true);
        m.push(0, 8, 8, Some(40), None);
        m.drained(0);
        m.drained(1);
        assert_eq!(m.pop().map(|p| p.time), Some(10));
        // 40 was seen after the barrier began: ring 1 may still publish 35.
        assert_eq!(m.pop(), None);
        m.begin_round(None, true);
        m.push(1, 0, 8, Some(35), None);
        m.drained(1);
        assert_eq!(m.pop().map(|p| p.time), Some(35));
        let bound = m.seen_max();
        m.begin_round(bound, false);
        m.drained(1);
        assert_eq!(m.pop().map(|p| p.time), Some(40));
        assert_eq!((m.stats().barriers, m.stats().unguarded_rounds), (1, 1));
        assert_eq!(m.stats().out_of_order, 0);
    }

    #[test]
    fn a_full_merge_releases_the_oldest_and_says_so() {
        let mut m = Merge::new(2, 2);
        m.begin_round(None, true);
        assert!(m.push(0, 0, 8, Some(5), None));
        assert!(m.push(0, 8, 8, Some(6), None));
        assert!(!m.push(0, 16, 8, Some(7), None), "full");
        // Ring 1 has shown nothing: not safe, but full.
        let forced = m.pop().unwrap();
        assert_eq!((forced.time, forced.pos), (5, 0));
        assert_eq!(m.stats().forced, 1);
        assert!(m.push(1, 0, 8, Some(1), None));
        assert_eq!(m.flush().map(|p| p.time), Some(1));
        assert_eq!(m.stats().out_of_order, 1);
    }

    #[test]
    fn untimed_records_keep_their_place_after_their_ring_s_last_time() {
        let mut m = Merge::new(1, 8);
        m.begin_round(None, true);
        m.push(0, 0, 8, Some(4), None);
        m.push(0, 8, 8, None, None);
        m.push(0, 16, 8, Some(9), None);
        let order: Vec<u64> = std::iter::from_fn(|| m.flush()).map(|p| p.pos).collect();
        assert_eq!(order, [0, 8, 16]);
    }
}

#[cfg(test)]
#[path = "merge_model.rs"]
mod model;
