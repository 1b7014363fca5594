//! The part of POSIX extended regular expressions (`regcomp(REG_EXTENDED)`)
//! that perf's mapfiles use, with POSIX's leftmost-longest match as glibc's
//! `regexec` reports it: literals, `.`, bracket expressions (ranges,
//! negation, the twelve `[:class:]` names of the C locale), groups,
//! alternation, `*` `+` `?` `{n}` `{n,}` `{n,m}` `{,m}`, anchors `^` `$`,
//! `\` before a punctuation character, and `)` outside any group as a
//! literal (glibc's reading). Anything else (back references, GNU's
//! `\w` and friends, collating elements) is refused, and perf treats a
//! pattern `regcomp` refuses as matching nothing.
//!
//! Bytes are matched one by one, as in the C locale. The pattern is compiled
//! into a Thompson automaton and run from each start position in turn; the
//! first position with a match gives the match, its longest end the length.

mod parse;

pub(crate) use parse::Error;
use parse::{Ast, ByteSet};

/// A state of the automaton.
#[derive(Clone, Copy, Debug)]
enum State {
    /// Consumes one byte of the set, then goes on.
    Byte(ByteSet, usize),
    /// Goes to both.
    Split(usize, usize),
    /// Goes on where the position is the start (`true`) or end (`false`).
    Anchor(bool, usize),
    /// Goes on.
    Jump(usize),
    Match,
}

/// A target not known yet.
const HOLE: usize = usize::MAX;

/// Which target of a state is dangling: the only one (or a split's first),
/// or a split's second.
#[derive(Clone, Copy)]
enum Slot {
    Next,
    Second,
}

/// A compiled piece: where it starts, and the targets to point at what
/// follows it.
struct Fragment {
    start: usize,
    outs: Vec<(usize, Slot)>,
}

/// The states limit: far above what any mapfile needs.
const MAX_STATES: usize = 100_000;

struct Compiler {
    states: Vec<State>,
}

impl Compiler {
    fn push(&mut self, state: State, slot: Slot) -> Result<Fragment, Error> {
        if self.states.len() >= MAX_STATES {
            return Err("a pattern too large");
        }
        self.states.push(state);
        let start = self.states.len() - 1;
        Ok(Fragment {
            start,
            outs: vec![(start, slot)],
        })
    }

    fn patch(&mut self, outs: &[(usize, Slot)], to: usize) {
        for &(s, slot) in outs {
            self.states[s] = match (self.states[s], slot) {
                (State::Byte(set, _), Slot::Next) => State::Byte(set, to),
                (State::Anchor(at, _), Slot::Next) => State::Anchor(at, to),
                (State::Jump(_), Slot::Next) => State::Jump(to),
                (State::Split(_, b), Slot::Next) => State::Split(to, b),
                (State::Split(a, _), Slot::Second) => State::Split(a, to),
                (other, _) => other,
            };
        }
    }

    /// `parts` one after the other.
    fn sequence(&mut self, parts: Vec<Fragment>) -> Result<Fragment, Error> {
        let mut parts = parts.into_iter();
        let Some(mut whole) = parts.next() else {
            return self.push(State::Jump(HOLE), Slot::Next);
        };
        for part in parts {
            self.patch(&whole.outs, part.start);
            whole.outs = part.outs;
        }
        Ok(whole)
    }

    fn compile(&mut self, ast: &Ast) -> Result<Fragment, Error> {
        match ast {
            Ast::Empty => self.push(State::Jump(HOLE), Slot::Next),
            Ast::Set(set) => self.push(State::Byte(*set, HOLE), Slot::Next),
            Ast::Start => self.push(State::Anchor(true, HOLE), Slot::Next),
            Ast::End => self.push(State::Anchor(false, HOLE), Slot::Next),
            Ast::Concat(items) => {
                let parts = items
                    .iter()
                    .map(|i| self.compile(i))
                    .collect::<Result<_, _>>()?;
                self.sequence(parts)
            }
            Ast::Alt(branches) => {
                let parts: Vec<Fragment> = branches
                    .iter()
                    .map(|b| self.compile(b))
                    .collect::<Result<_, _>>()?;
                // split(b0, split(b1, ... bn)), built from the end.
                let mut outs = Vec::new();
                let mut entry = None;
                for part in parts.into_iter().rev() {
                    entry = Some(match entry {
                        None => part.start,
                        Some(rest) => self.push(State::Split(part.start, rest), Slot::Next)?.start,
                    });
                    outs.extend(part.outs);
                }
                Ok(Fragment {
                    start: entry.expect("at least two branches"),
                    outs,
                })
            }
            Ast::Repeat(inner, min, max) => {
                let mut parts = Vec::new();
                for _ in 0..*min {
                    parts.push(self.compile(inner)?);
                }
                match max {
                    None => {
                        let body = self.compile(inner)?;
                        let split = self.push(State::Split(body.start, HOLE), Slot::Second)?;
                        self.patch(&body.outs, split.start);
                        parts.push(split);
                    }
                    Some(max) => {
                        for _ in *min..*max {
                            let body = self.compile(inner)?;
                            let mut split =
                                self.push(State::Split(body.start, HOLE), Slot::Second)?;
                            split.outs.extend(body.outs);
                            parts.push(split);
                        }
                    }
                }
                self.sequence(parts)
            }
        }
    }
}

/// The automaton's working sets, shared by the start positions of a search.
struct Run {
    /// The step at which each state was last added.
    seen: Vec<usize>,
    /// A number for each step (closure at one position).
    step: usize,
    current: Vec<usize>,
    next: Vec<usize>,
}

/// A compiled pattern.
#[derive(Clone, Debug)]
pub(crate) struct Regex {
    states: Vec<State>,
    start: usize,
}

impl Regex {
    /// Compiles `pattern`, as `regcomp(REG_EXTENDED)` would.
    pub(crate) fn new(pattern: &str) -> Result<Regex, Error> {
        let ast = parse::parse(pattern)?;
        let mut compiler = Compiler { states: Vec::new() };
        let whole = compiler.compile(&ast)?;
        let matched = compiler.push(State::Match, Slot::Next)?.start;
        compiler.patch(&whole.outs, matched);
        Ok(Regex {
            states: compiler.states,
            start: whole.start,
        })
    }

    /// The leftmost-longest match in `text` as byte offsets (regexec's
    /// `pmatch[0]`).
    pub(crate) fn find(&self, text: &str) -> Option<(usize, usize)> {
        let text = text.as_bytes();
        let mut run = Run {
            seen: vec![0; self.states.len()],
            step: 0,
            current: Vec::new(),
            next: Vec::new(),
        };
        (0..=text.len()).find_map(|start| {
            self.longest_at(text, start, &mut run)
                .map(|end| (start, end))
        })
    }

    /// The end of the longest match starting at `start`.
    fn longest_at(&self, text: &[u8], start: usize, run: &mut Run) -> Option<usize> {
        run.current.clear();
        run.step += 1;
        self.close(
            self.start,
            start,
            text.len(),
            run.step,
            &mut run.current,
            &mut run.seen,
        );
        let mut longest = None;
        let mut pos = start;
        loop {
            if run
                .current
                .iter()
                .any(|&s| matches!(self.states[s], State::Match))
            {
                longest = Some(pos);
            }
            let Some(&b) = text.get(pos) else { break };
            run.next.clear();
            run.step += 1;
            for &s in &run.current {
                if let State::Byte(set, to) = self.states[s] {
                    if set.contains(b) {
                        self.close(
                            to,
                            pos + 1,
                            text.len(),
                            run.step,
                            &mut run.next,
                            &mut run.seen,
                        );
                    }
                }
            }
            if run.next.is_empty() {
                break;
            }
            std::mem::swap(&mut run.current, &mut run.next);
            pos += 1;
        }
        longest
    }

    /// Adds `s` and the states reached from it without consuming a byte at
    /// `pos` to `out` (`seen` marks with `step` the states added in this
    /// step).
    fn close(
        &self,
        s: usize,
        pos: usize,
        len: usize,
        step: usize,
        out: &mut Vec<usize>,
        seen: &mut [usize],
    ) {
        let mut stack = vec![s];
        while let Some(s) = stack.pop() {
            if seen[s] == step {
                continue;
            }
            seen[s] = step;
            match self.states[s] {
                State::Split(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                State::Jump(to) => stack.push(to),
                State::Anchor(at_start, to) => {
                    if (at_start && pos == 0) || (!at_start && pos == len) {
                        stack.push(to);
                    }
                }
                State::Byte(..) | State::Match => out.push(s),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Regex;

    fn find(pattern: &str, text: &str) -> Result<Option<(usize, usize)>, super::Error> {
        Regex::new(pattern).map(|r| r.find(text))
    }

    /// What glibc 2.x's regcomp(REG_EXTENDED) and regexec answered for
    /// these (Python ctypes, on this project's machine).
    #[test]
    fn glibcs_answers() {
        let cases = [
            ("a|", "b", Some((0, 0))),
            ("a|", "a", Some((0, 1))),
            ("()", "x", Some((0, 0))),
            ("a**", "aaa", Some((0, 3))),
            ("a{2}{3}", "aaaaaa", Some((0, 6))),
            ("[]a]", "]", Some((0, 1))),
            ("[a-]", "-", Some((0, 1))),
            ("a{,3}", "aa", Some((0, 2))),
            (r"\.", ".", Some((0, 1))),
            ("(a|ab)(c|bcd)", "abcd", Some((0, 4))),
            ("x*", "axx", Some((0, 0))),
            ("^a|b$", "cb", Some((1, 2))),
            ("[[:xdigit:]]+", "0fG", Some((0, 2))),
            ("(|a)+", "aa", Some((0, 2))),
            ("a+?", "aa", Some((0, 2))),
            ("a)", "a)", Some((0, 2))),
            (")", "x)", Some((1, 2))),
            ("a||b", "b", Some((0, 1))),
            ("(a|)", "x", Some((0, 0))),
        ];
        for (pattern, text, want) in cases {
            assert_eq!(find(pattern, text), Ok(want), "{pattern:?} on {text:?}");
        }
        for refused in [
            "*a",
            "{",
            "a{",
            "a{1,0}",
            "[z-a]",
            "(a",
            "[a",
            "[[:word:]]",
            r"\w",
        ] {
            assert!(Regex::new(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn leftmost_then_longest() {
        let zen1 = "AuthenticAMD-23-([12][0-9A-F]|[0-9A-F])";
        assert_eq!(find(zen1, "AuthenticAMD-23-18-1"), Ok(Some((0, 18))));
        assert_eq!(find(zen1, "AuthenticAMD-23-31-0"), Ok(Some((0, 17))));
        assert_eq!(find("b+|ab", "xabbb"), Ok(Some((1, 3))), "leftmost wins");
        assert_eq!(find("^IBM.393[12].*$", "IBM,3931,704"), Ok(Some((0, 12))));
        assert_eq!(find("^IBM", "xIBM"), Ok(None));
        assert_eq!(
            find("0x004e[[:xdigit:]]{4}", "0x004e1202"),
            Ok(Some((0, 10)))
        );
        assert_eq!(find("[^a]", "a"), Ok(None));
        assert_eq!(find(".", "\0"), Ok(None), "glibc's `.` is no NUL");
    }
}
