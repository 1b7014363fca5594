//! The event set: groups opened on every placement, one fd table.

use super::budget;
use super::cpus::{CpuSet, Cpus};
use super::spec::{BudgetPolicy, EventSpec, Target};
use super::threads::{AttachError, ThreadSet};
use super::{EventStatus, PlacedCounts, Placement, SetError};
use perf_event_core::attr::Attr;
use perf_event_core::fallback::{Attempt, Fallbacks};
use perf_event_core::fd::EventFd;
use perf_event_core::linux::errno as os;
use perf_event_core::linux::errno::Errno;
use perf_event_core::open::OpenError;
use perf_event_core::read_format::{Counts, ReadError, Reading};
use perf_event_core::sys;
use std::collections::HashMap;

mod placement;

use placement::Outcome;

/// The read_format bits the set needs on every event.
const SET_READ_FORMAT: u64 =
    (sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;
/// Added for groups of more than one event: one `read(2)` of the leader
/// returns every member. A group of one is read without it (the kernel's
/// group read costs more than a single event's: measured in the bench
/// `attach_vs_perf`).
const GROUP_READ_FORMAT: u64 = sys::PERF_FORMAT_GROUP as u64;

/// How many times a process's threads are re-scanned before the set gives
/// up waiting for a stable list (threads still appearing are reported).
const MAX_SCANS: usize = 64;

/// How many times a group read that met an inherited copy being torn
/// down ([`ReadError::is_inherited_group_mismatch`]) is tried again: the
/// first few after a yield, the rest after 1 ms each (the exiting task
/// finishes its teardown without anything the reader holds).
const MISMATCH_TRIES: u32 = 200;

/// One `read(2)` of a group instance, again while an exiting child task's
/// inherited copy is half torn down (before Linux 5.13, `ECHILD` for a
/// moment after a thread's exit); any other failure is returned at once.
fn read_group<'b>(leader: &EventFd, buf: &'b mut [u8]) -> Result<Reading<'b>, ReadError> {
    let mut tries = 0;
    let n = loop {
        match leader.read(buf).map_err(ReadError::Errno) {
            Err(e) if e.is_inherited_group_mismatch() && tries < MISMATCH_TRIES => {
                tries += 1;
                if tries <= 10 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            read => break read?,
        }
    };
    leader.parse_read(&buf[..n])
}

/// One event of the set, with how opening it went.
#[derive(Debug)]
pub struct EventInfo {
    /// What was asked for (after hybrid expansion).
    pub spec: EventSpec,
    /// Its group's index among the non-empty groups given (an empty group
    /// is left out).
    pub group: usize,
    /// Whether it leads its group.
    pub leader: bool,
    /// Placements where it is open.
    pub opened: usize,
    /// The first "not supported" error (ENOENT, EOPNOTSUPP, EINVAL, ...).
    pub unsupported: Option<OpenError>,
    /// Placements skipped because the group leader failed there.
    pub leader_failed: usize,
    /// Whether the fallback attr is in use.
    pub fallback_used: bool,
    /// perf's fallbacks taken under its spec's policy (on the first
    /// placement that needed them; the attr in use is
    /// [`EventSet::opened_attr`]).
    pub fallbacks: Fallbacks,
}

impl EventInfo {
    /// The name perf prints for it: [`EventSpec::display_name`] as its
    /// fallbacks renamed it (`task-clock:u`, `cpu-clock`; see
    /// [`perf_event_core::fallback::renamed`]).
    pub fn name(&self, opened_attr: &Attr) -> String {
        perf_event_core::fallback::renamed(&self.spec.display_name(), &self.fallbacks, opened_attr)
            .to_string()
    }

    /// Whether it has opened on a placement (its fallbacks are then
    /// settled for the others).
    fn fallbacks_settled(&self) -> bool {
        self.opened > 0 || self.leader_failed > 0
    }

    /// `perf stat`'s status: `<not supported>` when it opened nowhere.
    pub fn status(&self) -> EventStatus {
        match (&self.unsupported, self.opened) {
            (Some(e), 0) => EventStatus::NotSupported(e.to_string()),
            (None, 0) if self.leader_failed > 0 => EventStatus::NotSupported(
                "its group leader could not be opened, so it was not opened alone".to_owned(),
            ),
            _ => EventStatus::Open,
        }
    }
}

/// One opened group on one placement: the leader's fd first.
#[derive(Debug)]
struct Instance {
    cpu: i32,
    tid: i32,
    /// (event index, fd), leader first, members in open order (the order
    /// of a group read).
    fds: Vec<(usize, EventFd)>,
}

/// What opening found about the threads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttachReport {
    /// Threads opened.
    pub threads: usize,
    /// Threads that exited between the listing and their open (ESRCH).
    pub exited: usize,
    /// Scans of `/proc/PID/task` made.
    pub scans: usize,
    /// Whether the last scan found no new thread (false: threads were still
    /// appearing after 64 scans: use `inherit`).
    pub stable: bool,
    /// Whether the budget forced [`BudgetPolicy::InheritPerCpu`].
    pub inherit_fallback: bool,
}

/// Groups of events opened on (cpu, thread) placements. Owns every fd;
/// dropping it closes them.
#[derive(Debug)]
pub struct EventSet {
    events: Vec<EventInfo>,
    /// Per group, its event indices (leader first).
    groups: Vec<Vec<usize>>,
    instances: Vec<Instance>,
    /// Per event, its attr and open flags after the fallbacks taken.
    attempts: Vec<Attempt>,
    attach: AttachReport,
    buf: Vec<u8>,
    counts: Vec<PlacedCounts>,
}

impl EventSet {
    /// Opens `groups` (each a leader and its members) on every placement of
    /// `target`. Each group is expanded for hybrid CPUs by the caller (see
    /// [`CorePmus::expand_group`](super::CorePmus::expand_group)).
    ///
    /// Partial failure follows `perf stat`: an event the kernel does not
    /// support (ENOENT, EOPNOTSUPP, ENODEV, EINVAL, ...) is recorded with its
    /// error and the rest still count; where a group leader fails its
    /// members are not opened; a thread that exits (ESRCH) is skipped and
    /// counted. Permission errors, fd exhaustion and any other errno fail
    /// the whole open with an explained [`SetError`].
    ///
    /// The fds needed are computed first and RLIMIT_NOFILE raised toward
    /// its hard limit when needed ([`budget::reserve`]); `policy` says what
    /// happens when they still do not fit. Events are opened disabled:
    /// call [`EventSet::enable`].
    pub fn open(
        groups: Vec<Vec<EventSpec>>,
        target: Target,
        policy: BudgetPolicy,
    ) -> Result<EventSet, SetError> {
        let mut set = EventSet::unopened(groups);
        let (cpus, threads, inherit, pid) = match target {
            Target::Cpus(cpus) => {
                let placements: Vec<i32> = cpus.as_slice().iter().map(|&c| c as i32).collect();
                budget::reserve(set.fds_per_thread(&placements)).map_err(SetError::Budget)?;
                for cpu in placements {
                    set.open_placement(cpu, -1, false)?;
                }
                return Ok(set);
            }
            Target::Threads {
                threads,
                cpus,
                inherit,
            } => (cpus, threads, inherit, None),
            Target::Process { pid, cpus, inherit } => (
                cpus,
                ThreadSet::of_process(pid).map_err(SetError::Attach)?,
                inherit,
                Some(pid),
            ),
        };
        let cpu_list: Vec<i32> = match &cpus {
            Some(c) => c.as_slice().iter().map(|&c| c as i32).collect(),
            None => vec![-1],
        };
        if threads.is_empty() {
            set.attach.stable = true;
            return Ok(set);
        }
        let needed = set.fds_per_thread(&cpu_list) * threads.len();
        match budget::reserve(needed) {
            Ok(_) => {}
            Err(_) if policy == BudgetPolicy::InheritPerCpu => {
                return set.open_inherit_fallback(pid.unwrap_or(threads.as_slice()[0]))
            }
            Err(err) => return Err(SetError::Budget(err)),
        }
        let mut done = ThreadSet::default();
        let mut current = threads;
        loop {
            set.attach.scans += 1;
            let fresh: Vec<i32> = current
                .as_slice()
                .iter()
                .copied()
                .filter(|t| !done.contains(*t))
                .collect();
            if fresh.is_empty() {
                set.attach.stable = true;
                break;
            }
            if set.attach.scans > 1 {
                let more = set.fds_per_thread(&cpu_list) * fresh.len();
                budget::reserve(more).map_err(SetError::Budget)?;
            }
            for &tid in &fresh {
                let mut gone = false;
                for &cpu in &cpu_list {
                    if let Outcome::ThreadGone = set.open_placement(cpu, tid, inherit)? {
                        gone = true;
                        break;
                    }
                }
                if gone {
                    set.drop_thread(tid);
                    set.attach.exited += 1;
                } else {
                    set.attach.threads += 1;
                }
            }
            done = ThreadSet::from_tids(done.as_slice().iter().copied().chain(fresh));
            let Some(pid) = pid else {
                set.attach.stable = true;
                break;
            };
            if set.attach.scans >= MAX_SCANS {
                break;
            }
            current = match ThreadSet::of_process(pid) {
                Ok(t) => t,
                // The process exited after we opened its threads: what we
                // have is all there will be.
                Err(err) if err.errno.0 == os::ESRCH => {
                    set.attach.stable = true;
                    break;
                }
                Err(err) => return Err(SetError::Attach(err)),
            };
        }
        Ok(set)
    }

    /// The set's table of events and groups, nothing opened yet. An
    /// empty group is left out, so `EventInfo::group` indexes `groups`.
    fn unopened(groups: Vec<Vec<EventSpec>>) -> EventSet {
        let mut set = EventSet {
            events: Vec::new(),
            groups: Vec::new(),
            instances: Vec::new(),
            attempts: Vec::new(),
            attach: AttachReport::default(),
            buf: Vec::new(),
            counts: Vec::new(),
        };
        for group in groups.into_iter().filter(|g| !g.is_empty()) {
            let first = set.events.len();
            set.attempts
                .extend(group.iter().map(|spec| spec.attempt(spec.attr)));
            set.events
                .extend(group.into_iter().enumerate().map(|(i, spec)| EventInfo {
                    spec,
                    group: set.groups.len(),
                    leader: i == 0,
                    opened: 0,
                    unsupported: None,
                    leader_failed: 0,
                    fallback_used: false,
                    fallbacks: Fallbacks::default(),
                }));
            set.groups.push((first..set.events.len()).collect());
        }
        set
    }

    /// [`BudgetPolicy::InheritPerCpu`]: one placement per online CPU on
    /// `main` with `inherit`.
    fn open_inherit_fallback(mut self, main: i32) -> Result<EventSet, SetError> {
        let online = Cpus::read().map_err(SetError::Sysfs)?.online().clone();
        let per_cpu: Vec<i32> = online.as_slice().iter().map(|&c| c as i32).collect();
        budget::reserve(self.fds_per_thread(&per_cpu)).map_err(SetError::Budget)?;
        self.attach.inherit_fallback = true;
        for cpu in per_cpu {
            if let Outcome::ThreadGone = self.open_placement(cpu, main, true)? {
                return Err(SetError::Attach(AttachError::new(main, Errno(os::ESRCH))));
            }
        }
        self.attach.threads = 1;
        self.attach.scans = 1;
        self.attach.stable = true;
        Ok(self)
    }

    /// fds one thread (or the CPU-wide placement) needs on `cpus`.
    fn fds_per_thread(&self, cpus: &[i32]) -> usize {
        self.events
            .iter()
            .map(|e| {
                cpus.iter()
                    .filter(|&&c| Self::allowed_on(&e.spec, c))
                    .count()
            })
            .sum()
    }

    /// Closes every fd of a thread that exited.
    fn drop_thread(&mut self, tid: i32) {
        for inst in self.instances.iter().filter(|i| i.tid == tid) {
            for (e, _) in &inst.fds {
                self.events[*e].opened -= 1;
            }
        }
        self.instances.retain(|i| i.tid != tid);
    }

    fn allowed_on(spec: &EventSpec, cpu: i32) -> bool {
        match (&spec.cpus, cpu) {
            (Some(set), c) if c >= 0 => set.contains(c as u32),
            _ => true,
        }
    }

    /// Event `e`'s attr as it is opened now: its spec's (or the hybrid
    /// fallback) after perf's fallbacks.
    fn attr_in_use(&self, e: usize) -> Attr {
        self.attempts[e].attr()
    }

    /// The attr event `event` is open with: its spec's attr (or the
    /// fallback, when that is in use) with the read_format bits the set
    /// adds (`TOTAL_TIME_ENABLED`, `TOTAL_TIME_RUNNING`, and `GROUP` for a
    /// group of more than one event). Its `sample_type`, `read_format` and `sample_id_all` give the
    /// layout of the records its fds write (what a ring set needs); the
    /// `disabled` / `inherit` bits of each fd are the set's choice per
    /// placement and not part of it. `None` for an index past the events.
    pub fn opened_attr(&self, event: usize) -> Option<Attr> {
        let group = self.events.get(event)?.group;
        let attr = self.attr_in_use(event);
        Some(attr.read_format_raw(attr.read_format_word() | self.added_read_format(group)))
    }

    /// The read_format bits the set adds to every event of group `g`: the
    /// times, and `PERF_FORMAT_GROUP` when it has more than one event.
    fn added_read_format(&self, g: usize) -> u64 {
        match self.groups[g].len() {
            1 => SET_READ_FORMAT,
            _ => SET_READ_FORMAT | GROUP_READ_FORMAT,
        }
    }

    /// The events, in group order (leader first).
    pub fn events(&self) -> &[EventInfo] {
        &self.events
    }

    /// What opening found about the threads.
    pub fn attach_report(&self) -> &AttachReport {
        &self.attach
    }

    /// How many fds the set holds.
    pub fn fd_count(&self) -> usize {
        self.instances.iter().map(|i| i.fds.len()).sum()
    }

    /// How many group instances (one read, one ioctl each).
    pub fn group_count(&self) -> usize {
        self.instances.len()
    }

    fn each_leader(&self, f: impl Fn(&EventFd) -> Result<(), Errno>) -> Result<(), SetError> {
        for inst in &self.instances {
            let (e, fd) = &inst.fds[0];
            match f(fd) {
                Ok(()) => {}
                // A thread that exited keeps its fd valid; ioctls still work,
                // so any error is real.
                Err(errno) => {
                    return Err(SetError::Ioctl {
                        event: self.events[*e].spec.display_name(),
                        cpu: inst.cpu,
                        tid: inst.tid,
                        errno,
                    })
                }
            }
        }
        Ok(())
    }

    /// `PERF_EVENT_IOC_ENABLE` with `PERF_IOC_FLAG_GROUP` on every leader.
    pub fn enable(&self) -> Result<(), SetError> {
        self.each_leader(|fd| fd.enable(true))
    }

    /// `PERF_EVENT_IOC_DISABLE` with `PERF_IOC_FLAG_GROUP` on every leader.
    pub fn disable(&self) -> Result<(), SetError> {
        self.each_leader(|fd| fd.disable(true))
    }

    /// `PERF_EVENT_IOC_RESET` with `PERF_IOC_FLAG_GROUP` on every leader.
    pub fn reset(&self) -> Result<(), SetError> {
        self.each_leader(|fd| fd.reset(true))
    }

    /// Reads every group with one `read(2)` per group instance (the
    /// leader's `PERF_FORMAT_GROUP` read holds its members' values in open
    /// order; a group of one event is read as a single event) and returns
    /// one [`PlacedCounts`] per open fd. The slice is reused by the next
    /// call.
    pub fn read_all(&mut self) -> Result<&[PlacedCounts], SetError> {
        self.counts.clear();
        // One PlacedCounts per fd: grown once, on the first read.
        self.counts.reserve(self.fd_count());
        for inst in &self.instances {
            let (leader_event, leader) = &inst.fds[0];
            let need = leader.read_format().size(inst.fds.len());
            if self.buf.len() < need {
                self.buf.resize(need, 0);
            }
            let reading = match read_group(leader, &mut self.buf[..need]) {
                Ok(r) => r,
                Err(failure) => {
                    return Err(SetError::Read {
                        event: self.events[*leader_event].spec.display_name(),
                        cpu: inst.cpu,
                        tid: inst.tid,
                        failure,
                    })
                }
            };
            let (enabled, running) = (reading.time_enabled(), reading.time_running());
            for (i, (e, _)) in inst.fds.iter().enumerate() {
                let Some(v) = reading.get(i) else { break };
                self.counts.push(PlacedCounts {
                    placement: Placement {
                        event: *e,
                        cpu: inst.cpu,
                        tid: inst.tid,
                    },
                    counts: Counts {
                        value: v.value,
                        enabled,
                        running,
                    },
                });
            }
        }
        Ok(&self.counts)
    }

    /// The map from event id (`PERF_FORMAT_ID`, `PERF_SAMPLE_ID`,
    /// `PERF_SAMPLE_IDENTIFIER`; from `PERF_EVENT_IOC_ID`, since Linux 3.12)
    /// to the event index, CPU and thread of every fd: how a sample from a
    /// shared ring is traced back to its event. One ioctl per fd.
    pub fn sample_ids(&self) -> Result<HashMap<u64, Placement>, SetError> {
        let mut map = HashMap::with_capacity(self.fd_count());
        for (placement, fd) in self.fds() {
            let id = fd.id().map_err(|errno| SetError::Ioctl {
                event: self.events[placement.event].spec.display_name(),
                cpu: placement.cpu,
                tid: placement.tid,
                errno,
            })?;
            map.insert(id, placement);
        }
        Ok(map)
    }

    /// Every open fd with its event index, CPU and thread.
    pub fn fds(&self) -> impl Iterator<Item = (Placement, &EventFd)> + '_ {
        self.instances.iter().flat_map(|inst| {
            inst.fds.iter().map(move |(e, fd)| {
                (
                    Placement {
                        event: *e,
                        cpu: inst.cpu,
                        tid: inst.tid,
                    },
                    fd,
                )
            })
        })
    }

    /// The CPUs the set has placements on (empty for per-thread sets).
    pub fn cpus(&self) -> CpuSet {
        CpuSet::from_cpus(
            self.instances
                .iter()
                .filter(|i| i.cpu >= 0)
                .map(|i| i.cpu as u32),
        )
    }
}
