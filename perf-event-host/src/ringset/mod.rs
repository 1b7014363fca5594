//! Many rings read as one (std): one ring per CPU or per thread (or shared
//! through PERF_EVENT_IOC_SET_OUTPUT), one epoll wait over all of them,
//! non-blocking drains, each record's event found from its sample id, a
//! time-ordered merge and exact loss accounting. The model is libperf's
//! evlist (mmap per fd, pollfd, id hash) and perf's ordered events.
//!
//! ```no_run
//! # use perf_event_host::ringset::{Entry, RingSet, Options};
//! # fn entries() -> Vec<Entry> { Vec::new() }
//! let mut set = RingSet::new(entries(), Options::default()).unwrap();
//! loop {
//!     let ready = set.wait(100).unwrap();
//!     let done = set.all_gone();
//!     set.fill();
//!     while let Some(held) = set.next_ordered() {
//!         if let Ok(rec) = set.record(&held) { /* parse with set.layout(...) */ }
//!         set.release(held);
//!     }
//!     if done { break; }
//! }
//! ```
//!
//! - [`RingSet::wait`] reports the rings the kernel woke (EPOLLIN, after
//!   `wakeup_events` samples or `wakeup_watermark` bytes) and the entries
//!   whose task exited (EPOLLHUP, which a perf fd reports once the measured
//!   task is gone; the ring keeps its records and is drained as usual).
//! - [`RingSet::drain`] walks every ring up to its head, in ring order, and
//!   frees it; [`RingSet::fill`] + [`RingSet::next_ordered`] merge in time
//!   (see [`Merge`] for the rule and the memory bound), and
//!   [`RingSet::drain_ordered`] does one such round for a reader that is
//!   done with each record before the next (no record held).
//! - Records are lent, never copied: a [`Held`] record stays in its ring
//!   (whose `data_tail` does not pass it) until [`RingSet::release`], and a
//!   record wrapping the ring end is lent in two parts.
//! - [`Losses`] per ring and per event: PERF_RECORD_LOST (attributed by its
//!   id), PERF_RECORD_LOST_SAMPLES (by its sample_id trailer), overruns and
//!   corrupt headers with the bytes skipped.
//!
//! Every ring and the set implement `AsFd`, so mio or tokio's `AsyncFd` can
//! wait on them instead (see `examples/ringset_mio.rs`).

mod entry;
mod from_set;
mod ident;
mod loss;
mod merge;
mod read;
mod run;
mod select;

pub use ident::{Identify, Key, KeyOffsets, MixedLayouts};
pub use loss::Losses;
pub use merge::{Merge, MergeStats, Pending};
pub use read::{Drained, Held};

use perf_event_core::fd::EventFd;
use perf_event_core::linux::epoll;
use perf_event_core::linux::errno::Errno;
use perf_event_core::record::SampleLayout;
use perf_event_core::ring::{RingBuffer, RingError};
use std::fmt;
use std::os::fd::{AsFd, BorrowedFd};

/// One fd to read: the event it belongs to (an index into the caller's
/// event list, for per-event accounting) and where it was opened.
#[derive(Debug)]
pub struct Entry {
    /// The event's fd (sampling, opened with `sample_period` or `freq`).
    pub fd: EventFd,
    /// Which event of the caller's list this fd is an instance of.
    pub event: usize,
    /// The layout of that event's records ([`SampleLayout::from_attr`]).
    pub layout: SampleLayout,
    /// The CPU it was opened on (-1: any).
    pub cpu: i32,
    /// The thread it was opened on (-1: all tasks on `cpu`).
    pub thread: i32,
}

impl Entry {
    /// An entry for an fd owned elsewhere (an event set keeps its fds): the
    /// fd is duplicated (`F_DUPFD_CLOEXEC`), which refers to the same event,
    /// so mapping, polling and SET_OUTPUT through the copy act on it.
    pub fn borrowing(
        fd: &EventFd,
        event: usize,
        layout: SampleLayout,
        cpu: i32,
        thread: i32,
    ) -> Result<Entry, Errno> {
        Ok(Entry {
            fd: fd.try_clone()?,
            event,
            layout,
            cpu,
            thread,
        })
    }
}

/// How entries get rings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Sharing {
    /// One ring per entry.
    PerEntry,
    /// Entries share the first matching entry's ring through
    /// PERF_EVENT_IOC_SET_OUTPUT (Linux 2.6.36) where the kernel allows it:
    /// the same CPU, or, for entries on any CPU (-1), the same thread; and
    /// the same clock. An entry the kernel refuses gets its own ring, noted
    /// in [`RingSet::unshared`].
    SameCpu,
}

/// Construction options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Data pages per ring (2^n).
    pub data_pages: usize,
    /// Ring sharing.
    pub sharing: Sharing,
    /// Most records the time-ordered merge holds (see [`Merge`]).
    pub max_held: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            data_pages: 64,
            sharing: Sharing::PerEntry,
            max_held: 1 << 16,
        }
    }
}

/// Why a ring set could not be built or waited on.
#[derive(Debug)]
#[non_exhaustive]
pub enum RingSetError {
    /// Mapping entry `entry`'s ring failed.
    Map {
        /// The entry.
        entry: usize,
        /// Why.
        error: RingError,
    },
    /// epoll_create1 or epoll_ctl failed.
    Epoll(Errno),
    /// The records of different events cannot be told apart.
    Layouts(MixedLayouts),
    /// Duplicating entry `entry`'s fd (an event set's, see
    /// [`RingSet::from_event_set`]) failed.
    Borrow {
        /// The entry.
        entry: usize,
        /// Why (EMFILE: out of fds).
        errno: Errno,
    },
    /// Several events write into one ring but their records carry no
    /// sample id (neither PERF_SAMPLE_IDENTIFIER nor PERF_SAMPLE_ID).
    NoSampleId {
        /// The ring.
        ring: usize,
        /// The events writing into it.
        events: Vec<usize>,
    },
}

impl fmt::Display for RingSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingSetError::Map { entry, error } => write!(f, "entry {entry}: {error}"),
            RingSetError::Epoll(e) => write!(
                f,
                "epoll failed: {e} (EMFILE/ENFILE: out of fds; ENOSPC: \
                 fs.epoll.max_user_watches reached)"
            ),
            RingSetError::Layouts(e) => e.fmt(f),
            RingSetError::Borrow { entry, errno } => write!(
                f,
                "entry {entry}: duplicating the event set's fd failed: {errno} (EMFILE: \
                 RLIMIT_NOFILE reached; each fd of the set takes a second one here)"
            ),
            RingSetError::NoSampleId { ring, events } => write!(
                f,
                "events {events:?} share ring {ring} but their records carry no sample id, so \
                 they cannot be told apart: add PERF_SAMPLE_IDENTIFIER (Linux 3.12) to their \
                 sample_type, or give each its own ring (Sharing::PerEntry)"
            ),
        }
    }
}

impl std::error::Error for RingSetError {}

/// One ring of the set.
#[derive(Debug)]
pub struct SetRing {
    buf: RingBuffer,
    /// The fd the ring is mapped from.
    fd: EventFd,
    /// Entries writing into it (the owner first).
    entries: Vec<usize>,
    /// The event assumed when a record's id is unknown: the only event of
    /// the ring, if it has one.
    only_event: Option<usize>,
    /// Where the next walk starts.
    read_pos: u64,
    losses: Losses,
    /// Bytes freed at a time: 1/32 of the ring (at least 64).
    slice: u64,
    /// Where [`RingSet::drain_ordered`]'s round stops reading this ring:
    /// its head when the round began.
    round_stop: u64,
}

impl SetRing {
    /// The ring buffer.
    pub fn buffer(&self) -> &RingBuffer {
        &self.buf
    }

    /// The entries writing into this ring (the one it is mapped from first).
    pub fn entries(&self) -> &[usize] {
        &self.entries
    }

    /// What this ring lost.
    pub fn losses(&self) -> Losses {
        self.losses
    }
}

impl AsFd for SetRing {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[derive(Debug)]
struct EntryInfo {
    /// Its fd, unless it moved into its ring.
    fd: Option<EventFd>,
    event: usize,
    cpu: i32,
    thread: i32,
    ring: usize,
    gone: bool,
}

/// What one [`RingSet::wait`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Readiness {
    /// Rings with data (EPOLLIN on one of their fds).
    pub readable: Vec<usize>,
    /// Entries whose task exited (EPOLLHUP), reported once each.
    pub hung_up: Vec<usize>,
    /// Entries reporting EPOLLERR.
    pub errors: Vec<usize>,
}

/// Rings for a list of entries, with one epoll over them.
#[derive(Debug)]
pub struct RingSet {
    rings: Vec<SetRing>,
    entries: Vec<EntryInfo>,
    ident: Identify,
    epoll: epoll::Epoll,
    order: Merge,
    event_losses: Vec<Losses>,
    unshared: Vec<(usize, Errno)>,
    ready: Readiness,
}

impl RingSet {
    /// Maps the rings of `entries` and watches them all with one epoll.
    /// Every entry's sample id is read (PERF_EVENT_IOC_ID, Linux 3.12) to
    /// find the event of each record; `layouts` of different shapes need
    /// PERF_SAMPLE_IDENTIFIER (see [`Identify::new`]).
    pub fn new(entries: Vec<Entry>, opts: Options) -> Result<RingSet, RingSetError> {
        let events = entries.iter().map(|e| e.event + 1).max().unwrap_or(0);
        let mut layouts = vec![None; events];
        for e in &entries {
            layouts[e.event].get_or_insert(e.layout);
        }
        let layouts: Vec<SampleLayout> =
            layouts.into_iter().map(Option::unwrap_or_default).collect();
        let mut ident = Identify::new(layouts).map_err(RingSetError::Layouts)?;
        let epoll = epoll::create().map_err(RingSetError::Epoll)?;
        let mut set = RingSet {
            rings: Vec::new(),
            entries: Vec::new(),
            event_losses: vec![Losses::default(); events],
            order: Merge::new(0, opts.max_held),
            ident: Identify::new(Vec::new()).map_err(RingSetError::Layouts)?,
            epoll,
            unshared: Vec::new(),
            ready: Readiness::default(),
        };
        for (i, e) in entries.into_iter().enumerate() {
            if let Ok(id) = e.fd.id() {
                ident.add_id(id, e.event);
            }
            let shared_with = match opts.sharing {
                Sharing::SameCpu => set.rings.iter().position(|r| {
                    let owner = &set.entries[r.entries[0]];
                    owner.cpu == e.cpu && (e.cpu >= 0 || owner.thread == e.thread)
                }),
                Sharing::PerEntry => None,
            };
            let mut fd = Some(e.fd);
            let ring = match shared_with {
                Some(r) => match fd.as_ref().map(|f| f.set_output(Some(&set.rings[r].fd))) {
                    Some(Ok(())) => Some(r),
                    Some(Err(errno)) => {
                        set.unshared.push((i, errno));
                        None
                    }
                    None => None,
                },
                None => None,
            };
            let ring = match ring {
                Some(r) => {
                    set.rings[r].entries.push(i);
                    r
                }
                None => {
                    let Some(f) = fd.take() else {
                        continue;
                    };
                    let buf = RingBuffer::map(&f, opts.data_pages)
                        .map_err(|error| RingSetError::Map { entry: i, error })?;
                    let read_pos = buf.tail();
                    let slice = (buf.data_size() / 32).max(64) as u64;
                    set.rings.push(SetRing {
                        buf,
                        fd: f,
                        entries: vec![i],
                        only_event: None,
                        read_pos,
                        losses: Losses::default(),
                        slice,
                        round_stop: read_pos,
                    });
                    set.rings.len() - 1
                }
            };
            let watched = fd.as_ref().unwrap_or(&set.rings[ring].fd);
            epoll::add(&set.epoll, watched, epoll::IN, i as u64).map_err(RingSetError::Epoll)?;
            set.entries.push(EntryInfo {
                fd,
                event: e.event,
                cpu: e.cpu,
                thread: e.thread,
                ring,
                gone: false,
            });
        }
        const ID_BITS: u64 = (perf_event_core::sys::PERF_SAMPLE_IDENTIFIER
            | perf_event_core::sys::PERF_SAMPLE_ID) as u64;
        for (i, r) in set.rings.iter_mut().enumerate() {
            let first = set.entries[r.entries[0]].event;
            r.only_event = r
                .entries
                .iter()
                .all(|&e| set.entries[e].event == first)
                .then_some(first);
            if r.only_event.is_none() {
                let mut events: Vec<usize> =
                    r.entries.iter().map(|&e| set.entries[e].event).collect();
                events.sort_unstable();
                events.dedup();
                let no_id = events
                    .iter()
                    .any(|&e| ident.layout(e).is_none_or(|l| l.sample_type & ID_BITS == 0));
                if no_id {
                    return Err(RingSetError::NoSampleId { ring: i, events });
                }
            }
        }
        set.ident = ident;
        set.order = Merge::new(set.rings.len(), opts.max_held);
        Ok(set)
    }

    /// The rings.
    pub fn rings(&self) -> &[SetRing] {
        &self.rings
    }

    /// Number of entries.
    pub fn entries(&self) -> usize {
        self.entries.len()
    }

    /// Entry `entry`'s (event, cpu, thread, ring).
    pub fn entry(&self, entry: usize) -> Option<(usize, i32, i32, usize)> {
        self.entries
            .get(entry)
            .map(|e| (e.event, e.cpu, e.thread, e.ring))
    }

    /// Entry `entry`'s fd.
    pub fn fd(&self, entry: usize) -> Option<&EventFd> {
        let e = self.entries.get(entry)?;
        e.fd.as_ref().or(Some(&self.rings.get(e.ring)?.fd))
    }

    /// Entries that asked to share a ring but got their own, with the
    /// kernel's reason for refusing PERF_EVENT_IOC_SET_OUTPUT.
    pub fn unshared(&self) -> &[(usize, Errno)] {
        &self.unshared
    }

    /// The layout of `event`'s records.
    pub fn layout(&self, event: usize) -> Option<&SampleLayout> {
        self.ident.layout(event)
    }

    /// How records are identified.
    pub fn identify(&self) -> &Identify {
        &self.ident
    }

    /// What `event` lost, over all its rings.
    pub fn event_losses(&self, event: usize) -> Losses {
        self.event_losses.get(event).copied().unwrap_or_default()
    }

    /// What every ring lost, in total.
    pub fn total_losses(&self) -> Losses {
        let mut t = Losses::default();
        for r in &self.rings {
            t.add(&r.losses);
        }
        t
    }

    /// What the merge did.
    pub fn merge_stats(&self) -> MergeStats {
        self.order.stats()
    }

    /// Whether every entry has reported EPOLLHUP (every measured task is
    /// gone: what the rings hold now is all there will be).
    pub fn all_gone(&self) -> bool {
        !self.entries.is_empty() && self.entries.iter().all(|e| e.gone)
    }

    /// Waits up to `timeout_ms` (-1: forever, 0: just look) for rings with
    /// data or tasks that exited. EINTR counts as a timeout. An entry that
    /// hung up is reported once and no longer watched (its ring is still
    /// drained by [`RingSet::drain`] / [`RingSet::fill`]).
    pub fn wait(&mut self, timeout_ms: i32) -> Result<&Readiness, Errno> {
        self.ready.readable.clear();
        self.ready.hung_up.clear();
        self.ready.errors.clear();
        let mut out = [epoll::Ready::default(); 64];
        let mut timeout = timeout_ms;
        loop {
            let n = match epoll::wait(&self.epoll, &mut out, timeout) {
                Ok(n) => n,
                Err(e) if e.0 == perf_event_core::linux::errno::EINTR => 0,
                Err(e) => return Err(e),
            };
            for r in &out[..n] {
                let entry = r.token as usize;
                let Some(info) = self.entries.get_mut(entry) else {
                    continue;
                };
                if r.events & epoll::IN != 0 && !self.ready.readable.contains(&info.ring) {
                    self.ready.readable.push(info.ring);
                }
                if r.events & epoll::HUP != 0 && !info.gone {
                    info.gone = true;
                    self.ready.hung_up.push(entry);
                    let watched = info.fd.as_ref().unwrap_or(&self.rings[info.ring].fd);
                    // Level-triggered HUP would wake every wait: stop watching.
                    let _ = epoll::remove(&self.epoll, watched);
                }
                if r.events & epoll::ERR != 0 {
                    self.ready.errors.push(entry);
                }
            }
            // More than one batch ready: collect the rest without waiting.
            if n < out.len() {
                break;
            }
            timeout = 0;
        }
        Ok(&self.ready)
    }
}

impl AsFd for RingSet {
    /// The epoll fd: readable when any ring is readable or any task exited.
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.epoll.as_fd()
    }
}
