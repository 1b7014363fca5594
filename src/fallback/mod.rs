//! perf's fallbacks: what perf 6.1 changes in an attr the kernel refused,
//! and tries again, applied in one place ([`Attempt`]) and each returned as
//! a value ([`Fallback`]): nothing changes silently, and
//! [`Policy::STRICT`] refuses instead.
//!
//! The rules, in the order perf applies them (tools/perf/util/evsel.c):
//!
//! | rule | on | what changes | perf |
//! |---|---|---|---|
//! | [`Rule::MaxPrecise`] | any error of a `:P` event (`precise_max`) | `precise_ip` 3 -> 2 -> 1 -> 0, then back to 3 for the next rule | `evsel__precise_ip_fallback` |
//! | [`Rule::CyclesToCpuClock`] | ENOENT / ENXIO / ENODEV of `cycles` (no hardware PMU: most virtual machines) | `type`/`config` -> `cpu-clock` | `evsel__fallback` (perf record, perf top; perf stat reports `<not supported>` instead: [`Policy::PERF_STAT`]) |
//! | [`Rule::ExcludeKernel`] | EACCES when `exclude_kernel` is clear, `exclude_user` clear and `perf_event_paranoid` > 1 | `exclude_kernel` and `exclude_hv` set; the name gets `:u` | `evsel__fallback` |
//! | [`Rule::MissingFeature`] | EINVAL on a kernel older than a side-band flag in use | the flag cleared (the newest first, one per try) | `evsel__detect_missing_features` |
//!
//! **Missing features.** perf retries without a feature because it turns
//! features on by itself (`sample_id_all`, `mmap2`, `ksymbol`, ...)
//! whatever the kernel. [`Attr`](crate::attr::Attr) turns on nothing by itself, and on EINVAL
//! or E2BIG its diagnosis names the field and the kernel that added it, so
//! most of perf's retries have nothing to do here. Of perf 6.1's list,
//! this policy drops only the flags that ask for side-band records or
//! filter guests, whose absence changes no layout the caller decodes:
//! `exclude_guest` / `exclude_host` (Linux 3.2), `sample_id_all` (2.6.38;
//! the final attr returned says how to parse records), `mmap2` with
//! `comm_exec` (3.16), `ksymbol` and `bpf_event` (5.1), `cgroup` (5.7);
//! and the `PERF_FLAG_FD_CLOEXEC` open flag (3.14). It never drops what
//! changes the sample, read or ring layout the caller asked for
//! (`PERF_SAMPLE_WEIGHT_STRUCT`, `CODE_PAGE_SIZE`, `DATA_PAGE_SIZE`, the
//! branch `HW_INDEX`, `PERF_FORMAT_LOST`, `PERF_FORMAT_GROUP` with
//! `inherit`, `clockid`, `write_backward`, `aux_output`, the LBR flag
//! filters): those are refused with the diagnosis, as [`Policy::STRICT`]
//! refuses everything.
//!
//! perf decides which feature is missing by trying them newest first; the
//! running kernel's version (`uname`) and each flag's version
//! ([`crate::abi::since::FLAGS`]) decide it here, so no guess is made
//! when the version is unknown.

mod attempt;
#[cfg(test)]
mod tests;

pub use attempt::{open, Attempt, Conditions};

use crate::abi::bitfield::{attr_flags as flag, BitField};
use crate::abi::Paranoid;
use crate::linux::errno::Errno;
use core::fmt;

/// Which of perf's rules apply. `const` values: [`Policy::PERF`],
/// [`Policy::PERF_STAT`], [`Policy::STRICT`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// [`Rule::MaxPrecise`].
    pub max_precise: bool,
    /// [`Rule::CyclesToCpuClock`].
    pub cycles_to_cpu_clock: bool,
    /// [`Rule::ExcludeKernel`].
    pub exclude_kernel: bool,
    /// [`Rule::MissingFeature`].
    pub missing_features: bool,
}

impl Policy {
    /// Every rule, as `perf record` applies them.
    pub const PERF: Policy = Policy {
        max_precise: true,
        cycles_to_cpu_clock: true,
        exclude_kernel: true,
        missing_features: true,
    };

    /// `perf stat`'s: `:u` and the missing features, not cycles ->
    /// cpu-clock (perf stat reports a refused `cycles` as `<not
    /// supported>`: cpu-clock nanoseconds under the name cycles would
    /// mislead) and no precision search (perf stat opens a `:P` event with
    /// the `precise_ip` written).
    pub const PERF_STAT: Policy = Policy {
        cycles_to_cpu_clock: false,
        max_precise: false,
        ..Policy::PERF
    };

    /// No fallback: the kernel's refusal is the error.
    pub const STRICT: Policy = Policy {
        max_precise: false,
        cycles_to_cpu_clock: false,
        exclude_kernel: false,
        missing_features: false,
    };
}

impl Default for Policy {
    /// [`Policy::STRICT`]: nothing changes unless the caller asks.
    fn default() -> Policy {
        Policy::STRICT
    }
}

/// Which rule a [`Fallback`] followed (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// A `:P` event: the highest `precise_ip` the PMU takes.
    MaxPrecise,
    /// `cycles` without a hardware PMU: `cpu-clock` instead.
    CyclesToCpuClock,
    /// `perf_event_paranoid` > 1: user space only (`:u`).
    ExcludeKernel,
    /// A flag (or open flag) the running kernel predates, cleared.
    MissingFeature,
}

/// What a fallback changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field {
    /// `type` and `config` together: `(type << 32) | config` before and
    /// after (both fit in 32 bits for the events the rule applies to).
    Event,
    /// An attr bit field (`precise_ip`, `exclude_kernel`, ...).
    Flag(BitField),
    /// `exclude_kernel` and `exclude_hv`, set together as perf does.
    ExcludeKernelAndHv,
    /// The `flags` argument of perf_event_open (`PERF_FLAG_FD_CLOEXEC`).
    OpenFlags,
}

impl Field {
    /// The field's name as perf and the kernel header write it.
    pub const fn name(self) -> &'static str {
        match self {
            Field::Event => "type/config",
            Field::Flag(f) => f.name,
            Field::ExcludeKernelAndHv => "exclude_kernel, exclude_hv",
            Field::OpenFlags => "flags",
        }
    }
}

/// One fallback taken: the field changed, from what to what, the errno
/// that caused it, and what explained it then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fallback {
    /// The rule.
    pub rule: Rule,
    /// The field changed.
    pub field: Field,
    /// Its value before (for [`Field::ExcludeKernelAndHv`]: 0 or 1).
    pub from: u64,
    /// Its value after.
    pub to: u64,
    /// The kernel's answer to the attr before the change.
    pub errno: Errno,
    /// `perf_event_paranoid` when it was taken ([`Rule::ExcludeKernel`]).
    pub paranoid: Option<Paranoid>,
}

impl fmt::Display for Fallback {
    /// perf's own message where perf prints one (`perf -v`), with the
    /// field and values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rule {
            Rule::MaxPrecise => write!(
                f,
                "precise_ip {} refused ({}): trying precise_ip {}",
                self.from, self.errno, self.to
            ),
            Rule::CyclesToCpuClock => write!(
                f,
                "The cycles event is not supported, trying to fall back to cpu-clock-ticks \
                 ({}: no hardware PMU for it; type/config {}/{} -> {}/{})",
                self.errno,
                self.from >> 32,
                self.from & 0xffff_ffff,
                self.to >> 32,
                self.to & 0xffff_ffff
            ),
            Rule::ExcludeKernel => {
                match self.paranoid {
                    Some(p) => write!(f, "kernel.perf_event_paranoid={}, ", p.0)?,
                    None => f.write_str("kernel.perf_event_paranoid unreadable, ")?,
                }
                write!(
                    f,
                    "trying to fall back to excluding kernel and hypervisor samples ({}: \
                     exclude_kernel and exclude_hv 0 -> 1)",
                    self.errno
                )
            }
            Rule::MissingFeature => write!(
                f,
                "{} is newer than this kernel ({}): switching it off ({} -> {})",
                self.field.name(),
                self.errno,
                self.from,
                self.to
            ),
        }
    }
}

/// The fallbacks an [`Attempt`] took, in order (fixed capacity, no
/// allocation). A field changed twice is one entry, from the first value
/// to the last; a change undone (a `:P` event back at `precise_ip` 3) is
/// no entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fallbacks {
    list: [Option<Fallback>; Fallbacks::CAPACITY],
}

impl Fallbacks {
    /// At most this many fields change (event, precise_ip, the exclude
    /// bits, and each side-band flag of [`MISSING_FEATURES`] but one).
    pub const CAPACITY: usize = 10;

    /// The fallbacks, in the order first taken.
    pub fn iter(&self) -> impl Iterator<Item = &Fallback> + '_ {
        self.list.iter().flatten()
    }

    /// Whether none was taken.
    pub fn is_empty(&self) -> bool {
        self.list[0].is_none()
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// The one for `rule`, if taken.
    pub fn find(&self, rule: Rule) -> Option<&Fallback> {
        self.iter().find(|f| f.rule == rule)
    }

    /// Records `taken`, merged with an earlier change of the same field.
    fn record(&mut self, taken: Fallback) {
        let slot = self
            .list
            .iter()
            .position(|f| f.is_none_or(|f| f.field == taken.field));
        let Some(i) = slot else {
            // More distinct fields than CAPACITY cannot happen: each rule
            // changes a field of its own and the list is sized for all.
            debug_assert!(false, "fallback list full");
            return;
        };
        let merged = match self.list[i] {
            Some(first) => Fallback {
                from: first.from,
                ..taken
            },
            None => taken,
        };
        if merged.from == merged.to {
            // Undone: remove and close the gap.
            self.list[i..].rotate_left(1);
            self.list[Fallbacks::CAPACITY - 1] = None;
        } else {
            self.list[i] = Some(merged);
        }
    }
}

/// The side-band flags [`Rule::MissingFeature`] may clear, each with the
/// kernel that added it (from [`crate::abi::since::FLAGS`]).
pub const MISSING_FEATURES: &[BitField] = &[
    flag::EXCLUDE_GUEST,
    flag::EXCLUDE_HOST,
    flag::SAMPLE_ID_ALL,
    flag::MMAP2,
    flag::COMM_EXEC,
    flag::KSYMBOL,
    flag::BPF_EVENT,
    flag::CGROUP,
];

/// perf's name for an event after `fallbacks`: `NAME:u` after
/// [`Rule::ExcludeKernel`] (`NAMEu` when the name already has a `:` or a
/// `/`), and after [`Rule::CyclesToCpuClock`] perf's name of the final
/// attr: `cpu-clock` with the modifiers its exclude bits and precision
/// spell (`cpu-clock:uppp`), as `evsel__name` rebuilds it. Displayed, not
/// allocated ([`Renamed`]: `renamed(..).to_string()` with std).
pub fn renamed<'a>(name: &'a str, fallbacks: &Fallbacks, attr: &crate::attr::Attr) -> Renamed<'a> {
    if fallbacks.find(Rule::CyclesToCpuClock).is_some() {
        return Renamed::CpuClock(*attr);
    }
    if fallbacks.find(Rule::ExcludeKernel).is_some() {
        return Renamed::User(name);
    }
    Renamed::Same(name)
}

/// An event's name after perf's fallbacks ([`renamed`]), written by its
/// `Display`.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Renamed<'a> {
    /// No fallback renamed it: the name as given.
    Same(&'a str),
    /// Counted in user space only ([`Rule::ExcludeKernel`]): the name with
    /// `:u` (or `u` after an existing modifier or PMU term).
    User(&'a str),
    /// `cycles` fell back to `cpu-clock` ([`Rule::CyclesToCpuClock`]): perf's
    /// name of this final attr, `cpu-clock` with its modifiers.
    CpuClock(crate::attr::Attr),
}

impl fmt::Display for Renamed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Renamed::Same(name) => f.write_str(name),
            Renamed::User(name) => {
                let sep = if name.contains(':') || name.contains('/') {
                    ""
                } else {
                    ":"
                };
                write!(f, "{name}{sep}u")
            }
            Renamed::CpuClock(attr) => write!(f, "cpu-clock{}", PerfModifiers(attr)),
        }
    }
}

/// The modifier suffix perf's `evsel__name` writes for an attr
/// (`perf_evsel__add_modifiers`): `k`/`u`/`h` for the levels counted when
/// any is excluded, `p` per precise level, `H`/`G` when the guest bit is
/// not what those imply; nothing when there is no modifier, else `:` first.
struct PerfModifiers<'a>(&'a crate::attr::Attr);

impl fmt::Display for PerfModifiers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let attr = self.0;
        let on = |b: BitField| attr.get_flag(b) != 0;
        // At most k, u, h, ppp, H, G: 8 letters.
        let mut m = [0u8; 8];
        let mut len = 0;
        let mut push = |c: u8| {
            m[len] = c;
            len += 1;
        };
        let mut guest_default = false;
        if on(flag::EXCLUDE_KERNEL) || on(flag::EXCLUDE_USER) || on(flag::EXCLUDE_HV) {
            for (b, c) in [
                (flag::EXCLUDE_KERNEL, b'k'),
                (flag::EXCLUDE_USER, b'u'),
                (flag::EXCLUDE_HV, b'h'),
            ] {
                if !on(b) {
                    push(c);
                }
            }
            guest_default = true;
        }
        let precise = (attr.get_flag(flag::PRECISE_IP) as usize).min(3);
        for _ in 0..precise {
            push(b'p');
        }
        guest_default |= precise > 0;
        if on(flag::EXCLUDE_HOST) || on(flag::EXCLUDE_GUEST) == guest_default {
            if !on(flag::EXCLUDE_HOST) {
                push(b'H');
            }
            if !on(flag::EXCLUDE_GUEST) {
                push(b'G');
            }
        }
        if len == 0 {
            return Ok(());
        }
        // ASCII letters only.
        let letters = core::str::from_utf8(&m[..len]).map_err(|_| fmt::Error)?;
        write!(f, ":{letters}")
    }
}
