//! The commands of perf's control protocol, as a client writes them and
//! as perf reads them.

/// What perf writes on the ack fd after a command it acknowledges: the
/// four characters `ack\n` and the C string's NUL (`sizeof("ack\n")`, 5
/// bytes; perf 5.9).
pub const ACK: &[u8; 5] = b"ack\n\0";

/// The most bytes perf reads as one command: its buffer is 64 bytes with
/// a NUL kept at the end. A longer line is cut after 63 bytes, and the
/// rest is read as the next command.
pub const MAX_LINE: usize = 63;

/// The tool at the other end: it decides which commands are acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Tool {
    /// `perf stat --control` (perf 5.9): acknowledges every command but
    /// `snapshot`; `stop` is acknowledged and ignored.
    Stat,
    /// `perf record --control` (perf 5.9): acknowledges every command,
    /// `snapshot` after triggering the AUX area snapshot; `stop` ends the
    /// recording as Ctrl-C does.
    Record,
}

/// What `evlist` prints for each event (on the tool's stderr).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EvlistDetail {
    /// `evlist`: the event's name.
    Names,
    /// `evlist -v`: the name and every non-zero attr field
    /// (`NAME: type: 1, size: 136, ...`).
    Verbose,
    /// `evlist -g`: group leaders only, a group as `{leader,member}`.
    Groups,
    /// `evlist -F`: the name and `sample_freq=N` or `sample_period=N`.
    Freq,
}

impl EvlistDetail {
    /// The argument as written after `evlist ` (`""` for [`Names`](Self::Names)).
    pub const fn arg(self) -> &'static str {
        match self {
            EvlistDetail::Names => "",
            EvlistDetail::Verbose => "-v",
            EvlistDetail::Groups => "-g",
            EvlistDetail::Freq => "-F",
        }
    }
}

/// A command a client sends. Each is written as one line (`\n`), in one
/// `write(2)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command<'a> {
    /// `enable` (every event; perf prints `Events enabled`) or
    /// `enable NAME` (the event of that name, perf 5.12; `Event NAME
    /// enabled`, or `failed: can't find 'NAME' event`, acknowledged too).
    Enable(Option<&'a str>),
    /// `disable` / `disable NAME`, as [`Enable`](Self::Enable).
    Disable(Option<&'a str>),
    /// `snapshot`: an AUX area snapshot (`perf record -S`). Only `perf
    /// record` acknowledges it; `perf stat` never does.
    Snapshot,
    /// `evlist` / `evlist -v|-g|-F` (perf 5.12): the events, printed on
    /// the tool's stderr.
    Evlist(EvlistDetail),
    /// `stop` (perf 5.12): `perf record` finishes; `perf stat` acknowledges
    /// it and goes on.
    Stop,
    /// `ping` (perf 5.12): acknowledged, nothing else.
    Ping,
}

impl Command<'_> {
    /// The command word (`enable`, `evlist`, ...).
    pub const fn tag(&self) -> &'static str {
        match self {
            Command::Enable(_) => "enable",
            Command::Disable(_) => "disable",
            Command::Snapshot => "snapshot",
            Command::Evlist(_) => "evlist",
            Command::Stop => "stop",
            Command::Ping => "ping",
        }
    }

    /// The argument, if any (an event name, `-v`).
    pub fn arg(&self) -> Option<&str> {
        match self {
            Command::Enable(name) | Command::Disable(name) => *name,
            Command::Evlist(EvlistDetail::Names) => None,
            Command::Evlist(detail) => Some(detail.arg()),
            _ => None,
        }
    }

    /// Whether `tool` acknowledges this command.
    pub const fn acked_by(&self, tool: Tool) -> bool {
        !matches!((self, tool), (Command::Snapshot, Tool::Stat))
    }

    /// The line as written, `\n` included, into `buf`: its length, or why
    /// perf would not read it as this one command (an argument holding
    /// `\n` or NUL ends the command there; one longer than
    /// [`MAX_LINE`] is cut and its rest read as another command; an empty
    /// name finds no event).
    pub fn encode(&self, buf: &mut [u8; MAX_LINE + 1]) -> Result<usize, &'static str> {
        let tag = self.tag().as_bytes();
        let arg = self.arg().map(str::as_bytes);
        if let Some(a) = arg {
            if a.is_empty() {
                return Err("an empty event name matches no event");
            }
            if a.iter().any(|&b| b == b'\n' || b == 0) {
                return Err("a newline or NUL in the argument would end the command there");
            }
        }
        let len = tag.len() + arg.map_or(0, |a| 1 + a.len());
        if len > MAX_LINE {
            return Err("the command is longer than the 63 bytes perf reads as one");
        }
        buf[..tag.len()].copy_from_slice(tag);
        if let Some(a) = arg {
            buf[tag.len()] = b' ';
            buf[tag.len() + 1..len].copy_from_slice(a);
        }
        buf[len] = b'\n';
        Ok(len + 1)
    }
}

/// One command as perf's reader classifies a line (the bytes before `\n`
/// or NUL, at most [`MAX_LINE`]): by prefix, in perf's order (`enable`,
/// `disable`, `snapshot`, `evlist`, `stop`, `ping`), so `enablex` is an
/// `enable` with a malformed argument and `pingpong` a `ping`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Received<'a> {
    /// `enable`, or `enable NAME` (the bytes after one space, possibly
    /// empty).
    Enable(Option<&'a [u8]>),
    /// `disable` / `disable NAME`.
    Disable(Option<&'a [u8]>),
    /// `snapshot...`.
    Snapshot,
    /// `evlist`, `evlist -v`, `evlist -g`, `evlist -F`.
    Evlist(EvlistDetail),
    /// `stop...`.
    Stop,
    /// `ping...`.
    Ping,
    /// `enable`, `disable` or `evlist` followed by something perf does
    /// not take (`enablex`, `evlist -x`): perf prints `failed: wrong
    /// command` and acknowledges it.
    Malformed(&'static str),
    /// No command word matched (`ack`, `hello`): perf does nothing and
    /// sends no acknowledgement.
    Unsupported,
}

impl<'a> Received<'a> {
    /// Classifies `line` as perf does (`evlist__ctlfd_recv` and the
    /// argument checks after it).
    pub fn parse(line: &'a [u8]) -> Received<'a> {
        // The argument after the tag: none, one after a space, or malformed.
        fn arg(rest: &[u8]) -> Result<Option<&[u8]>, ()> {
            match rest.split_first() {
                None => Ok(None),
                Some((b' ', name)) => Ok(Some(name)),
                Some(_) => Err(()),
            }
        }
        if let Some(rest) = line.strip_prefix(b"enable") {
            return arg(rest).map_or(Received::Malformed("enable"), Received::Enable);
        }
        if let Some(rest) = line.strip_prefix(b"disable") {
            return arg(rest).map_or(Received::Malformed("disable"), Received::Disable);
        }
        if line.starts_with(b"snapshot") {
            return Received::Snapshot;
        }
        if let Some(rest) = line.strip_prefix(b"evlist") {
            return match arg(rest) {
                Ok(None) => Received::Evlist(EvlistDetail::Names),
                Ok(Some(b"-v")) => Received::Evlist(EvlistDetail::Verbose),
                Ok(Some(b"-g")) => Received::Evlist(EvlistDetail::Groups),
                Ok(Some(b"-F")) => Received::Evlist(EvlistDetail::Freq),
                _ => Received::Malformed("evlist"),
            };
        }
        if line.starts_with(b"stop") {
            return Received::Stop;
        }
        if line.starts_with(b"ping") {
            return Received::Ping;
        }
        Received::Unsupported
    }

    /// Whether `tool` acknowledges it (perf 6.1).
    pub const fn acked_by(&self, tool: Tool) -> bool {
        match self {
            Received::Unsupported => false,
            Received::Snapshot => matches!(tool, Tool::Record),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_classifies_by_prefix_in_its_order() {
        assert_eq!(Received::parse(b"enable"), Received::Enable(None));
        assert_eq!(
            Received::parse(b"enable cycles"),
            Received::Enable(Some(b"cycles"))
        );
        assert_eq!(Received::parse(b"enable "), Received::Enable(Some(b"")));
        assert_eq!(Received::parse(b"enablex"), Received::Malformed("enable"));
        assert_eq!(
            Received::parse(b"disable  x"),
            Received::Disable(Some(b" x"))
        );
        assert_eq!(Received::parse(b"snapshotted"), Received::Snapshot);
        assert_eq!(
            Received::parse(b"evlist -g"),
            Received::Evlist(EvlistDetail::Groups)
        );
        assert_eq!(Received::parse(b"evlist -x"), Received::Malformed("evlist"));
        assert_eq!(
            Received::parse(b"evlist -vv"),
            Received::Malformed("evlist")
        );
        assert_eq!(Received::parse(b"pingpong"), Received::Ping);
        assert_eq!(Received::parse(b"stop now"), Received::Stop);
        assert_eq!(Received::parse(b"ack"), Received::Unsupported);
        assert_eq!(Received::parse(b"Enable"), Received::Unsupported);
        assert!(!Received::Snapshot.acked_by(Tool::Stat));
        assert!(Received::Snapshot.acked_by(Tool::Record));
        assert!(Received::Malformed("enable").acked_by(Tool::Stat));
    }

    #[test]
    fn a_client_writes_only_what_perf_reads_as_that_command() {
        let mut buf = [0; MAX_LINE + 1];
        let n = Command::Enable(Some("cycles")).encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"enable cycles\n");
        let n = Command::Evlist(EvlistDetail::Freq)
            .encode(&mut buf)
            .unwrap();
        assert_eq!(&buf[..n], b"evlist -F\n");
        let n = Command::Stop.encode(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"stop\n");
        assert!(Command::Enable(Some("a\nb")).encode(&mut buf).is_err());
        assert!(Command::Enable(Some("")).encode(&mut buf).is_err());
        let long = "x".repeat(MAX_LINE - "enable ".len());
        assert!(Command::Enable(Some(&long)).encode(&mut buf).is_ok());
        let longer = "x".repeat(MAX_LINE - "enable ".len() + 1);
        assert!(Command::Enable(Some(&longer)).encode(&mut buf).is_err());
        // Every command a client can write is read back as itself.
        for cmd in [
            Command::Enable(None),
            Command::Disable(Some("task-clock")),
            Command::Snapshot,
            Command::Evlist(EvlistDetail::Verbose),
            Command::Ping,
        ] {
            let n = cmd.encode(&mut buf).unwrap();
            let back = Received::parse(&buf[..n - 1]);
            assert_eq!(back.acked_by(Tool::Record), cmd.acked_by(Tool::Record));
            assert_ne!(back, Received::Unsupported);
        }
        assert!(!Command::Snapshot.acked_by(Tool::Stat));
    }
}
