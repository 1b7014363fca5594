//! perf's scanner for metric expressions (`tools/perf/util/expr.l`, Linux
//! 6.12), rule by rule: at each position every rule is tried, the longest
//! match wins and a tie goes to the rule written first, as flex chooses.

use super::{ExprError, ExprLiteral};

/// A token and the bytes it was read from.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Token {
    /// `NUMBER`: a decimal number or `NaN`.
    Number(f64),
    /// `LITERAL`: `#smt_on`, ...
    Literal(ExprLiteral),
    /// `ID`: an event or metric name, escapes removed (`?` kept).
    Id(String),
    DRatio,
    Max,
    Min,
    If,
    Else,
    SourceCount,
    HasEvent,
    StrcmpCpuidStr,
    /// One of `| ^ & < > - + * / % ( ) ,`.
    Punct(u8),
    /// The end of the input.
    End,
}

impl Token {
    /// How an error names it.
    pub(super) fn describe(&self, text: &str) -> String {
        match self {
            Token::End => "the end of the expression".to_owned(),
            Token::Number(_) => format!("the number `{text}`"),
            Token::Literal(_) => format!("the literal `{text}`"),
            Token::Id(_) => format!("the name `{text}`"),
            Token::Punct(_) => format!("`{text}`"),
            _ => format!("the keyword `{text}`"),
        }
    }
}

/// A token with its position.
#[derive(Clone, Debug)]
pub(super) struct Lexed {
    pub token: Token,
    pub offset: usize,
    pub len: usize,
}

/// `sym`: the characters of a name.
fn is_sym(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'@' | b'?')
}

/// The keywords, in the order expr.l lists them (before `NaN`).
const KEYWORDS: [(&str, Token); 8] = [
    ("d_ratio", Token::DRatio),
    ("max", Token::Max),
    ("min", Token::Min),
    ("if", Token::If),
    ("else", Token::Else),
    ("source_count", Token::SourceCount),
    ("has_event", Token::HasEvent),
    ("strcmp_cpuid_str", Token::StrcmpCpuidStr),
];

/// The length of `{number}` at the start of `s`:
/// `([0-9]+\.?[0-9]*|[0-9]*\.?[0-9]+)(e-?[0-9]+)?`.
fn number_len(s: &[u8]) -> usize {
    let digits = |from: usize| {
        s[from.min(s.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let a = digits(0);
    let mantissa = if s.get(a) == Some(&b'.') {
        let b = digits(a + 1);
        if a == 0 && b == 0 {
            return 0;
        }
        a + 1 + b
    } else {
        a
    };
    if mantissa == 0 {
        return 0;
    }
    // Only the longest mantissa can be followed by `e`: a shorter one is
    // followed by a digit or the point.
    if s.get(mantissa) == Some(&b'e') {
        let sign = usize::from(s.get(mantissa + 1) == Some(&b'-'));
        let exp = digits(mantissa + 1 + sign);
        if exp > 0 {
            return mantissa + 1 + sign + exp;
        }
    }
    mantissa
}

/// The length of `{symbol}`: `(\\[-,=]|[0-9a-zA-Z_\.:@?])+`.
fn symbol_len(s: &[u8]) -> usize {
    let mut i = 0;
    loop {
        match s.get(i) {
            Some(&b) if is_sym(b) => i += 1,
            Some(b'\\') if matches!(s.get(i + 1), Some(b'-' | b',' | b'=')) => i += 2,
            _ => return i,
        }
    }
}

/// The length of `{literal}`: `#[0-9a-zA-Z_\.\-]+`.
fn literal_len(s: &[u8]) -> usize {
    if s.first() != Some(&b'#') {
        return 0;
    }
    let n = s[1..]
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        .count();
    if n == 0 {
        0
    } else {
        n + 1
    }
}

/// expr.l's `normalize`: a backslash escapes the next character.
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `strtod` of a `{number}`, with perf's refusal of a value out of range
/// (glibc sets `ERANGE` on overflow and on a result that underflows to a
/// subnormal or to zero, and perf's scanner returns an error token then).
fn number_value(text: &str) -> Option<f64> {
    let v: f64 = text.parse().ok()?;
    let nonzero_digits = text
        .split('e')
        .next()
        .is_some_and(|m| m.bytes().any(|b| matches!(b, b'1'..=b'9')));
    if v.is_infinite() || (v != 0.0 && v.abs() < f64::MIN_POSITIVE) || (v == 0.0 && nonzero_digits)
    {
        None
    } else {
        Some(v)
    }
}

/// Scans the whole input.
pub(super) fn lex(input: &str) -> Result<Vec<Lexed>, ExprError> {
    let bytes = input.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        // The candidates in expr.l's order; the first of the longest wins.
        let symbol = symbol_len(rest);
        let number = number_len(rest);
        let literal = literal_len(rest);
        let mut best: Option<(usize, u8)> = None; // (length, rule)
        let mut consider = |len: usize, rule: u8| {
            if len > 0 && best.is_none_or(|(l, _)| len > l) {
                best = Some((len, rule));
            }
        };
        for (i, (word, _)) in KEYWORDS.iter().enumerate() {
            if rest.starts_with(word.as_bytes()) {
                consider(word.len(), i as u8);
            }
        }
        if rest.starts_with(b"NaN") {
            consider(3, 8);
        }
        consider(literal, 9);
        consider(number, 10);
        consider(symbol, 11);
        if b"|^&<>-+*/%(),".contains(&rest[0]) {
            consider(1, 12);
        }
        let Some((len, rule)) = best else {
            // `.`: any other character is skipped (a newline too: flex's
            // default rule copies it out and goes on). Skip a whole UTF-8
            // character, byte by byte as flex would.
            at += input[at..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let text = &input[at..at + len];
        let token = match rule {
            0..=7 => KEYWORDS[rule as usize].1.clone(),
            8 => Token::Number(f64::NAN),
            9 => match ExprLiteral::from_name(text) {
                Some(l) => Token::Literal(l),
                None => {
                    return Err(ExprError::new(
                        input,
                        at,
                        len,
                        format!("the literal `{text}`"),
                        format!(
                            "a literal perf knows ({})",
                            ExprLiteral::ALL.map(ExprLiteral::name).join(", ")
                        ),
                    ))
                }
            },
            10 => match number_value(text) {
                Some(v) => Token::Number(v),
                None => {
                    return Err(ExprError::new(
                        input,
                        at,
                        len,
                        format!("the number `{text}`"),
                        "a number strtod reads without ERANGE (a finite double, not subnormal)"
                            .to_owned(),
                    ))
                }
            },
            11 => Token::Id(normalize(text)),
            _ => Token::Punct(rest[0]),
        };
        out.push(Lexed {
            token,
            offset: at,
            len,
        });
        at += len;
    }
    out.push(Lexed {
        token: Token::End,
        offset: input.len(),
        len: 0,
    });
    Ok(out)
}
