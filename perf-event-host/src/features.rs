//! What the running kernel accepts, found by asking it: cheap software
//! events opened with one feature at a time, newest first, the way the perf
//! tool's missing-feature detection works (std only).

use perf_event_core::abi::since::FLAGS;
use perf_event_core::abi::KernelVersion;
use perf_event_core::attr::{Attr, Diagnosis};
use perf_event_core::event::{Event, Software};
use perf_event_core::sys;
use std::fmt;
use std::time::{Duration, Instant};

/// The answer for one feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Support {
    /// The kernel opened the event with the feature set.
    Accepted,
    /// The kernel knows the feature but not for a software event
    /// (EOPNOTSUPP / ENOENT): it needs a PMU that implements it.
    NeedsCapablePmu,
    /// The kernel refused it with this diagnosis (EINVAL, E2BIG, ...).
    Refused(Diagnosis),
}

/// The outcome of [`KernelFeatures::detect`].
#[derive(Clone, Debug)]
pub struct KernelFeatures {
    /// `uname -r`'s version, when it has one.
    pub running: Option<KernelVersion>,
    /// `sizeof(struct perf_event_attr)` of the kernel (from E2BIG).
    pub attr_size: u32,
    /// Each flag with its answer, newest first.
    pub flags: Vec<(&'static str, KernelVersion, Support)>,
    /// `PERF_FORMAT_LOST` (Linux 6.0).
    pub read_format_lost: Support,
    /// The `aux_action` word (Linux 6.13).
    pub aux_action: Support,
    /// Syscalls made.
    pub syscalls: u32,
    /// Wall time the detection took.
    pub elapsed: Duration,
}

const DUMMY: Attr = Attr::new(Event::Software(Software::CpuClock)).disabled(true);

fn support(result: Result<(), Diagnosis>) -> Support {
    match result {
        Ok(()) => Support::Accepted,
        Err(Diagnosis::Errno(e))
            if e == perf_event_core::linux::errno::EOPNOTSUPP
                || e == perf_event_core::linux::errno::ENOENT =>
        {
            Support::NeedsCapablePmu
        }
        Err(d) => Support::Refused(d),
    }
}

/// Opens `attr` without the crate's own validation, so the kernel decides.
fn ask(attr: &Attr) -> Result<(), Diagnosis> {
    attr.try_open_unchecked()
}

impl KernelFeatures {
    /// Asks the running kernel. Each question opens and closes one disabled
    /// cpu-clock event on the calling thread.
    pub fn detect() -> KernelFeatures {
        let start = Instant::now();
        let mut syscalls = 0;
        // E2BIG makes the kernel write its own size: one byte set at the
        // very end of the newest attr.
        let attr_size = match ask(&DUMMY.config4(1)) {
            Ok(()) => core::mem::size_of::<sys::perf_event_attr>() as u32,
            Err(Diagnosis::TooBig(b)) => b.kernel_size,
            Err(_) => 0,
        };
        syscalls += 1;
        let mut flags = Vec::new();
        for f in FLAGS.iter().rev() {
            let mut attr = DUMMY.flag(f.flag, 1);
            // Flags the kernel only accepts together with another one.
            match f.flag.name {
                "sigtrap" => attr = attr.remove_on_exec(true),
                "inherit_thread" => attr = attr.inherit(true),
                "disabled" => attr = attr.disabled(true),
                _ => {}
            }
            flags.push((f.flag.name, f.since, support(ask(&attr))));
            syscalls += 1;
        }
        let read_format_lost = support(ask(&DUMMY.read_format_raw(sys::PERF_FORMAT_LOST as u64)));
        let aux_action = support(ask(&DUMMY.aux_start_paused(true)));
        syscalls += 2;
        KernelFeatures {
            running: perf_event_core::linux::system::kernel_version(),
            attr_size,
            flags,
            read_format_lost,
            aux_action,
            syscalls,
            elapsed: start.elapsed(),
        }
    }

    /// Whether the flag named `name` was accepted.
    pub fn accepts(&self, name: &str) -> bool {
        self.flags
            .iter()
            .any(|(n, _, s)| *n == name && *s == Support::Accepted)
    }
}

impl fmt::Display for Support {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Support::Accepted => f.write_str("accepted"),
            Support::NeedsCapablePmu => f.write_str("known (needs a PMU that implements it)"),
            Support::Refused(d) => write!(f, "refused: {d}"),
        }
    }
}

impl fmt::Display for KernelFeatures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let running = self
            .running
            .map_or_else(|| "unknown".to_owned(), |k| k.to_string());
        writeln!(
            f,
            "Linux {running}: perf_event_attr up to {} bytes; {} syscalls in {:?}",
            self.attr_size, self.syscalls, self.elapsed
        )?;
        for (name, since, s) in &self.flags {
            let since = format!("Linux {since}");
            writeln!(f, "  {name:<26} {since:<13} {s}")?;
        }
        writeln!(
            f,
            "  {:<26} {:<13} {}",
            "PERF_FORMAT_LOST", "Linux 6.0", self.read_format_lost
        )?;
        write!(
            f,
            "  {:<26} {:<13} {}",
            "aux_action", "Linux 6.13", self.aux_action
        )
    }
}
