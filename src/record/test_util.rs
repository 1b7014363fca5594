//! Helpers of the record unit tests: records built in either byte order
//! and a small deterministic generator.

use super::*;
use std::vec::Vec;

pub(super) fn record_in(kind: u32, body: &[u8], order: ByteOrder) -> Vec<u8> {
    let swap = order.is_foreign();
    let mut out = Vec::new();
    let k = if swap { kind.swap_bytes() } else { kind };
    let size = (8 + body.len()) as u16;
    out.extend(k.to_ne_bytes());
    out.extend(0u16.to_ne_bytes());
    out.extend((if swap { size.swap_bytes() } else { size }).to_ne_bytes());
    out.extend(body);
    out
}

pub(super) fn words(v: &[u64], order: ByteOrder) -> Vec<u8> {
    v.iter()
        .flat_map(|x| match order {
            ByteOrder::Little => x.to_le_bytes(),
            ByteOrder::Big => x.to_be_bytes(),
        })
        .collect()
}

pub(super) fn sample<'a>(
    layout: &SampleLayout,
    bytes: &'a [u8],
) -> Result<Sample<'a>, RecordError> {
    match parse(layout, bytes)?.record {
        Record::Sample(s) => Ok(s),
        other => panic!("not a sample: {other:?}"),
    }
}

/// A tiny deterministic generator (xorshift) for the property tests.
pub(super) struct Rng(pub(super) u64);
impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
