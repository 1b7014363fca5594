//! [`Attempt`]: one event's attr through perf's rules, try after try.

use super::{Fallback, Fallbacks, Field, Policy, Rule, MISSING_FEATURES};
use crate::abi::bitfield::{attr_flags as flag, BitField};
use crate::abi::since::FLAGS;
use crate::abi::KernelVersion;
use crate::abi::Paranoid;
use crate::attr::Attr;
use crate::fd::EventFd;
use crate::linux::errno as e;
use crate::linux::errno::Errno;
use crate::open::{OpenError, OpenFlags, Scope};
use crate::sys;

/// What the rules read about the system when the kernel refuses an attr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conditions {
    /// `kernel.perf_event_paranoid` ([`Rule::ExcludeKernel`]; `None`:
    /// unreadable, taken as above 1, as perf takes it).
    pub paranoid: Option<Paranoid>,
    /// The running kernel ([`Rule::MissingFeature`]; `None`: no feature is
    /// taken for missing).
    pub kernel: Option<KernelVersion>,
}

impl Conditions {
    /// The running system's, read now.
    pub fn now() -> Conditions {
        Conditions {
            paranoid: crate::linux::system::perf_event_paranoid(),
            kernel: crate::linux::system::kernel_version(),
        }
    }
}

/// The first kernel that accepts `PERF_FLAG_FD_CLOEXEC`.
const CLOEXEC_SINCE: KernelVersion = KernelVersion::new(3, 14, 0);

/// Errors that say nothing about the attr (a task gone, no fds, a bad
/// group fd): no rule applies, not even [`Rule::MaxPrecise`].
const fn about_the_call(errno: Errno) -> bool {
    matches!(
        errno.0,
        e::ESRCH | e::EMFILE | e::ENFILE | e::EBADF | e::EINTR
    )
}

/// One event's attr and open flags as perf's rules change them: try
/// [`Attempt::attr`], and after a refusal ask [`Attempt::next`] for the
/// next attr to try (or use [`Attempt::run`], which loops). What was taken
/// is in [`Attempt::fallbacks`].
///
/// ```
/// use perf_event_core::attr::Attr;
/// use perf_event_core::event::{Event, Hardware};
/// use perf_event_core::fallback::{Attempt, Conditions, Policy, Rule};
/// use perf_event_core::linux::errno::{Errno, ENOENT};
///
/// // A virtual machine without a PMU refuses cycles: perf record's rule.
/// let mut a = Attempt::new(Attr::new(Event::Hardware(Hardware::CpuCycles)), Policy::PERF);
/// let none = Conditions { paranoid: None, kernel: None };
/// let taken = a.next(Errno(ENOENT), none).expect("cycles -> cpu-clock");
/// assert_eq!(taken.rule, Rule::CyclesToCpuClock);
/// assert_eq!(a.attr().to_raw().type_, perf_event_core::sys::PERF_TYPE_SOFTWARE);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Attempt {
    attr: Attr,
    flags: OpenFlags,
    policy: Policy,
    max_precise: bool,
    precise_original: u8,
    fallbacks: Fallbacks,
}

impl Attempt {
    /// `attr` with the default open flags, to be opened under `policy`.
    pub const fn new(attr: Attr, policy: Policy) -> Attempt {
        Attempt {
            attr,
            flags: OpenFlags::new(),
            policy,
            max_precise: false,
            precise_original: 0,
            fallbacks: Fallbacks {
                list: [None; Fallbacks::CAPACITY],
            },
        }
    }

    /// perf's `:P` (`precise_max`): start at `precise_ip` 3 and, under a
    /// policy with [`Policy::max_precise`], go down to what the PMU takes.
    pub const fn max_precise(mut self) -> Attempt {
        self.attr = self.attr.precise_ip(3);
        self.max_precise = true;
        self
    }

    /// The open flags to start with (default [`OpenFlags::new`]).
    pub const fn with_flags(mut self, flags: OpenFlags) -> Attempt {
        self.flags = flags;
        self
    }

    /// The attr to try now (the final one after a successful open).
    pub const fn attr(&self) -> Attr {
        self.attr
    }

    /// The open flags to try now.
    pub const fn flags(&self) -> OpenFlags {
        self.flags
    }

    /// The policy.
    pub const fn policy(&self) -> Policy {
        self.policy
    }

    /// The fallbacks taken so far.
    pub const fn fallbacks(&self) -> &Fallbacks {
        &self.fallbacks
    }

    /// The kernel refused [`Attempt::attr`] with `errno`: applies the next
    /// rule of the policy that fits (`ctx` read when it was refused) and
    /// returns it, or `None` when no rule fits (the refusal is final).
    pub fn next(&mut self, errno: Errno, ctx: Conditions) -> Option<Fallback> {
        if about_the_call(errno) {
            return None;
        }
        let taken = self
            .lower_precision(errno)
            .or_else(|| self.cycles_to_cpu_clock(errno))
            .or_else(|| self.exclude_kernel(errno, ctx.paranoid))
            .or_else(|| self.missing_feature(errno, ctx.kernel))?;
        self.fallbacks.record(taken);
        Some(taken)
    }

    /// Opens through `try_open` (given the attr and flags to try), taking
    /// the policy's fallbacks until it opens or no rule fits; the error is
    /// the last refusal's.
    pub fn run(
        &mut self,
        mut try_open: impl FnMut(&Attr, OpenFlags) -> Result<EventFd, OpenError>,
    ) -> Result<EventFd, OpenError> {
        loop {
            let err = match try_open(&self.attr, self.flags) {
                Ok(fd) => return Ok(fd),
                Err(err) => err,
            };
            match err.errno {
                Some(errno) if self.next(errno, Conditions::now()).is_some() => {}
                _ => return Err(err),
            }
        }
    }

    fn change(&self, rule: Rule, field: Field, from: u64, to: u64, errno: Errno) -> Fallback {
        Fallback {
            rule,
            field,
            from,
            to,
            errno,
            paranoid: None,
        }
    }

    /// `evsel__precise_ip_fallback`: one level lower; at 0, back to the
    /// level asked for and on to the other rules.
    fn lower_precision(&mut self, errno: Errno) -> Option<Fallback> {
        if !(self.policy.max_precise && self.max_precise) {
            return None;
        }
        let now = self.attr.get_flag(flag::PRECISE_IP) as u8;
        if now == 0 {
            // Every level was refused: restore, let the next rule decide.
            if self.precise_original != 0 {
                self.attr = self.attr.precise_ip(self.precise_original);
                let undo = self.change(
                    Rule::MaxPrecise,
                    Field::Flag(flag::PRECISE_IP),
                    0,
                    self.precise_original as u64,
                    errno,
                );
                self.fallbacks.record(undo);
            }
            return None;
        }
        if self.precise_original == 0 {
            self.precise_original = now;
        }
        self.attr = self.attr.precise_ip(now - 1);
        Some(self.change(
            Rule::MaxPrecise,
            Field::Flag(flag::PRECISE_IP),
            now as u64,
            now as u64 - 1,
            errno,
        ))
    }

    /// `evsel__fallback`, first half: cycles -> cpu-clock.
    fn cycles_to_cpu_clock(&mut self, errno: Errno) -> Option<Fallback> {
        let raw = self.attr.to_raw();
        let cycles = raw.type_ == sys::PERF_TYPE_HARDWARE
            && raw.config == sys::PERF_COUNT_HW_CPU_CYCLES as u64;
        if !(self.policy.cycles_to_cpu_clock
            && cycles
            && matches!(errno.0, e::ENOENT | e::ENXIO | e::ENODEV))
        {
            return None;
        }
        let mut to = raw;
        to.type_ = sys::PERF_TYPE_SOFTWARE;
        to.config = sys::PERF_COUNT_SW_CPU_CLOCK as u64;
        self.attr = Attr::from_raw(to);
        let word = |t: u32, c: u64| (t as u64) << 32 | c;
        Some(self.change(
            Rule::CyclesToCpuClock,
            Field::Event,
            word(raw.type_, raw.config),
            word(to.type_, to.config),
            errno,
        ))
    }

    /// `evsel__fallback`, second half: user space only under paranoid > 1.
    fn exclude_kernel(&mut self, errno: Errno, paranoid: Option<Paranoid>) -> Option<Fallback> {
        let on = |b: BitField| self.attr.get_flag(b) != 0;
        let restricted = paranoid.is_none_or(|p| !p.allows_kernel());
        if !(self.policy.exclude_kernel
            && errno.0 == e::EACCES
            && !on(flag::EXCLUDE_KERNEL)
            && !on(flag::EXCLUDE_USER)
            && restricted)
        {
            return None;
        }
        self.attr = self.attr.exclude_kernel(true).exclude_hv(true);
        Some(Fallback {
            paranoid,
            ..self.change(Rule::ExcludeKernel, Field::ExcludeKernelAndHv, 0, 1, errno)
        })
    }

    /// `evsel__detect_missing_features`, for the side-band flags and
    /// CLOEXEC: the newest one the running kernel predates.
    fn missing_feature(&mut self, errno: Errno, kernel: Option<KernelVersion>) -> Option<Fallback> {
        let kernel = kernel?;
        if !(self.policy.missing_features && errno.0 == e::EINVAL) {
            return None;
        }
        let newest = MISSING_FEATURES
            .iter()
            .filter(|&&b| self.attr.get_flag(b) != 0)
            .filter_map(|&b| FLAGS.iter().find(|f| f.flag == b))
            .filter(|f| !kernel.at_least(f.since))
            .fold(
                None,
                |best: Option<&crate::abi::since::FlagSince>, f| match best {
                    Some(b) if b.since.at_least(f.since) => Some(b),
                    _ => Some(f),
                },
            );
        if let Some(f) = newest {
            self.attr = self.attr.flag(f.flag, 0);
            return Some(self.change(Rule::MissingFeature, Field::Flag(f.flag), 1, 0, errno));
        }
        let cloexec = sys::PERF_FLAG_FD_CLOEXEC as u64;
        let bits = self.flags.bits();
        if bits & cloexec != 0 && !kernel.at_least(CLOEXEC_SINCE) {
            self.flags = OpenFlags::from_bits(bits & !cloexec);
            return Some(self.change(
                Rule::MissingFeature,
                Field::OpenFlags,
                bits,
                bits & !cloexec,
                errno,
            ));
        }
        None
    }
}

/// Opens `attempt` on `scope` (in `group` when given) with
/// [`crate::open::open`], taking its policy's fallbacks: the final attr
/// and what was taken stay in `attempt`.
pub fn open(
    attempt: &mut Attempt,
    scope: Scope,
    group: Option<&EventFd>,
) -> Result<EventFd, OpenError> {
    attempt.run(|attr, flags| crate::open::open(attr, scope, group, flags))
}
