//! Opening the set's groups on one placement: each event through its
//! fallback attempt (perf's rules on its first placement, the settled attr
//! after), the hybrid fallback, and which refusals are recorded per event
//! and which end the whole open.

use super::super::budget::{self, BudgetError};
use super::super::threads::AttachError;
use super::super::SetError;
use super::{EventSet, Instance};
use perf_event_core::fd::EventFd;
use perf_event_core::linux::errno as os;
use perf_event_core::linux::errno::Errno;
use perf_event_core::open::{GroupOpen, OpenError, Scope};

/// Errors that make the whole open fail (the set closes what it opened).
fn is_unsupported(e: Errno) -> bool {
    matches!(
        e.0,
        os::ENOENT
            | os::EOPNOTSUPP
            | os::ENODEV
            | os::EINVAL
            | os::E2BIG
            | os::ENOSPC
            | os::EBUSY
            | os::EOVERFLOW
    )
}

/// How a placement's open ended.
pub(super) enum Outcome {
    Opened,
    ThreadGone,
}

impl EventSet {
    /// Opens every group on (cpu, tid).
    pub(super) fn open_placement(
        &mut self,
        cpu: i32,
        tid: i32,
        inherit: bool,
    ) -> Result<Outcome, SetError> {
        for g in 0..self.groups.len() {
            let scope = Scope::raw(tid, cpu)
                .map_err(|e| self.open_error(self.groups[g][0], cpu, tid, e))?;
            let group = GroupOpen::new(scope, self.added_read_format(g), inherit);
            let mut fds: Vec<(usize, EventFd)> = Vec::new();
            for k in 0..self.groups[g].len() {
                let e = self.groups[g][k];
                if !Self::allowed_on(&self.events[e].spec, cpu) {
                    continue;
                }
                let leader = fds.first().map(|(_, fd)| fd);
                if k > 0 && leader.is_none() {
                    // The leader failed here: never let a member count alone.
                    self.events[e].leader_failed += 1;
                    continue;
                }
                match self.open_one(&group, e, leader) {
                    Ok(fd) => {
                        self.events[e].opened += 1;
                        fds.push((e, fd));
                    }
                    Err(err) if err.errno == Some(Errno(os::ESRCH)) => {
                        for (e, _) in &fds {
                            self.events[*e].opened -= 1;
                        }
                        return Ok(Outcome::ThreadGone);
                    }
                    Err(err) => self.not_opened(e, cpu, tid, err)?,
                }
            }
            if !fds.is_empty() {
                self.instances.push(Instance { cpu, tid, fds });
            }
        }
        Ok(Outcome::Opened)
    }

    /// Event `e` did not open on (cpu, tid): recorded when the kernel does
    /// not support it, else the error that ends the whole open.
    fn not_opened(&mut self, e: usize, cpu: i32, tid: i32, err: OpenError) -> Result<(), SetError> {
        let errno = err.errno.unwrap_or(Errno(0));
        if errno.0 == os::EMFILE || errno.0 == os::ENFILE {
            return Err(SetError::Budget(BudgetError {
                needed: self.fds_wanted(),
                in_use: crate::sysfs::fds_in_use(),
                limit: budget::open_files_limit(),
                errno: Some(errno),
            }));
        }
        if tid > 0 && matches!(errno.0, os::EACCES | os::EPERM) {
            // Another process's thread: ptrace access and the paranoid
            // level decide.
            return Err(SetError::Attach(AttachError::new(tid, errno)));
        }
        if err.errno.is_none() || !is_unsupported(errno) {
            return Err(self.open_error(e, cpu, tid, err));
        }
        self.events[e].unsupported.get_or_insert(err);
        Ok(())
    }

    /// A fatal open error of event `e` on (cpu, tid).
    fn open_error(&self, e: usize, cpu: i32, tid: i32, error: OpenError) -> SetError {
        SetError::Open {
            event: self.events[e].spec.display_name(),
            cpu,
            tid,
            error: Box::new(error),
        }
    }

    /// fds the set would hold if every event opened on every placement it
    /// has so far.
    fn fds_wanted(&self) -> usize {
        self.instances.iter().map(|i| i.fds.len()).sum::<usize>() + self.events.len()
    }

    /// Opens event `e` in `group`; on ENOENT, EINVAL or EOPNOTSUPP, once,
    /// with its hybrid fallback attr, kept for every later placement if it
    /// opens.
    fn open_one(
        &mut self,
        group: &GroupOpen,
        e: usize,
        leader: Option<&EventFd>,
    ) -> Result<EventFd, OpenError> {
        let fallback = self.events[e].spec.fallback;
        match (self.open_attempt(group, e, leader), fallback) {
            (Err(err), Some(fallback))
                if !self.events[e].fallback_used
                    && matches!(
                        err.errno.map(|e| e.0),
                        Some(os::ENOENT | os::EINVAL | os::EOPNOTSUPP)
                    ) =>
            {
                let kept = self.attempts[e];
                self.attempts[e] = self.events[e].spec.attempt(fallback);
                let r = self.open_attempt(group, e, leader);
                self.events[e].fallback_used = r.is_ok();
                if r.is_err() {
                    self.attempts[e] = kept;
                    self.events[e].fallbacks = *kept.fallbacks();
                }
                r
            }
            (r, _) => r,
        }
    }

    /// Opens event `e`'s attempt in `group`: under its policy until it
    /// has opened once (perf's fallbacks are taken on the first placement
    /// that needs them), as it stands after that, so every placement
    /// counts the same attr.
    fn open_attempt(
        &mut self,
        group: &GroupOpen,
        e: usize,
        leader: Option<&EventFd>,
    ) -> Result<EventFd, OpenError> {
        let attempt = &mut self.attempts[e];
        let r = if self.events[e].fallbacks_settled() {
            group.open(&attempt.attr(), leader, attempt.flags())
        } else {
            attempt.run(|attr, flags| group.open(attr, leader, flags))
        };
        self.events[e].fallbacks = *attempt.fallbacks();
        r
    }
}
