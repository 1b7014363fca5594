//! The client: sends commands to a perf-speaking tool and waits for each
//! acknowledgement.

use super::command::{Command, Tool, ACK, MAX_LINE};
use super::error::ControlError;
use perf_event_core::linux::io::{self as os_io, PollFd, POLLERR, POLLHUP, POLLIN};
use perf_event_core::linux::process;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How long [`Client::send`] waits for an acknowledgement unless told
/// otherwise ([`Client::set_deadline`]).
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);

/// The writing end of a control channel: sends [`Command`]s and waits for
/// `ack\n\0` after each, with a deadline, watching the tool's exit when it
/// started the tool ([`Channel::spawn`](super::Channel::spawn)).
#[derive(Debug)]
pub struct Client {
    ctl: File,
    ack: Option<File>,
    tool: Tool,
    child: Option<Child>,
    exit_watch: Option<os_io::Fd>,
    deadline: Duration,
    closed: bool,
    fifos: Option<super::channel::Fifos>,
}

impl Client {
    /// A client on fds the caller holds: `ctl` is written, `ack` (if any)
    /// read. With no ack fd (perf's `--control fd:CTL`), commands are
    /// written and not waited for.
    pub fn from_fds(ctl: OwnedFd, ack: Option<OwnedFd>, tool: Tool) -> Client {
        Client {
            ctl: File::from(ctl),
            ack: ack.map(File::from),
            tool,
            child: None,
            exit_watch: None,
            deadline: DEFAULT_DEADLINE,
            closed: false,
            fifos: None,
        }
    }

    pub(crate) fn with_child(mut self, child: Child) -> Client {
        // A pidfd wakes the wait at the tool's exit (Linux 5.3); before
        // that, the wait polls the child in slices.
        self.exit_watch = process::pidfd_open(child.id() as i32).ok();
        self.child = Some(child);
        self
    }

    pub(crate) fn with_fifos(mut self, fifos: super::channel::Fifos) -> Client {
        self.fifos = Some(fifos);
        self
    }

    /// How long each command waits for its acknowledgement.
    pub fn set_deadline(&mut self, deadline: Duration) {
        self.deadline = deadline;
    }

    /// The tool this client talks to.
    pub fn tool(&self) -> Tool {
        self.tool
    }

    /// The tool, if this client started it.
    pub fn child(&mut self) -> Option<&mut Child> {
        self.child.as_mut()
    }

    /// `enable`: every event of the tool counts from now.
    pub fn enable(&mut self) -> Result<(), ControlError> {
        self.send(Command::Enable(None))
    }

    /// `disable`: no event of the tool counts from now.
    pub fn disable(&mut self) -> Result<(), ControlError> {
        self.send(Command::Disable(None))
    }

    /// Sends `cmd` as one line and waits for its acknowledgement. Refused
    /// here, unsent, when the tool would not acknowledge it or would read
    /// it as something else ([`Command::encode`]).
    pub fn send(&mut self, cmd: Command<'_>) -> Result<(), ControlError> {
        let name = || match cmd.arg() {
            Some(arg) => format!("{} {arg}", cmd.tag()),
            None => cmd.tag().to_string(),
        };
        if self.closed {
            return Err(ControlError::Closed);
        }
        if !cmd.acked_by(self.tool) {
            return Err(ControlError::Refused {
                command: name(),
                why: "this tool never acknowledges it (perf stat: snapshot)",
            });
        }
        let mut line = [0u8; MAX_LINE + 1];
        let len = cmd.encode(&mut line).map_err(|why| ControlError::Refused {
            command: name(),
            why,
        })?;
        self.send_line(&line[..len]).map_err(|e| e.named(name()))
    }

    /// Writes `bytes` as they are, in one `write(2)`, and waits for one
    /// acknowledgement: for a tool's conformance tests, which send what a
    /// client must not ([`send`](Self::send) refuses it). The error of a
    /// line no tool acknowledges is a [`ControlError::Timeout`].
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), ControlError> {
        if self.closed {
            return Err(ControlError::Closed);
        }
        let name = String::from_utf8_lossy(bytes).into_owned();
        self.send_line(bytes).map_err(|e| e.named(name))
    }

    fn send_line(&mut self, line: &[u8]) -> Result<(), Unnamed> {
        match self.ctl.write(line) {
            Ok(n) if n == line.len() => {}
            Ok(_) => {
                return Err(Unnamed::Io(
                    "short write of the command",
                    ErrorKind::WriteZero.into(),
                ))
            }
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.closed = true;
                return Err(Unnamed::HungUp);
            }
            Err(e) => return Err(Unnamed::Io("write", e)),
        }
        if self.ack.is_none() {
            return Ok(());
        }
        self.wait_ack().inspect_err(|e| {
            if !matches!(e, Unnamed::Io(..)) {
                self.closed = true;
            }
        })
    }

    /// Reads the 5 bytes of `ack\n\0` before the deadline, waking at the
    /// tool's exit.
    fn wait_ack(&mut self) -> Result<(), Unnamed> {
        let start = Instant::now();
        let mut got = [0u8; ACK.len()];
        let mut have = 0;
        while have < ACK.len() {
            let left = self.deadline.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(Unnamed::Timeout(start.elapsed()));
            }
            // Without a pidfd, look at the child every 50 ms.
            let slice = if self.child.is_some() && self.exit_watch.is_none() {
                left.min(Duration::from_millis(50))
            } else {
                left
            };
            let ack = self.ack.as_ref().expect("checked by the caller");
            let mut fds = [
                PollFd::from_fd(ack.as_fd(), POLLIN),
                PollFd::from_fd(ack.as_fd(), POLLIN),
            ];
            let n = match &self.exit_watch {
                Some(w) => {
                    fds[1] = PollFd::from_fd(w.as_fd(), POLLIN);
                    2
                }
                None => 1,
            };
            let ms = slice.as_millis().clamp(1, i32::MAX as u128) as i32;
            match os_io::poll(&mut fds[..n], ms) {
                Ok(_) => {}
                Err(e) if e.0 == perf_event_core::linux::errno::EINTR => continue,
                Err(e) => return Err(Unnamed::Io("poll", std::io::Error::from_raw_os_error(e.0))),
            }
            let ready = fds[0].revents();
            if ready & (POLLIN | POLLHUP | POLLERR) != 0 {
                match self.ack.as_ref().unwrap().read(&mut got[have..]) {
                    Ok(0) => return Err(self.gone()),
                    Ok(n) => {
                        have += n;
                        if got[..have] != ACK[..have] {
                            return Err(Unnamed::BadReply(got[..have].to_vec()));
                        }
                        continue;
                    }
                    Err(e)
                        if e.kind() == ErrorKind::WouldBlock
                            || e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return Err(Unnamed::Io("read the acknowledgement", e)),
                }
            }
            if let Some(status) = self.exited()? {
                return Err(Unnamed::Exited(status));
            }
        }
        Ok(())
    }

    /// The ack fd reached end of file: the tool's exit if it was ours and
    /// has exited, a hang-up otherwise.
    fn gone(&mut self) -> Unnamed {
        if let Some(child) = &mut self.child {
            if let Ok(status) = child.wait() {
                return Unnamed::Exited(status);
            }
        }
        Unnamed::HungUp
    }

    fn exited(&mut self) -> Result<Option<ExitStatus>, Unnamed> {
        match &mut self.child {
            Some(child) => child
                .try_wait()
                .map_err(|e| Unnamed::Io("wait for the tool", e)),
            None => Ok(None),
        }
    }

    /// Closes the channel (the tool sees `POLLHUP` on its control fd and
    /// stops listening, as perf does) and, if this client started the
    /// tool, waits for it to exit: its status.
    pub fn finish(mut self) -> Result<Option<ExitStatus>, ControlError> {
        let child = self.child.take();
        drop(self);
        match child {
            Some(mut child) => child
                .wait()
                .map(Some)
                .map_err(|e| ControlError::io("wait for the tool", e)),
            None => Ok(None),
        }
    }
}

/// An error before the command's name is attached.
enum Unnamed {
    Timeout(Duration),
    Exited(ExitStatus),
    HungUp,
    BadReply(Vec<u8>),
    Io(&'static str, std::io::Error),
}

impl Unnamed {
    fn named(self, command: String) -> ControlError {
        match self {
            Unnamed::Timeout(waited) => ControlError::Timeout { command, waited },
            Unnamed::Exited(status) => ControlError::Exited { command, status },
            Unnamed::HungUp => ControlError::HungUp { command },
            Unnamed::BadReply(reply) => ControlError::BadReply { command, reply },
            Unnamed::Io(what, error) => ControlError::io(format!("{what} ({command})"), error),
        }
    }
}
