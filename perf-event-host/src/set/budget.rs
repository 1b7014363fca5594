//! The fd budget: every event of every placement is one fd, counted against
//! RLIMIT_NOFILE.

use crate::sysfs::fds_in_use;
use perf_event_core::linux::errno::Errno;
use perf_event_core::linux::rlimit::setrlimit;
use perf_event_core::linux::system::{getrlimit, Limit, Resource};
use std::fmt;

/// Not enough file descriptors for the set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetError {
    /// fds the set needs.
    pub needed: usize,
    /// fds the process already has open.
    pub in_use: usize,
    /// RLIMIT_NOFILE after trying to raise it (`None`: unlimited).
    pub limit: Limit,
    /// Why raising failed, or the errno (EMFILE, ENFILE) an open met.
    pub errno: Option<Errno>,
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: Option<u64>| v.map_or("unlimited".to_owned(), |v| v.to_string());
        let allowed = self.limit.soft.map_or("any number".to_owned(), |s| {
            (s as usize).saturating_sub(self.in_use).to_string()
        });
        write!(
            f,
            "the event set needs {} file descriptors but only {allowed} are allowed: \
             RLIMIT_NOFILE is {} (hard limit {}) and {} are already open; ",
            self.needed,
            show(self.limit.soft),
            show(self.limit.hard),
            self.in_use
        )?;
        match self.errno {
            Some(e) if e.0 == perf_event_core::linux::errno::ENFILE => {
                write!(f, "the system-wide file table is full ({e}, fs.file-max); ")?
            }
            Some(e) if e.0 == perf_event_core::linux::errno::EMFILE => {
                write!(f, "an open failed with {e}; ")?
            }
            Some(e) => write!(f, "raising the soft limit failed ({e}); ")?,
            None => {}
        }
        f.write_str(
            "raise the hard limit (`ulimit -Hn`, LimitNOFILE= in systemd, or CAP_SYS_RESOURCE), \
             measure fewer events, CPUs or threads, or use BudgetPolicy::InheritPerCpu",
        )
    }
}

impl std::error::Error for BudgetError {}

/// RLIMIT_NOFILE now (unlimited if it cannot be read).
pub(crate) fn open_files_limit() -> Limit {
    getrlimit(Resource::OpenFiles).unwrap_or(Limit {
        soft: None,
        hard: None,
    })
}

/// Makes room for `needed` more fds: when the open fds plus `needed` (plus
/// a margin of 16 for the caller's own files) exceed RLIMIT_NOFILE's soft
/// limit, raises it toward the hard limit (no privilege needed). Returns
/// the limit in force, or why the fds do not fit.
pub fn reserve(needed: usize) -> Result<Limit, BudgetError> {
    const MARGIN: u64 = 16;
    let in_use = fds_in_use();
    let limit = open_files_limit();
    let fits = |l: Limit| l.soft.is_none_or(|s| (in_use + needed) as u64 <= s);
    let want = (in_use + needed) as u64 + MARGIN;
    if limit.soft.is_none_or(|s| want <= s) {
        return Ok(limit);
    }
    let error = |limit, errno| BudgetError {
        needed,
        in_use,
        limit,
        errno,
    };
    let raised = Limit {
        soft: Some(limit.hard.map_or(want, |h| want.min(h))),
        hard: limit.hard,
    };
    if raised.soft <= limit.soft {
        // Already at the hard limit: nothing to raise.
        return if fits(limit) {
            Ok(limit)
        } else {
            Err(error(limit, None))
        };
    }
    match setrlimit(Resource::OpenFiles, raised) {
        Ok(()) if fits(raised) => Ok(raised),
        Ok(()) => Err(error(raised, None)),
        Err(_) if fits(limit) => Ok(limit),
        Err(e) => Err(error(limit, Some(e))),
    }
}
