//! The fd budget: every event of every placement is one fd, counted against
//! RLIMIT_NOFILE.

use crate::errno::Errno;
use crate::linux::rlimit::{self, Limit};
use std::fmt;

/// Not enough file descriptors for the set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetError {
    /// fds the set needs.
    pub needed: usize,
    /// fds the process already has open.
    pub in_use: usize,
    /// RLIMIT_NOFILE after trying to raise it.
    pub limit: Limit,
    /// Why raising failed, if it did.
    pub raise_error: Option<Errno>,
}

impl fmt::Display for BudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the event set needs {} file descriptors but only {} are allowed: RLIMIT_NOFILE \
             is {} (hard limit {}) and {} are already open; ",
            self.needed,
            (self.limit.soft as usize).saturating_sub(self.in_use),
            self.limit.soft,
            fmt_limit(self.limit.hard),
            self.in_use
        )?;
        if let Some(e) = self.raise_error {
            write!(f, "raising the soft limit failed ({e}); ")?;
        }
        f.write_str(
            "raise the hard limit (`ulimit -Hn`, LimitNOFILE= in systemd, or CAP_SYS_RESOURCE), \
             measure fewer events, CPUs or threads, or use the per-CPU inherit fallback",
        )
    }
}

impl std::error::Error for BudgetError {}

fn fmt_limit(n: u64) -> String {
    if n == rlimit::INFINITY {
        "unlimited".to_owned()
    } else {
        n.to_string()
    }
}

/// fds the process has open now (entries of `/proc/self/fd`, less the one
/// used to list them).
pub fn fds_in_use() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count().saturating_sub(1))
}

/// Makes room for `needed` more fds: raises RLIMIT_NOFILE's soft limit
/// toward the hard limit when the open fds plus `needed` exceed it (with a
/// margin of 16 for the caller's own files). Returns the limit in force.
pub fn reserve(needed: usize) -> Result<Limit, BudgetError> {
    const MARGIN: u64 = 16;
    let in_use = fds_in_use();
    let limit = rlimit::open_files().unwrap_or(Limit {
        soft: rlimit::INFINITY,
        hard: rlimit::INFINITY,
    });
    let want = (in_use + needed) as u64 + MARGIN;
    if want <= limit.soft {
        return Ok(limit);
    }
    let error = |limit, raise_error| BudgetError {
        needed,
        in_use,
        limit,
        raise_error,
    };
    if limit.soft >= limit.hard {
        if (in_use + needed) as u64 <= limit.soft {
            return Ok(limit);
        }
        return Err(error(limit, None));
    }
    let raised = Limit {
        soft: want.min(limit.hard),
        hard: limit.hard,
    };
    match rlimit::set_open_files(raised) {
        Ok(()) if raised.soft >= (in_use + needed) as u64 => Ok(raised),
        Ok(()) => Err(error(raised, None)),
        Err(e) => Err(error(limit, Some(e))),
    }
}
