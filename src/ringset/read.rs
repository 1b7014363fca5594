//! Reading the set: non-blocking drains, the time-ordered merge, holding
//! and releasing records, and the loss accounting both paths share.

use super::loss::LossRecord;
use super::{Losses, RingSet, SetRing};
use crate::ring::{Peek, RawRecord, RingError};

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

/// Lends the run `[from, to)` of ring `ring` to `to` as a span, when it
/// holds a record.
#[inline(always)]
fn lend(peek: &Peek<'_>, (from, end): (u64, u64), ring: usize, to: &mut impl Drained) {
    if from != end {
        if let Some((a, b)) = peek.span(from, end) {
            to.span(ring, a, b);
        }
    }
}

/// Frees the ring up to its oldest record still held (or everything read).
#[inline]
fn commit(ring: &mut SetRing) {
    while ring.held.front().is_some_and(|h| h.2) {
        ring.held.pop_front();
    }
    let to = ring.held.front().map_or(ring.read_pos, |h| h.0);
    if ring.buf.commit(to).is_err() {
        // Only after an overrun: the positions were reset by the walk.
        let _ = ring.buf.commit(ring.read_pos);
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

impl RingSet {
    /// Walks every ring up to its current head, in ring order (no time
    /// order across rings), calling `each(ring, event, record)`; loss
    /// records are counted (and delivered too) and every ring is freed past
    /// what was walked, except records still held by the merge. Returns the
    /// number of records walked. Never blocks.
    pub fn drain(&mut self, each: impl FnMut(usize, Option<usize>, &RawRecord<'_>)) -> usize {
        self.drain_into(&mut EachRecord(each))
    }

    /// [`RingSet::drain`], handing `to` the records and also the runs of
    /// records walked in each ring ([`Drained::span`]) before the ring is
    /// freed past them: what a writer copies as a whole (perf.data's
    /// `Writer::write_drained` writes them straight from the ring).
    pub fn drain_into(&mut self, to: &mut impl Drained) -> usize {
        let mut n = 0;
        for (r, ring) in self.rings.iter_mut().enumerate() {
            // Free the ring in slices of 1/32 as the walk goes (as a
            // reader freeing each record would), so that under a storm the
            // kernel finds room sooner; stop at the head seen at the start.
            let slice = (ring.buf.data_size() / 32).max(64) as u64;
            let mut left = (ring.buf.head() as usize).wrapping_sub(ring.read_pos as usize) as u64;
            loop {
                let SetRing {
                    buf,
                    read_pos,
                    held,
                    losses,
                    only_event,
                    ..
                } = &mut *ring;
                let mut peek = buf.peek(*read_pos);
                let start = *read_pos;
                let mut more = false;
                // The run of records delivered and not yet lent as a span.
                let mut run = (start, start);
                while let Some(item) = peek.next() {
                    match item {
                        Ok((_, rec)) => {
                            let event = match *only_event {
                                Some(e) => Some(e),
                                None => self.ident.peek(&rec, None).1,
                            };
                            if LossRecord::of(&rec).is_some() {
                                let ev = self.ident.peek(&rec, *only_event).1;
                                let el = &mut self.event_losses;
                                account(el, losses, *only_event, &rec, ev, &self.ident);
                            }
                            to.record(r, event, &rec);
                            run.1 = peek.pos();
                            n += 1;
                        }
                        Err(e) => {
                            lend(&peek, run, r, to);
                            run = (peek.pos(), peek.pos());
                            skipped(losses, held, &e)
                        }
                    }
                    let walked = (peek.pos() as usize).wrapping_sub(start as usize) as u64;
                    if walked >= left.min(slice) && peek.pos() != peek.head() {
                        more = walked < left;
                        break;
                    }
                }
                lend(&peek, run, r, to);
                let walked = (peek.pos() as usize).wrapping_sub(start as usize) as u64;
                *read_pos = peek.pos();
                commit(ring);
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
    /// seen before it is known to be in its ring (see [`super::merge`]).
    pub fn fill(&mut self) {
        // No time seen yet (a layout without TIME): a barrier could cover
        // nothing, so none is made.
        match self.merge.seen_max().filter(|_| self.merge.blocked()) {
            Some(bound) => {
                let guarded = crate::linux::membarrier::global().is_ok();
                self.merge.begin_round(Some(bound), guarded);
            }
            None => self.merge.begin_round(None, true),
        }
        for (r, ring) in self.rings.iter_mut().enumerate() {
            let SetRing {
                buf,
                read_pos,
                held,
                losses,
                only_event,
                ..
            } = ring;
            let mut peek = buf.peek(*read_pos);
            let mut complete = true;
            loop {
                if !self.merge.has_room() {
                    complete = false;
                    break;
                }
                let before = peek.pos();
                let Some(item) = peek.next() else { break };
                match item {
                    Ok((pos, rec)) => {
                        let (key, event) = self.ident.peek(&rec, *only_event);
                        let len = rec.len() as u32;
                        if !self.merge.push(r, pos, len, key.time, event) {
                            // Out of range: leave it in the ring.
                            *read_pos = before;
                            complete = false;
                            break;
                        }
                        let el = &mut self.event_losses;
                        account(el, losses, *only_event, &rec, event, &self.ident);
                        held.push_back((pos, len, false));
                    }
                    Err(e) => skipped(losses, held, &e),
                }
                *read_pos = peek.pos();
            }
            if complete {
                *read_pos = peek.pos();
                self.merge.drained(r);
            }
        }
    }

    /// The next record in time order, if it is safe to release (see
    /// [`super::merge`]); `None` means fill again (or wait first).
    #[inline]
    pub fn next_ordered(&mut self) -> Option<Held> {
        self.merge.next_slot(false).map(held)
    }

    /// The next record in time order, safe or not: for the end, once
    /// [`RingSet::all_gone`] or the events are disabled and a last
    /// [`RingSet::fill`] was made.
    #[inline]
    pub fn flush_next(&mut self) -> Option<Held> {
        self.merge.next_slot(true).map(held)
    }

    /// The bytes of a held record, lent from its ring (two parts when it
    /// wraps the ring's end). An error if the ring overran since.
    #[inline]
    pub fn record(&self, held: &Held) -> Result<RawRecord<'_>, RingError> {
        match self.rings.get(held.ring as usize) {
            Some(r) => r.buf.record_at(held.pos),
            None => Err(RingError::Corrupt {
                at: held.pos,
                size: 0,
                skipped: 0,
            }),
        }
    }

    /// Gives a held record back: its ring's `data_tail` advances past every
    /// record released before the oldest one still held.
    #[inline]
    pub fn release(&mut self, held: Held) {
        let Some(ring) = self.rings.get_mut(held.ring as usize) else {
            return;
        };
        match ring.held.front_mut() {
            // Released in ring order (the usual case): the front.
            Some(f) if f.0 == held.pos => f.2 = true,
            Some(f) => {
                let front = f.0;
                // Held positions rise (wrapping) in ring order: binary search.
                let key = (held.pos as usize).wrapping_sub(front as usize);
                if let Ok(i) = ring
                    .held
                    .binary_search_by_key(&key, |h| (h.0 as usize).wrapping_sub(front as usize))
                {
                    ring.held[i].2 = true;
                }
            }
            None => {}
        }
        commit(ring);
    }
}

#[inline]
fn held((ring, s): (usize, super::merge::Slot)) -> Held {
    Held {
        ring: ring as u32,
        pos: s.pos,
        len: s.len(),
        time: s.time,
        timed: s.timed(),
        event: s.event(),
    }
}

fn skipped(
    losses: &mut Losses,
    held: &mut std::collections::VecDeque<(u64, u32, bool)>,
    e: &RingError,
) {
    losses.skipped(e);
    // The bytes up to the head are gone; any record held from before an
    // overrun is unreadable now, so nothing held can pin the tail.
    if matches!(e, RingError::Overrun { .. }) {
        for h in held.iter_mut() {
            h.2 = true;
        }
    }
}
