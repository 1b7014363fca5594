//! [`LockedMemory`]: why the kernel refused to map a ring buffer with
//! EPERM, with the limits it applied, read when it refused.

use crate::abi::Paranoid;
use crate::linux::access::Caller;
use crate::linux::system::{
    getrlimit, online_cpus, perf_event_mlock_kb, perf_event_paranoid, Limit, Resource,
};
use core::fmt;

/// A ring (or AUX area) mapping refused with EPERM: the pages exceed what
/// this user may lock (kernel/events/core.c, `perf_mmap`, since Linux
/// 2.6.32). Each user may lock `perf_event_mlock_kb` KiB per online CPU of
/// ring buffers, shared by all of that user's rings; pages beyond it are
/// charged to the process's `RLIMIT_MEMLOCK`; past both the kernel refuses
/// unless the caller has CAP_IPC_LOCK or `perf_event_paranoid` is -1.
///
/// The values are those read when the mapping failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockedMemory {
    /// Pages of the refused mapping (the metadata page included for a ring).
    pub pages: usize,
    /// The page size in bytes.
    pub page_size: usize,
    /// `kernel.perf_event_mlock_kb` (`None`: unreadable).
    pub mlock_kb: Option<u64>,
    /// Online CPUs, which multiply `mlock_kb` (`None`: unknown).
    pub online_cpus: Option<u32>,
    /// `RLIMIT_MEMLOCK` of the process (`None`: getrlimit failed).
    pub memlock: Option<Limit>,
    /// The caller's CAP_IPC_LOCK (which lifts the limit).
    pub caller: Caller,
    /// `kernel.perf_event_paranoid` (-1 lifts the limit).
    pub paranoid: Option<Paranoid>,
}

impl LockedMemory {
    /// The limits now, for a mapping of `pages` pages of `page_size` bytes.
    pub fn now(pages: usize, page_size: usize) -> LockedMemory {
        LockedMemory {
            pages,
            page_size,
            mlock_kb: perf_event_mlock_kb(),
            online_cpus: online_cpus(),
            memlock: getrlimit(Resource::LockedMemory).ok(),
            caller: Caller::current(),
            paranoid: perf_event_paranoid(),
        }
    }

    /// The size of the refused mapping in KiB.
    pub const fn asked_kb(&self) -> u64 {
        (self.pages as u64).saturating_mul(self.page_size as u64) / 1024
    }

    /// What the user may lock in all its rings before `RLIMIT_MEMLOCK`
    /// counts: `perf_event_mlock_kb` × online CPUs, in KiB.
    pub fn user_limit_kb(&self) -> Option<u64> {
        Some(self.mlock_kb?.saturating_mul(u64::from(self.online_cpus?)))
    }
}

impl fmt::Display for LockedMemory {
    /// The limits, their values, and perf record's remedies.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "mmap of {} pages ({} KiB) refused (EPERM): ",
            self.pages,
            self.asked_kb()
        )?;
        if self.caller.ipc_lock || self.paranoid.is_some_and(|p| p.0 < 0) {
            return f.write_str(
                "you have CAP_IPC_LOCK (or perf_event_paranoid is -1), so the locked-memory \
                 limits do not apply: a security module refused the mapping",
            );
        }
        f.write_str("more than this user may lock without CAP_IPC_LOCK: ")?;
        match (self.mlock_kb, self.online_cpus, self.user_limit_kb()) {
            (Some(kb), Some(cpus), Some(all)) => write!(
                f,
                "kernel.perf_event_mlock_kb = {kb} KiB per CPU x {cpus} online CPUs = {all} KiB \
                 for all of this user's rings (those already mapped count too)"
            )?,
            (Some(kb), _, _) => write!(
                f,
                "kernel.perf_event_mlock_kb = {kb} KiB per CPU for all of this user's rings"
            )?,
            _ => f.write_str("kernel.perf_event_mlock_kb per CPU for all of this user's rings")?,
        }
        match self.memlock.map(|l| l.soft) {
            Some(Some(bytes)) => write!(
                f,
                ", then RLIMIT_MEMLOCK = {} KiB for this process",
                bytes / 1024
            )?,
            Some(None) => f.write_str(", then RLIMIT_MEMLOCK (unlimited) for this process")?,
            None => f.write_str(", then RLIMIT_MEMLOCK for this process")?,
        }
        f.write_str("; map fewer pages (perf record -m), ")?;
        match self.mlock_kb {
            Some(kb) => write!(
                f,
                "raise the sysctl (sysctl -w kernel.perf_event_mlock_kb={})",
                kb.saturating_add(self.asked_kb())
            )?,
            None => f.write_str("raise kernel.perf_event_mlock_kb")?,
        }
        f.write_str(", raise RLIMIT_MEMLOCK (ulimit -l), or grant CAP_IPC_LOCK")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_limit_with_its_value_and_the_remedies() {
        let l = LockedMemory {
            pages: 4097,
            page_size: 4096,
            mlock_kb: Some(516),
            online_cpus: Some(2),
            memlock: Some(Limit {
                soft: Some(8 << 20),
                hard: Some(8 << 20),
            }),
            caller: Caller::default(),
            paranoid: Some(Paranoid(2)),
        };
        assert_eq!(l.user_limit_kb(), Some(1032));
        let text = l.to_string();
        for part in [
            "4097 pages (16388 KiB) refused (EPERM)",
            "kernel.perf_event_mlock_kb = 516 KiB per CPU x 2 online CPUs = 1032 KiB",
            "RLIMIT_MEMLOCK = 8192 KiB",
            "map fewer pages (perf record -m)",
            "sysctl -w kernel.perf_event_mlock_kb=16904",
            "CAP_IPC_LOCK",
        ] {
            assert!(text.contains(part), "{part:?} in {text}");
        }
        let exempt = LockedMemory {
            caller: Caller::from_effective(1 << crate::linux::access::CAP_IPC_LOCK),
            ..l
        };
        assert!(exempt.to_string().contains("do not apply"), "{exempt}");
    }
}
