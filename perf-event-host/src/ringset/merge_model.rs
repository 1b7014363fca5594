//! The merge against a model written the plain way (every held record
//! in one list, the oldest found by a scan, safety checked ring by ring):
//! the same records out, at the same positions, in the same order (ties:
//! time, then ring, then read order), with the same counts, over random
//! pushes, rounds, corrupt stretches and releases.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rec {
    time: u64,
    ring: usize,
    seq: u64,
    pos: u64,
    len: u32,
}

struct Model {
    held: Vec<Rec>,
    clocks: Vec<RingClock>,
    capacity: usize,
    seq: u64,
    seen_max: Option<u64>,
    round_bound: Option<u64>,
    last_released: Option<u64>,
    stats: MergeStats,
}

impl Model {
    fn oldest(&self) -> Option<usize> {
        (0..self.held.len()).min_by_key(|&i| {
            let h = &self.held[i];
            (h.time, h.ring, h.seq)
        })
    }
    fn safe(&self, t: u64) -> bool {
        self.clocks
            .iter()
            .all(|r| r.last_seen.is_some_and(|s| s >= t) || r.covered_to.is_some_and(|c| t <= c))
    }
    fn take(&mut self, i: usize) -> Rec {
        let p = self.held.remove(i);
        if self.last_released.is_some_and(|l| p.time < l) {
            self.stats.out_of_order += 1;
        }
        self.last_released = Some(self.last_released.map_or(p.time, |l| l.max(p.time)));
        self.stats.released += 1;
        p
    }
    fn next(&mut self, flush: bool) -> Option<Rec> {
        let i = self.oldest()?;
        if flush || self.safe(self.held[i].time) {
            Some(self.take(i))
        } else if self.held.len() >= self.capacity {
            self.stats.forced += 1;
            Some(self.take(i))
        } else {
            None
        }
    }
    fn push(&mut self, ring: usize, pos: u64, len: u32, time: Option<u64>) {
        let clock = &mut self.clocks[ring];
        if let Some(t) = time {
            clock.last_seen = Some(clock.last_seen.map_or(t, |s| s.max(t)));
            self.seen_max = Some(self.seen_max.map_or(t, |m| m.max(t)));
        }
        self.held.push(Rec {
            time: time.or(clock.last_seen).unwrap_or(0),
            ring,
            seq: self.seq,
            pos,
            len,
        });
        self.seq += 1;
        self.stats.max_held = self.stats.max_held.max(self.held.len());
    }
}

#[test]
fn the_run_merge_does_what_the_plain_model_does() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for case in 0..300 {
        // Up to 17 rings, and some cases past the sorted list's 64.
        let rings = 1 + rnd(if case % 10 == 9 { 90 } else { 17 }) as usize;
        let capacity = 1 + rnd(if case % 2 == 0 { 8 } else { 200 }) as usize;
        let mut o = Merge::new(rings, capacity);
        let mut model = Model {
            held: Vec::new(),
            clocks: vec![RingClock::default(); rings],
            capacity,
            seq: 0,
            seen_max: None,
            round_bound: None,
            last_released: None,
            stats: MergeStats::default(),
        };
        let mut clock = vec![0u64; rings];
        // Where each ring's next record is.
        let mut cursor: Vec<u64> = (0..rings).map(|_| rnd(1 << 20) * 8).collect();
        for step in 0..2000u64 {
            match rnd(10) {
                0 => {
                    let bound = if o.blocked() { o.seen_max() } else { None };
                    let guarded = rnd(4) != 0;
                    o.begin_round(bound, guarded);
                    model.round_bound = bound;
                    if bound.is_some() {
                        if guarded {
                            model.stats.barriers += 1;
                        } else {
                            model.stats.unguarded_rounds += 1;
                        }
                    }
                }
                1 => {
                    let r = rnd(rings as u64) as usize;
                    if rnd(3) == 0 {
                        // A corrupt stretch the walk skipped.
                        let gap = 8 * (1 + rnd(8));
                        o.runs[r].skipped(cursor[r], cursor[r] + gap);
                        cursor[r] += gap;
                    }
                    o.end_ring(r, true);
                    if let Some(b) = model.round_bound {
                        let c = &mut model.clocks[r].covered_to;
                        *c = Some(c.map_or(b, |v| v.max(b)));
                    }
                }
                2..=5 => {
                    let r = rnd(rings as u64) as usize;
                    // Mostly rising per ring; sometimes older, equal or none.
                    let time = match rnd(12) {
                        0 => None,
                        1 => Some(clock[r].saturating_sub(rnd(40))),
                        2 => Some(clock[r]),
                        _ => {
                            clock[r] += rnd(30);
                            Some(clock[r])
                        }
                    };
                    assert_eq!(o.room() > 0, model.held.len() < capacity);
                    if o.room() > 0 {
                        let len = 8 * (1 + rnd(4) as u32);
                        assert!(o.push(r, cursor[r], len, time, None));
                        model.push(r, cursor[r], len, time);
                        cursor[r] += u64::from(len);
                    }
                }
                k => {
                    let flush = k == 9;
                    // `drain_ordered`'s way (what is safe from plain runs
                    // first, not lent) or the lending one.
                    let fast = k == 8 || (flush && step % 2 == 0);
                    let got = if fast {
                        match o.safe_limit(flush).and_then(|l| o.take_safe(l)) {
                            Some(rf) => Some(rf),
                            None => o.take(flush, false),
                        }
                    } else {
                        o.next(flush)
                    };
                    let got = got.map(|(r, f)| (r, f.pos, f.len, f.time));
                    let want = model.next(flush).map(|p| (p.ring, p.pos, p.len, p.time));
                    assert_eq!(got, want, "next({flush}), case {case} step {step}");
                    if let (Some((r, pos, ..)), false) = (got, fast) {
                        // Lent records are given back at once here.
                        assert!(o.runs[r].give_back(pos));
                        assert!(!o.runs[r].give_back(pos), "given back twice");
                    }
                }
            }
            assert_eq!(o.held, model.held.len(), "case {case} step {step}");
            assert_eq!(o.stats(), model.stats, "case {case} step {step}");
            assert_eq!(o.seen_max(), model.seen_max);
            let blocked = model
                .oldest()
                .is_some_and(|i| !model.safe(model.held[i].time));
            assert_eq!(o.blocked(), blocked, "blocked, case {case} step {step}");
        }
    }
}
