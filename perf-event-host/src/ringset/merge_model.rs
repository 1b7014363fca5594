//! The merge against a model written the plain way (every held record in
//! one list, the oldest found by a scan, safety checked ring by ring, as
//! the merge was first written): the same records out in the same order,
//! the same refusals and the same counts, over random operations.

use super::*;

struct Model {
    held: Vec<Pending>,
    rings: Vec<RingClock>,
    capacity: usize,
    seq: u64,
    seen_max: Option<u64>,
    round_bound: Option<u64>,
    last_released: Option<u64>,
    stats: MergeStats,
}

impl Model {
    fn oldest(&self) -> Option<usize> {
        (0..self.held.len()).min_by_key(|&i| (self.held[i].time, self.held[i].seq))
    }
    fn safe(&self, t: u64) -> bool {
        self.rings
            .iter()
            .all(|r| r.last_seen.is_some_and(|s| s >= t) || r.covered_to.is_some_and(|c| t <= c))
    }
    fn take(&mut self, i: usize) -> Pending {
        let p = self.held.remove(i);
        if self.last_released.is_some_and(|l| p.time < l) {
            self.stats.out_of_order += 1;
        }
        self.last_released = Some(self.last_released.map_or(p.time, |l| l.max(p.time)));
        self.stats.released += 1;
        p
    }
    fn pop(&mut self) -> Option<Pending> {
        let i = self.oldest()?;
        if self.safe(self.held[i].time) {
            Some(self.take(i))
        } else if self.held.len() >= self.capacity {
            self.stats.forced += 1;
            Some(self.take(i))
        } else {
            None
        }
    }
    fn push(&mut self, ring: usize, pos: u64, time: Option<u64>) -> bool {
        if self.held.len() >= self.capacity || ring >= self.rings.len() {
            return false;
        }
        let clock = &mut self.rings[ring];
        if let Some(t) = time {
            clock.last_seen = Some(clock.last_seen.map_or(t, |s| s.max(t)));
            self.seen_max = Some(self.seen_max.map_or(t, |m| m.max(t)));
        }
        let key = time.or(clock.last_seen).unwrap_or(0);
        self.held.push(Pending {
            time: key,
            seq: self.seq,
            ring: ring as u32,
            pos,
            len: 8,
            event: u32::MAX,
            timed: time.is_some(),
        });
        self.seq += 1;
        self.stats.max_held = self.stats.max_held.max(self.held.len());
        true
    }
}

#[test]
fn the_merge_does_what_the_plain_model_does() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for case in 0..300 {
        let rings = 1 + rnd(17) as usize;
        let capacity = 1 + rnd(if case % 2 == 0 { 8 } else { 200 }) as usize;
        let mut m = Merge::new(rings, capacity);
        let mut model = Model {
            held: Vec::new(),
            rings: vec![RingClock::default(); rings],
            capacity,
            seq: 0,
            seen_max: None,
            round_bound: None,
            last_released: None,
            stats: MergeStats::default(),
        };
        let mut clock = vec![0u64; rings];
        for step in 0..2000u64 {
            match rnd(10) {
                0 => {
                    let bound = if m.blocked() { m.seen_max() } else { None };
                    let guarded = rnd(4) != 0;
                    m.begin_round(bound, guarded);
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
                    let r = rnd(rings as u64 + 1) as usize;
                    m.drained(r);
                    if let (Some(c), Some(b)) = (model.rings.get_mut(r), model.round_bound) {
                        c.covered_to = Some(c.covered_to.map_or(b, |v| v.max(b)));
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
                    let a = m.push(r, step, 8, time, None);
                    assert_eq!(a, model.push(r, step, time), "push, case {case}");
                }
                6..=8 => assert_eq!(m.pop(), model.pop(), "pop, case {case} step {step}"),
                _ => {
                    let want = model.oldest().map(|i| model.take(i));
                    assert_eq!(m.flush(), want, "flush, case {case}");
                }
            }
            assert_eq!(m.held(), model.held.len());
            assert_eq!(m.stats(), model.stats, "case {case} step {step}");
            assert_eq!(m.seen_max(), model.seen_max);
            let blocked = model
                .oldest()
                .is_some_and(|i| !model.safe(model.held[i].time));
            assert_eq!(m.blocked(), blocked, "blocked, case {case} step {step}");
        }
    }
}
