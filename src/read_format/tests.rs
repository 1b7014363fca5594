//! The codec on synthetic buffers laid out as the man page describes.

use super::*;
use std::vec::Vec;

fn words(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

#[test]
fn size_of_every_format_and_group_size() {
    for bits in 0..32u64 {
        let f = ReadFormat(bits);
        let (e, r, i, g, l) = (
            bits & 1,
            bits >> 1 & 1,
            bits >> 2 & 1,
            bits >> 3 & 1,
            bits >> 4 & 1,
        );
        for members in 1..5usize {
            let want = if g == 1 {
                8 * (1 + e + r) as usize + members * 8 * (1 + i + l) as usize
            } else {
                8 * (1 + e + r + i + l) as usize
            };
            assert_eq!(f.size(members), want, "format {bits:#x}, {members} members");
        }
    }
}

#[test]
fn single_event_with_everything() {
    let f = ReadFormat(ENABLED | RUNNING | ID | LOST);
    let buf = words(&[100, 2000, 1000, 77, 3]);
    let r = f.parse(&buf).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!(r.time_enabled(), Some(2000));
    assert_eq!(r.time_running(), Some(1000));
    assert_eq!(
        r.get(0),
        Some(EventValue {
            value: 100,
            id: Some(77),
            lost: Some(3)
        })
    );
    assert_eq!(
        r.counts().scaled(),
        Scaled::Estimated {
            value: 200,
            percent_running: 50
        }
    );
}

#[test]
fn group_of_three_with_id() {
    let f = ReadFormat(GROUP | ID | RUNNING);
    let buf = words(&[3, 500, 1, 11, 2, 12, 3, 13]);
    let r = f.parse(&buf).unwrap();
    assert_eq!(r.time_enabled(), None);
    assert_eq!(r.time_running(), Some(500));
    let ids: Vec<_> = r.values().map(|v| (v.value, v.id)).collect();
    assert_eq!(ids, [(1, Some(11)), (2, Some(12)), (3, Some(13))]);
    assert_eq!(r.get(3), None);
}

#[test]
fn wrong_sizes_are_errors_never_panics() {
    let f = ReadFormat(GROUP | ID);
    assert!(matches!(
        f.parse(&words(&[5, 1, 2])),
        Err(ReadError::GroupSize { members: 5, .. })
    ));
    assert!(matches!(
        f.parse(&words(&[u64::MAX, 1, 2])),
        Err(ReadError::GroupSize { .. })
    ));
    assert!(matches!(
        ReadFormat(0).parse(&[0u8; 7]),
        Err(ReadError::Size { .. })
    ));
    assert!(matches!(
        ReadFormat(0).parse(&words(&[1, 2])),
        Err(ReadError::Size { .. })
    ));
    assert!(matches!(
        ReadFormat(ENABLED).parse(&words(&[1])),
        Err(ReadError::Size { .. })
    ));
    for len in 0..64 {
        for bits in 0..32 {
            let _ = ReadFormat(bits).parse(&vec![0xffu8; len]);
        }
    }
}

#[test]
fn scaling_rules() {
    let c = |value, enabled, running| Counts {
        value,
        enabled: Some(enabled),
        running: Some(running),
    };
    assert_eq!(c(10, 0, 0).scaled(), Scaled::NotCounted);
    assert_eq!(c(10, 100, 0).scaled(), Scaled::NotCounted);
    assert_eq!(c(10, 100, 100).scaled(), Scaled::Exact(10));
    assert_eq!(
        c(10, 100, 200).scaled(),
        Scaled::Inconsistent {
            value: 10,
            enabled: 100,
            running: 200
        }
    );
    // One overflow rule (read_format::scale): no estimate, nothing clipped.
    assert_eq!(
        c(u64::MAX, u64::MAX, 1).scaled(),
        Scaled::TooLarge {
            value: u64::MAX,
            enabled: u64::MAX,
            running: 1
        }
    );
    assert_eq!(scale(10, 0, 0), None);
    assert_eq!(scale(u64::MAX, 2, 2), Some(u64::MAX));
    assert_eq!(scale(u64::MAX, 3, 2), None);
    assert_eq!(scale(u64::MAX, u64::MAX, u64::MAX), Some(u64::MAX));
    assert_eq!(scale(7, 3, 2), Some(10));
    assert_eq!(
        c(u64::MAX / 2, 4, 2).scaled(),
        Scaled::Estimated {
            value: u64::MAX - 1,
            percent_running: 50
        }
    );
    assert_eq!(
        Counts {
            value: 5,
            enabled: Some(1),
            running: None
        }
        .scaled(),
        Scaled::NoTimes(5)
    );
}

#[test]
fn counts_in_one_pass_agree_with_parse() {
    let bytes = |words: &[u64]| {
        words
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .collect::<Vec<u8>>()
    };
    for bits in 0..32u64 {
        let f = ReadFormat(bits);
        let n = if f.is_group() { 2 } else { 1 };
        let words: Vec<u64> = (0..f.size(n) / 8)
            .map(|i| {
                if i == 0 && f.is_group() {
                    2
                } else {
                    100 + i as u64
                }
            })
            .collect();
        let buf = bytes(&words);
        assert_eq!(f.counts(&buf), f.parse(&buf).map(|r| r.counts()), "{f:?}");
        // One byte short: an error, never a panic or a read past the end.
        assert!(f.counts(&buf[..buf.len() - 8]).is_err(), "{f:?}");
    }
}
