//! Which ring's front is the oldest, for the run merge (`order.rs`).
//!
//! A front's key is its time in the high half and its ring in the low one,
//! so one compare orders by time and then by ring. Up to [`LIST_MAX`]
//! rings (from [`LIST_MIN`]) the fronts are kept in a sorted list: releasing the oldest pops
//! the list's head, and the ring's next front goes back in at the tail
//! when it is newer than every other front (rings written in turn, as
//! events of one thread are), at the head when it is older than all of them
//! (a ring with a run of its own), both one compare, and otherwise by a
//! binary search and a shift of the fronts before it (at most
//! [`LIST_MAX`] keys). With fewer or more rings, a tournament (loser)
//! tree: one match per level (log2 of the rings) whatever the order.

/// The key of a ring without a front: after every real key.
pub(super) const EMPTY: u128 = u128::MAX;

/// The fewest rings kept in a sorted list rather than a tree (with one
/// or two rings the tree has at most one level: cheaper).
const LIST_MIN: usize = 3;

/// The most rings kept in a sorted list rather than a tree.
const LIST_MAX: usize = 64;

/// The list's room past twice the rings: it moves down to its start once
/// it reaches its end, every `SPARE` releases or more (small under test,
/// so that the model test moves it often).
const SPARE: usize = if cfg!(test) { 2 } else { 256 };

/// The selection over the rings' fronts.
#[derive(Debug)]
pub(super) struct Select {
    /// Sorted list ([`LIST_MAX`] rings or fewer) rather than tree.
    list: bool,
    /// List: the keys of the rings with a front, in `keys[lo..hi]`, sorted
    /// (room for twice the rings and [`SPARE`] more).
    keys: Vec<u128>,
    lo: usize,
    hi: usize,
    /// Tree: its width (the rings rounded up to a power of two).
    width: usize,
    /// Tree: the loser of the match at each inner node (its key, its
    /// ring); node `i`'s children are `2i` and `2i + 1`, ring `r`'s leaf
    /// `width + r`.
    losers: Vec<(u128, u32)>,
    /// The oldest front's key ([`EMPTY`]: none; its ring is its low
    /// bits).
    winner: u128,
}

impl Select {
    /// A selection over `rings` rings, none with a front.
    pub(super) fn new(rings: usize) -> Select {
        let list = (LIST_MIN..=LIST_MAX).contains(&rings);
        let width = if list { 1 } else { rings.next_power_of_two() };
        Select {
            list,
            keys: vec![EMPTY; if list { 2 * rings + SPARE } else { 0 }],
            lo: 0,
            hi: 0,
            width,
            losers: vec![(EMPTY, 0); if list { 0 } else { width }],
            winner: EMPTY,
        }
    }

    /// The oldest front: its key ([`EMPTY`]: none) and ring.
    #[inline(always)]
    pub(super) fn winner(&self) -> (u128, u32) {
        (self.winner, self.winner as u32)
    }

    /// Rebuilds from every ring's front key (`rings` rings).
    pub(super) fn rebuild(&mut self, rings: usize, front_key: impl Fn(usize) -> u128) {
        if self.list {
            let mut m = 0;
            for r in 0..rings {
                let k = front_key(r);
                if k != EMPTY {
                    if let Some(slot) = self.keys.get_mut(m) {
                        *slot = k;
                        m += 1;
                    }
                }
            }
            self.keys[..m].sort_unstable();
            (self.lo, self.hi) = (0, m);
            self.winner = self.head();
            return;
        }
        let w = self.width;
        // The winners of each node, leaves included.
        let mut winners = vec![(EMPTY, 0u32); 2 * w];
        for (r, slot) in winners[w..].iter_mut().enumerate() {
            let k = if r < rings { front_key(r) } else { EMPTY };
            *slot = (k, r as u32);
        }
        for i in (1..w).rev() {
            let (a, b) = (winners[2 * i], winners[2 * i + 1]);
            let (win, lose) = if b.0 < a.0 { (b, a) } else { (a, b) };
            winners[i] = win;
            self.losers[i] = lose;
        }
        // The root (or, with one leaf, the leaf itself).
        self.winner = winners[1].0;
    }

    /// The list's head as the winner.
    #[inline(always)]
    fn head(&self) -> u128 {
        match self.keys.get(self.lo) {
            Some(&k) if self.lo < self.hi => k,
            _ => EMPTY,
        }
    }

    /// The winner's front changed to `k` (its record was released).
    #[inline(always)]
    pub(super) fn replay(&mut self, k: u128) {
        if self.list {
            self.relist(k);
        } else {
            self.replay_tree(k);
        }
    }

    /// [`Select::replay`] for the list: the head goes, `k` goes in.
    #[inline(always)]
    fn relist(&mut self, k: u128) {
        // The head is the winner: it goes (so `lo >= 1` below).
        let (lo, hi) = (self.lo + 1, self.hi);
        let keys = &mut self.keys[..];
        // After every other front (or none is left), with room: at the tail.
        let last = if lo < hi { keys.get(hi - 1) } else { None };
        if k != EMPTY && last.is_none_or(|&l| l < k) {
            if let Some(slot) = keys.get_mut(hi) {
                *slot = k;
                self.hi = hi + 1;
                self.lo = lo;
                self.winner = match keys.get(lo) {
                    Some(&w) => w,
                    None => EMPTY,
                };
                return;
            }
        }
        self.relist_slow(k);
    }

    /// [`Select::relist`] but at the head, in the middle, for no front,
    /// or with the list to move down first.
    #[inline(never)]
    fn relist_slow(&mut self, k: u128) {
        let (mut lo, mut hi) = (self.lo + 1, self.hi);
        let keys = &mut self.keys[..];
        if k != EMPTY {
            let last = if lo < hi {
                keys.get(hi - 1).copied()
            } else {
                None
            };
            match last {
                Some(last) if k < last => {
                    // At the head when before every other front (where
                    // the winner was), else where it sorts: the fronts
                    // before it move down one.
                    let p = lo
                        + keys
                            .get(lo..hi)
                            .map_or(0, |s| s.partition_point(|&x| x < k));
                    if p > lo {
                        keys.copy_within(lo..p, lo - 1);
                    }
                    lo -= 1;
                    if let Some(slot) = keys.get_mut(p - 1) {
                        *slot = k;
                    }
                }
                // At the tail.
                _ => {
                    if hi == keys.len() {
                        // Full up to the end: move the list down.
                        keys.copy_within(lo..hi, 0);
                        (lo, hi) = (0, hi - lo);
                    }
                    if let Some(slot) = keys.get_mut(hi) {
                        *slot = k;
                        hi += 1;
                    }
                }
            }
        }
        (self.lo, self.hi) = (lo, hi);
        self.winner = self.head();
    }

    /// [`Select::replay`] for the tree: replays the winner's path to the
    /// root, one match per level.
    #[inline(always)]
    fn replay_tree(&mut self, k: u128) {
        let (mut key, mut ring) = (k, self.winner as u32);
        let mut i = (self.width + ring as usize) >> 1;
        let losers = &mut self.losers[..];
        while i >= 1 {
            let Some(node) = losers.get_mut(i) else {
                break;
            };
            let (nk, nr) = *node;
            // The older of the two goes up, the other stays.
            let up = nk < key;
            *node = if up { (key, ring) } else { (nk, nr) };
            key = if up { nk } else { key };
            ring = if up { nr } else { ring };
            i >>= 1;
        }
        self.winner = key;
    }
}
