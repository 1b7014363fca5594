//! The syntax of the patterns: POSIX extended regular expressions as glibc's
//! `regcomp(REG_EXTENDED)` reads the part of them the mapfiles use, into a
//! syntax tree.

/// A set of bytes.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(super) struct ByteSet([u64; 4]);

impl ByteSet {
    fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }
    pub(super) fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }
    fn of(pred: impl Fn(u8) -> bool) -> ByteSet {
        let mut set = ByteSet::default();
        for b in 0..=255u8 {
            if pred(b) {
                set.insert(b);
            }
        }
        set
    }
    fn negated(self) -> ByteSet {
        ByteSet(self.0.map(|w| !w))
    }
}

/// The syntax tree.
#[derive(Clone, Debug)]
pub(super) enum Ast {
    Empty,
    Set(ByteSet),
    Start,
    End,
    Concat(Vec<Ast>),
    Alt(Vec<Ast>),
    Repeat(Box<Ast>, u32, Option<u32>),
}

/// The largest bound of an interval (glibc's `RE_DUP_MAX` is larger; the
/// mapfiles use 4).
const MAX_REPEAT: u32 = 255;

/// Why a pattern is refused.
pub(crate) type Error = &'static str;

struct Parser<'a> {
    p: &'a [u8],
    i: usize,
    /// Open groups: outside any, glibc takes `)` as a literal.
    depth: usize,
}

/// The syntax tree of `pattern`.
pub(super) fn parse(pattern: &str) -> Result<Ast, Error> {
    let mut parser = Parser {
        p: pattern.as_bytes(),
        i: 0,
        depth: 0,
    };
    let ast = parser.alternation()?;
    debug_assert_eq!(parser.i, parser.p.len(), "the top level reads to the end");
    Ok(ast)
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.p.get(self.i).copied()
    }

    fn alternation(&mut self) -> Result<Ast, Error> {
        let mut branches = vec![self.concatenation()?];
        while self.peek() == Some(b'|') {
            self.i += 1;
            branches.push(self.concatenation()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().expect("one")
        } else {
            Ast::Alt(branches)
        })
    }

    fn concatenation(&mut self) -> Result<Ast, Error> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == b'|' || (c == b')' && self.depth > 0) {
                break;
            }
            items.push(self.repetition()?);
        }
        Ok(match items.len() {
            0 => Ast::Empty,
            1 => items.pop().expect("one"),
            _ => Ast::Concat(items),
        })
    }

    fn repetition(&mut self) -> Result<Ast, Error> {
        let mut atom = self.atom()?;
        while let Some(c) = self.peek() {
            let (min, max) = match c {
                b'*' => (0, None),
                b'+' => (1, None),
                b'?' => (0, Some(1)),
                b'{' => {
                    self.i += 1;
                    let bounds = self.interval()?;
                    atom = Ast::Repeat(Box::new(atom), bounds.0, bounds.1);
                    continue;
                }
                _ => break,
            };
            self.i += 1;
            atom = Ast::Repeat(Box::new(atom), min, max);
        }
        Ok(atom)
    }

    /// `n}`, `n,}`, `n,m}` or `,m}` (glibc: from 0) after a `{`.
    fn interval(&mut self) -> Result<(u32, Option<u32>), Error> {
        let min = match self.number()? {
            Some(n) => n,
            None if self.peek() == Some(b',') => 0,
            None => return Err("an interval needs a bound"),
        };
        let max = if self.peek() == Some(b',') {
            self.i += 1;
            self.number()?
        } else {
            Some(min)
        };
        if self.peek() != Some(b'}') {
            return Err("an unclosed interval");
        }
        self.i += 1;
        if max.is_some_and(|m| m < min) {
            return Err("an interval's bounds are reversed");
        }
        Ok((min, max))
    }

    fn number(&mut self) -> Result<Option<u32>, Error> {
        let start = self.i;
        let mut n: u32 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            n = n * 10 + u32::from(d - b'0');
            if n > MAX_REPEAT {
                return Err("an interval bound over 255");
            }
            self.i += 1;
        }
        Ok((self.i > start).then_some(n))
    }

    fn atom(&mut self) -> Result<Ast, Error> {
        let c = self.peek().ok_or("a pattern ends early")?;
        self.i += 1;
        Ok(match c {
            b'(' => {
                self.depth += 1;
                let inner = self.alternation()?;
                if self.peek() != Some(b')') {
                    return Err("an unclosed group");
                }
                self.depth -= 1;
                self.i += 1;
                inner
            }
            b'*' | b'+' | b'?' | b'{' => return Err("a repetition of nothing"),
            b'[' => Ast::Set(self.bracket()?),
            b'.' => Ast::Set(ByteSet::of(|b| b != 0)),
            b'^' => Ast::Start,
            b'$' => Ast::End,
            b'\\' => {
                let e = self.peek().ok_or("a trailing backslash")?;
                if e.is_ascii_alphanumeric() || !e.is_ascii() {
                    return Err("a backslash escape other than punctuation");
                }
                self.i += 1;
                Ast::Set(ByteSet::of(|b| b == e))
            }
            c => Ast::Set(ByteSet::of(|b| b == c)),
        })
    }

    /// A bracket expression after its `[`.
    fn bracket(&mut self) -> Result<ByteSet, Error> {
        let mut set = ByteSet::default();
        let negate = self.peek() == Some(b'^');
        if negate {
            self.i += 1;
        }
        let mut first = true;
        loop {
            let c = self.peek().ok_or("an unclosed bracket expression")?;
            if c == b']' && !first {
                self.i += 1;
                break;
            }
            first = false;
            if c == b'[' && self.p.get(self.i + 1) == Some(&b':') {
                let rest = &self.p[self.i + 2..];
                let end = rest
                    .windows(2)
                    .position(|w| w == b":]")
                    .ok_or("an unclosed character class")?;
                let class = class(&rest[..end]).ok_or("an unknown character class")?;
                for b in 0..=255u8 {
                    if class(b) {
                        set.insert(b);
                    }
                }
                self.i += 2 + end + 2;
                continue;
            }
            if c == b'[' && matches!(self.p.get(self.i + 1), Some(b'.' | b'=')) {
                return Err("collating elements are not supported");
            }
            self.i += 1;
            let is_range =
                self.peek() == Some(b'-') && self.p.get(self.i + 1).is_some_and(|&e| e != b']');
            if is_range {
                let end = self.p[self.i + 1];
                if end == b'[' {
                    return Err("a range ending in a class or collating element");
                }
                if end < c {
                    return Err("a range whose end is below its start");
                }
                self.i += 2;
                for b in c..=end {
                    set.insert(b);
                }
            } else {
                set.insert(c);
            }
        }
        Ok(if negate {
            let mut set = set.negated();
            // glibc's bracket negation never matches the string's end.
            set.0[0] &= !1;
            set
        } else {
            set
        })
    }
}

/// The C locale's character classes.
fn class(name: &[u8]) -> Option<fn(u8) -> bool> {
    Some(match name {
        b"alpha" => |b: u8| b.is_ascii_alphabetic(),
        b"digit" => |b: u8| b.is_ascii_digit(),
        b"alnum" => |b: u8| b.is_ascii_alphanumeric(),
        b"upper" => |b: u8| b.is_ascii_uppercase(),
        b"lower" => |b: u8| b.is_ascii_lowercase(),
        b"xdigit" => |b: u8| b.is_ascii_hexdigit(),
        b"space" => |b: u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'),
        b"blank" => |b: u8| b == b' ' || b == b'\t',
        b"punct" => |b: u8| b.is_ascii_punctuation(),
        b"cntrl" => |b: u8| b.is_ascii_control(),
        b"print" => |b: u8| (0x20..0x7f).contains(&b),
        b"graph" => |b: u8| b.is_ascii_graphic(),
        _ => return None,
    })
}
