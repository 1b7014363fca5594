//! The merge rule, case by case, through `Merge`'s public API.

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
fn a_gap_is_stepped_over_and_a_position_before_the_end_refused() {
    let mut m = Merge::new(1, 8);
    m.begin_round(None, true);
    assert!(m.push(0, 0, 8, Some(1), None));
    // 8..24 skipped (a corrupt stretch): the next record is at 24.
    assert!(m.push(0, 24, 16, Some(2), None));
    assert!(!m.push(0, 32, 8, Some(3), None), "inside the record before");
    assert!(!m.push(3, 40, 8, Some(3), None), "no ring 3");
    assert!(m.push(0, 40, 8, Some(3), None));
    let got: Vec<(u64, u32)> = std::iter::from_fn(|| m.flush())
        .map(|p| (p.pos, p.len))
        .collect();
    assert_eq!(got, [(0, 8), (24, 16), (40, 8)]);
    assert_eq!(m.held(), 0);
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
