//! Which ring's front is the oldest, for the merge (`merge.rs`).
//!
//! A front's key is its time in the high half and its ring in the low one,
//! so one compare orders by time and then by ring. From [`LIST_MIN`] to
//! [`LIST_MAX`] rings the fronts are kept in a sorted list: releasing the
//! oldest pops the list's head, and the ring's next front goes back in at
//! the tail when it is newer than every other front (rings written in
//! turn, as the events of one thread are: one compare), and otherwise
//! where a binary search puts it, the fronts before it moving down one
//! (none when it is older than all of them: a ring with a run of its own).
//! With fewer or more rings, a tournament (loser) tree: one match per
//! level (log2 of the rings) whatever the order.

/// The key of a ring without a front: after every real key.
pub(super) const EMPTY: u128 = u128::MAX;

/// The fewest rings kept in a sorted list rather than a tree (with one
/// ring the tree has no level: cheaper; with two the list is, measured).
const LIST_MIN: usize = 2;

/// The most rings kept in a sorted list rather than a tree (a front that
/// goes in the middle moves up to this many keys).
const LIST_MAX: usize = 32;

/// The list's slots, used as a ring (more than [`LIST_MAX`]).
const SLOTS: usize = 64;

/// The selection over the rings' fronts.
#[derive(Debug)]
pub(super) struct Select {
    /// Sorted list rather than tree.
    list: bool,
    /// List: the keys of the rings with a front, sorted, in the slots from
    /// `lo` to `hi` (counters, taken modulo [`SLOTS`]).
    keys: [u128; SLOTS],
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

/// Slot of the list's `i`-th counter value.
#[inline(always)]
fn slot(i: usize) -> usize {
    i & (SLOTS - 1)
}

impl Select {
    /// A selection over `rings` rings, none with a front.
    pub(super) fn new(rings: usize) -> Select {
        let list = (LIST_MIN..=LIST_MAX).contains(&rings);
        let width = if list { 1 } else { rings.next_power_of_two() };
        Select {
            list,
            keys: [EMPTY; SLOTS],
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
            let mut sorted = [EMPTY; SLOTS];
            let mut m = 0;
            for r in 0..rings {
                let k = front_key(r);
                if k != EMPTY && m < SLOTS {
                    sorted[m] = k;
                    m += 1;
                }
            }
            sorted[..m].sort_unstable();
            // From the current head on: the slots are a ring.
            for (i, &k) in sorted[..m].iter().enumerate() {
                self.keys[slot(self.lo.wrapping_add(i))] = k;
            }
            self.hi = self.lo.wrapping_add(m);
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

    /// The list's head ([`EMPTY`] when it is empty).
    #[inline(always)]
    fn head(&self) -> u128 {
        if self.lo == self.hi {
            EMPTY
        } else {
            self.keys[slot(self.lo)]
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
        // The head is the winner: it goes.
        let (lo, hi) = (self.lo.wrapping_add(1), self.hi);
        if k != EMPTY && (lo == hi || self.keys[slot(hi.wrapping_sub(1))] < k) {
            // After every other front (or none is left): at the tail.
            self.keys[slot(hi)] = k;
            (self.lo, self.hi) = (lo, hi.wrapping_add(1));
            self.winner = self.keys[slot(lo)];
            return;
        }
        self.relist_slow(k);
    }

    /// [`Select::relist`] for no next front, or one before the list's
    /// last.
    #[inline(never)]
    fn relist_slow(&mut self, k: u128) {
        let mut lo = self.lo.wrapping_add(1);
        if k != EMPTY {
            // Where it goes among the `n` left, by a binary search.
            let (mut a, mut b) = (0, self.hi.wrapping_sub(lo));
            while a < b {
                let mid = (a + b) / 2;
                if self.keys[slot(lo.wrapping_add(mid))] < k {
                    a = mid + 1;
                } else {
                    b = mid;
                }
            }
            // The `a` before it move down one, into the winner's slot.
            for i in 0..a {
                let at = lo.wrapping_add(i);
                self.keys[slot(at.wrapping_sub(1))] = self.keys[slot(at)];
            }
            lo = lo.wrapping_sub(1);
            self.keys[slot(lo.wrapping_add(a))] = k;
        }
        self.lo = lo;
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
