//! A perf.data writer for a ring set of one event, as the bench binaries
//! that record to a file start it (`ringset`, `record_vs_perf`).

use perf_data_file::{Features, RecordedEvent, Writer};
use perf_event_core::attr::Attr;
use perf_event_host::ringset::RingSet;
use std::fs::File;
use std::path::Path;

/// A perf.data file at `path` for the event `attr` named `name`, its ids
/// those of the set's fds.
pub fn perf_data_writer(path: &Path, attr: Attr, name: &str, set: &RingSet) -> Writer<File> {
    let ids = (0..set.entries())
        .filter_map(|e| set.fd(e)?.id().ok())
        .collect();
    let event = RecordedEvent {
        attr,
        name: name.into(),
        ids,
    };
    Writer::create(
        File::create(path).unwrap(),
        vec![event],
        Features::default(),
    )
    .unwrap_or_else(|e| panic!("perf.data {}: {e}", path.display()))
}
