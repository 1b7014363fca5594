//! Config terms: the `/.../` terms that set attr fields rather than PMU
//! format bits (perf's `PARSE_EVENTS__TERM_TYPE_*` other than user terms),
//! on any event: `cycles/period=1000/`, `sched:sched_switch/call-graph=fp/`,
//! `mem:0x1000/name=bp/`, `4:1/config1=2/`.
//!
//! `call-graph`, `stack-size` and `max-stack` combine: they are collected
//! over the whole term list and applied once ([`CallChain::apply`]), giving
//! the sample fields the perf tool sets for them (tools/perf/util/evsel.c,
//! `__evsel__config_callchain`).

use super::error::{ErrorKind, ParseError};
use super::event::{Base, Parser};
use super::Resolver;
use crate::sysfs::{Alias, Pmu, Term, TermValue};
use perf_event_core::attr::Attr;
use perf_event_core::sys;

/// Config terms the perf tool knows that set no perf_event_attr field.
const TOOL_TERMS: &[&str] = &[
    "percore",
    "metric-id",
    "nr",
    "branch_type",
    "cpu",
    "aux-action",
    "ratio-to-prev",
    "legacy-cache",
    "hardware",
    "raw",
];

/// The call-chain mode of `call-graph=`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// `no`: no call chains.
    No,
    /// `fp`: frame pointers, the kernel walks the stack.
    Fp,
    /// `dwarf`: user registers and a copy of the user stack.
    Dwarf,
    /// `lbr`: the last-branch-record call stack (Intel).
    Lbr,
}

/// `call-graph`, `stack-size` and `max-stack` of one term list.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CallChain {
    mode: Option<Mode>,
    dump_size: Option<u32>,
    max_stack: Option<u16>,
}

/// The default user-stack copy of `call-graph=dwarf` (perf's 8192 bytes).
const DEFAULT_DUMP_SIZE: u32 = 8192;
/// The largest user-stack copy perf accepts (`USHRT_MAX` rounded down to 8).
const MAX_DUMP_SIZE: u64 = 65528;

impl CallChain {
    /// Sets the sample fields perf sets for the collected terms.
    fn apply(self, attr: Attr) -> Result<Attr, &'static str> {
        // `max-stack` alone asks for frame-pointer call chains (as perf).
        let mode = match (self.mode, self.max_stack) {
            (Some(mode), _) => mode,
            (None, Some(_)) => Mode::Fp,
            (None, None) => return Ok(attr),
        };
        let raw = attr.to_raw();
        let callchain = u64::from(sys::PERF_SAMPLE_CALLCHAIN);
        let mut attr = attr;
        match mode {
            Mode::No => return Ok(attr.sample_type_raw(raw.sample_type & !callchain)),
            Mode::Fp => attr = attr.sample_type_raw(raw.sample_type | callchain),
            Mode::Dwarf => {
                let Some(mask) = perf_event_core::abi::arch::TARGET.user_regs_mask else {
                    return Err("`call-graph=dwarf` needs the user register mask of this \
                                architecture, which this crate does not know; use `fp`");
                };
                let regs = u64::from(sys::PERF_SAMPLE_REGS_USER | sys::PERF_SAMPLE_STACK_USER);
                attr = attr
                    .sample_type_raw(raw.sample_type | callchain | regs)
                    .exclude_callchain_user(true)
                    .sample_regs_user(mask)
                    .sample_stack_user(self.dump_size.unwrap_or(DEFAULT_DUMP_SIZE));
            }
            Mode::Lbr => {
                let branch = u64::from(
                    sys::PERF_SAMPLE_BRANCH_USER
                        | sys::PERF_SAMPLE_BRANCH_CALL_STACK
                        | sys::PERF_SAMPLE_BRANCH_NO_FLAGS
                        | sys::PERF_SAMPLE_BRANCH_NO_CYCLES
                        | sys::PERF_SAMPLE_BRANCH_HW_INDEX,
                );
                let stack = u64::from(sys::PERF_SAMPLE_BRANCH_STACK);
                attr = attr
                    .sample_type_raw(raw.sample_type | callchain | stack)
                    .branch_sample_type_raw(raw.branch_sample_type | branch);
            }
        }
        if let Some(n) = self.max_stack {
            attr = attr.sample_max_stack(n);
        }
        Ok(attr)
    }
}

/// A user-stack dump size: 1 to 65528 bytes, rounded up to 8 (as perf).
fn dump_size(text: &str) -> Option<u32> {
    let n = crate::sysfs::parse_number(text).ok()?;
    (1..=MAX_DUMP_SIZE)
        .contains(&n)
        .then(|| n.next_multiple_of(8) as u32)
}

/// A 0/1 switch: a bare term is 1.
fn switch(value: TermValue<'_>) -> Option<bool> {
    match value {
        TermValue::Flag | TermValue::Number(1) => Some(true),
        TermValue::Number(0) => Some(false),
        _ => None,
    }
}

impl<'s, 'r, R: Resolver + ?Sized> Parser<'s, 'r, R> {
    /// Applies `term` to `base` if it is a config term; `Ok(false)` if not.
    /// `raw_words`: whether `config`..`config3` are taken here (events
    /// without a sysfs PMU; a PMU's encoder takes them otherwise).
    pub(super) fn config_term(
        &self,
        base: &mut Base<'s, 'r>,
        chain: &mut CallChain,
        term: &Term<'s>,
        raw_words: bool,
    ) -> Result<bool, ParseError> {
        let bad = |why| Err(self.error(term.value_at, 1, ErrorKind::ConfigTerm { why }));
        let number = match term.value {
            TermValue::Number(n) => Some(n),
            _ => None,
        };
        let attr = base.attr;
        base.attr = match (term.name, term.value, number) {
            ("period", _, Some(n)) => attr.sample_period(n),
            ("freq", _, Some(n)) => attr.sample_freq(n),
            ("period" | "freq", ..) => return bad("takes a number"),
            ("name", TermValue::Text(text), _) => {
                base.name = Some(text);
                attr
            }
            ("name", ..) => return bad("`name=` takes a word or a 'quoted text'"),
            ("inherit", v, _) => match switch(v) {
                Some(on) => attr.inherit(on),
                None => return bad("`inherit` takes 0 or 1 (bare: 1)"),
            },
            ("no-inherit", v, _) => match switch(v) {
                Some(on) => attr.inherit(!on),
                None => return bad("`no-inherit` takes 0 or 1 (bare: 1)"),
            },
            ("overwrite", v, _) => match switch(v) {
                Some(on) => attr.write_backward(on),
                None => return bad("`overwrite` takes 0 or 1 (bare: 1)"),
            },
            ("no-overwrite", v, _) => match switch(v) {
                Some(on) => attr.write_backward(!on),
                None => return bad("`no-overwrite` takes 0 or 1 (bare: 1)"),
            },
            ("max-stack", _, Some(n)) if n <= u64::from(u16::MAX) => {
                chain.max_stack = Some(n as u16);
                attr
            }
            ("max-stack", ..) => return bad("`max-stack` takes a frame count up to 65535"),
            ("stack-size", _, Some(n)) => match dump_size(&n.to_string()) {
                Some(size) => {
                    chain.dump_size = Some(size);
                    attr
                }
                None => return bad("`stack-size` takes 1 to 65528 bytes"),
            },
            ("stack-size", ..) => return bad("`stack-size` takes a byte count"),
            ("call-graph", TermValue::Text(text), _) => {
                let (mode, size) = text.split_once(',').unwrap_or((text, ""));
                let mode = match mode {
                    "no" => Mode::No,
                    "fp" => Mode::Fp,
                    "dwarf" => Mode::Dwarf,
                    "lbr" => Mode::Lbr,
                    _ => return bad("`call-graph` takes fp, dwarf[,size], lbr or no"),
                };
                if !size.is_empty() {
                    match (mode, dump_size(size)) {
                        (Mode::Dwarf, Some(n)) => chain.dump_size = Some(n),
                        (Mode::Dwarf, None) => {
                            return bad("the dwarf stack size is 1 to 65528 bytes")
                        }
                        _ => return bad("only `dwarf` takes a size (`'dwarf,8192'`)"),
                    }
                }
                chain.mode = Some(mode);
                attr
            }
            ("call-graph", ..) => return bad("`call-graph` takes fp, dwarf[,size], lbr or no"),
            ("aux-output", v, _) => match switch(v) {
                Some(on) => attr.aux_output(on),
                None => return bad("`aux-output` takes 0 or 1 (bare: 1)"),
            },
            ("aux-sample-size", _, Some(n)) if n <= u64::from(u32::MAX) => {
                attr.aux_sample_size(n as u32)
            }
            ("aux-sample-size", ..) => {
                return bad("`aux-sample-size` takes a byte count below 4 GiB")
            }
            ("time", v, _) => {
                let Some(on) = switch(v) else {
                    return bad("`time` takes 0 or 1 (bare: 1)");
                };
                let time = u64::from(sys::PERF_SAMPLE_TIME);
                let st = attr.to_raw().sample_type;
                attr.sample_type_raw(if on { st | time } else { st & !time })
            }
            ("config" | "config1" | "config2" | "config3", v, _) if raw_words => {
                let n = match v {
                    TermValue::Flag => 1,
                    TermValue::Number(n) => n,
                    _ => return bad("takes a number (bare: 1)"),
                };
                match term.name {
                    "config" => attr.config(n),
                    "config1" => attr.config1(n),
                    "config2" => attr.config2(n),
                    _ => attr.config3(n),
                }
            }
            (name, ..) if TOOL_TERMS.contains(&name) => {
                return Err(self.error(
                    term.at,
                    name.len(),
                    ErrorKind::ConfigTerm {
                        why: "a perf tool setting with no perf_event_attr field; set what it \
                              stands for on the parsed Attr",
                    },
                ))
            }
            _ => return Ok(false),
        };
        Ok(true)
    }

    /// Applies a term list that may hold only config terms (events that
    /// are not from a sysfs PMU: generalized, raw, numeric, tracepoint,
    /// breakpoint).
    pub(super) fn config_terms_only(
        &self,
        base: &mut Base<'s, 'r>,
        terms: &[Term<'s>],
    ) -> Result<(), ParseError> {
        let mut chain = CallChain::default();
        for term in terms {
            if !self.config_term(base, &mut chain, term, true)? {
                return Err(self.error(
                    term.at,
                    term.name.len(),
                    ErrorKind::ConfigTerm {
                        why: "this event takes only config terms here (period, freq, name, \
                              inherit, no-inherit, call-graph, stack-size, max-stack, \
                              overwrite, no-overwrite, time, aux-output, aux-sample-size, \
                              config, config1, config2, config3); PMU format terms need \
                              `pmu/.../`",
                    },
                ));
            }
        }
        self.finish_chain(base, chain, terms)
    }

    /// Applies the collected call-chain terms.
    pub(super) fn finish_chain(
        &self,
        base: &mut Base<'s, 'r>,
        chain: CallChain,
        terms: &[Term<'s>],
    ) -> Result<(), ParseError> {
        base.attr = chain.apply(base.attr).map_err(|why| {
            let term = terms.iter().find(|t| t.name == "call-graph");
            let (at, len) = term.map_or((0, 0), |t| (t.at, t.name.len()));
            self.error(at, len, ErrorKind::ConfigTerm { why })
        })?;
        Ok(())
    }
}

/// An alias's own config terms (the `period=` of perf's JSON events, see
/// `sysfs::ALIAS_CONFIG_TERMS`), applied to `attr` before the user's
/// terms, which override them as perf's weak alias terms are overridden.
/// A term that is a format of the PMU was encoded as config bits instead.
pub(super) fn alias_config(mut attr: Attr, alias: &Alias, pmu: &Pmu) -> Attr {
    for term in alias.terms().flatten() {
        if pmu.format(term.name).is_some() {
            continue;
        }
        match (term.name, term.value) {
            ("period", TermValue::Number(n)) => attr = attr.sample_period(n),
            ("freq", TermValue::Number(n)) => attr = attr.sample_freq(n),
            _ => {}
        }
    }
    attr
}
