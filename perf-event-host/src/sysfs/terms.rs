//! Term lists: `event=0x3c,umask=0x00,inv,ldlat=3`.
//!
//! The same syntax fills the `events/*` alias files of a PMU (since Linux
//! 3.4: "a list of attribute names separated by commas. Each entry has an
//! optional value (either hex or decimal). If no value is specified, then it
//! is assumed to be a single-bit field with a value of 1", perf_event_open(2))
//! and the inside of `pmu/term=value,.../` event strings. Some PMUs write
//! `?` (or a word such as `core`) where the user must supply the value
//! (powerpc `hv_24x7`: `domain=?`).
//!
//! Lexing borrows from the text: no allocation.

use core::fmt;

/// A term's value as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TermValue<'t> {
    /// No `=value`: a single-bit flag set to 1.
    Flag,
    /// A decimal or `0x` hexadecimal number.
    Number(u64),
    /// `?`: the user must supply the value.
    Placeholder,
    /// A word (`name=my-cycles`, `starting_index=core`) or a `'quoted'` text
    /// (quotes removed).
    Text(&'t str),
}

/// One `name[=value]` of a term list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Term<'t> {
    /// The name.
    pub name: &'t str,
    /// The value.
    pub value: TermValue<'t>,
    /// Byte offset of the name (in the text given to [`TermLexer::new`],
    /// plus its `base`).
    pub at: usize,
    /// Byte offset of the value (of the name for [`TermValue::Flag`]).
    pub value_at: usize,
}

/// A malformed term list: where, and what was expected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermSyntaxError {
    /// Byte offset (with the lexer's `base` added).
    pub position: usize,
    /// What is wrong.
    pub what: TermProblem,
}

/// What is wrong in a term list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TermProblem {
    /// A term name (`[A-Za-z_][A-Za-z0-9_.-]*`) was expected.
    ExpectedName,
    /// `=` is followed by nothing usable.
    ExpectedValue,
    /// A number with stray characters (`0x3cz`) or an empty `0x`.
    BadNumber,
    /// A number above `u64::MAX`.
    NumberTooLarge,
    /// A `'quoted'` value without its closing quote.
    UnclosedQuote,
    /// Something other than `,` after a term.
    ExpectedComma,
}

impl fmt::Display for TermSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: ", self.position)?;
        f.write_str(match self.what {
            TermProblem::ExpectedName => "expected a term name (letters, digits, `_`, `.`, `-`)",
            TermProblem::ExpectedValue => "expected a value after `=`",
            TermProblem::BadNumber => {
                "malformed number (write decimal digits or 0x and hex digits)"
            }
            TermProblem::NumberTooLarge => "number does not fit in 64 bits",
            TermProblem::UnclosedQuote => "quoted value without its closing `'`",
            TermProblem::ExpectedComma => "expected `,` between terms",
        })
    }
}

impl std::error::Error for TermSyntaxError {}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

fn is_word_byte(b: u8) -> bool {
    is_name_byte(b) || matches!(b, b':' | b'*' | b'?')
}

/// Parses a number: `0x` hex or decimal. `Err` holds the problem.
pub(crate) fn parse_number(text: &str) -> Result<u64, TermProblem> {
    let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (text, 10),
    };
    if digits.is_empty() || !digits.bytes().all(|b| (b as char).is_digit(radix)) {
        return Err(TermProblem::BadNumber);
    }
    u64::from_str_radix(digits, radix).map_err(|_| TermProblem::NumberTooLarge)
}

/// Iterates the terms of a list. Stops after the first error.
#[derive(Clone, Debug)]
pub struct TermLexer<'t> {
    text: &'t str,
    at: usize,
    base: usize,
    failed: bool,
}

impl<'t> TermLexer<'t> {
    /// Lexes all of `text`; positions are reported as `base + offset`. One
    /// trailing newline (as sysfs files end) is ignored.
    pub fn new(text: &'t str, base: usize) -> TermLexer<'t> {
        TermLexer::exact(text.strip_suffix('\n').unwrap_or(text), base)
    }

    /// Lexes exactly `text` (a newline is an error like any other byte).
    pub fn exact(text: &'t str, base: usize) -> TermLexer<'t> {
        TermLexer {
            text,
            at: 0,
            base,
            failed: false,
        }
    }

    fn error(&mut self, at: usize, what: TermProblem) -> Option<Result<Term<'t>, TermSyntaxError>> {
        self.failed = true;
        Some(Err(TermSyntaxError {
            position: self.base + at,
            what,
        }))
    }

    /// Checks the whole list without keeping anything.
    pub fn validate(text: &str) -> Result<(), TermSyntaxError> {
        TermLexer::new(text, 0).try_for_each(|t| t.map(drop))
    }
}

impl<'t> Iterator for TermLexer<'t> {
    type Item = Result<Term<'t>, TermSyntaxError>;

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        if self.failed || self.at >= bytes.len() {
            return None;
        }
        if self.at > 0 {
            // The previous term ended on a comma (checked below).
            self.at += 1;
        }
        let start = self.at;
        if !bytes.get(start).copied().is_some_and(is_name_start) {
            return self.error(start, TermProblem::ExpectedName);
        }
        let mut end = start + 1;
        while bytes.get(end).copied().is_some_and(is_name_byte) {
            end += 1;
        }
        let name = &self.text[start..end];
        let (value, value_at, after) = if bytes.get(end) == Some(&b'=') {
            let v = end + 1;
            match bytes.get(v) {
                Some(b'?') if !bytes.get(v + 1).copied().is_some_and(is_word_byte) => {
                    (TermValue::Placeholder, v, v + 1)
                }
                Some(b'\'') => match self.text[v + 1..].find('\'') {
                    Some(len) => (
                        TermValue::Text(&self.text[v + 1..v + 1 + len]),
                        v,
                        v + len + 2,
                    ),
                    None => return self.error(v, TermProblem::UnclosedQuote),
                },
                Some(b) if b.is_ascii_digit() => {
                    let len = bytes[v..].iter().take_while(|b| is_word_byte(**b)).count();
                    match parse_number(&self.text[v..v + len]) {
                        Ok(n) => (TermValue::Number(n), v, v + len),
                        Err(what) => return self.error(v, what),
                    }
                }
                Some(b) if is_word_byte(*b) => {
                    let len = bytes[v..].iter().take_while(|b| is_word_byte(**b)).count();
                    (TermValue::Text(&self.text[v..v + len]), v, v + len)
                }
                _ => return self.error(v, TermProblem::ExpectedValue),
            }
        } else {
            (TermValue::Flag, start, end)
        };
        match bytes.get(after) {
            None => {}
            Some(b',') if after + 1 < bytes.len() => {}
            Some(b',') => return self.error(after + 1, TermProblem::ExpectedName),
            Some(_) => return self.error(after, TermProblem::ExpectedComma),
        }
        self.at = after;
        Some(Ok(Term {
            name,
            value,
            at: self.base + start,
            value_at: self.base + value_at,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lex(text: &str) -> Result<Vec<(&str, TermValue<'_>)>, TermSyntaxError> {
        TermLexer::new(text, 0)
            .map(|t| t.map(|t| (t.name, t.value)))
            .collect()
    }

    #[test]
    fn the_man_page_example_and_kernel_files() {
        assert_eq!(
            lex("event=0x2,inv,ldlat=3\n").unwrap(),
            [
                ("event", TermValue::Number(2)),
                ("inv", TermValue::Flag),
                ("ldlat", TermValue::Number(3))
            ]
        );
        assert_eq!(
            lex("domain=?,offset=0x60,starting_index=core").unwrap(),
            [
                ("domain", TermValue::Placeholder),
                ("offset", TermValue::Number(0x60)),
                ("starting_index", TermValue::Text("core"))
            ]
        );
        assert_eq!(
            lex("name='a,b',period=18446744073709551615").unwrap(),
            [
                ("name", TermValue::Text("a,b")),
                ("period", TermValue::Number(u64::MAX))
            ]
        );
        assert_eq!(lex("").unwrap(), []);
        let t: Vec<_> = TermLexer::new("event=0x3c,inv", 10).collect();
        assert_eq!(t[1].unwrap().at, 21);
        assert_eq!(t[0].unwrap().value_at, 16);
    }

    #[test]
    fn malformed_lists_name_the_position() {
        let cases: &[(&str, usize, TermProblem)] = &[
            ("=1", 0, TermProblem::ExpectedName),
            ("event=", 6, TermProblem::ExpectedValue),
            ("event=0x", 6, TermProblem::BadNumber),
            ("event=0x3cz", 6, TermProblem::BadNumber),
            ("event=12a", 6, TermProblem::BadNumber),
            ("event=99999999999999999999", 6, TermProblem::NumberTooLarge),
            ("event=1,,inv", 8, TermProblem::ExpectedName),
            ("event=1,", 8, TermProblem::ExpectedName),
            ("event=1 inv", 7, TermProblem::ExpectedComma),
            ("event=1\n\n", 7, TermProblem::ExpectedComma),
            ("name='abc", 5, TermProblem::UnclosedQuote),
            ("1event=1", 0, TermProblem::ExpectedName),
            ("ev ent", 2, TermProblem::ExpectedComma),
        ];
        for &(text, position, what) in cases {
            assert_eq!(
                lex(text),
                Err(TermSyntaxError { position, what }),
                "{text:?}"
            );
        }
    }
}
