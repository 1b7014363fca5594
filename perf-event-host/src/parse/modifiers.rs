//! Event and group modifiers: `:u`, `:k`, `:ppp`, `{...}:S`, with the perf
//! tool's semantics (tools/perf/util/parse-events.c,
//! `parse_events__modifier_list`).
//!
//! `u`, `k` and `h` keep only the privilege levels named: the first of them
//! excludes all three levels, then each re-includes its own, so `:u` is
//! `exclude_kernel + exclude_hv` and `:uk` is `exclude_hv`. `G` and `H` do
//! the same for guest and host. A group's modifiers apply to each member on
//! top of its own, so `{cycles:k,instructions}:u` counts `cycles` in user and
//! kernel and `instructions` in user only.
//!
//! `p` (and `u`) also set `exclude_guest` unless the event or its group says
//! `G` or `H`, as the perf tool does ("use of precise requires
//! exclude_guest"; `u` because perf counts the host unless run with
//! `--guest`). perf 6.1 to 6.12 do this; later perf versions stopped setting
//! `exclude_guest` by default.

use core::fmt;
use perf_event_core::abi::bitfield::attr_flags as flag;
use perf_event_core::attr::Attr;

/// The modifiers written after an event or a group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// `u`: count user space.
    pub user: bool,
    /// `k`: count the kernel.
    pub kernel: bool,
    /// `h`: count the hypervisor.
    pub hypervisor: bool,
    /// `G`: count guests.
    pub guest: bool,
    /// `H`: count the host.
    pub host: bool,
    /// `I`: do not count while idle (`exclude_idle`).
    pub non_idle: bool,
    /// `p` repeated: added to `precise_ip` (at most 3 in total).
    pub precise: u8,
    /// `P`: the highest `precise_ip` the PMU takes. The perf tool finds it by
    /// trying 3, 2, 1, 0; this parser leaves `precise_ip` as written and
    /// reports the wish here.
    pub precise_max: bool,
    /// `S`: read the group's counts in each sample (`PERF_SAMPLE_READ`,
    /// with `PERF_FORMAT_ID`, and `PERF_FORMAT_GROUP` in groups of two or more).
    pub sample_read: bool,
    /// `D`: `pinned` (group leaders only).
    pub pinned: bool,
    /// `e`: `exclusive` (group leaders only).
    pub exclusive: bool,
    /// `W`: weak group: the perf tool splits it when it cannot be scheduled
    /// whole (groups only; no attr bit).
    pub weak: bool,
}

/// A bad modifier: its byte offset within the modifier text and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModifierError {
    /// Offset of the offending letter in the modifier text.
    pub at: usize,
    /// What is wrong.
    pub problem: ModifierProblem,
}

/// What is wrong with a modifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModifierProblem {
    /// Not a modifier letter.
    Unknown(char),
    /// A perf-tool-only modifier (`b`, `R`, `X`): no attr meaning.
    ToolOnly(char),
    /// The same letter twice (other than `p`).
    Duplicate(char),
    /// `p` more than three times (with the event's own `precise_ip`).
    TooPrecise,
    /// `W` on a single event.
    WeakOutsideGroup,
    /// `D` or `e` on a group member other than the first.
    LeaderOnly(char),
}

impl fmt::Display for ModifierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "modifier at offset {}: {}", self.at, self.problem)
    }
}

impl std::error::Error for ModifierError {}

impl fmt::Display for ModifierProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModifierProblem::Unknown(c) => write!(
                f,
                "unknown modifier `{c}`; modifiers are u k h (privilege levels), G H \
                 (guest/host), I (not idle), p pp ppp (precision), P (max precision), S \
                 (sample read), D (pinned), e (exclusive), W (weak group)"
            ),
            ModifierProblem::ToolOnly(c) => write!(
                f,
                "modifier `{c}` is a perf tool feature with no perf_event_attr meaning"
            ),
            ModifierProblem::Duplicate(c) => write!(f, "modifier `{c}` given twice"),
            ModifierProblem::TooPrecise => {
                f.write_str("precise_ip is at most 3 (`ppp`), counting the event's own precision")
            }
            ModifierProblem::WeakOutsideGroup => {
                f.write_str("`W` (weak group) is for groups: write `{a,b}:W`")
            }
            ModifierProblem::LeaderOnly(c) => write!(
                f,
                "`{c}` applies to a group leader; put it on the group (`{{a,b}}:{c}`) or the \
                 first event"
            ),
        }
    }
}

/// Whether every byte of `text` is a modifier letter the perf tool knows
/// (used to tell `name:mods` from `system:tracepoint`).
pub(crate) fn all_modifier_letters(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b"ukhGHIpPSDeWbRX".contains(&b))
}

impl Modifiers {
    /// Parses modifier letters (without the leading `:`).
    pub fn parse(text: &str) -> Result<Modifiers, ModifierError> {
        let mut m = Modifiers::default();
        for (at, c) in text.char_indices() {
            let slot = match c {
                'u' => &mut m.user,
                'k' => &mut m.kernel,
                'h' => &mut m.hypervisor,
                'G' => &mut m.guest,
                'H' => &mut m.host,
                'I' => &mut m.non_idle,
                'P' => &mut m.precise_max,
                'S' => &mut m.sample_read,
                'D' => &mut m.pinned,
                'e' => &mut m.exclusive,
                'W' => &mut m.weak,
                'p' => {
                    m.precise += 1;
                    if m.precise > 3 {
                        return Err(ModifierError {
                            at,
                            problem: ModifierProblem::TooPrecise,
                        });
                    }
                    continue;
                }
                'b' | 'R' | 'X' => {
                    return Err(ModifierError {
                        at,
                        problem: ModifierProblem::ToolOnly(c),
                    })
                }
                c => {
                    return Err(ModifierError {
                        at,
                        problem: ModifierProblem::Unknown(c),
                    })
                }
            };
            if core::mem::replace(slot, true) {
                return Err(ModifierError {
                    at,
                    problem: ModifierProblem::Duplicate(c),
                });
            }
        }
        Ok(m)
    }

    /// Applies the modifiers to `attr` (a single event's own). `leader`:
    /// whether the event leads its group (or stands alone). Errors carry no
    /// position (the caller knows it).
    pub fn apply(&self, attr: Attr, leader: bool) -> Result<Attr, ModifierProblem> {
        self.apply_over(attr, Modifiers::default(), leader)
    }

    /// Applies group modifiers on top of an event whose own modifiers were
    /// `own` (perf: `G` / `H` written on the event stop the group's `u` / `p`
    /// from adding `exclude_guest`).
    pub(crate) fn apply_over(
        &self,
        attr: Attr,
        own: Modifiers,
        leader: bool,
    ) -> Result<Attr, ModifierProblem> {
        let get = |f| attr.get_flag(f) == 1;
        let (mut eu, mut ek, mut eh) = (
            get(flag::EXCLUDE_USER),
            get(flag::EXCLUDE_KERNEL),
            get(flag::EXCLUDE_HV),
        );
        let (mut eh_host, mut eg) = (get(flag::EXCLUDE_HOST), get(flag::EXCLUDE_GUEST));
        let mut exclude = eu || ek || eh;
        let mut exclude_gh = own.guest || own.host;
        for (on, slot) in [(self.user, 0), (self.kernel, 1), (self.hypervisor, 2)] {
            if on {
                if !exclude {
                    exclude = true;
                    (eu, ek, eh) = (true, true, true);
                }
                match slot {
                    0 => eu = false,
                    1 => ek = false,
                    _ => eh = false,
                }
            }
        }
        // `u` and `p` imply exclude_guest unless G / H is written (the
        // letters' order does not change the outcome).
        if (self.user || self.precise > 0) && !(exclude_gh || self.guest || self.host) {
            eg = true;
        }
        for (on, guest) in [(self.guest, true), (self.host, false)] {
            if on {
                if !exclude_gh {
                    exclude_gh = true;
                    (eg, eh_host) = (true, true);
                }
                if guest {
                    eg = false;
                } else {
                    eh_host = false;
                }
            }
        }
        let precise = (attr.get_flag(flag::PRECISE_IP) as u8).saturating_add(self.precise);
        if precise > 3 {
            return Err(ModifierProblem::TooPrecise);
        }
        if !leader {
            if self.pinned {
                return Err(ModifierProblem::LeaderOnly('D'));
            }
            if self.exclusive {
                return Err(ModifierProblem::LeaderOnly('e'));
            }
        }
        let mut attr = attr
            .exclude_user(eu)
            .exclude_kernel(ek)
            .exclude_hv(eh)
            .exclude_host(eh_host)
            .exclude_guest(eg)
            .precise_ip(precise);
        if self.non_idle {
            attr = attr.exclude_idle(true);
        }
        if self.pinned {
            attr = attr.pinned(true);
        }
        if self.exclusive {
            attr = attr.exclusive(true);
        }
        if self.sample_read {
            let raw = attr.to_raw();
            attr = attr
                .sample_type_raw(
                    raw.sample_type | u64::from(perf_event_core::sys::PERF_SAMPLE_READ),
                )
                .read_format_raw(raw.read_format | u64::from(perf_event_core::sys::PERF_FORMAT_ID));
        }
        Ok(attr)
    }

    /// Adds a group's modifiers to an event's own (for [`Modifiers`] as
    /// reported with each event).
    pub(crate) fn merged(self, group: Modifiers) -> Modifiers {
        Modifiers {
            user: self.user || group.user,
            kernel: self.kernel || group.kernel,
            hypervisor: self.hypervisor || group.hypervisor,
            guest: self.guest || group.guest,
            host: self.host || group.host,
            non_idle: self.non_idle || group.non_idle,
            precise: self.precise.saturating_add(group.precise),
            precise_max: self.precise_max || group.precise_max,
            sample_read: self.sample_read || group.sample_read,
            pinned: self.pinned || group.pinned,
            exclusive: self.exclusive || group.exclusive,
            weak: self.weak || group.weak,
        }
    }
}
