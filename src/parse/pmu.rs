//! `name/terms/` events: sysfs PMUs (and generalized events with config
//! terms, `cycles/period=100000/`), and the config terms every event takes.

use super::error::{ErrorKind, ParseError};
use super::event::{raw, Base, Parser};
use super::modifiers::Modifiers;
use super::{names, Resolver};
use crate::attr::Attr;
use crate::sysfs::{Encoder, Pmu, Term, TermLexer, TermValue};

/// Config terms the perf tool knows but that set no single attr field.
const TOOL_TERMS: &[&str] = &[
    "call-graph",
    "stack-size",
    "overwrite",
    "no-overwrite",
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

/// The PMUs called `name`, or `name_<N>` when none is called `name`.
fn matching<'r>(pmus: &'r [Pmu], name: &str) -> Vec<&'r Pmu> {
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

impl<'s, 'r, R: Resolver + ?Sized> Parser<'s, 'r, R> {
    /// `name/terms/[:]mods`; the current byte is the opening `/`.
    pub(super) fn pmu_event(
        &mut self,
        start: usize,
        name: &'s str,
        group_first: Option<usize>,
    ) -> Result<(), ParseError> {
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
        if name.contains(['*', '?']) {
            return Err(self.error(start, name.len(), ErrorKind::Wildcard));
        }
        let terms = TermLexer::exact(text, open + 1)
            .collect::<Result<Vec<Term<'s>>, _>>()
            .map_err(|e| self.error(e.position, 1, ErrorKind::Terms(e)))?;
        let generic = names::symbol(name)
            .or_else(|| raw(name).and_then(Result::ok))
            .or_else(|| names::cache(name).ok().flatten());
        let bases = match generic {
            Some(event) => {
                let mut base = Base::plain(Attr::new(event));
                for term in &terms {
                    if !self.config_term(&mut base, term)? {
                        return Err(self.error(term.at, term.name.len(), ErrorKind::ConfigTerm {
                            why: "a generalized event takes only config terms here (period, freq, \
                                  name, inherit, no-inherit, max-stack, aux-output, \
                                  aux-sample-size, time); PMU format terms need `pmu/.../`",
                        }));
                    }
                }
                vec![base]
            }
            None => self.pmu_bases(start, name, &terms)?,
        };
        self.push(start, bases, modifiers, mods_at, group_first)
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
        let mut bases = Vec::with_capacity(pmus.len());
        for pmu in pmus {
            let mut encoder = Encoder::new(pmu);
            let mut scratch = Base::plain(Attr::new(crate::event::Event::pmu(0, 0)));
            for term in terms {
                if self.config_term(&mut scratch, term)? {
                    continue;
                }
                encoder
                    .term(term)
                    .map_err(|e| self.encode_error(start, name, e))?;
            }
            let alias = encoder.alias();
            let words = encoder
                .finish()
                .map_err(|e| self.encode_error(start, name, e))?;
            let mut base = Base {
                attr: Attr::new(words.event(pmu.type_id())),
                pmu: Some(pmu),
                alias,
                name: None,
            };
            for term in terms {
                self.config_term(&mut base, term)?;
            }
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

    /// Applies `term` to `base` if it is a config term; `Ok(false)` if not.
    pub(super) fn config_term(
        &self,
        base: &mut Base<'s, 'r>,
        term: &Term<'s>,
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
            ("inherit", TermValue::Flag, _) => attr.inherit(true),
            ("inherit", _, Some(n @ (0 | 1))) => attr.inherit(n == 1),
            ("no-inherit", TermValue::Flag, _) => attr.inherit(false),
            ("inherit" | "no-inherit", ..) => {
                return bad("`inherit` takes 0 or 1; `no-inherit` no value")
            }
            ("max-stack", _, Some(n)) if n <= u64::from(u16::MAX) => {
                attr.sample_max_stack(n as u16)
            }
            ("max-stack", ..) => return bad("`max-stack` takes a frame count up to 65535"),
            ("aux-output", TermValue::Flag, _) => attr.aux_output(true),
            ("aux-output", _, Some(n @ (0 | 1))) => attr.aux_output(n == 1),
            ("aux-output", ..) => return bad("`aux-output` takes 0 or 1"),
            ("aux-sample-size", _, Some(n)) if n <= u64::from(u32::MAX) => {
                attr.aux_sample_size(n as u32)
            }
            ("aux-sample-size", ..) => {
                return bad("`aux-sample-size` takes a byte count below 4 GiB")
            }
            ("time", _, Some(n @ (0 | 1))) => {
                let time = u64::from(crate::sys::PERF_SAMPLE_TIME);
                let st = attr.to_raw().sample_type;
                attr.sample_type(if n == 1 { st | time } else { st & !time })
            }
            ("time", ..) => return bad("`time` takes 0 or 1"),
            (name, ..) if TOOL_TERMS.contains(&name) => return Err(self.error(
                term.at,
                name.len(),
                ErrorKind::ConfigTerm {
                    why: "a perf tool setting with no single perf_event_attr field; set the attr \
                          fields it stands for on the parsed Attr",
                },
            )),
            _ => return Ok(false),
        };
        Ok(true)
    }
}
