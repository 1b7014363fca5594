//! perf's metric expression language (`tools/perf/util/expr.l`, `expr.y`
//! and `expr.c`, Linux 6.12): [`Expr::parse`] reads a `MetricExpr` or
//! `MetricThreshold` as perf's scanner and grammar do, [`Expr::eval`]
//! computes its value as perf's parser does while it evaluates, and
//! [`Expr::ids`] finds the events (and metrics) it reads as perf's
//! `expr__find_ids` does, constant folding included.
//!
//! ```
//! use perf_event_vendor::expr::{Expr, ExprInputs, ExprLiteral};
//!
//! let expr = Expr::parse(
//!     "CPU_CLK_UNHALTED.THREAD_ANY / 2 if #smt_on else CPU_CLK_UNHALTED.THREAD",
//! )?;
//! // Without the machine's `#smt_on` both branches' events are needed...
//! assert_eq!(expr.ids()?, ["CPU_CLK_UNHALTED.THREAD_ANY", "CPU_CLK_UNHALTED.THREAD"]);
//!
//! let mut inputs = ExprInputs::new();
//! inputs.set_literal(ExprLiteral::SmtOn, 1.0);
//! // ...with it, perf opens only the one the machine reads.
//! assert_eq!(expr.ids_with(&inputs)?, ["CPU_CLK_UNHALTED.THREAD_ANY"]);
//!
//! inputs.insert("CPU_CLK_UNHALTED.THREAD_ANY", 3e9);
//! assert_eq!(expr.eval(&inputs)?, 1.5e9);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The language, as perf 6.12 has it:
//!
//! - numbers: decimal, with a fraction and an exponent (`1e9`, `.5`,
//!   `2.5e-3`, not `1E9` nor `1e+9`), and `NaN`. A hexadecimal constant such
//!   as `0x410fd493` is read as a name, as perf's scanner reads it (the
//!   argument of `strcmp_cpuid_str`).
//! - names: letters, digits and `_ . : @ ?`, with `\-`, `\,` and `\=` for
//!   those characters (`cpu@INST_RETIRED.ANY\,cmask\=1@`, read as the id
//!   `cpu@INST_RETIRED.ANY,cmask=1@`); `@` stands for the `/` of a
//!   `pmu/terms/` event, `?` for the metric's runtime parameter
//!   ([`Expr::with_runtime`]), a `:k` suffix is the event's modifier. The
//!   tool events `duration_time`, `user_time` and `system_time` are names
//!   like the others.
//! - literals, the machine's numbers: [`ExprLiteral`] (`#smt_on`,
//!   `#num_cpus`, `#slots`, ...). An unknown one is a parse error, as it is
//!   to perf's scanner.
//! - operators, loosest first: `x if c else y` (only at the top level or in
//!   parentheses, right-associative in `else`), `|`, `^`, `&`, `<` `>`,
//!   `+` `-`, `*` `/` `%`, unary `-`; all binary ones left-associative.
//!   There is no `==`, `!=`, `!`, `<=` or `>=`.
//! - functions: `min(a, b)`, `max(a, b)`, `d_ratio(a, b)` (whose arguments
//!   cannot be an unparenthesized `if`), `source_count(NAME)`,
//!   `has_event(NAME)`, `strcmp_cpuid_str(NAME)`.
//! - any other character (spaces, `$`, `!`, a lone `=`) is skipped, as
//!   perf's scanner skips it.
//!
//! perf's jevents also reads every `MetricExpr` with Python's parser and
//! simplifies it (`tools/perf/pmu-events/metric.py`) before compiling it
//! in: [`Expr::simplify`] is that step and [`Expr`]'s `Display` is the text
//! jevents writes, so `Expr::parse(metric.expr)?.simplify().to_string()` is
//! the expression perf runs. Thresholds are compiled in as written.

mod eval;
mod lex;
mod simplify;
#[cfg(test)]
mod tests;

pub use eval::{ExprEnv, ExprEvalError, ExprInputs};

use lex::{Lexed, Token};
use std::fmt;

/// A binary operator of [`Expr::Binary`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExprOp {
    /// `|`: logical or (1 or 0 when both sides are known).
    Or,
    /// `^`: logical exclusive or.
    Xor,
    /// `&`: logical and.
    And,
    /// `<`: 1 or 0.
    Less,
    /// `>`: 1 or 0.
    Greater,
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`: NaN when the divisor is zero.
    Div,
    /// `%`: of the values truncated to integers; a zero divisor fails the
    /// expression.
    Mod,
}

impl ExprOp {
    /// The operator's character.
    pub fn symbol(self) -> char {
        match self {
            ExprOp::Or => '|',
            ExprOp::Xor => '^',
            ExprOp::And => '&',
            ExprOp::Less => '<',
            ExprOp::Greater => '>',
            ExprOp::Add => '+',
            ExprOp::Sub => '-',
            ExprOp::Mul => '*',
            ExprOp::Div => '/',
            ExprOp::Mod => '%',
        }
    }

    /// Its precedence in expr.y (and metric.py's `_PRECEDENCE`): 0 for `|`
    /// up to 5 for `* / %`.
    pub fn precedence(self) -> u8 {
        match self {
            ExprOp::Or => 0,
            ExprOp::Xor => 1,
            ExprOp::And => 2,
            ExprOp::Less | ExprOp::Greater => 3,
            ExprOp::Add | ExprOp::Sub => 4,
            ExprOp::Mul | ExprOp::Div | ExprOp::Mod => 5,
        }
    }

    fn from_byte(b: u8) -> Option<ExprOp> {
        Some(match b {
            b'|' => ExprOp::Or,
            b'^' => ExprOp::Xor,
            b'&' => ExprOp::And,
            b'<' => ExprOp::Less,
            b'>' => ExprOp::Greater,
            b'+' => ExprOp::Add,
            b'-' => ExprOp::Sub,
            b'*' => ExprOp::Mul,
            b'/' => ExprOp::Div,
            b'%' => ExprOp::Mod,
            _ => return None,
        })
    }
}

/// A function of two arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExprFunction {
    /// `min(a, b)`: `a < b ? a : b`.
    Min,
    /// `max(a, b)`: `a > b ? a : b`.
    Max,
    /// `d_ratio(a, b)`: `a / b`, 0 when `b` is zero.
    DRatio,
}

impl ExprFunction {
    /// Its name in the language.
    pub fn name(self) -> &'static str {
        match self {
            ExprFunction::Min => "min",
            ExprFunction::Max => "max",
            ExprFunction::DRatio => "d_ratio",
        }
    }
}

/// A literal: a number of the machine's that perf computes when it reads
/// the expression (`expr__get_literal`). Values come from the caller
/// ([`ExprEnv::literal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ExprLiteral {
    /// `#num_cpus`: the highest present CPU number (+1: perf's
    /// `cpu__max_present_cpu`).
    NumCpus,
    /// `#num_cpus_online`: the number of online CPUs.
    NumCpusOnline,
    /// `#system_tsc_freq` (any case): the TSC frequency in Hz (x86; 0
    /// elsewhere).
    SystemTscFreq,
    /// `#smt_on` (any case): 1 when SMT is on, else 0.
    SmtOn,
    /// `#core_wide`: 1 when the events count whole cores (SMT off, or a
    /// system-wide run, or every CPU of each core requested), else 0.
    CoreWide,
    /// `#num_packages`: the distinct `package_cpus_list`s of the online CPUs.
    NumPackages,
    /// `#num_dies`: the distinct `die_cpus_list`s.
    NumDies,
    /// `#num_cores`: the distinct `core_cpus_list`s.
    NumCores,
    /// `#slots`: the core PMU's `caps/slots` (top-down slots per cycle).
    Slots,
    /// `#has_pmem`: 1 when the machine has persistent memory (ACPI NFIT).
    HasPmem,
}

impl ExprLiteral {
    /// Every literal perf 6.12 knows.
    pub const ALL: [ExprLiteral; 10] = [
        ExprLiteral::NumCpus,
        ExprLiteral::NumCpusOnline,
        ExprLiteral::SystemTscFreq,
        ExprLiteral::SmtOn,
        ExprLiteral::CoreWide,
        ExprLiteral::NumPackages,
        ExprLiteral::NumDies,
        ExprLiteral::NumCores,
        ExprLiteral::Slots,
        ExprLiteral::HasPmem,
    ];

    /// Its name with the `#` (`#smt_on`).
    pub fn name(self) -> &'static str {
        match self {
            ExprLiteral::NumCpus => "#num_cpus",
            ExprLiteral::NumCpusOnline => "#num_cpus_online",
            ExprLiteral::SystemTscFreq => "#system_tsc_freq",
            ExprLiteral::SmtOn => "#smt_on",
            ExprLiteral::CoreWide => "#core_wide",
            ExprLiteral::NumPackages => "#num_packages",
            ExprLiteral::NumDies => "#num_dies",
            ExprLiteral::NumCores => "#num_cores",
            ExprLiteral::Slots => "#slots",
            ExprLiteral::HasPmem => "#has_pmem",
        }
    }

    /// The literal `name` stands for, as perf compares (`#smt_on` and
    /// `#system_tsc_freq` ignoring case, the others exactly).
    pub fn from_name(name: &str) -> Option<ExprLiteral> {
        ExprLiteral::ALL.into_iter().find(|l| match l {
            ExprLiteral::SmtOn | ExprLiteral::SystemTscFreq => l.name().eq_ignore_ascii_case(name),
            _ => l.name() == name,
        })
    }
}

/// A parsed metric expression. Names ([`Expr::Id`] and the functions'
/// arguments) are held as perf's scanner leaves them: escapes removed, `?`
/// kept until [`Expr::with_runtime`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Expr {
    /// A number (`NaN` included).
    Number(f64),
    /// A literal (`#smt_on`).
    Literal(ExprLiteral),
    /// An event or metric name (`INST_RETIRED.ANY`, `cpu_core@X@`,
    /// `tma_info_thread_slots`, `duration_time`).
    Id(String),
    /// `source_count(NAME)`: how many events are aggregated into NAME's.
    SourceCount(String),
    /// `has_event(NAME)`: 1 if the event exists, else 0.
    HasEvent(String),
    /// `strcmp_cpuid_str(ID)`: 1 if the CPU id matches `ID`, else 0.
    StrcmpCpuidStr(String),
    /// `-x`.
    Neg(Box<Expr>),
    /// `a op b`.
    Binary(ExprOp, Box<Expr>, Box<Expr>),
    /// `min`, `max` or `d_ratio` of two values.
    Function(ExprFunction, Box<Expr>, Box<Expr>),
    /// `then if cond else otherwise`.
    If {
        /// The value when `cond` is not zero.
        then: Box<Expr>,
        /// The condition.
        cond: Box<Expr>,
        /// The value when `cond` is zero.
        otherwise: Box<Expr>,
    },
}

/// Why a text is not an expression: where, what was found and what perf's
/// grammar expects there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    offset: usize,
    len: usize,
    found: String,
    expected: String,
    input: String,
}

impl ExprError {
    fn new(input: &str, offset: usize, len: usize, found: String, expected: String) -> ExprError {
        ExprError {
            offset,
            len,
            found,
            expected,
            input: input.to_owned(),
        }
    }

    /// The byte offset of what was found.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Its length in bytes (0 at the end of the input).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (the end of the input).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What was found (`` `)` ``, `the end of the expression`).
    pub fn found(&self) -> &str {
        &self.found
    }

    /// What the grammar expects there.
    pub fn expected(&self) -> &str {
        &self.expected
    }
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "metric expression, at byte {}: found {}, expected {}\n  {}\n  {}^",
            self.offset,
            self.found,
            self.expected,
            self.input.replace(['\n', '\t', '\r'], " "),
            " ".repeat(self.input[..self.offset].chars().count())
        )
    }
}

impl std::error::Error for ExprError {}

/// What may begin an operand.
const OPERAND: &str = "an operand (a number, a name, a #literal, `(`, unary `-`, \
                       min/max/d_ratio/source_count/has_event/strcmp_cpuid_str)";

/// The parser: precedence climbing over expr.y's grammar. Each step
/// returns the tree and its height.
struct Parser<'a> {
    input: &'a str,
    tokens: Vec<Lexed>,
    at: usize,
    /// How many operands enclose this one (parentheses, unary minus,
    /// function arguments), bounded like the height.
    depth: usize,
}

/// The tallest tree (and deepest nesting) [`Expr::parse`] accepts. perf's
/// bison parser has no such bound for left-associative chains
/// (`a + a + ...`) and allows 10000 levels of nesting, but evaluating,
/// printing and dropping a tree recurse over its height: this keeps that
/// well inside any thread's stack. perf's tables need 20.
pub const MAX_HEIGHT: usize = 128;

type Parsed = Result<(Expr, usize), ExprError>;

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.tokens[self.at].token
    }

    fn error(&self, expected: &str) -> ExprError {
        let t = &self.tokens[self.at];
        let text = &self.input[t.offset..t.offset + t.len];
        ExprError::new(
            self.input,
            t.offset,
            t.len,
            t.token.describe(text),
            expected.to_owned(),
        )
    }

    fn expect(&mut self, punct: u8, expected: &str) -> Result<(), ExprError> {
        if *self.peek() == Token::Punct(punct) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// A node over children of height `h`.
    fn node(&self, e: Expr, h: usize) -> Parsed {
        if h + 1 > MAX_HEIGHT {
            return Err(self.error(&format!(
                "a shallower expression (this one nests deeper than {MAX_HEIGHT})"
            )));
        }
        Ok((e, h + 1))
    }

    /// `if_expr: expr IF expr ELSE if_expr | expr`.
    fn if_expr(&mut self) -> Parsed {
        let (then, h1) = self.expr(0)?;
        if *self.peek() != Token::If {
            return Ok((then, h1));
        }
        self.at += 1;
        let (cond, h2) = self.expr(0)?;
        if *self.peek() != Token::Else {
            return Err(self.error("`else` or an operator"));
        }
        self.at += 1;
        let (otherwise, h3) = self.if_expr()?;
        let e = Expr::If {
            then: Box::new(then),
            cond: Box::new(cond),
            otherwise: Box::new(otherwise),
        };
        self.node(e, h1.max(h2).max(h3))
    }

    /// `expr` with operators of at least `min` precedence.
    fn expr(&mut self, min: u8) -> Parsed {
        let (mut lhs, mut h) = self.unary()?;
        while let Token::Punct(b) = *self.peek() {
            let Some(op) = ExprOp::from_byte(b) else {
                break;
            };
            if op.precedence() < min {
                break;
            }
            self.at += 1;
            let (rhs, hr) = self.expr(op.precedence() + 1)?;
            (lhs, h) = self.node(Expr::Binary(op, Box::new(lhs), Box::new(rhs)), h.max(hr))?;
        }
        Ok((lhs, h))
    }

    /// A NAME argument: `'(' ID ')'`.
    fn name_argument(&mut self, function: &str) -> Result<String, ExprError> {
        self.at += 1;
        self.expect(b'(', &format!("`(` after {function}"))?;
        let Token::Id(id) = self.peek().clone() else {
            return Err(self.error(&format!("a name, the argument of {function}")));
        };
        self.at += 1;
        self.expect(b')', &format!("`)` closing {function}(NAME)"))?;
        Ok(id)
    }

    /// `'(' expr ',' expr ')'`.
    fn two_arguments(&mut self, function: ExprFunction) -> Parsed {
        let name = function.name();
        self.at += 1;
        self.expect(b'(', &format!("`(` after {name}"))?;
        let (a, ha) = self.expr(0)?;
        self.expect(b',', &format!("`,` or an operator in {name}(a, b)"))?;
        let (b, hb) = self.expr(0)?;
        self.expect(b')', &format!("`)` or an operator in {name}(a, b)"))?;
        self.node(
            Expr::Function(function, Box::new(a), Box::new(b)),
            ha.max(hb),
        )
    }

    /// An operand, with its unary minuses (which bind tightest, `%prec NEG`).
    fn unary(&mut self) -> Parsed {
        self.depth += 1;
        if self.depth > MAX_HEIGHT {
            return Err(self.error(&format!(
                "a shallower expression (this one nests deeper than {MAX_HEIGHT})"
            )));
        }
        let result = self.operand();
        self.depth -= 1;
        result
    }

    fn operand(&mut self) -> Parsed {
        let token = self.peek().clone();
        let leaf = match token {
            Token::Punct(b'-') => {
                self.at += 1;
                let (e, h) = self.unary()?;
                return self.node(Expr::Neg(Box::new(e)), h);
            }
            Token::Punct(b'(') => {
                self.at += 1;
                let (e, h) = self.if_expr()?;
                self.expect(b')', "`)`, `if` or an operator")?;
                return Ok((e, h));
            }
            Token::Number(v) => Expr::Number(v),
            Token::Literal(l) => Expr::Literal(l),
            Token::Id(id) => Expr::Id(id),
            Token::SourceCount => {
                return Ok((Expr::SourceCount(self.name_argument("source_count")?), 1))
            }
            Token::HasEvent => return Ok((Expr::HasEvent(self.name_argument("has_event")?), 1)),
            Token::StrcmpCpuidStr => {
                return Ok((
                    Expr::StrcmpCpuidStr(self.name_argument("strcmp_cpuid_str")?),
                    1,
                ))
            }
            Token::Min => return self.two_arguments(ExprFunction::Min),
            Token::Max => return self.two_arguments(ExprFunction::Max),
            Token::DRatio => return self.two_arguments(ExprFunction::DRatio),
            _ => return Err(self.error(OPERAND)),
        };
        self.at += 1;
        Ok((leaf, 1))
    }
}

impl Expr {
    /// Reads `text` as perf's scanner and grammar do.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        let tokens = lex::lex(text)?;
        let mut parser = Parser {
            input: text,
            tokens,
            at: 0,
            depth: 0,
        };
        let (e, _) = parser.if_expr()?;
        if *parser.peek() != Token::End {
            return Err(parser.error("an operator, `if`, or the end of the expression"));
        }
        Ok(e)
    }

    /// The expression with each `?` in its names replaced by `runtime`, as
    /// perf's scanner does with the metric's runtime parameter (powerpc's
    /// hv_24x7 metrics: `chip\=?` for chip 0, 1, ...).
    pub fn with_runtime(&self, runtime: u32) -> Expr {
        let n = runtime.to_string();
        self.map_names(&|name: &str| name.replace('?', &n))
    }

    /// The same tree with every name mapped.
    fn map_names(&self, f: &dyn Fn(&str) -> String) -> Expr {
        let b = |e: &Expr| Box::new(e.map_names(f));
        match self {
            Expr::Number(_) | Expr::Literal(_) => self.clone(),
            Expr::Id(s) => Expr::Id(f(s)),
            Expr::SourceCount(s) => Expr::SourceCount(f(s)),
            Expr::HasEvent(s) => Expr::HasEvent(f(s)),
            Expr::StrcmpCpuidStr(s) => Expr::StrcmpCpuidStr(f(s)),
            Expr::Neg(e) => Expr::Neg(b(e)),
            Expr::Binary(op, l, r) => Expr::Binary(*op, b(l), b(r)),
            Expr::Function(fun, l, r) => Expr::Function(*fun, b(l), b(r)),
            Expr::If {
                then,
                cond,
                otherwise,
            } => Expr::If {
                then: b(then),
                cond: b(cond),
                otherwise: b(otherwise),
            },
        }
    }

    /// Every name in the expression, in order, repeats included: ids,
    /// `source_count` and `has_event` arguments (not `strcmp_cpuid_str`'s).
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.walk_names(&mut out);
        out
    }

    fn walk_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Number(_) | Expr::Literal(_) | Expr::StrcmpCpuidStr(_) => {}
            Expr::Id(s) | Expr::SourceCount(s) | Expr::HasEvent(s) => out.push(s),
            Expr::Neg(e) => e.walk_names(out),
            Expr::Binary(_, l, r) | Expr::Function(_, l, r) => {
                l.walk_names(out);
                r.walk_names(out);
            }
            Expr::If {
                then,
                cond,
                otherwise,
            } => {
                then.walk_names(out);
                cond.walk_names(out);
                otherwise.walk_names(out);
            }
        }
    }
}

impl std::str::FromStr for Expr {
    type Err = ExprError;
    fn from_str(s: &str) -> Result<Expr, ExprError> {
        Expr::parse(s)
    }
}

/// A name as perf's scanner reads it back: `-`, `,` and `=` escaped.
fn escape_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A number as metric.py's `Constant` writes it: Python's `repr` of the
/// float, as a `decimal` of 20 digits, normalized, in engineering notation,
/// `E+` written `e` (`1e3`, `100e3`, `0.000001`, `100e-9`).
pub(crate) fn format_number(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        // Not in the language: perf's scanner refuses what overflows.
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    // The shortest digits that read back as v (Python's repr has the same).
    let sci = format!("{:e}", v.abs());
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let mut exp: i64 = exp.parse().expect("an integer exponent");
    let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    // As a coefficient and exponent: v = digits * 10^(exp - (len - 1)).
    exp -= digits.len() as i64 - 1;
    // normalize(): no trailing zeros (zero is "0").
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
        exp += 1;
    }
    if digits == "0" {
        exp = 0;
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let len = digits.len() as i64;
    let leftdigits = exp + len;
    let dotplace = if exp <= 0 && leftdigits > -6 {
        leftdigits
    } else if digits == "0" {
        (leftdigits + 1).rem_euclid(3) - 1
    } else {
        (leftdigits - 1).rem_euclid(3) + 1
    };
    let (int, frac) = if dotplace <= 0 {
        (
            "0".to_owned(),
            format!(".{}{digits}", "0".repeat((-dotplace) as usize)),
        )
    } else if dotplace >= len {
        (
            format!("{digits}{}", "0".repeat((dotplace - len) as usize)),
            String::new(),
        )
    } else {
        (
            digits[..dotplace as usize].to_owned(),
            format!(".{}", &digits[dotplace as usize..]),
        )
    };
    let e = if leftdigits == dotplace {
        String::new()
    } else {
        format!("e{}", leftdigits - dotplace)
    };
    format!("{sign}{int}{frac}{e}")
}

impl fmt::Display for Expr {
    /// The expression as jevents writes it into perf (metric.py's
    /// `ToPerfJson`): operators spaced, parentheses only where precedence
    /// needs them (and around a right operand of the same precedence), an
    /// `if` always in parentheses, names with their escapes, numbers as
    /// metric.py's `Constant`. perf's grammar reads it back to the same
    /// tree (a negative number reads back as `-` applied to it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Number(v) => f.write_str(&format_number(*v)),
            Expr::Literal(l) => f.write_str(l.name()),
            Expr::Id(s) => f.write_str(&escape_name(s)),
            Expr::SourceCount(s) => write!(f, "source_count({})", escape_name(s)),
            Expr::HasEvent(s) => write!(f, "has_event({})", escape_name(s)),
            Expr::StrcmpCpuidStr(s) => write!(f, "strcmp_cpuid_str({})", escape_name(s)),
            Expr::Neg(e) => match **e {
                Expr::Binary(..) => write!(f, "-({e})"),
                _ => write!(f, "-{e}"),
            },
            Expr::Binary(op, l, r) => {
                let bracket = |child: &Expr, rhs: bool| match child {
                    Expr::Binary(c, ..) => {
                        op.precedence() > c.precedence()
                            || (rhs && op.precedence() == c.precedence())
                    }
                    _ => false,
                };
                if bracket(l, false) {
                    write!(f, "({l})")?;
                } else {
                    write!(f, "{l}")?;
                }
                write!(f, " {} ", op.symbol())?;
                if bracket(r, true) {
                    write!(f, "({r})")
                } else {
                    write!(f, "{r}")
                }
            }
            Expr::Function(fun, a, b) => write!(f, "{}({a}, {b})", fun.name()),
            Expr::If {
                then,
                cond,
                otherwise,
            } => write!(f, "({then} if {cond} else {otherwise})"),
        }
    }
}
