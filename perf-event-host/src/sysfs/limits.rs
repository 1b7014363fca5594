//! The system's perf limits (`/proc/sys/kernel/perf_*`, `perf_user_access`,
//! `nmi_watchdog`), each with what it means for the caller.

use super::{parse_int, read_optional, SysfsError};
use perf_event_core::abi::Paranoid;
use std::fmt;
use std::path::Path;

/// `kernel.perf_user_access` (arm64 since Linux 5.17, riscv since 6.6):
/// whether user space may read counters directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserAccess(pub u32);

impl UserAccess {
    /// The value's meaning on the running architecture.
    pub fn meaning(self) -> &'static str {
        let csrr = perf_event_core::abi::arch::TARGET.user_counter
            == perf_event_core::abi::arch::UserCounter::Csrr;
        match (csrr, self.0) {
            (_, 0) => "user space may not read the counters: reads go through read(2)",
            (false, 1) => {
                "user space may read the counters of its own events (cap_user_rdpmc in the \
                 mmap page; open with config1 bit 1 `rdpmc` on arm64 PMUs)"
            }
            (true, 1) => "user space may read the counters of its own events (the default)",
            (true, 2) => "legacy: cycle, instret and time CSRs are readable by every task",
            _ => "a value this crate does not know",
        }
    }
}

/// `kernel.nmi_watchdog`: whether the hard-lockup detector runs. On x86
/// (since Linux 2.6.38) it holds a pinned cycles event on every CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NmiWatchdog(pub bool);

impl NmiWatchdog {
    /// What it means for counter availability.
    pub fn meaning(self) -> &'static str {
        if self.0 {
            "the hard-lockup detector keeps one hardware counter busy on every CPU: one \
             general-purpose counter fewer, more multiplexing (`sysctl kernel.nmi_watchdog=0` \
             frees it)"
        } else {
            "off: every hardware counter is available"
        }
    }
}

/// The caller's privileges that bypass the limits: one type for the whole
/// crate, defined at the OS boundary (no std needed) and re-exported here.
pub use perf_event_core::linux::access::Caller;

/// The perf limits of the running system. `None` where the file is absent
/// (older kernel, other architecture, or not built in).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// `perf_event_paranoid`.
    pub paranoid: Option<Paranoid>,
    /// `perf_event_max_sample_rate` (since Linux 2.6.32): the highest
    /// `sample_freq` accepted, in Hz; the kernel lowers it when sampling
    /// interrupts take too long.
    pub max_sample_rate: Option<u64>,
    /// `perf_event_max_stack` (since Linux 4.8): frames per callchain.
    pub max_stack: Option<u32>,
    /// `perf_event_max_contexts_per_stack` (since Linux 4.8).
    pub max_contexts_per_stack: Option<u32>,
    /// `perf_event_mlock_kb` (since Linux 2.6.32): KiB of ring buffer per
    /// CPU each user may lock beyond RLIMIT_MEMLOCK.
    pub mlock_kb: Option<u64>,
    /// `perf_cpu_time_max_percent` (since Linux 3.11).
    pub cpu_time_max_percent: Option<u32>,
    /// `perf_user_access` (arm64 since 5.17, riscv since 6.6).
    pub user_access: Option<UserAccess>,
    /// `nmi_watchdog`.
    pub nmi_watchdog: Option<NmiWatchdog>,
}

impl Limits {
    /// Where the sysctls live.
    pub const DIR: &'static str = "/proc/sys/kernel";

    /// Reads the limits of the running system.
    pub fn read() -> Result<Limits, SysfsError> {
        Limits::read_from(Path::new(Limits::DIR))
    }

    /// Reads the limits from `dir` (a copy of `/proc/sys/kernel`). A present
    /// but malformed file is an error naming it and its text.
    pub fn read_from(dir: &Path) -> Result<Limits, SysfsError> {
        fn num<T: core::str::FromStr>(dir: &Path, name: &str) -> Result<Option<T>, SysfsError> {
            let path = dir.join(name);
            read_optional(&path)?
                .map(|text| parse_int(&path, &text))
                .transpose()
        }
        Ok(Limits {
            paranoid: num(dir, "perf_event_paranoid")?.map(Paranoid),
            max_sample_rate: num(dir, "perf_event_max_sample_rate")?,
            max_stack: num(dir, "perf_event_max_stack")?,
            max_contexts_per_stack: num(dir, "perf_event_max_contexts_per_stack")?,
            mlock_kb: num(dir, "perf_event_mlock_kb")?,
            cpu_time_max_percent: num(dir, "perf_cpu_time_max_percent")?,
            user_access: num(dir, "perf_user_access")?.map(UserAccess),
            nmi_watchdog: num::<u32>(dir, "nmi_watchdog")?.map(|v| NmiWatchdog(v != 0)),
        })
    }

    /// One line per limit present: the sysctl, its value and what it means
    /// for `caller`.
    pub fn explain(&self, caller: Caller) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = self.paranoid {
            let you = if caller.perfmon {
                " (you have CAP_PERFMON or CAP_SYS_ADMIN: it does not restrict you)"
            } else {
                ""
            };
            out.push(format!("perf_event_paranoid {}: {}{you}", p.0, p.meaning()));
        }
        if let Some(n) = self.max_sample_rate {
            out.push(format!(
                "perf_event_max_sample_rate {n}: sample_freq above {n} Hz is refused with EINVAL; \
                 use sample_period or a lower frequency"
            ));
        }
        if let Some(n) = self.max_stack {
            out.push(format!(
                "perf_event_max_stack {n}: callchains stop at {n} frames; sample_max_stack above \
                 it fails with EOVERFLOW"
            ));
        }
        if let Some(n) = self.max_contexts_per_stack {
            out.push(format!(
                "perf_event_max_contexts_per_stack {n}: at most {n} context markers \
                 (PERF_CONTEXT_KERNEL/USER/...) per callchain"
            ));
        }
        if let Some(kb) = self.mlock_kb {
            out.push(format!(
                "perf_event_mlock_kb {kb}: {}",
                mlock_meaning(kb, page_size(), caller)
            ));
        }
        if let Some(n) = self.cpu_time_max_percent {
            out.push(format!(
                "perf_cpu_time_max_percent {n}: {}",
                match n {
                    0 => "off: the kernel never lowers perf_event_max_sample_rate".to_owned(),
                    n => format!(
                        "when sampling interrupts take more than {n}% of a CPU the kernel lowers \
                         perf_event_max_sample_rate (and logs it)"
                    ),
                }
            ));
        }
        if let Some(u) = self.user_access {
            out.push(format!("perf_user_access {}: {}", u.0, u.meaning()));
        }
        if let Some(w) = self.nmi_watchdog {
            out.push(format!("nmi_watchdog {}: {}", u8::from(w.0), w.meaning()));
        }
        out
    }
}

fn page_size() -> u64 {
    perf_event_core::linux::mmap::page_size() as u64
}

/// The largest ring (2^n data pages plus the metadata page) within `kb`.
fn mlock_meaning(kb: u64, page: u64, caller: Caller) -> String {
    if caller.ipc_lock {
        return "you have CAP_IPC_LOCK: ring buffers are limited only by memory".to_owned();
    }
    let pages = kb.saturating_mul(1024) / page.max(1);
    let data = match pages.checked_sub(1) {
        Some(0) | None => 0,
        Some(n) => 1u64 << (63 - n.leading_zeros()),
    };
    format!(
        "without CAP_IPC_LOCK each user may lock {kb} KiB per CPU of ring buffers beyond \
         RLIMIT_MEMLOCK: one ring of {data} data pages plus the metadata page ({page}-byte pages)"
    )
}

impl fmt::Display for Limits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in self.explain(Caller::current()) {
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_and_ring_sizes() {
        let root = Caller::from_status("Name:\tx\nCapEff:\t000001ffffffffff\n");
        assert_eq!(
            root,
            Caller {
                perfmon: true,
                ipc_lock: true
            }
        );
        let perfmon_only = Caller::from_status("CapEff:\t0000004000000000\n");
        assert_eq!(
            perfmon_only,
            Caller {
                perfmon: true,
                ipc_lock: false
            }
        );
        assert_eq!(Caller::from_status("CapEff:\tzz\n"), Caller::default());
        let text = mlock_meaning(516, 4096, Caller::default());
        assert!(text.contains("one ring of 128 data pages"), "{text}");
        assert!(mlock_meaning(0, 4096, Caller::default()).contains("0 data pages"));
        assert!(mlock_meaning(u64::MAX, 0, Caller::default()).contains("data pages"));
        assert!(Paranoid(2)
            .meaning()
            .starts_with("per-thread user-space measurement only"));
        assert!(!Paranoid(2).allows_kernel() && Paranoid(1).allows_kernel());
        assert!(Paranoid(-1).allows_cpu_wide() && !Paranoid(1).allows_cpu_wide());
        assert!(Paranoid(4).meaning().contains("closed"));
    }
}
