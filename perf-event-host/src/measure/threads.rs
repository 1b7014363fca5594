//! [`PerThread`]: the same monitor group on each thread of a list.

use perf_event_core::attr::Attr;
use perf_event_core::fallback::{Attempt, Fallbacks, Policy};
use perf_event_core::linux::types::pid_t;
use perf_event_core::monitor::{between, MonitorError, Threads, UNREAD};
use perf_event_core::monitor::{open_group, GroupFd};
use perf_event_core::open::Scope;
use perf_event_core::read_format::Counts;
use perf_event_core::userpage::{CounterReading, FallbackReason, ReadPath};

/// A group of `N` events opened on each thread of a given list (and, with
/// [`Threads::CallerAndNew`], on the threads each of them creates
/// afterwards); a read sums the threads' group reads, one `read(2)` per
/// thread. Counting other threads needs the ptrace-read permission on them
/// (or CAP_PERFMON), as for `perf stat -t`.
///
/// The groups are enabled at open; a thread that exits keeps its last
/// counts in its group, so the sums never go backwards.
#[derive(Debug)]
pub struct PerThread<const N: usize> {
    groups: Vec<(pid_t, [GroupFd<N>; N])>,
    start: [CounterReading; N],
    fallbacks: [Fallbacks; N],
}

impl<const N: usize> PerThread<N> {
    /// Opens `attrs` as one group on each of `tids` (0 is the calling
    /// thread) and enables them. `threads` chooses whether threads created
    /// later by each listed thread are counted too (`inherit`). Each event
    /// is opened under [`Policy::PERF_STAT`] on the first thread (see
    /// [`Monitor::open_for`](perf_event_core::monitor::Monitor::open_for)) and as it opened
    /// there on the others; [`PerThread::fallbacks`] says what changed.
    pub fn open(
        attrs: [Attr; N],
        tids: &[pid_t],
        threads: Threads,
    ) -> Result<PerThread<N>, MonitorError> {
        const { assert!(N > 0, "a monitor needs at least one event") };
        let inherit = threads == Threads::CallerAndNew;
        let mut groups = Vec::with_capacity(tids.len());
        let mut attempts = attrs.map(|a| Attempt::new(a, Policy::PERF_STAT));
        let mut fallbacks = [Fallbacks::default(); N];
        for &tid in tids {
            let fds = open_group(&mut attempts, Scope::thread(tid), inherit)?;
            fds[0].fd().enable(true).map_err(MonitorError::Control)?;
            if groups.is_empty() {
                // Settled on the first thread: the others open the same attrs.
                fallbacks = attempts.map(|a| *a.fallbacks());
                attempts =
                    attempts.map(|a| Attempt::new(a.attr(), Policy::STRICT).with_flags(a.flags()));
            }
            groups.push((tid, fds));
        }
        Ok(PerThread {
            groups,
            start: [UNREAD; N],
            fallbacks,
        })
    }

    /// Per event, perf's fallbacks taken when it was opened.
    pub fn fallbacks(&self) -> &[Fallbacks; N] {
        &self.fallbacks
    }

    /// The thread ids, in the order given.
    pub fn tids(&self) -> impl Iterator<Item = pid_t> + '_ {
        self.groups.iter().map(|(tid, _)| *tid)
    }

    /// Each thread's counts now (one `read(2)` per thread).
    pub fn read_each(&self) -> Result<Vec<[Counts; N]>, MonitorError> {
        self.groups
            .iter()
            .map(|(_, fds)| fds[0].read_group().map_err(MonitorError::Read))
            .collect()
    }

    /// The sum over the threads now. The times are summed too (thread-ns),
    /// so `running / enabled` stays the multiplexing fraction.
    /// Always the `read(2)` path ([`FallbackReason::OtherThread`]).
    pub fn read(&self) -> Result<[CounterReading; N], MonitorError> {
        let mut sum = [Counts::with_times(0, 0, 0); N];
        for (_, fds) in &self.groups {
            let counts = fds[0].read_group().map_err(MonitorError::Read)?;
            for (s, c) in sum.iter_mut().zip(counts) {
                s.value = s.value.wrapping_add(c.value);
                s.enabled = add(s.enabled, c.enabled);
                s.running = add(s.running, c.running);
            }
        }
        Ok(sum.map(|counts| CounterReading {
            counts,
            path: ReadPath::Syscall {
                reason: FallbackReason::OtherThread,
            },
        }))
    }

    /// Marks the start of a region.
    pub fn start(&mut self) -> Result<(), MonitorError> {
        self.start = self.read()?;
        Ok(())
    }

    /// The summed counts since [`PerThread::start`].
    pub fn stop(&mut self) -> Result<[CounterReading; N], MonitorError> {
        let end = self.read()?;
        Ok(between(&self.start, &end))
    }
}

/// A sum of times, saturating; absent if either is.
fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a?.saturating_add(b?))
}
