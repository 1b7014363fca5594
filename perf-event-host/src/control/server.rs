//! The tool's side: `--control fd:CTL[,ACK]` / `fifo:CTL[,ACK]` read and
//! answered as perf 6.1 does.

use super::channel::open_fifo;
use super::command::{EvlistDetail, Received, Tool, ACK, MAX_LINE};
use super::error::ControlError;
use perf_event_core::linux::io::{self as os_io, POLLERR, POLLHUP, POLLIN};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

/// What a tool does with the commands it receives: its events.
pub trait Events {
    /// Enables every event (`name` `None`) or the event named `name`
    /// (perf's `evsel__name`, compared byte for byte): false when no event
    /// has that name.
    fn enable(&mut self, name: Option<&[u8]>) -> bool;
    /// Disables every event or the one named `name`, as [`enable`](Self::enable).
    fn disable(&mut self, name: Option<&[u8]>) -> bool;
    /// Writes the event list as perf's `evlist` does: one line per event
    /// (`\n` ended), per [`EvlistDetail`].
    fn evlist(&self, detail: EvlistDetail, out: &mut dyn Write) -> std::io::Result<()>;
    /// Triggers an AUX area snapshot (`perf record -S`); `perf record`
    /// acknowledges `snapshot` after this returns. Nothing by default.
    fn snapshot(&mut self) {}
}

/// The control fd of a tool, and its ack fd if it has one, read and
/// answered as perf 6.1 reads and answers them: one byte per `read(2)`,
/// a command ending at `\n`, NUL, 63 bytes, end of file or (on a
/// non-blocking fd) `EAGAIN`; commands matched by prefix; the
/// acknowledgement `ack\n\0` after every command the tool acknowledges
/// ([`Received::acked_by`]); messages on the log as perf prints them
/// (`Events enabled`); and a hang-up (`POLLHUP`) ends the listening.
#[derive(Debug)]
pub struct Server {
    ctl: Option<File>,
    ack: Option<File>,
    tool: Tool,
    line: [u8; MAX_LINE],
}

impl Server {
    /// The channel of `--control ARG`, parsed as perf parses it:
    /// `fd:CTL[,ACK]` (numbers as C's `strtoul(.., 0)` reads them:
    /// decimal, `0x` hex, `0` octal) names fds this process inherited,
    /// used as they are (blocking or not); `fifo:CTL[,ACK]` opens two
    /// FIFOs read-write and non-blocking.
    pub fn open(arg: &str, tool: Tool) -> Result<Server, ControlError> {
        let bad = |why| ControlError::Arg {
            arg: arg.to_string(),
            why,
        };
        let (ctl, ack) = if let Some(fds) = arg.strip_prefix("fd:") {
            let (ctl, rest) = strtoul(fds).ok_or(bad("fd: needs an fd number"))?;
            let ack = match fds.find(',') {
                None => None,
                Some(comma) => {
                    if comma != fds.len() - rest.len() {
                        return Err(bad("fd:CTL,ACK: a comma right after the control fd"));
                    }
                    match strtoul(&fds[comma + 1..]) {
                        Some((n, "")) => Some(n),
                        _ => return Err(bad("fd:CTL,ACK: the ack fd is not a number")),
                    }
                }
            };
            let fd = |n: u64| -> Result<OwnedFd, ControlError> {
                os_io::dup_inherited(n as i32)
                    .map(OwnedFd::from)
                    .map_err(|e| {
                        ControlError::io(format!("fd {n}"), std::io::Error::from_raw_os_error(e.0))
                    })
            };
            (fd(ctl)?, ack.map(fd).transpose()?)
        } else if let Some(paths) = arg.strip_prefix("fifo:") {
            if paths.is_empty() || paths.starts_with(',') {
                return Err(bad("fifo: needs the control FIFO's path"));
            }
            let (ctl, ack) = match paths.split_once(',') {
                Some((ctl, ack)) => (ctl, Some(ack).filter(|a| !a.is_empty())),
                None => (paths, None),
            };
            let ctl = open_fifo(Path::new(ctl))?;
            (ctl, ack.map(|a| open_fifo(Path::new(a))).transpose()?)
        } else {
            return Err(bad("expected fd:CTL[,ACK] or fifo:CTL[,ACK]"));
        };
        Ok(Server {
            ctl: Some(File::from(ctl)),
            ack: ack.map(File::from),
            tool,
            line: [0; MAX_LINE],
        })
    }

    /// The fd to poll for `POLLIN` (with the tool's other fds), until the
    /// channel hangs up.
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.ctl.as_ref().map(|f| f.as_fd())
    }

    /// After a poll that reported `revents` on [`fd`](Self::fd): reads one
    /// command (on `POLLIN`), acts on it through `events`, writes perf's
    /// message on `log`, acknowledges it if the tool does, and stops
    /// listening on `POLLHUP` or `POLLERR` (after that read, as perf does:
    /// commands still buffered behind it are not read). The command, or
    /// `None` when no bytes were read.
    pub fn serve(
        &mut self,
        revents: i16,
        events: &mut dyn Events,
        log: &mut dyn Write,
    ) -> Option<Received<'_>> {
        let mut len = 0;
        if revents & POLLIN != 0 {
            len = self.read_line(log);
        }
        if revents & (POLLHUP | POLLERR) != 0 {
            self.ctl = None;
        }
        if len == 0 {
            return None;
        }
        let got = Received::parse(&self.line[..len]);
        let _ = match got {
            Received::Enable(name) => toggle(events, name, true, log),
            Received::Disable(name) => toggle(events, name, false, log),
            Received::Malformed(_) => log.write_all(b"failed: wrong command\n"),
            Received::Evlist(detail) => events.evlist(detail, log),
            Received::Snapshot if self.tool == Tool::Record => {
                events.snapshot();
                Ok(())
            }
            _ => Ok(()),
        };
        if got.acked_by(self.tool) {
            if let Some(ack) = &mut self.ack {
                if let Err(e) = ack.write_all(ACK) {
                    let _ = writeln!(log, "failed to write to ctl_ack_fd: {e}");
                }
            }
        }
        Some(got)
    }

    /// perf's `evlist__ctlfd_recv`: one byte per read into `line`.
    fn read_line(&mut self, log: &mut dyn Write) -> usize {
        let Some(ctl) = &mut self.ctl else { return 0 };
        let mut len = 0;
        let mut byte = [0u8];
        while len < MAX_LINE {
            match ctl.read(&mut byte) {
                Ok(0) => break,
                Ok(_) if byte[0] == b'\n' || byte[0] == 0 => break,
                Ok(_) => {
                    self.line[len] = byte[0];
                    len += 1;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => {
                    let _ = writeln!(log, "Failed to read from ctlfd: {e}");
                    break;
                }
            }
        }
        len
    }
}

/// `enable` / `disable`, all or by name, with perf's message.
fn toggle(
    events: &mut dyn Events,
    name: Option<&[u8]>,
    on: bool,
    log: &mut dyn Write,
) -> std::io::Result<()> {
    let found = if on {
        events.enable(name)
    } else {
        events.disable(name)
    };
    let state = if on { "enabled" } else { "disabled" };
    match name {
        None => writeln!(log, "Events {state}"),
        Some(name) if found => {
            log.write_all(b"Event ")?;
            log.write_all(name)?;
            writeln!(log, " {state}")
        }
        Some(name) => {
            log.write_all(b"failed: can't find '")?;
            log.write_all(name)?;
            log.write_all(b"' event\n")
        }
    }
}

/// C's `strtoul(s, &end, 0)` on what perf's `fd:` numbers hold: leading
/// white space, an optional sign, then decimal, `0x` hex or `0` octal.
/// The value (negated as strtoul does for `-`) and the rest, or `None`
/// when no digit was read.
fn strtoul(s: &str) -> Option<(u64, &str)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = if let Some(hex) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        if hex.starts_with(|c: char| c.is_ascii_hexdigit()) {
            (16, hex)
        } else {
            (8, t) // "0x" with no hex digit: the "0" alone.
        }
    } else if t.starts_with('0') {
        (8, t)
    } else {
        (10, t)
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    let mut v: u64 = 0;
    for c in digits[..end].chars() {
        v = v
            .saturating_mul(radix as u64)
            .saturating_add(c.to_digit(radix).unwrap() as u64);
    }
    Some((if neg { v.wrapping_neg() } else { v }, &digits[end..]))
}

#[cfg(test)]
mod tests {
    use super::strtoul;

    #[test]
    fn fd_numbers_read_as_strtoul_base_0() {
        assert_eq!(strtoul("5,6"), Some((5, ",6")));
        assert_eq!(strtoul("0x1f"), Some((31, "")));
        assert_eq!(strtoul("010"), Some((8, "")));
        assert_eq!(strtoul(" 7x"), Some((7, "x")));
        assert_eq!(strtoul("0"), Some((0, "")));
        assert_eq!(strtoul("0xg"), Some((0, "xg")));
        assert_eq!(strtoul(",6"), None);
        assert_eq!(strtoul(""), None);
        assert_eq!(strtoul("-1"), Some((u64::MAX, "")));
    }
}
