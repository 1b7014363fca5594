//! `RingSet::drain_into`: the runs of records a drain lends before it frees
//! a ring are exactly the records it delivered, byte for byte, including
//! runs that wrap around the ring's end (what the perf.data writer writes
//! straight from the ring).

use crate::ringset_support::*;

use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::SampleLayout;
use perf_event_core::ring::RawRecord;
use perf_event_host::ringset::{Drained, Entry, Options, RingSet};

#[derive(Default)]
struct Both {
    records: Vec<u8>,
    spans: Vec<u8>,
    count: usize,
    wrapped: usize,
}

impl Drained for Both {
    fn record(&mut self, _ring: usize, _event: Option<usize>, rec: &RawRecord<'_>) {
        let (a, b) = rec.parts();
        self.records.extend_from_slice(a);
        self.records.extend_from_slice(b);
    }
    fn span(&mut self, _ring: usize, first: &[u8], second: &[u8]) {
        self.spans.extend_from_slice(first);
        self.spans.extend_from_slice(second);
        self.count += 1;
        self.wrapped += usize::from(!second.is_empty());
    }
}

#[test]
fn drain_spans_are_the_records_delivered_byte_for_byte_across_the_wrap() {
    let Some((prctl_attr, _)) = tracepoints() else {
        return;
    };
    let fd = open(&prctl_attr, Scope::this_thread(), None, OpenFlags::new()).unwrap();
    let entry = Entry {
        fd,
        event: 0,
        layout: SampleLayout::from_attr(&prctl_attr),
        cpu: -1,
        thread: 0,
    };
    let opts = Options {
        data_pages: 1,
        ..Options::default()
    };
    let mut set = RingSet::new(vec![entry], opts).unwrap();
    set.fd(0).unwrap().enable(false).unwrap();
    let mut both = Both::default();
    let mut walked = 0;
    // Bursts of sizes that do not divide the ring, so runs end and start
    // at every offset and some wrap; until the ring has gone round three
    // times, whatever its size (one page: 4 KiB here, 64 KiB on ppc64).
    let size = set.rings()[0].buffer().data_size();
    let (mut burst, mut made) = (0, 0);
    while both.spans.len() < 3 * size {
        burst += 1;
        for _ in 0..burst {
            prctl();
        }
        made += burst;
        walked += set.drain_into(&mut both);
    }
    set.fd(0).unwrap().disable(false).unwrap();
    let losses = set.total_losses();
    println!(
        "{walked} records in {} runs ({} wrapped), {} bytes through a ring of {size}; lost {}",
        both.count,
        both.wrapped,
        both.spans.len(),
        losses.lost
    );
    assert_eq!(
        walked,
        made + losses.lost_records as usize - losses.lost as usize
    );
    assert!(
        both.count >= burst && both.wrapped > 0,
        "runs wrapped: {}",
        both.wrapped
    );
    assert!(
        both.records == both.spans,
        "the runs are the records delivered"
    );
}
