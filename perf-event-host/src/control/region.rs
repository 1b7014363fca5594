//! The measured program's side: mark the region a perf-speaking tool
//! counts, through the channel the harness handed down.

use super::channel::{open_fifo, ENV_FDS, ENV_FIFOS};
use super::client::Client;
use super::command::Tool;
use super::error::ControlError;
use perf_event_core::linux::io as os_io;
use std::os::fd::OwnedFd;
use std::path::Path;

/// The region markers of a program run under `perf stat` / `perf record`
/// `--delay=-1 --control ...` (or this workspace's `stat` / `sample`):
/// [`enable`](Self::enable) before the measured code, [`disable`](Self::disable)
/// after, each returning once the tool has acknowledged it. Without a
/// channel ([`Region::from_env`] found none) both are one branch and no
/// call.
///
/// ```no_run
/// use perf_event_host::control::Region;
/// let mut region = Region::from_env()?;
/// // ... setup, not counted ...
/// region.enable()?;
/// // ... the measured code ...
/// region.disable()?;
/// # Ok::<(), perf_event_host::control::ControlError>(())
/// ```
#[derive(Debug)]
pub struct Region {
    client: Option<Client>,
}

impl Region {
    /// The channel named by the environment: `PERF_CTL_FD` and
    /// `PERF_CTL_ACK_FD` (fd numbers this process inherited: it writes
    /// commands to the first and reads acknowledgements from the second;
    /// without the second, commands are not waited for), or else
    /// `PERF_CTL_FIFO` and `PERF_ACK_FIFO` (the FIFOs' paths). None set:
    /// an inactive region. A variable that is set but unusable is an
    /// error that names it.
    pub fn from_env() -> Result<Region, ControlError> {
        let var = |name: &'static str| std::env::var(name).ok().filter(|v| !v.is_empty());
        if let Some(ctl) = var(ENV_FDS[0]) {
            let ctl = inherited(ENV_FDS[0], &ctl)?;
            let ack = match var(ENV_FDS[1]) {
                Some(ack) => Some(inherited(ENV_FDS[1], &ack)?),
                None => None,
            };
            return Ok(Region::on(Client::from_fds(ctl, ack, Tool::Stat)));
        }
        if let Some(ctl) = var(ENV_FIFOS[0]) {
            let ctl = fifo(ENV_FIFOS[0], &ctl)?;
            let ack = match var(ENV_FIFOS[1]) {
                Some(ack) => Some(fifo(ENV_FIFOS[1], &ack)?),
                None => None,
            };
            return Ok(Region::on(Client::from_fds(ctl, ack, Tool::Stat)));
        }
        Ok(Region::inactive())
    }

    /// A region that sends nothing.
    pub const fn inactive() -> Region {
        Region { client: None }
    }

    /// A region marked through `client`.
    pub const fn on(client: Client) -> Region {
        Region {
            client: Some(client),
        }
    }

    /// Whether a channel was found.
    pub const fn is_active(&self) -> bool {
        self.client.is_some()
    }

    /// `enable`, and its acknowledgement: the tool counts from here.
    #[inline]
    pub fn enable(&mut self) -> Result<(), ControlError> {
        match &mut self.client {
            None => Ok(()),
            Some(client) => client.enable(),
        }
    }

    /// `disable`, and its acknowledgement: the tool counts no more.
    #[inline]
    pub fn disable(&mut self) -> Result<(), ControlError> {
        match &mut self.client {
            None => Ok(()),
            Some(client) => client.disable(),
        }
    }
}

/// An inherited fd number, duplicated (the number itself stays open).
fn inherited(var: &'static str, value: &str) -> Result<OwnedFd, ControlError> {
    let env = |why: String| ControlError::Env {
        var,
        value: value.to_string(),
        why,
    };
    let n: i32 = value
        .trim()
        .parse()
        .map_err(|_| env("not an fd number".into()))?;
    if n < 0 {
        return Err(env("not an fd number".into()));
    }
    os_io::dup_inherited(n)
        .map(OwnedFd::from)
        .map_err(|e| env(format!("fd {n} is not open here ({e})")))
}

fn fifo(var: &'static str, value: &str) -> Result<OwnedFd, ControlError> {
    open_fifo(Path::new(value)).map_err(|e| ControlError::Env {
        var,
        value: value.to_string(),
        why: e.to_string(),
    })
}
