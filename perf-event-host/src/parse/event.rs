//! The grammar: lists, groups, and the kinds of events a name can be.

use super::error::{ErrorKind, ParseError};
use super::modifiers::{all_modifier_letters, Modifiers};
use super::names;
use super::{EventList, Group, ParsedEvent, Resolver};
use crate::sysfs::{Alias, Encoder, Pmu, Term, TermValue};
use perf_event_core::attr::Attr;
use perf_event_core::event::Event;

/// An event before modifiers: its attr and where it came from.
#[derive(Clone, Copy)]
pub(super) struct Base<'s, 'r> {
    pub attr: Attr,
    pub pmu: Option<&'r Pmu>,
    pub alias: Option<&'r Alias>,
    pub name: Option<&'s str>,
    /// The tracepoint a wildcard expanded to.
    pub expanded: Option<&'r str>,
}

impl<'s, 'r> Base<'s, 'r> {
    pub fn plain(attr: Attr) -> Base<'s, 'r> {
        Base {
            attr,
            pmu: None,
            alias: None,
            name: None,
            expanded: None,
        }
    }
}

pub(super) struct Parser<'s, 'r, R: Resolver + ?Sized> {
    pub input: &'s str,
    pub at: usize,
    pub resolver: &'r R,
    pub events: Vec<ParsedEvent<'s, 'r>>,
    pub groups: Vec<Group<'s>>,
}

/// Bytes of names: events, PMUs, tracepoint systems and events, modifiers.
pub(super) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'*' | b'?')
}

impl<'s, 'r, R: Resolver + ?Sized> Parser<'s, 'r, R> {
    pub fn new(input: &'s str, resolver: &'r R) -> Self {
        Parser {
            input,
            at: 0,
            resolver,
            events: Vec::new(),
            groups: Vec::new(),
        }
    }

    pub fn peek(&self) -> Option<u8> {
        self.input.as_bytes().get(self.at).copied()
    }

    /// An error at `position` covering `len` bytes (clamped to the input).
    pub fn error(&self, position: usize, len: usize, kind: ErrorKind) -> ParseError {
        let position = position.min(self.input.len());
        let mut len = len.min(self.input.len() - position);
        while !self.input.is_char_boundary(position + len) {
            len += 1;
        }
        ParseError {
            input: self.input.to_owned(),
            position,
            len,
            kind,
        }
    }

    /// An error at the current byte (the whole character).
    pub fn error_here(&self, kind: ErrorKind) -> ParseError {
        self.error(self.at, 1, kind)
    }

    /// The name token at the current position (possibly empty); advances.
    pub fn token(&mut self) -> (usize, &'s str) {
        let start = self.at;
        let len = self.input.as_bytes()[start..]
            .iter()
            .take_while(|b| is_name_byte(**b))
            .count();
        self.at += len;
        (start, &self.input[start..start + len])
    }

    pub fn run(mut self) -> Result<EventList<'s, 'r>, ParseError> {
        loop {
            let save = self.at;
            let (name_at, name) = self.token();
            let named = !name.is_empty() && self.peek() == Some(b'{');
            if !named {
                self.at = save;
            }
            match self.peek() {
                Some(b'{') => self.group(named.then_some((name_at, name)))?,
                _ => {
                    let first = self.events.len();
                    self.event(None)?;
                    for i in first..self.events.len() {
                        self.events[i].group = self.groups.len();
                        self.groups.push(Group {
                            events: i..i + 1,
                            braced: false,
                            modifiers: Modifiers::default(),
                            name: None,
                        });
                    }
                }
            }
            match self.peek() {
                None => break,
                Some(b',') => self.at += 1,
                Some(b'}') => return Err(self.error_here(ErrorKind::UnopenedGroup)),
                Some(_) => {
                    return Err(self.error_here(ErrorKind::Unexpected {
                        expected: "`,` between events, or the end",
                    }))
                }
            }
        }
        Ok(EventList {
            events: self.events,
            groups: self.groups,
        })
    }

    /// A `{...}` group, named when written `name{...}` (perf's group name,
    /// shown by its reports instead of the leader's).
    fn group(&mut self, name: Option<(usize, &'s str)>) -> Result<(), ParseError> {
        let open = self.at;
        self.at += 1;
        let first = self.events.len();
        loop {
            match self.peek() {
                Some(b'{') => return Err(self.error_here(ErrorKind::NestedGroup)),
                None => return Err(self.error(open, 1, ErrorKind::UnclosedGroup)),
                _ => self.event(Some(first))?,
            }
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                None => return Err(self.error(open, 1, ErrorKind::UnclosedGroup)),
                Some(_) => {
                    return Err(self.error_here(ErrorKind::Unexpected {
                        expected: "`,` or `}` after an event in a group",
                    }))
                }
            }
        }
        let index = self.groups.len();
        let range = first..self.events.len();
        let mut modifiers = Modifiers::default();
        if self.peek() == Some(b':') {
            self.at += 1;
            let (at, text) = self.token();
            modifiers = self.modifiers(at, text)?;
            // `D` and `e` pin / make exclusive the leader only (as perf).
            let members = Modifiers {
                pinned: false,
                exclusive: false,
                ..modifiers
            };
            for i in range.clone() {
                let event = &mut self.events[i];
                let mods = if i == first { modifiers } else { members };
                let own = event.modifiers;
                event.attr =
                    mods.apply_over(event.attr, own, i == first)
                        .map_err(|p| ParseError {
                            input: self.input.to_owned(),
                            position: at,
                            len: text.len(),
                            kind: ErrorKind::Modifier(p),
                        })?;
                event.modifiers = event.modifiers.merged(mods);
            }
        }
        let pairs = range.len() > 1;
        for event in &mut self.events[range.clone()] {
            event.group = index;
            if pairs && event.modifiers.sample_read {
                let rf = event.attr.read_format_word();
                event.attr = event
                    .attr
                    .read_format_raw(rf | u64::from(perf_event_core::sys::PERF_FORMAT_GROUP))
                    .inherit(false);
            }
        }
        if let Some((at, name)) = name {
            if name.contains(['*', '?']) {
                return Err(self.error(
                    at,
                    name.len(),
                    ErrorKind::Unexpected {
                        expected: "a group name without wildcards",
                    },
                ));
            }
        }
        self.groups.push(Group {
            events: range,
            braced: true,
            modifiers,
            name: name.map(|(_, n)| n),
        });
        Ok(())
    }

    /// Parses modifier letters at `at`.
    pub fn modifiers(&self, at: usize, text: &str) -> Result<Modifiers, ParseError> {
        if text.is_empty() {
            return Err(self.error(
                at,
                1,
                ErrorKind::Unexpected {
                    expected: "modifier letters after `:`",
                },
            ));
        }
        Modifiers::parse(text).map_err(|e| self.error(at + e.at, 1, ErrorKind::Modifier(e.problem)))
    }

    /// Pushes the events of `bases` with `modifiers` (written at `mods_at`).
    pub fn push(
        &mut self,
        start: usize,
        bases: Vec<Base<'s, 'r>>,
        modifiers: Modifiers,
        mods_at: usize,
        group_first: Option<usize>,
    ) -> Result<(), ParseError> {
        if modifiers.weak {
            let at = mods_at + self.input[mods_at..].find('W').unwrap_or(0);
            return Err(self.error(
                at,
                1,
                ErrorKind::Modifier(super::ModifierProblem::WeakOutsideGroup),
            ));
        }
        let text = &self.input[start..self.at];
        for base in bases {
            let leader = group_first.is_none_or(|first| self.events.len() == first);
            let attr = modifiers.apply(base.attr, leader).map_err(|p| {
                let letter = match p {
                    super::ModifierProblem::LeaderOnly(c) => c,
                    _ => 'p',
                };
                let at = mods_at + self.input[mods_at..self.at].find(letter).unwrap_or(0);
                self.error(at, 1, ErrorKind::Modifier(p))
            })?;
            self.events.push(ParsedEvent {
                attr,
                text,
                position: start,
                name: base.name,
                expanded: base.expanded,
                pmu: base.pmu,
                alias: base.alias,
                modifiers,
                group: 0,
            });
        }
        Ok(())
    }

    /// One event (inside a group when `group_first` is its first index).
    fn event(&mut self, group_first: Option<usize>) -> Result<(), ParseError> {
        let (start, name) = self.token();
        if name.is_empty() {
            return Err(self.error_here(ErrorKind::ExpectedEvent));
        }
        match self.peek() {
            Some(b'/') => return self.pmu_event(start, name, group_first),
            Some(b':') if name == "mem" => return self.breakpoint(start, group_first),
            _ => {}
        }
        if self.peek() != Some(b':') {
            if name.contains(['*', '?']) {
                return Err(self.error(start, name.len(), ErrorKind::Wildcard));
            }
            let bases = self.named(start, name)?;
            return self.push(start, bases, Modifiers::default(), self.at, group_first);
        }
        self.at += 1;
        let (t_at, t) = self.token();
        let known = names::symbol(name).is_some()
            || raw(name).is_some()
            || names::cache(name).ok().flatten().is_some();
        let mut bases = if name.bytes().all(|b| b.is_ascii_digit()) {
            self.numeric(start, name, t_at, t)?
        } else if (known || all_modifier_letters(t)) && !name.contains(['*', '?']) {
            let modifiers = self.modifiers(t_at, t)?;
            let bases = self.named(start, name)?;
            return self.push(start, bases, modifiers, t_at, group_first);
        } else {
            self.tracepoint(start, name, t_at, t)?
        };
        // `TYPE:CONFIG/terms/` and `system:event/terms/`: config terms.
        let (mods_at, modifiers) = if self.peek() == Some(b'/') {
            let (terms, mods_at, modifiers) = self.term_list()?;
            for base in &mut bases {
                self.config_terms_only(base, &terms)?;
            }
            (mods_at, modifiers)
        } else {
            self.trailing_modifiers()?
        };
        self.push(start, bases, modifiers, mods_at, group_first)
    }

    /// `:mods` after an event, if present.
    pub fn trailing_modifiers(&mut self) -> Result<(usize, Modifiers), ParseError> {
        if self.peek() != Some(b':') {
            return Ok((self.at, Modifiers::default()));
        }
        self.at += 1;
        let (at, text) = self.token();
        Ok((at, self.modifiers(at, text)?))
    }

    /// `TYPE:CONFIG`.
    fn numeric(
        &self,
        start: usize,
        ty: &str,
        c_at: usize,
        config: &str,
    ) -> Result<Vec<Base<'s, 'r>>, ParseError> {
        let ty: u32 = ty.parse().map_err(|_| {
            self.error(
                start,
                ty.len(),
                ErrorKind::Number {
                    why: "the type number does not fit in 32 bits",
                },
            )
        })?;
        let config =
            crate::sysfs::parse_number(config).map_err(|_| {
                self.error(c_at, config.len().max(1), ErrorKind::Number {
                why: "expected the config number of `TYPE:CONFIG` (decimal or 0x hex, 64 bits)",
            })
            })?;
        Ok(vec![Base::plain(Attr::new(Event::pmu(ty, config)))])
    }

    /// A bare name: generalized, raw, cache, or a PMU alias (every PMU
    /// that has it).
    pub fn named(&self, start: usize, name: &str) -> Result<Vec<Base<'s, 'r>>, ParseError> {
        if names::TOOL_EVENTS.contains(&name) {
            return Err(self.error(start, name.len(), ErrorKind::ToolEvent));
        }
        if let Some(event) = names::symbol(name).or_else(|| raw(name).and_then(Result::ok)) {
            return Ok(vec![Base::plain(Attr::new(event))]);
        }
        if raw(name).is_some() {
            return Err(self.error(
                start,
                name.len(),
                ErrorKind::Number {
                    why: "a raw event has at most 16 hex digits (64 bits)",
                },
            ));
        }
        let cache = names::cache(name);
        if let Ok(Some(event)) = cache {
            return Ok(vec![Base::plain(Attr::new(event))]);
        }
        let mut bases = Vec::new();
        for pmu in self
            .resolver
            .pmus()
            .iter()
            .filter(|p| p.alias(name).is_some())
        {
            let mut encoder = Encoder::new(pmu);
            let term = Term {
                name,
                value: TermValue::Flag,
                at: start,
                value_at: start,
            };
            let encoded = encoder.term(&term).and_then(|()| {
                let alias = encoder.alias();
                encoder.finish().map(|w| (w, alias))
            });
            let (words, alias) = encoded
                .map_err(|e| self.error(start, name.len(), ErrorKind::Encode(Box::new(e))))?;
            let attr = Attr::new(words.event(pmu.type_id()));
            bases.push(Base {
                attr: match alias {
                    Some(alias) => super::config::alias_config(attr, alias, pmu),
                    None => attr,
                },
                pmu: Some(pmu),
                alias,
                name: None,
                expanded: None,
            });
        }
        if !bases.is_empty() {
            return Ok(bases);
        }
        Err(match cache {
            Err(e) => self.error(
                start + e.at,
                name.len() - e.at,
                ErrorKind::Cache { why: e.why },
            ),
            Ok(_) => self.error(start, name.len(), ErrorKind::UnknownEvent),
        })
    }
}

/// `rNNN`: `Some(Ok(event))`, `Some(Err(()))` when longer than 16 hex
/// digits, `None` when not of that form.
pub(super) fn raw(name: &str) -> Option<Result<Event, ()>> {
    let hex = name.strip_prefix('r')?;
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    if hex.len() > 16 {
        return Some(Err(()));
    }
    Some(u64::from_str_radix(hex, 16).map(Event::Raw).map_err(drop))
}
