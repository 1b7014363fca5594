//! Reading Rust source without parsing it, for the tests that check the
//! tree's code: comments and the insides of literals blanked out (lines
//! kept), brackets matched, words found, and the functions with a body
//! (name, body, whether it returns `()`, whether it is a `#[test]`).

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
pub(super) fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` with comments and the insides of string and char literals made
/// spaces (lines kept), so braces and words in them do not count.
pub(super) fn blank(text: &str) -> Vec<char> {
    let c: Vec<char> = text.chars().collect();
    let mut out = c.clone();
    let wipe = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in out.iter_mut().take(to.min(c.len())).skip(from) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let ident = |i: usize| i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        if at(i) == '/' && at(i + 1) == '/' {
            let end = (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len());
            wipe(&mut out, i, end);
            i = end;
        } else if at(i) == '/' && at(i + 1) == '*' {
            let (mut depth, mut k) = (0, i);
            while k < c.len() {
                if at(k) == '/' && at(k + 1) == '*' {
                    depth += 1;
                    k += 2;
                } else if at(k) == '*' && at(k + 1) == '/' {
                    depth -= 1;
                    k += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    k += 1;
                }
            }
            wipe(&mut out, i, k);
            i = k;
        } else if at(i) == 'r' && (at(i + 1) == '"' || at(i + 1) == '#') && {
            // A raw string: r"..", r#".."#, br"..", cr"..".
            let before = if i > 0 && matches!(c[i - 1], 'b' | 'c') {
                i - 1
            } else {
                i
            };
            !ident(before)
        } {
            let hashes = (i + 1..c.len()).take_while(|&k| c[k] == '#').count();
            let open = i + 1 + hashes;
            if at(open) != '"' {
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let mut k = open + 1;
            while k < c.len() && !c[k..].starts_with(&close) {
                k += 1;
            }
            wipe(&mut out, open + 1, k);
            i = k + close.len();
        } else if at(i) == '"' {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            wipe(&mut out, i + 1, k);
            i = k + 1;
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal ('{', '\'', '\n'); a lifetime has no closing quote.
            let mut k = i + 1;
            while k < c.len() && c[k] != '\'' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            wipe(&mut out, i + 1, k);
            i = k + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The index of the bracket that closes the one at `open`.
fn closing(c: &[char], open: usize) -> usize {
    let mut depth = 0;
    for (k, &ch) in c.iter().enumerate().skip(open) {
        match ch {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    c.len()
}

/// Whether the word `w` starts at `i` (not inside a longer identifier).
pub(super) fn word_at(c: &[char], i: usize, w: &str) -> bool {
    let is_id = |ch: char| ch.is_alphanumeric() || ch == '_';
    w.chars()
        .enumerate()
        .all(|(k, ch)| c.get(i + k) == Some(&ch))
        && (i == 0 || !is_id(c[i - 1]))
        && !c.get(i + w.chars().count()).copied().is_some_and(is_id)
}

/// The identifier starting at `i`.
fn ident_at(c: &[char], i: usize) -> String {
    c[i..]
        .iter()
        .take_while(|ch| ch.is_alphanumeric() || **ch == '_')
        .collect()
}

/// One function of a file.
pub(super) struct Func {
    /// `name`, or `Type::name` inside `impl Type`.
    pub(super) name: String,
    /// Where its `fn` is.
    pub(super) start: usize,
    /// Its body's braces.
    pub(super) body: (usize, usize),
    /// It returns `()` (no `->`).
    pub(super) unit: bool,
    /// It has `#[test]`.
    pub(super) test: bool,
}

/// The functions with a body in blanked text `c`.
pub(super) fn functions(c: &[char]) -> Vec<Func> {
    // `impl ... Type {` spans, for qualified names.
    let mut impls = Vec::new();
    for i in 0..c.len() {
        if word_at(c, i, "impl") {
            let Some(open) = (i..c.len()).find(|&k| c[k] == '{' || c[k] == ';') else {
                continue;
            };
            if c[open] == ';' {
                continue;
            }
            let head: String = c[i + 4..open].iter().collect();
            let ty = head.rsplit(" for ").next().unwrap_or(&head);
            let ty = ty.split('<').next().unwrap_or(ty).trim();
            let ty = ty.rsplit("::").next().unwrap_or(ty).to_owned();
            impls.push((open, closing(c, open), ty));
        }
    }
    let mut out = Vec::new();
    for i in 0..c.len() {
        if !word_at(c, i, "fn") {
            continue;
        }
        let mut n = i + 2;
        while n < c.len() && c[n].is_whitespace() {
            n += 1;
        }
        let name = ident_at(c, n);
        if name.is_empty() {
            continue; // `fn(` in a type
        }
        let mut depth = 0i32;
        let mut open = None;
        for (k, &ch) in c.iter().enumerate().skip(n) {
            match ch {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '{' if depth == 0 => {
                    open = Some(k);
                    break;
                }
                ';' if depth == 0 => break,
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let signature: String = c[n..open].iter().collect();
        // The attributes since the previous item.
        let item_start = (0..i)
            .rev()
            .find(|&k| matches!(c[k], ';' | '{' | '}'))
            .map_or(0, |k| k + 1);
        let attrs: String = c[item_start..i].iter().collect();
        let qualified = impls
            .iter()
            .filter(|(o, e, _)| *o < i && i < *e)
            .max_by_key(|(o, _, _)| *o)
            .map_or(name.clone(), |(_, _, ty)| format!("{ty}::{name}"));
        out.push(Func {
            name: qualified,
            start: i,
            body: (open, closing(c, open)),
            unit: !signature.contains("->"),
            test: attrs.contains("#[test]"),
        });
    }
    out
}
