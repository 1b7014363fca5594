//! The monitor's group: opening it, the one-`read(2)` group read, and the
//! all-or-nothing user-space read.

use super::{MonitorError, READ_FORMAT, UNREAD};
use crate::fallback::Attempt;
use crate::fd::EventFd;
use crate::open::{GroupOpen, Scope};
use crate::read_format::{Counts, ReadError, ReadFormat};
use crate::userpage::{
    CounterFd, CounterReader, CounterReading, EventTarget, FallbackReason, UserPage,
};

/// The most events one monitor reads in one `read(2)` (its stack buffer is
/// `8 * (3 + MAX_EVENTS)` bytes). A PMU has far fewer counters; software
/// events beyond this belong in a second monitor.
pub const MAX_EVENTS: usize = 64;

const BUF_WORDS: usize = 3 + MAX_EVENTS;

/// Groups of up to this many events are read into a buffer of
/// `8 * (3 + SMALL_GROUP)` bytes.
const SMALL_GROUP: usize = 8;

/// One event of a monitor's group, owning its fd. Reading it (any member)
/// returns the whole group: with `PERF_FORMAT_GROUP` the kernel reads the
/// event's group leader and its siblings (`perf_read_group`).
#[derive(Debug)]
pub struct GroupFd<const N: usize> {
    fd: EventFd,
    index: usize,
}

impl<const N: usize> GroupFd<N> {
    /// The event's fd.
    pub fn fd(&self) -> &EventFd {
        &self.fd
    }

    /// Its position in the group (0 = the leader).
    pub fn index(&self) -> usize {
        self.index
    }

    /// One `read(2)` of the group: every member's value with the group's
    /// enabled and running times (`PERF_FORMAT_GROUP`; with `inherit`, the
    /// children's counts included).
    #[inline]
    pub fn read_group(&self) -> Result<[Counts; N], ReadError> {
        self.read_group_as(|_, counts| counts)
    }

    /// [`GroupFd::read_group`], each member's counts passed through `wrap`
    /// (with the member's index) as they are decoded: the monitor makes
    /// its readings without a second pass over the array.
    #[inline(always)]
    pub(super) fn read_group_as<T>(
        &self,
        wrap: impl Fn(usize, Counts) -> T,
    ) -> Result<[T; N], ReadError> {
        // The buffer the kernel fills is zeroed before each read: a small
        // one for the usual small group (zeroed in a few stores), the
        // largest only for groups that need it.
        if N <= SMALL_GROUP {
            self.read_group_in(&mut [0u8; 8 * (3 + SMALL_GROUP)], wrap)
        } else {
            self.read_group_in(&mut [0u8; 8 * BUF_WORDS], wrap)
        }
    }

    #[inline(always)]
    fn read_group_in<T>(
        &self,
        buf: &mut [u8],
        wrap: impl Fn(usize, Counts) -> T,
    ) -> Result<[T; N], ReadError> {
        let size = ReadFormat(READ_FORMAT).size(N);
        let reading = self.fd.read_into(&mut buf[..size])?;
        let members = reading.len();
        if members != N {
            return Err(ReadError::GroupSize {
                members: members as u64,
                expected: size,
                got: ReadFormat(READ_FORMAT).size(members),
            });
        }
        let (enabled, running) = (reading.time_enabled(), reading.time_running());
        // READ_FORMAT's layout, checked by `read_into` for N members:
        // nr, time_enabled, time_running, then one value per member.
        Ok(core::array::from_fn(|i| {
            let at = 8 * (3 + i);
            let mut word = [0u8; 8];
            word.copy_from_slice(&buf[at..at + 8]);
            wrap(
                i,
                Counts {
                    value: u64::from_ne_bytes(word),
                    enabled,
                    running,
                },
            )
        }))
    }
}

impl<const N: usize> CounterFd for GroupFd<N> {
    /// This member's value from one group read.
    fn read_counts(&self) -> Result<Counts, ReadError> {
        Ok(self.read_group()?[self.index])
    }
}

/// Opens `attrs` on `scope` as one group ([`GroupOpen`]): the leader
/// disabled, `read_format` exactly [`READ_FORMAT`] (the group read decodes
/// that layout), `inherit` as asked, each event under `policy` (its
/// attempt, with the final attr and the fallbacks taken, is written to
/// `attempts`). The building block of [`Monitor`](super::Monitor) and of
/// a monitor over a list of threads (perf-event-host's `PerThread`).
pub fn open_group<const N: usize>(
    attempts: &mut [Attempt; N],
    scope: Scope,
    inherit: bool,
) -> Result<[GroupFd<N>; N], MonitorError> {
    if N > MAX_EVENTS {
        return Err(MonitorError::TooManyEvents { given: N });
    }
    let group = GroupOpen::new(scope, READ_FORMAT, inherit);
    let mut fds: [Option<EventFd>; N] = [const { None }; N];
    for (index, attempt) in attempts.iter_mut().enumerate() {
        let leader = fds[0].as_ref();
        let fd = attempt
            .run(|attr, flags| group.open(&attr.read_format_raw(0), leader, flags))
            .map_err(|error| MonitorError::Open {
                index,
                error,
                inherit,
                sample_type: attempt.attr().to_raw().sample_type,
            })?;
        fds[index] = Some(fd);
    }
    let mut fds = fds.into_iter();
    Ok(core::array::from_fn(|index| GroupFd {
        fd: fds
            .next()
            .flatten()
            .expect("one fd per event, opened above"),
        index,
    }))
}

/// Maps each event's page and makes its reader (the calling thread's
/// events: the counter instruction is allowed).
pub(super) fn map_readers<const N: usize>(
    fds: [GroupFd<N>; N],
) -> Result<[CounterReader<UserPage, GroupFd<N>>; N], MonitorError> {
    let mut pages: [Option<UserPage>; N] = [const { None }; N];
    for (index, fd) in fds.iter().enumerate() {
        let page = UserPage::map(&fd.fd).map_err(|error| MonitorError::Map { index, error })?;
        pages[index] = Some(page);
    }
    let mut pages = pages.into_iter();
    let mut fds = fds.into_iter();
    Ok(core::array::from_fn(|_| {
        let page = pages
            .next()
            .flatten()
            .expect("one page per event, mapped above");
        let fd = fds.next().expect("one fd per event");
        CounterReader::new(page, fd, EventTarget::as_opened(0, -1))
    }))
}

/// Every event through the counter instruction, or why not as soon as one
/// cannot be (then the caller makes one group read for all).
#[inline]
pub(super) fn read_user_space<const N: usize>(
    readers: &[CounterReader<UserPage, GroupFd<N>>; N],
) -> Result<[CounterReading; N], FallbackReason> {
    let mut out = [UNREAD; N];
    for (slot, reader) in out.iter_mut().zip(readers) {
        let mut why = FallbackReason::OtherThread;
        match reader.read_user_space(&mut why) {
            Some(reading) => *slot = reading,
            None => return Err(why),
        }
    }
    Ok(out)
}
