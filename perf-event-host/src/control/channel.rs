//! A control channel before its tool starts: the `--control` argument for
//! the tool, the environment for a workload that drives it itself, and
//! the client's ends.

use super::client::Client;
use super::command::Tool;
use super::error::ControlError;
use perf_event_core::linux::errno::Errno;
use perf_event_core::linux::io::{self as os_io, Fd};
use perf_event_core::linux::process;
use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The environment variables that hand a channel to the workload, read by
/// [`Region::from_env`](super::Region::from_env): the fd numbers the
/// workload writes commands to and reads acknowledgements from (the
/// convention harness scripts use with `--control fd:`), ...
pub const ENV_FDS: [&str; 2] = ["PERF_CTL_FD", "PERF_CTL_ACK_FD"];
/// ... or the paths of the two FIFOs (with `--control fifo:`).
pub const ENV_FIFOS: [&str; 2] = ["PERF_CTL_FIFO", "PERF_ACK_FIFO"];

/// A control channel made before the tool starts: pipes (`--control
/// fd:N,M`), a socket pair (`fd:N,N`) or two FIFOs (`--control
/// fifo:CTL,ACK`). Put
/// [`control_arg`](Self::control_arg) on the tool's command line, then
/// [`spawn`](Self::spawn) the tool (or [`attach`](Self::attach) to one
/// started elsewhere) to get the [`Client`].
#[derive(Debug)]
pub struct Channel {
    kind: Kind,
    /// The client's ends made inheritable for the workload
    /// ([`workload_env`](Self::workload_env)), dropped at the spawn.
    workload: Option<(Fd, Fd)>,
}

#[derive(Debug)]
enum Kind {
    Pipes {
        /// The tool's ends, inheritable until the spawn: the command pipe's
        /// read end and the ack pipe's write end.
        tool: Option<(Fd, Fd)>,
        /// The client's: the command pipe's write end, the ack pipe's read end.
        ctl: OwnedFd,
        ack: OwnedFd,
    },
    /// One socket pair for both directions (`fd:N,N`).
    Socket {
        /// The tool's end, inheritable until the spawn.
        tool: Fd,
        client: std::os::unix::net::UnixStream,
    },
    Fifos(Fifos),
}

/// Two FIFOs this process made, removed when dropped.
#[derive(Debug)]
pub(crate) struct Fifos {
    ctl: PathBuf,
    ack: PathBuf,
}

impl Drop for Fifos {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.ctl);
        let _ = std::fs::remove_file(&self.ack);
    }
}

fn io_err(what: String, e: Errno) -> ControlError {
    ControlError::io(what, std::io::Error::from_raw_os_error(e.0))
}

fn c_path(path: &Path) -> Result<CString, ControlError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| ControlError::Arg {
        arg: path.display().to_string(),
        why: "a path with a NUL byte",
    })
}

/// Opens a FIFO as perf does (read-write, non-blocking).
pub(crate) fn open_fifo(path: &Path) -> Result<OwnedFd, ControlError> {
    os_io::open_fifo(&c_path(path)?)
        .map(OwnedFd::from)
        .map_err(|e| io_err(format!("open {}", path.display()), e))
}

impl Channel {
    /// Two pipes; the tool's ends stay inheritable until
    /// [`spawn`](Self::spawn) (a process any thread starts meanwhile
    /// inherits them too).
    pub fn pipes() -> Result<Channel, ControlError> {
        let (ctl_read, ctl_write) = process::pipe().map_err(|e| io_err("pipe".into(), e))?;
        let (ack_read, ack_write) = process::pipe().map_err(|e| io_err("pipe".into(), e))?;
        let inheritable = |fd: Fd| {
            os_io::dup_inheritable(OwnedFd::from(fd).as_fd()).map_err(|e| io_err("dup".into(), e))
        };
        let tool = (inheritable(ctl_read)?, inheritable(ack_write)?);
        Ok(Channel {
            kind: Kind::Pipes {
                tool: Some(tool),
                ctl: ctl_write.into(),
                ack: ack_read.into(),
            },
            workload: None,
        })
    }

    /// One connected socket pair (`socketpair(2)`, `AF_UNIX`): the tool
    /// reads commands from its end and writes acknowledgements to it
    /// (`--control fd:N,N`). Its end stays inheritable until
    /// [`spawn`](Self::spawn), as with [`pipes`](Self::pipes).
    pub fn socket_pair() -> Result<Channel, ControlError> {
        let (client, tool) = std::os::unix::net::UnixStream::pair()
            .map_err(|e| ControlError::io("socketpair", e))?;
        let tool = os_io::dup_inheritable(tool.as_fd()).map_err(|e| io_err("dup".into(), e))?;
        Ok(Channel {
            kind: Kind::Socket { tool, client },
            workload: None,
        })
    }

    /// Two new FIFOs at `ctl` and `ack` (mode 0600), removed when the
    /// channel or its client is dropped. `EEXIST` if a path exists.
    pub fn fifos(ctl: &Path, ack: &Path) -> Result<Channel, ControlError> {
        let (ctl_c, ack_c) = (c_path(ctl)?, c_path(ack)?);
        os_io::mkfifo(&ctl_c, 0o600).map_err(|e| io_err(format!("mkfifo {}", ctl.display()), e))?;
        if let Err(e) = os_io::mkfifo(&ack_c, 0o600) {
            let _ = std::fs::remove_file(ctl);
            return Err(io_err(format!("mkfifo {}", ack.display()), e));
        }
        Ok(Channel {
            kind: Kind::Fifos(Fifos {
                ctl: ctl.to_path_buf(),
                ack: ack.to_path_buf(),
            }),
            workload: None,
        })
    }

    /// The value of the tool's `--control` option: `fd:N,M` or
    /// `fifo:CTL,ACK`.
    pub fn control_arg(&self) -> String {
        match &self.kind {
            Kind::Pipes { tool, .. } => match tool {
                Some((ctl, ack)) => format!("fd:{},{}", ctl.raw(), ack.raw()),
                None => String::new(),
            },
            Kind::Socket { tool, .. } => format!("fd:{0},{0}", tool.raw()),
            Kind::Fifos(f) => format!("fifo:{},{}", f.ctl.display(), f.ack.display()),
        }
    }

    /// The environment that hands the channel to the tool's workload, for
    /// a workload that marks its own region
    /// ([`Region::from_env`](super::Region::from_env)): the FIFOs' paths,
    /// or the client's pipe ends made inheritable under their numbers.
    /// One side drives a channel: the workload, or this process's client.
    pub fn workload_env(&mut self) -> Result<Vec<(&'static str, String)>, ControlError> {
        match &self.kind {
            Kind::Fifos(f) => Ok(vec![
                (ENV_FIFOS[0], f.ctl.display().to_string()),
                (ENV_FIFOS[1], f.ack.display().to_string()),
            ]),
            Kind::Pipes { .. } | Kind::Socket { .. } => {
                if self.workload.is_none() {
                    let dup = |fd: BorrowedFd<'_>| {
                        os_io::dup_inheritable(fd).map_err(|e| io_err("dup".into(), e))
                    };
                    self.workload = Some(match &self.kind {
                        Kind::Pipes { ctl, ack, .. } => (dup(ctl.as_fd())?, dup(ack.as_fd())?),
                        Kind::Socket { client, .. } => (dup(client.as_fd())?, dup(client.as_fd())?),
                        Kind::Fifos(_) => unreachable!(),
                    });
                }
                let (c, a) = self.workload.as_ref().unwrap();
                Ok(vec![
                    (ENV_FDS[0], c.raw().to_string()),
                    (ENV_FDS[1], a.raw().to_string()),
                ])
            }
        }
    }

    /// Starts the tool (`cmd`, with [`control_arg`](Self::control_arg)
    /// on its command line), closes this process's copies of the tool's
    /// ends, and returns the client, which watches the tool's exit.
    pub fn spawn(
        self,
        cmd: &mut std::process::Command,
        tool: Tool,
    ) -> Result<Client, ControlError> {
        let child = cmd
            .spawn()
            .map_err(|e| ControlError::io(format!("start {:?}", cmd.get_program()), e))?;
        Ok(self.attach(tool)?.with_child(child))
    }

    /// The client of a tool started elsewhere (with
    /// [`control_arg`](Self::control_arg)); the tool's ends are closed
    /// here.
    pub fn attach(self, tool: Tool) -> Result<Client, ControlError> {
        match self.kind {
            Kind::Pipes { ctl, ack, .. } => Ok(Client::from_fds(ctl, Some(ack), tool)),
            Kind::Socket { client, .. } => {
                let ctl = client
                    .try_clone()
                    .map_err(|e| ControlError::io("dup the socket", e))?;
                Ok(Client::from_fds(ctl.into(), Some(client.into()), tool))
            }
            Kind::Fifos(fifos) => {
                let ctl = open_fifo(&fifos.ctl)?;
                let ack = open_fifo(&fifos.ack)?;
                Ok(Client::from_fds(ctl, Some(ack), tool).with_fifos(fifos))
            }
        }
    }
}
