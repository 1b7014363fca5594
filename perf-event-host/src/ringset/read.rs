//! Reading the set: non-blocking drains, the time-ordered merge, holding
//! and releasing records, and the loss accounting both paths share.

use super::entry::timed_meta;
use super::ident::u64_at;
use super::loss::LossRecord;
use super::run::{Front, Run};
use super::{Losses, RingSet, SetRing};
use core::ops::ControlFlow;
use perf_event_core::ring::{Peek, RawRecord, RingBuffer, RingError};
use perf_event_core::sys;

/// A record the merge released to the caller. Its bytes stay in the ring
/// (read them with [`RingSet::record`]) and the ring's `data_tail` does not
/// pass it until it is given back with [`RingSet::release`]; several can be
/// held at once, from any rings.
#[must_use = "a held record keeps its ring from being freed until released"]
#[derive(Debug, PartialEq, Eq)]
pub struct Held {
    ring: u32,
    pos: u64,
    len: u32,
    time: u64,
    timed: bool,
    event: u32,
}

impl Held {
    /// The ring it is in.
    pub fn ring(&self) -> usize {
        self.ring as usize
    }

    /// Its time, if the record has one.
    pub fn time(&self) -> Option<u64> {
        self.timed.then_some(self.time)
    }

    /// The time it was merged by (a record without a time takes its ring's
    /// latest time before it).
    pub fn merge_time(&self) -> u64 {
        self.time
    }

    /// Its event, if known.
    pub fn event(&self) -> Option<usize> {
        (self.event != u32::MAX).then_some(self.event as usize)
    }

    /// Its size in bytes, header included.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Never true: a record holds at least its header.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Counts a loss record in its ring and event.
#[inline]
fn account(
    set_losses: &mut [Losses],
    ring: &mut Losses,
    only_event: Option<usize>,
    rec: &RawRecord<'_>,
    event: Option<usize>,
    ident: &super::Identify,
) {
    match LossRecord::of(rec) {
        None => {}
        Some(LossRecord::Lost { id, lost }) => {
            ring.lost += lost;
            ring.lost_records += 1;
            let ev = ident.event_of(id).or(only_event).or(event);
            if let Some(l) = ev.and_then(|e| set_losses.get_mut(e)) {
                l.lost += lost;
                l.lost_records += 1;
            }
        }
        Some(LossRecord::LostSamples { lost }) => {
            ring.lost_samples += lost;
            if let Some(l) = event.and_then(|e| set_losses.get_mut(e)) {
                l.lost_samples += lost;
            }
        }
    }
}

/// Lends the bytes `[from, to)` of ring `ring` to `to` as a span, when
/// they hold a record.
#[inline(always)]
fn lend(peek: &Peek<'_>, (from, end): (u64, u64), ring: usize, to: &mut impl Drained) {
    if from != end {
        if let Some((a, b)) = peek.span(from, end) {
            to.span(ring, a, b);
        }
    }
}

/// Frees the ring up to its oldest record still held by the merge or lent
/// (or everything read).
#[inline]
fn commit(buf: &mut RingBuffer, read_pos: u64, run: &mut Run) {
    run.freed = 0;
    let to = run.oldest(buf.tail()).unwrap_or(read_pos);
    if buf.commit(to).is_err() {
        // Only after an overrun: the positions were reset by the walk.
        let _ = buf.commit(read_pos);
    }
}

/// `len` bytes of ring `ring` were given back: its `data_tail` moves once
/// 1/32 of the ring was, or at once when the merge holds nothing more of
/// it.
#[inline(always)]
fn freed(ring: &mut SetRing, run: &mut Run, len: u32) {
    run.freed += u64::from(len);
    if run.freed >= ring.slice || !run.pending() {
        commit(&mut ring.buf, ring.read_pos, run);
    }
}

/// What [`RingSet::drain_into`] hands its records to: each record as
/// [`RingSet::drain`] lends it, and, before the ring is freed past them,
/// the runs of records just walked as the kernel wrote them.
pub trait Drained {
    /// One record of ring `ring` (loss records included), with the event
    /// its sample id names, when known.
    fn record(&mut self, ring: usize, event: Option<usize>, rec: &RawRecord<'_>);

    /// The bytes of every record of ring `ring` delivered to
    /// [`Drained::record`] since the last span of that ring, in one part,
    /// or two when they wrap around the ring's end; called before the ring
    /// is freed past them (a span never covers bytes skipped after an
    /// overrun or a corrupt header). The default ignores them.
    fn span(&mut self, ring: usize, first: &[u8], second: &[u8]) {
        let _ = (ring, first, second);
    }
}

/// A closure as a [`Drained`] that takes the records only.
struct EachRecord<F>(F);

impl<F: FnMut(usize, Option<usize>, &RawRecord<'_>)> Drained for EachRecord<F> {
    #[inline(always)]
    fn record(&mut self, ring: usize, event: Option<usize>, rec: &RawRecord<'_>) {
        (self.0)(ring, event, rec)
    }
}

/// Bytes of all the rings [`RingSet::drain_ordered`] reads before it hands
/// over what is safe: each ring's window is this much over the rings, from
/// 1 to 16 KiB (2 KiB with 16 rings, 16 KiB with 1 or 2), so that what the
/// merge reads twice (to order, then to hand over) stays in the L1 cache
/// between the two reads. Measured with 16 rings of 5,000 small samples
/// (2026-11-26, loaded): windows of 1, 2, 4 and 16 KiB took 16.1-16.4,
/// 15.5-16.5, 16.1-18.2 and 19.1-19.2 ns per record (48 KiB of L1d); with 4
/// rings 1 to 16 KiB took the same time.
const ORDER_BUDGET: u64 = 32 << 10;

impl RingSet {
    /// Walks every ring up to its current head, in ring order (no time
    /// order across rings), calling `each(ring, event, record)`; loss
    /// records are counted (and delivered too) and every ring is freed past
    /// what was walked, except records still held by the merge. Returns the
    /// number of records walked. Never blocks.
    #[inline]
    pub fn drain(&mut self, each: impl FnMut(usize, Option<usize>, &RawRecord<'_>)) -> usize {
        self.drain_into(&mut EachRecord(each))
    }

    /// [`RingSet::drain`], handing `to` the records and also the runs of
    /// records walked in each ring ([`Drained::span`]) before the ring is
    /// freed past them: what a writer copies as a whole (perf.data's
    /// `Writer::write_drained` writes them straight from the ring).
    #[inline]
    pub fn drain_into(&mut self, to: &mut impl Drained) -> usize {
        let mut n = 0;
        for (r, ring) in self.rings.iter_mut().enumerate() {
            // Free the ring in slices of 1/32 as the walk goes (as a
            // reader freeing each record would), so that under a storm the
            // kernel finds room sooner; stop at the head seen at the start.
            let slice = ring.slice;
            let mut left = (ring.buf.head() as usize).wrapping_sub(ring.read_pos as usize) as u64;
            loop {
                let SetRing {
                    buf,
                    read_pos,
                    losses,
                    only_event,
                    ..
                } = &mut *ring;
                let run = &mut self.order.runs[r];
                let mut peek = buf.peek(*read_pos);
                let start = *read_pos;
                let mut more = false;
                // The records delivered and not yet lent as a span.
                let mut span = (start, start);
                let (head, bound) = (peek.head(), left.min(slice));
                let ident = &self.ident;
                let event_losses = &mut self.event_losses;
                loop {
                    let stopped = peek.each(|_, after, rec| {
                        let event = match *only_event {
                            Some(e) => Some(e),
                            None => ident.peek(&rec, None).1,
                        };
                        if LossRecord::of(&rec).is_some() {
                            let ev = ident.peek(&rec, *only_event).1;
                            account(event_losses, losses, *only_event, &rec, ev, ident);
                        }
                        to.record(r, event, &rec);
                        span.1 = after;
                        n += 1;
                        let walked = (after as usize).wrapping_sub(start as usize) as u64;
                        if walked >= bound && after != head {
                            more = walked < left;
                            return ControlFlow::Break(());
                        }
                        ControlFlow::Continue(())
                    });
                    let Some(e) = stopped else { break };
                    lend(&peek, span, r, to);
                    span = (peek.pos(), peek.pos());
                    losses.skipped(&e);
                    // The bytes up to the head are gone; anything lent from
                    // before an overrun is unreadable now, so nothing lent
                    // can pin the tail.
                    if matches!(e, RingError::Overrun { .. }) {
                        run.forget_lent();
                    }
                    // After an error the walk goes on from where it
                    // restarted (the tail) or ends (at the head).
                    let walked = (peek.pos() as usize).wrapping_sub(start as usize) as u64;
                    if walked >= bound && peek.pos() != head {
                        more = walked < left;
                        break;
                    }
                }
                lend(&peek, span, r, to);
                let walked = (peek.pos() as usize).wrapping_sub(start as usize) as u64;
                *read_pos = peek.pos();
                commit(buf, *read_pos, run);
                left = left.saturating_sub(walked);
                if !more {
                    break;
                }
            }
        }
        n
    }

    /// One fill round of the time-ordered merge: reads every ring up to its
    /// head (or until the merge is full) without freeing anything, counting
    /// loss records. Then take records with [`RingSet::next_ordered`].
    ///
    /// The merge orders by PERF_SAMPLE_TIME (with `sample_id_all` for the
    /// records that are not samples): events without it give the merge no
    /// time to order by, so nothing becomes safe before the capacity is
    /// reached or [`RingSet::flush_next`]; read them with
    /// [`RingSet::drain`] instead.
    ///
    /// When a held record waits for a ring that has not shown a later time,
    /// the round begins with a barrier (`membarrier(2)`, one RCU grace
    /// period: milliseconds) after which every record up to the newest time
    /// seen before it is known to be in its ring (see [`Merge`](super::Merge)).
    pub fn fill(&mut self) {
        self.begin_fill();
        for r in 0..self.rings.len() {
            let room = self.order.room();
            self.fill_ring::<false>(r, room, (0, u64::MAX));
        }
    }

    /// Starts a fill round: the barrier first when a held record waits
    /// for a ring that has not shown a later time.
    fn begin_fill(&mut self) {
        // No time seen yet (a layout without TIME): a barrier could cover
        // nothing, so none is made.
        match self.order.seen_max().filter(|_| self.order.blocked()) {
            Some(bound) => {
                let guarded = perf_event_core::linux::membarrier::global().is_ok();
                self.order.begin_round(Some(bound), guarded);
            }
            None => self.order.begin_round(None, true),
        }
    }

    /// Reads ring `r` into the merge: at most `room` records and, when
    /// `WINDOW`, with `window` = (stop, bytes), not past position `stop`
    /// nor more than about `bytes` bytes. Returns whether the ring was read
    /// to its end (its head, or `stop`).
    #[inline(always)]
    fn fill_ring<const WINDOW: bool>(&mut self, r: usize, room: usize, window: (u64, u64)) -> bool {
        let (Some(ring), Some(run)) = (self.rings.get_mut(r), self.order.runs.get_mut(r)) else {
            return true;
        };
        let SetRing {
            buf,
            read_pos,
            losses,
            only_event,
            ..
        } = ring;
        // Whether `pos` reached the window's stop (positions wrap).
        let (stop, bytes) = window;
        let at_stop = |pos: u64| WINDOW && pos.wrapping_sub(stop) as i64 >= 0;
        if at_stop(*read_pos) {
            self.order.end_ring(r, true);
            return true;
        }
        // What was given back since the last commit is freed now.
        if run.freed > 0 {
            commit(buf, *read_pos, run);
        }
        let start = *read_pos;
        let mut peek = buf.peek(start);
        let (mut taken, mut dropped, mut stale) = (0, 0, false);
        let full;
        let mut stopped_at_end = false;
        let ident = &self.ident;
        let event_losses = &mut self.event_losses;
        // A ring of one event whose samples have their time at a fixed
        // place: a sample's time is read there and its event is that one
        // (what `peek` finds, without the id).
        let sample_time = only_event.and(ident.uniform_sample_time());
        let meta = timed_meta(*only_event);
        loop {
            if taken == room {
                full = true;
                break;
            }
            let stopped = peek.each(|pos, after, rec| {
                let fast = match sample_time {
                    Some(off) if rec.header.kind == sys::PERF_RECORD_SAMPLE => {
                        u64_at(&rec, usize::from(off))
                    }
                    _ => None,
                };
                stale |= match fast {
                    Some(t) => run.push_timed(pos, rec.len() as u32, t, meta),
                    None => {
                        let (key, event) = ident.peek(&rec, *only_event);
                        if LossRecord::of(&rec).is_some() {
                            account(event_losses, losses, *only_event, &rec, event, ident);
                        }
                        run.push(pos, rec.len() as u32, key.time, event)
                    }
                };
                taken += 1;
                if at_stop(after) {
                    stopped_at_end = true;
                    return ControlFlow::Break(());
                }
                if taken == room || (WINDOW && after.wrapping_sub(start) >= bytes) {
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            let Some(e) = stopped else {
                // At the head, or stopped: by `room` (full), by the
                // window's bytes (not at the end), or at `stop`.
                full = taken == room && !stopped_at_end;
                if !stopped_at_end && peek.pos() != peek.head() && !full {
                    // The window's bytes: more to read in this round.
                    self.order.taken(taken, dropped, stale);
                    *read_pos = peek.pos();
                    self.order.end_ring(r, false);
                    return false;
                }
                break;
            };
            losses.skipped(&e);
            match e {
                // The ring is not to be trusted, or the walk restarted
                // from its tail: what the merge held of it is gone.
                RingError::Overrun { .. } | RingError::Corrupt { skipped: 0, .. } => {
                    dropped += run.drop_all();
                    stale = true;
                }
                // A corrupt header at `at`: the walk skipped to the head.
                RingError::Corrupt { at, .. } => run.skipped(at, peek.pos()),
                _ => {}
            }
        }
        self.order.taken(taken, dropped, stale);
        *read_pos = peek.pos();
        self.order.end_ring(r, !full);
        !full
    }

    /// The next record in time order, if it is safe to release (see
    /// [`Merge`](super::Merge)); `None` means fill again (or wait first).
    #[inline]
    pub fn next_ordered(&mut self) -> Option<Held> {
        self.next_held(false)
    }

    /// The next record in time order, safe or not: for the end, once
    /// [`RingSet::all_gone`] or the events are disabled and a last
    /// [`RingSet::fill`] was made.
    #[inline]
    pub fn flush_next(&mut self) -> Option<Held> {
        self.next_held(true)
    }

    #[inline(always)]
    fn next_held(&mut self, flush: bool) -> Option<Held> {
        self.order.next(flush).map(held)
    }

    /// The bytes of a held record, lent from its ring (two parts when it
    /// wraps the ring's end). An error if the ring overran since.
    #[inline]
    pub fn record(&self, held: &Held) -> Result<RawRecord<'_>, RingError> {
        match self.rings.get(held.ring as usize) {
            Some(r) => r.buf.record_known(held.pos, held.len as usize),
            None => Err(RingError::Corrupt {
                at: held.pos,
                size: 0,
                skipped: 0,
            }),
        }
    }

    /// One round of the time-ordered merge by internal iteration: a
    /// [`RingSet::fill`], then every record safe to release (every record
    /// held, when `flush`: the events are disabled and this is the last
    /// round) handed to `each` in time order, each given back as soon as
    /// `each` returns. What [`RingSet::fill`] + [`RingSet::next_ordered`] /
    /// [`RingSet::flush_next`] + [`RingSet::release`] do, without lending:
    /// for a reader done with each record before the next. A record whose
    /// ring overran since it was read is skipped (its bytes are gone; the
    /// overrun is counted in the ring's [`super::Losses`]). Returns the
    /// records handed to `each`.
    #[inline]
    pub fn drain_ordered(
        &mut self,
        flush: bool,
        mut each: impl FnMut(&Held, &RawRecord<'_>),
    ) -> usize {
        self.begin_fill();
        for ring in &mut self.rings {
            ring.round_stop = ring.buf.head();
        }
        // The rings are read a window at a time, each window's safe
        // records released before the next is read: what the merge reads
        // twice (to order, then to hand over) is still in the cache the
        // second time, however many rings there are.
        let window = (ORDER_BUDGET / self.rings.len().max(1) as u64).clamp(1 << 10, 16 << 10);
        let mut n = 0;
        loop {
            let mut open = false;
            for r in 0..self.rings.len() {
                let room = self.order.room();
                let stop = self.rings[r].round_stop;
                if !self.fill_ring::<true>(r, room, (stop, window)) {
                    open = true;
                }
            }
            n += self.hand_over(false, &mut each);
            if !open {
                break;
            }
        }
        if flush {
            n += self.hand_over(true, &mut each);
        }
        n
    }

    /// Hands every record safe to release (every record, when `flush`) to
    /// `each`, in time order, each given back as soon as `each` returns.
    #[inline(always)]
    fn hand_over(&mut self, flush: bool, each: &mut impl FnMut(&Held, &RawRecord<'_>)) -> usize {
        let mut n = 0;
        // What is safe, from plain runs, first; then the rest (forced
        // releases, side records) one checked record at a time.
        if let Some(limit) = self.order.safe_limit(flush) {
            while let Some(rf) = self.order.take_safe(limit) {
                n += self.hand(rf, each);
            }
        }
        while let Some(rf) = self.order.take(flush, false) {
            n += self.hand(rf, each);
        }
        n
    }

    /// Hands the record `f` of ring `r`, just released by the merge, to
    /// `each` and gives it back. Returns 1, or 0 if its ring overran.
    #[inline(always)]
    fn hand(
        &mut self,
        (r, f): (usize, Front),
        each: &mut impl FnMut(&Held, &RawRecord<'_>),
    ) -> usize {
        let (Some(ring), Some(run)) = (self.rings.get_mut(r), self.order.runs.get_mut(r)) else {
            return 0;
        };
        let held = held((r, f));
        let mut n = 0;
        if let Ok(rec) = ring.buf.record_known(held.pos, held.len as usize) {
            each(&held, &rec);
            n = 1;
        }
        freed(ring, run, held.len);
        n
    }

    /// Gives a held record back: its ring's `data_tail` advances past
    /// every record given back before the oldest one still held or lent, at
    /// once when the merge holds nothing more of that ring, otherwise once
    /// 1/32 of the ring was given back, or at the next fill.
    #[inline]
    pub fn release(&mut self, held: Held) {
        let r = held.ring as usize;
        let (Some(ring), Some(run)) = (self.rings.get_mut(r), self.order.runs.get_mut(r)) else {
            return;
        };
        if !run.give_back(held.pos) {
            return;
        }
        freed(ring, run, held.len);
    }
}

#[inline]
fn held((ring, f): (usize, Front)) -> Held {
    Held {
        ring: ring as u32,
        pos: f.pos,
        len: f.len,
        time: f.time,
        timed: f.timed,
        event: f.event,
    }
}
