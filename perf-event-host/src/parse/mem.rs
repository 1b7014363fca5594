//! `mem:ADDR[/LEN][:rwx][/terms/][mods]` hardware breakpoints
//! (`PERF_TYPE_BREAKPOINT`, since Linux 2.6.33), as the perf tool reads
//! them: access `rw` and length 4 by default; length `sizeof(long)` for
//! `x`. The `:rwx/LEN` order is accepted too; config terms follow in slashes
//! as in current perf (`mem:0x1000/8/name=watch/u`).

use super::error::{ErrorKind, ParseError};
use super::event::{Base, Parser};
use super::Resolver;
use crate::sysfs::parse_number;
use perf_event_core::attr::Attr;
use perf_event_core::event::{BreakpointType, Event};

impl<'s, 'r, R: Resolver + ?Sized> Parser<'s, 'r, R> {
    /// The current byte is the `:` after `mem`.
    pub(super) fn breakpoint(
        &mut self,
        start: usize,
        group_first: Option<usize>,
    ) -> Result<(), ParseError> {
        self.at += 1;
        let (a_at, addr) = self.token();
        let addr = parse_number(addr).map_err(|_| {
            self.error(
                a_at,
                addr.len().max(1),
                ErrorKind::Breakpoint {
                    why: "expected an address after `mem:` (0x hex or decimal, 64 bits)",
                },
            )
        })?;
        let mut len = None;
        let mut kind = None;
        loop {
            match self.peek() {
                Some(b'/') if len.is_none() => {
                    let slash = self.at;
                    self.at += 1;
                    let (l_at, text) = self.token();
                    if !text.bytes().next().is_some_and(|b| b.is_ascii_digit()) {
                        // Not a length: the `/terms/` of current perf.
                        self.at = slash;
                        break;
                    }
                    let n = parse_number(text).ok().filter(|n| (1..=8).contains(n));
                    let Some(n) = n else {
                        return Err(self.error(l_at, text.len().max(1), ErrorKind::Breakpoint {
                            why: "expected a length of 1 to 8 bytes after `/` (x86 takes 1, 2, 4, 8)",
                        }));
                    };
                    len = Some(n);
                }
                Some(b':') if kind.is_none() => {
                    let colon = self.at;
                    self.at += 1;
                    let (k_at, text) = self.token();
                    if text.is_empty() || !text.bytes().all(|b| b"rwx".contains(&b)) {
                        self.at = colon;
                        break;
                    }
                    kind = Some(self.access(k_at, text)?);
                }
                _ => break,
            }
        }
        let kind = kind.unwrap_or(BreakpointType::ReadWrite);
        let len = len.unwrap_or(if kind == BreakpointType::Execute {
            core::mem::size_of::<usize>() as u64
        } else {
            4
        });
        let mut base = Base::plain(Attr::new(Event::Breakpoint { kind, addr, len }));
        let (mods_at, modifiers) = if self.peek() == Some(b'/') {
            let (terms, mods_at, modifiers) = self.term_list()?;
            self.config_terms_only(&mut base, &terms)?;
            (mods_at, modifiers)
        } else {
            self.trailing_modifiers()?
        };
        self.push(start, vec![base], modifiers, mods_at, group_first)
    }

    /// `r`, `w`, `rw` (any order) or `x`.
    fn access(&self, at: usize, text: &str) -> Result<BreakpointType, ParseError> {
        let (mut r, mut w, mut x) = (false, false, false);
        for (i, b) in text.bytes().enumerate() {
            let slot = match b {
                b'r' => &mut r,
                b'w' => &mut w,
                _ => &mut x,
            };
            if core::mem::replace(slot, true) {
                return Err(self.error(
                    at + i,
                    1,
                    ErrorKind::Breakpoint {
                        why: "access letter given twice",
                    },
                ));
            }
        }
        Ok(match (r, w, x) {
            (true, false, false) => BreakpointType::Read,
            (false, true, false) => BreakpointType::Write,
            (true, true, false) => BreakpointType::ReadWrite,
            (false, false, true) => BreakpointType::Execute,
            _ => {
                return Err(self.error(
                    at,
                    text.len(),
                    ErrorKind::Breakpoint {
                        why: "`x` does not combine with `r` or `w`: the kernel takes r, w, rw or x",
                    },
                ))
            }
        })
    }
}
