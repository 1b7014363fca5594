//! Terms to config words: each term checked against the PMU's format and
//! each value against its bit width.
//!
//! The rules follow the perf tool: a term without a value sets a one-bit
//! format to 1; an event alias expands to its own terms, which later terms
//! may override (`cpu/mem-loads,ldlat=30/`); `config=`, `config1=` ..
//! `config4=` set a whole word; a `?` in an alias must be filled by the user.

use super::alias::Alias;
use super::format::{ConfigWord, ConfigWords, Format};
use super::pmu::Pmu;
use super::terms::{Term, TermLexer, TermSyntaxError, TermValue};
use core::fmt;
use perf_event_core::event::Event;

/// Accumulates terms for one event of one PMU.
#[derive(Debug)]
pub struct Encoder<'p> {
    pmu: &'p Pmu,
    words: ConfigWords,
    alias: Option<&'p Alias>,
    /// Formats set by the user's own terms (duplicates are errors).
    user_set: Vec<bool>,
    /// Formats an alias left as `?` (or a word), not yet filled.
    pending: Vec<usize>,
}

/// A term the PMU cannot encode: which term, where, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeError {
    /// The PMU.
    pub pmu: String,
    /// The term's name.
    pub term: String,
    /// Byte offset of the term (or its value) in the caller's text; `None`
    /// when it came from an alias file.
    pub position: Option<usize>,
    /// The alias whose file held the term, if it came from one.
    pub alias: Option<String>,
    /// What is wrong.
    pub problem: EncodeProblem,
}

/// What is wrong with a term.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeProblem {
    /// Neither a format, an alias nor `config`..`config4`.
    UnknownTerm {
        /// The PMU's format names, comma-separated.
        formats: String,
        /// How many aliases the PMU has.
        aliases: usize,
    },
    /// The value does not fit the format's bits.
    ValueTooWide {
        /// The value given.
        value: u64,
        /// The format.
        format: Format,
    },
    /// A term without a value on a format wider than one bit.
    NeedsValue {
        /// The format.
        format: Format,
    },
    /// A word or text where a number belongs.
    NeedsNumber,
    /// An alias term written `?` that the user did not fill.
    Unfilled {
        /// The format.
        format: Format,
    },
    /// The same term twice.
    Duplicate,
    /// An alias name given a value (`mem-loads=1`).
    AliasWithValue,
    /// The term list itself is malformed.
    Syntax(TermSyntaxError),
    /// A second alias in one event.
    SecondAlias {
        /// The first alias.
        first: String,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (pmu, term) = (&self.pmu, &self.term);
        write!(f, "PMU `{pmu}`, term `{term}`")?;
        if let Some(alias) = &self.alias {
            write!(f, " (from events/{alias})")?;
        }
        f.write_str(": ")?;
        match &self.problem {
            EncodeProblem::UnknownTerm { formats, aliases } => write!(
                f,
                "no such format or event; its formats are [{formats}] and it has {aliases} \
                 events (see /sys/bus/event_source/devices/{pmu}/format and events)"
            ),
            EncodeProblem::ValueTooWide { value, format } => write!(
                f,
                "value {value:#x} does not fit: `{term}` is {} bits ({format}), at most {:#x}",
                format.width(),
                format.max_value()
            ),
            EncodeProblem::NeedsValue { format } => write!(
                f,
                "needs a value: `{term}` is {} bits wide ({format}); write `{term}=N`",
                format.width()
            ),
            EncodeProblem::NeedsNumber => f.write_str("needs a number (decimal or 0x hexadecimal)"),
            EncodeProblem::Unfilled { format } => write!(
                f,
                "the event leaves it to you ({format}): add `{term}=N` to the event's terms"
            ),
            EncodeProblem::Duplicate => f.write_str("given twice"),
            EncodeProblem::AliasWithValue => f.write_str("is an event name and takes no value"),
            EncodeProblem::Syntax(e) => write!(f, "malformed term list {e}"),
            EncodeProblem::SecondAlias { first } => {
                write!(
                    f,
                    "a second event name in one event (the first is `{first}`)"
                )
            }
        }
    }
}

impl std::error::Error for EncodeError {}

impl<'p> Encoder<'p> {
    /// An encoder for `pmu` with every word zero.
    pub fn new(pmu: &'p Pmu) -> Encoder<'p> {
        Encoder {
            pmu,
            words: ConfigWords::default(),
            alias: None,
            user_set: vec![false; pmu.format_count()],
            pending: Vec::new(),
        }
    }

    fn error(&self, term: &Term<'_>, at_value: bool, problem: EncodeProblem) -> EncodeError {
        EncodeError {
            pmu: self.pmu.name().to_owned(),
            term: term.name.to_owned(),
            position: Some(if at_value { term.value_at } else { term.at }),
            alias: None,
            problem,
        }
    }

    /// Applies one of the caller's terms: a format, an alias name, or
    /// `config`..`config4`.
    pub fn term(&mut self, term: &Term<'_>) -> Result<(), EncodeError> {
        if let Some(index) = self.pmu.format_index(term.name) {
            if std::mem::replace(&mut self.user_set[index], true) {
                return Err(self.error(term, false, EncodeProblem::Duplicate));
            }
            self.pending.retain(|&p| p != index);
            return self.format_term(index, term);
        }
        if let Some(word) = ConfigWord::from_name(term.name) {
            let TermValue::Number(n) = term.value else {
                return Err(self.error(term, true, EncodeProblem::NeedsNumber));
            };
            self.words.set(word, n);
            return Ok(());
        }
        if let Some(alias) = self.pmu.alias(term.name) {
            if term.value != TermValue::Flag {
                return Err(self.error(term, true, EncodeProblem::AliasWithValue));
            }
            if let Some(first) = self.alias {
                let first = first.name().to_owned();
                return Err(self.error(term, false, EncodeProblem::SecondAlias { first }));
            }
            self.alias = Some(alias);
            return self.alias_terms(alias);
        }
        Err(self.error(
            term,
            false,
            EncodeProblem::UnknownTerm {
                formats: self.pmu.format_names(),
                aliases: self.pmu.aliases().len(),
            },
        ))
    }

    /// Expands an alias's terms (they may be overridden by later user terms).
    fn alias_terms(&mut self, alias: &'p Alias) -> Result<(), EncodeError> {
        let from_alias = |mut e: EncodeError| {
            e.position = None;
            e.alias = Some(alias.name().to_owned());
            e
        };
        for term in TermLexer::new(alias.terms_text(), 0) {
            // The syntax was checked when the alias was read.
            let Ok(term) = term else { continue };
            let Some(index) = self.pmu.format_index(term.name) else {
                if ALIAS_CONFIG_TERMS.contains(&term.name) {
                    // Not a config bit: the parser sets the attr field
                    // (`period=` of perf's JSON events).
                    continue;
                }
                if let Some(word) = ConfigWord::from_name(term.name) {
                    if let TermValue::Number(n) = term.value {
                        self.words.set(word, n);
                        continue;
                    }
                }
                return Err(from_alias(self.error(
                    &term,
                    false,
                    EncodeProblem::UnknownTerm {
                        formats: self.pmu.format_names(),
                        aliases: self.pmu.aliases().len(),
                    },
                )));
            };
            match term.value {
                TermValue::Placeholder | TermValue::Text(_) if !self.user_set[index] => {
                    self.pending.push(index);
                }
                TermValue::Placeholder | TermValue::Text(_) => {}
                _ if self.user_set[index] => {}
                _ => self.format_term(index, &term).map_err(from_alias)?,
            }
        }
        Ok(())
    }

    fn format_term(&mut self, index: usize, term: &Term<'_>) -> Result<(), EncodeError> {
        let (_, format) = self.pmu.format_at(index);
        let value = match term.value {
            TermValue::Number(n) => n,
            TermValue::Flag if format.width() == 1 => 1,
            TermValue::Flag => {
                return Err(self.error(term, false, EncodeProblem::NeedsValue { format }))
            }
            TermValue::Placeholder | TermValue::Text(_) => {
                return Err(self.error(term, true, EncodeProblem::NeedsNumber))
            }
        };
        let Some(bits) = format.pack(value) else {
            return Err(self.error(term, true, EncodeProblem::ValueTooWide { value, format }));
        };
        let word = format.word();
        self.words
            .set(word, (self.words.get(word) & !format.mask()) | bits);
        Ok(())
    }

    /// The alias used, if any.
    pub fn alias(&self) -> Option<&'p Alias> {
        self.alias
    }

    /// The config words, or an error for an alias `?` left unfilled.
    pub fn finish(self) -> Result<ConfigWords, EncodeError> {
        if let Some(&index) = self.pending.first() {
            let (name, format) = self.pmu.format_at(index);
            return Err(EncodeError {
                pmu: self.pmu.name().to_owned(),
                term: name.to_owned(),
                position: None,
                alias: self.alias.map(|a| a.name().to_owned()),
                problem: EncodeProblem::Unfilled { format },
            });
        }
        Ok(self.words)
    }
}

/// The perf config terms an alias may hold besides format terms: perf's
/// JSON events carry `period=` (jevents' `SampleAfterValue`), which perf
/// applies to the event (`sample_period`) as a weak config term the user's
/// own `period=` overrides (perf 5.x `pmu_alias_terms`, 6.12
/// `perf_pmu__check_alias`). The encoder skips them where the PMU has no
/// format of that name; the event-string parser applies them.
pub(crate) const ALIAS_CONFIG_TERMS: [&str; 2] = ["period", "freq"];

impl Pmu {
    /// Encodes a term list (`event=0x3c,umask=0x00,inv`) into config words.
    /// Error positions are byte offsets in `terms`.
    pub fn encode(&self, terms: &str) -> Result<ConfigWords, EncodeError> {
        let mut encoder = Encoder::new(self);
        for term in TermLexer::new(terms, 0) {
            let term = term.map_err(|error| EncodeError {
                pmu: self.name().to_owned(),
                term: terms.to_owned(),
                position: Some(error.position),
                alias: None,
                problem: EncodeProblem::Syntax(error),
            })?;
            encoder.term(&term)?;
        }
        encoder.finish()
    }

    /// The event of alias `name` (`msr/tsc/`): type and config words.
    pub fn alias_event(&self, name: &str) -> Result<Event, EncodeError> {
        let term = Term {
            name,
            value: TermValue::Flag,
            at: 0,
            value_at: 0,
        };
        let mut encoder = Encoder::new(self);
        encoder.term(&term)?;
        Ok(encoder.finish()?.event(self.type_id()))
    }
}
