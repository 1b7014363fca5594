//! A ring set over the fds of an [`EventSet`]: one entry per opened fd,
//! each event's records laid out by the attr the set opened it with.

use super::{Entry, Options, RingSet, RingSetError};
use crate::set::EventSet;
use perf_event_core::linux::errno::Errno;
use perf_event_core::record::SampleLayout;

impl RingSet {
    /// Maps a ring for every fd `set` holds (one per CPU or per thread, as
    /// the set placed its events; with [`super::Sharing::SameCpu`] in
    /// `opts`, fds on one CPU share a ring through
    /// PERF_EVENT_IOC_SET_OUTPUT where the kernel allows it). Entry `i` is
    /// the `i`-th fd of [`EventSet::fds`]; an entry's event is its index in
    /// [`EventSet::events`], so a record's event found by sample id names
    /// the set's event. The fds are duplicated (`F_DUPFD_CLOEXEC`): the set
    /// keeps enabling, disabling and reading them, the ring set reads their
    /// records, and either may be dropped first.
    pub fn from_event_set(set: &EventSet, opts: Options) -> Result<RingSet, RingSetError> {
        let mut entries = Vec::with_capacity(set.fd_count());
        for (entry, (placement, fd)) in set.fds().enumerate() {
            let attr = set
                .opened_attr(placement.event)
                .ok_or(RingSetError::Borrow {
                    entry,
                    errno: Errno(perf_event_core::linux::errno::EINVAL),
                })?;
            let layout = SampleLayout::from_attr(&attr);
            entries.push(
                Entry::borrowing(fd, placement.event, layout, placement.cpu, placement.tid)
                    .map_err(|errno| RingSetError::Borrow { entry, errno })?,
            );
        }
        RingSet::new(entries, opts)
    }
}
