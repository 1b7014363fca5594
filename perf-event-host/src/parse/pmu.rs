//! `name/terms/` events: sysfs PMUs (and generalized events with config
//! terms, `cycles/period=100000/`), and the config terms every event takes.

use super::config::{alias_config, CallChain};
use super::error::{ErrorKind, ParseError};
use super::event::{raw, Base, Parser};
use super::modifiers::Modifiers;
use super::tracepoints::glob_match;
use super::{names, Resolver};
use crate::sysfs::{Encoder, Pmu, Term, TermLexer, TermValue};
use perf_event_core::attr::Attr;
use perf_event_core::event::Event;

/// The PMUs called `name` (a glob when it holds `*` or `?`), or
/// `name_<N>` when none is called `name`.
fn matching<'r>(pmus: &'r [Pmu], name: &str) -> Vec<&'r Pmu> {
    if name.contains(['*', '?']) {
        return pmus.iter().filter(|p| glob_match(name, p.name())).collect();
    }
    let exact: Vec<&Pmu> = pmus.iter().filter(|p| p.name() == name).collect();
    if !exact.is_empty() {
        return exact;
    }
    pmus.iter()
        .filter(|p| {
            p.name()
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('_'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect()
}

/// The closing `/` of a term list starting at `from` (quoted text skipped).
fn closing_slash(input: &str, from: usize) -> Option<usize> {
    let mut quoted = false;
    for (i, b) in input.as_bytes().iter().enumerate().skip(from) {
        match b {
            b'\'' => quoted = !quoted,
            b'/' if !quoted => return Some(i),
            _ => {}
        }
    }
    None
}

/// Whether `pmu` is a CPU's core PMU (perf's `is_pmu_core`: `cpu`, or a
/// PMU with a `cpus` file such as `cpu_core`, `cpu_atom`, `armv8_pmuv3_0`).
pub(super) fn is_core(pmu: &Pmu) -> bool {
    pmu.name() == "cpu" || pmu.cpus().is_some()
}

/// A generalized hardware or cache event named inside a core PMU's terms
/// (`cpu/cycles/`, `cpu_atom/L1-dcache-load-miss/`).
fn legacy(name: &str) -> Option<Event> {
    match names::symbol(name) {
        Some(e @ Event::Hardware(_)) => Some(e),
        Some(_) => None,
        None => names::cache(name).ok().flatten(),
    }
}

impl<'s, 'r, R: Resolver + ?Sized> Parser<'s, 'r, R> {
    /// A `/terms/` list at the current `/`, then the modifiers that may
    /// follow it (`/u` or `/:u`). Returns the terms, where the modifiers
    /// start, and the modifiers.
    pub(super) fn term_list(&mut self) -> Result<(Vec<Term<'s>>, usize, Modifiers), ParseError> {
        let open = self.at;
        let close = closing_slash(self.input, open + 1)
            .ok_or_else(|| self.error(open, 1, ErrorKind::UnclosedTerms))?;
        let text = &self.input[open + 1..close];
        self.at = close + 1;
        let (mods_at, modifiers) = if self.peek() == Some(b':') {
            self.trailing_modifiers()?
        } else {
            let (at, letters) = self.token();
            if letters.is_empty() {
                (at, Modifiers::default())
            } else {
                (at, self.modifiers(at, letters)?)
            }
        };
        let terms = TermLexer::exact(text, open + 1)
            .collect::<Result<Vec<Term<'s>>, _>>()
            .map_err(|e| self.error(e.position, 1, ErrorKind::Terms(e)))?;
        Ok((terms, mods_at, modifiers))
    }

    /// `name/terms/[:]mods`; the current byte is the opening `/`.
    pub(super) fn pmu_event(
        &mut self,
        start: usize,
        name: &'s str,
        group_first: Option<usize>,
    ) -> Result<(), ParseError> {
        let (terms, mods_at, modifiers) = self.term_list()?;
        let generic = names::symbol(name)
            .or_else(|| raw(name).and_then(Result::ok))
            .or_else(|| names::cache(name).ok().flatten());
        let bases = match generic {
            Some(event) => {
                let mut base = Base::plain(Attr::new(event));
                self.config_terms_only(&mut base, &terms)?;
                vec![base]
            }
            None => self.pmu_bases(start, name, &terms)?,
        };
        self.push(start, bases, modifiers, mods_at, group_first)
    }

    /// A user term as perf reads it for `pmu`: a bare `config1` is
    /// `config1=1`; `event=NAME` names an alias of the PMU; `rNNN` /
    /// `r0xNNN` (not a format or alias of the PMU) is `config=0xNNN`.
    fn normalize(&self, pmu: &Pmu, term: Term<'s>) -> Result<Term<'s>, ParseError> {
        let known = |n: &str| pmu.format(n).is_some() || pmu.alias(n).is_some();
        Ok(match (term.name, term.value) {
            ("config" | "config1" | "config2" | "config3" | "config4", TermValue::Flag)
                if !known(term.name) =>
            {
                Term {
                    value: TermValue::Number(1),
                    ..term
                }
            }
            ("event", TermValue::Text(alias)) if pmu.alias(alias).is_some() => Term {
                name: alias,
                value: TermValue::Flag,
                at: term.value_at,
                value_at: term.value_at,
            },
            (name, TermValue::Flag) if !known(name) && name.starts_with('r') => {
                let hex = &name[1..];
                let hex = hex.strip_prefix("0x").unwrap_or(hex);
                if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Ok(term);
                }
                let value = u64::from_str_radix(hex, 16).map_err(|_| {
                    self.error(
                        term.at,
                        name.len(),
                        ErrorKind::Number {
                            why: "a raw event has at most 16 hex digits (64 bits)",
                        },
                    )
                })?;
                Term {
                    name: "config",
                    value: TermValue::Number(value),
                    ..term
                }
            }
            _ => term,
        })
    }

    /// Encodes `terms` for every PMU matching `name`.
    fn pmu_bases(
        &self,
        start: usize,
        name: &str,
        terms: &[Term<'s>],
    ) -> Result<Vec<Base<'s, 'r>>, ParseError> {
        let pmus = matching(self.resolver.pmus(), name);
        if pmus.is_empty() {
            let known: Vec<&str> = self.resolver.pmus().iter().map(Pmu::name).collect();
            return Err(self.error(
                start,
                name.len(),
                ErrorKind::UnknownPmu {
                    known: if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    },
                },
            ));
        }
        let hybrid = self.resolver.pmus().iter().filter(|p| is_core(p)).count() > 1;
        let mut bases = Vec::with_capacity(pmus.len());
        for pmu in pmus {
            let mut encoder = Encoder::new(pmu);
            let mut scratch = Base::plain(Attr::new(Event::pmu(0, 0)));
            let mut chain = CallChain::default();
            let mut user = Vec::with_capacity(terms.len());
            let mut legacy_event = None;
            for term in terms {
                if self.config_term(&mut scratch, &mut chain, term, false)? {
                    continue;
                }
                let term = self.normalize(pmu, *term)?;
                let is_legacy = term.value == TermValue::Flag
                    && is_core(pmu)
                    && pmu.format(term.name).is_none()
                    && pmu.alias(term.name).is_none();
                match legacy(term.name).filter(|_| is_legacy) {
                    Some(event) if legacy_event.is_none() => legacy_event = Some(event),
                    _ => user.push(term),
                }
            }
            let (attr, alias) = match legacy_event {
                Some(event) => {
                    // Besides config terms, only `config`..`config3` may
                    // join a generalized event (`cpu/cycles,config2/`).
                    let mut legacy_base = Base::plain(Attr::new(event));
                    let mut chain = CallChain::default();
                    for term in &user {
                        if !self.config_term(&mut legacy_base, &mut chain, term, true)? {
                            return Err(self.error(
                                term.at,
                                term.name.len(),
                                ErrorKind::ConfigTerm {
                                    why: "a generalized event in a PMU's terms takes only \
                                          config terms besides it",
                                },
                            ));
                        }
                    }
                    let mut attr = legacy_base.attr;
                    if hybrid {
                        // perf's extended type: the PMU in config bits 32-63.
                        let config = attr.to_raw().config | u64::from(pmu.type_id()) << 32;
                        attr = attr.config(config);
                    }
                    (attr, None)
                }
                None => {
                    for term in &user {
                        encoder
                            .term(term)
                            .map_err(|e| self.encode_error(start, name, e))?;
                    }
                    let alias = encoder.alias();
                    let words = encoder
                        .finish()
                        .map_err(|e| self.encode_error(start, name, e))?;
                    (Attr::new(words.event(pmu.type_id())), alias)
                }
            };
            let attr = match alias {
                Some(alias) => alias_config(attr, alias, pmu),
                None => attr,
            };
            let mut base = Base {
                attr,
                pmu: Some(pmu),
                alias,
                name: None,
                expanded: None,
            };
            let mut chain = CallChain::default();
            for term in terms {
                self.config_term(&mut base, &mut chain, term, false)?;
            }
            self.finish_chain(&mut base, chain, terms)?;
            bases.push(base);
        }
        Ok(bases)
    }

    fn encode_error(&self, start: usize, name: &str, e: crate::sysfs::EncodeError) -> ParseError {
        let (at, len) = match e.position {
            Some(at) => {
                let rest = &self.input[at.min(self.input.len())..];
                (at, rest.find([',', '/']).unwrap_or(rest.len()))
            }
            None => (start, name.len()),
        };
        self.error(at, len, ErrorKind::Encode(Box::new(e)))
    }
}
