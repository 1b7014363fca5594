//! Tracepoints: `system:event`, and wildcards expanded against the tracefs
//! as the perf tool does (`syscalls:sys_enter_w*`, `sched:*`, `*:*`,
//! `*:sched_switch`; `*` any run of characters, `?` one character).

use super::error::{ErrorKind, ParseError};
use super::event::{Base, Parser};
use super::Resolver;
use crate::sysfs::{Problem, SysfsError, Tracefs, TracepointError};
use perf_event_core::attr::Attr;
use perf_event_core::event::Event;
use std::path::Path;

/// One tracepoint of a tracefs, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracepointName {
    /// `system:event`, as perf names the event.
    pub full: String,
    /// The length of the system part of `full`.
    system_len: usize,
}

impl TracepointName {
    /// The tracepoint `system:event`.
    pub fn new(system: &str, event: &str) -> TracepointName {
        TracepointName {
            full: format!("{system}:{event}"),
            system_len: system.len(),
        }
    }

    /// The system (`sched`).
    pub fn system(&self) -> &str {
        &self.full[..self.system_len]
    }

    /// The event (`sched_switch`).
    pub fn event(&self) -> &str {
        &self.full[self.system_len + 1..]
    }
}

/// Every tracepoint under `<tracefs>/events`, in tracefs's own order, as
/// perf 6.1 expands a wildcard (it keeps `readdir(3)`'s order, which for
/// tracefs follows the event ids): events of a system by their `id`, the
/// systems by their smallest event id; names break ties and order events
/// whose `id` cannot be read (after those with one). The files `enable`,
/// `filter`, `header_page`, `header_event` are not tracepoints; only
/// directories are.
pub fn list_tracepoints(tracefs: &Tracefs) -> Result<Vec<TracepointName>, TracepointError> {
    let events = tracefs.root().join("events");
    let dirs = |path: &Path| -> Result<Vec<String>, TracepointError> {
        let entries = std::fs::read_dir(path)
            .map_err(|e| TracepointError::File(SysfsError::new(path, Problem::Io(e))))?;
        Ok(entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .collect())
    };
    let id = |path: &Path| -> u64 {
        std::fs::read_to_string(path.join("id"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(u64::MAX)
    };
    let mut systems = Vec::new();
    for system in dirs(&events)? {
        let dir = events.join(&system);
        let mut list: Vec<(u64, String)> = dirs(&dir)?
            .into_iter()
            .map(|event| (id(&dir.join(&event)), event))
            .collect();
        list.sort();
        let first = list.first().map_or(u64::MAX, |(id, _)| *id);
        systems.push((first, system, list));
    }
    systems.sort();
    let mut out = Vec::new();
    for (_, system, list) in systems {
        for (_, event) in list {
            out.push(TracepointName::new(&system, &event));
        }
    }
    Ok(out)
}

/// Shell-style matching of `pattern` (`*`, `?`) against all of `text`.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == b'?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

impl<'s, 'r, R: Resolver + ?Sized> Parser<'s, 'r, R> {
    /// `system:event` (either may be a glob); `e_at`: where `event` starts.
    pub(super) fn tracepoint(
        &self,
        start: usize,
        system: &str,
        e_at: usize,
        event: &str,
    ) -> Result<Vec<Base<'s, 'r>>, ParseError> {
        let len = e_at + event.len() - start;
        if event.is_empty() {
            return Err(self.error(
                e_at,
                1,
                ErrorKind::Unexpected {
                    expected: "a tracepoint name or modifiers after `:`",
                },
            ));
        }
        let fail =
            |e: TracepointError| self.error(start, len, ErrorKind::Tracepoint(e.to_string()));
        if !system.contains(['*', '?']) && !event.contains(['*', '?']) {
            let id = self.resolver.tracepoint_id(system, event).map_err(fail)?;
            return Ok(vec![Base::plain(Attr::new(Event::Tracepoint(id)))]);
        }
        let mut bases = Vec::new();
        for tp in self.resolver.tracepoints().map_err(fail)? {
            if !(glob_match(system, tp.system()) && glob_match(event, tp.event())) {
                continue;
            }
            // A directory without a readable id is no tracepoint (perf skips it).
            let Ok(id) = self.resolver.tracepoint_id(tp.system(), tp.event()) else {
                continue;
            };
            let mut base = Base::plain(Attr::new(Event::Tracepoint(id)));
            base.expanded = Some(tp.full.as_str());
            bases.push(base);
        }
        if bases.is_empty() {
            return Err(self.error(start, len, ErrorKind::NoMatch));
        }
        Ok(bases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_like_fnmatch() {
        assert!(glob_match("sys_enter_w*", "sys_enter_write"));
        assert!(glob_match("*", ""));
        assert!(glob_match("*:*", "a:b"));
        assert!(glob_match("s?s*", "sys_enter"));
        assert!(glob_match("*_switch", "sched_switch"));
        assert!(glob_match("a*b*c", "aXXbYYbc"));
        assert!(!glob_match("sys_enter_w*", "sys_exit_write"));
        assert!(!glob_match("?", ""));
        assert!(!glob_match("abc", "abcd"));
        let tp = TracepointName::new("sched", "sched_switch");
        assert_eq!((tp.system(), tp.event()), ("sched", "sched_switch"));
    }
}
