//! What can go wrong on a control channel.

use std::fmt;
use std::process::ExitStatus;
use std::time::Duration;

/// Why a control command was not sent or not acknowledged, or a channel
/// not set up. Each says which command and what to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum ControlError {
    /// Refused here, unsent: the tool would not acknowledge it (`snapshot`
    /// to `perf stat`), or would read it as something else (an argument
    /// with a newline, over 63 bytes).
    Refused {
        /// The command as the caller gave it.
        command: String,
        /// Why perf would not acknowledge it.
        why: &'static str,
    },
    /// No acknowledgement within the deadline. The channel is closed for
    /// further commands: a late acknowledgement would be taken for the
    /// next one's.
    Timeout {
        /// The command sent.
        command: String,
        /// How long the client waited.
        waited: Duration,
    },
    /// The tool exited before acknowledging the command.
    Exited {
        /// The command sent.
        command: String,
        /// The tool's exit status.
        status: ExitStatus,
    },
    /// The tool's end of the channel closed (end of file on the ack fd, or
    /// `EPIPE` writing the command): the tool exited or detached.
    HungUp {
        /// The command sent.
        command: String,
    },
    /// The tool wrote something other than `ack\n\0`.
    BadReply {
        /// The command sent.
        command: String,
        /// The bytes read.
        reply: Vec<u8>,
    },
    /// A command after a [`Timeout`](Self::Timeout) or a hang-up.
    Closed,
    /// An environment variable naming the channel is not usable (not a
    /// number, not an open fd, not a FIFO that opens).
    Env {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// A `--control` argument perf would refuse (`fd:` without a number,
    /// `fifo:` without a path, anything else).
    Arg {
        /// The argument.
        arg: String,
        /// What perf expects.
        why: &'static str,
    },
    /// A system call on the channel failed.
    Io {
        /// What was being done (`mkfifo /tmp/x/ctl`, `write`, `poll`).
        what: String,
        /// The error.
        error: std::io::Error,
    },
}

impl ControlError {
    pub(crate) fn io(what: impl Into<String>, error: impl Into<std::io::Error>) -> ControlError {
        ControlError::Io {
            what: what.into(),
            error: error.into(),
        }
    }
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlError::Refused { command, why } => {
                write!(f, "control command {command:?} not sent: {why}")
            }
            ControlError::Timeout { command, waited } => write!(
                f,
                "control command {command:?}: no acknowledgement in {waited:?} (is the ack \
                 fd given to the tool, `--control fd:CTL,ACK`?); the channel is closed"
            ),
            ControlError::Exited { command, status } => write!(
                f,
                "control command {command:?}: the tool exited ({status}) before acknowledging it"
            ),
            ControlError::HungUp { command } => write!(
                f,
                "control command {command:?}: the tool closed the channel (it exited or detached)"
            ),
            ControlError::BadReply { command, reply } => write!(
                f,
                "control command {command:?}: the tool replied {:?}, not \"ack\\n\\0\"",
                String::from_utf8_lossy(reply)
            ),
            ControlError::Closed => write!(
                f,
                "the control channel is closed after a timeout or hang-up; open a new one"
            ),
            ControlError::Env { var, value, why } => {
                write!(f, "{var}={value:?}: {why}")
            }
            ControlError::Arg { arg, why } => {
                write!(f, "--control {arg:?}: {why}")
            }
            ControlError::Io { what, error } => write!(f, "control channel: {what}: {error}"),
        }
    }
}

impl std::error::Error for ControlError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ControlError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}
