//! perf's control protocol, at both ends: a harness (or the measured
//! program itself) enables and disables a running `perf stat` / `perf
//! record` — or this workspace's `stat` / `sample` — around the region it
//! wants counted, through two fds given with `--control`.
//!
//! The protocol, as perf 6.1 speaks it (`tools/perf/util/evlist.c`):
//!
//! - The tool is started with `--control fd:CTL,ACK` (fds it inherits) or
//!   `--control fifo:CTL,ACK` (FIFOs it opens read-write and non-blocking),
//!   usually with `--delay=-1` (`-D -1`: start with the events disabled;
//!   the tool prints `Events disabled`). perf 5.9.
//! - A command is one line written to CTL. The tool reads one byte per
//!   `read(2)`, up to `\n` or NUL, at most 63 bytes ([`MAX_LINE`]); a
//!   longer line is cut, its rest read as the next command; on a
//!   non-blocking fd (`fifo:`) a line without its `\n` ends where the
//!   buffered bytes end, on a blocking one (`fd:`) the tool waits for more.
//! - Commands are matched by prefix, in this order: `enable`, `disable`,
//!   `snapshot`, `evlist`, `stop`, `ping` ([`Received::parse`]). `enable`,
//!   `disable` and `evlist` take an argument after exactly one space
//!   (`enable NAME`, `evlist -v|-g|-F`); anything else after them
//!   (`enablex`) is answered `failed: wrong command`. `evlist`, `stop`,
//!   `ping` and named events: perf 5.12.
//! - After each command it acknowledges, the tool writes `ack\n\0` (5
//!   bytes, [`ACK`]) to ACK. Unknown commands are never acknowledged (a
//!   client that blocks on the ack hangs on a typo: [`Client`] refuses
//!   what no tool would acknowledge, and every wait has a deadline);
//!   `snapshot` is acknowledged by `perf record` only, after triggering
//!   it ([`Tool`]).
//! - `POLLHUP` on CTL (every writer closed, `fd:` mode) makes the tool
//!   stop listening: commands still buffered behind the one it reads then
//!   are lost.
//!
//! The parts:
//!
//! - [`Channel`] and [`Client`]: the harness's side. Make pipes or FIFOs,
//!   put [`Channel::control_arg`] on the tool's command line, start it,
//!   then [`Client::enable`] / [`Client::disable`] /
//!   [`Client::send`] with a deadline; a tool that exits or hangs up is
//!   an error that says so.
//! - [`Region`]: the measured program's side, from the environment the
//!   harness gave it (`PERF_CTL_FD` / `PERF_CTL_ACK_FD`, or
//!   `PERF_CTL_FIFO` / `PERF_ACK_FIFO`). Two calls around the region;
//!   without a channel each is one branch.
//! - [`Server`]: the tool's side, as perf reads and answers (the `stat`
//!   example and perf-data-file's `sample` serve `--control` with it).
//!
//! ```no_run
//! use perf_event_host::control::{Channel, Tool};
//! let channel = Channel::pipes()?;
//! let mut perf = std::process::Command::new("perf");
//! perf.args(["stat", "-D", "-1", "--control", &channel.control_arg(), "--", "./bench"]);
//! let mut client = channel.spawn(&mut perf, Tool::Stat)?;
//! client.enable()?; // counted from here ...
//! client.disable()?; // ... to here
//! let status = client.finish()?;
//! # Ok::<(), perf_event_host::control::ControlError>(())
//! ```

mod channel;
mod client;
mod command;
mod error;
mod evlist;
mod region;
mod server;

pub use channel::{Channel, ENV_FDS, ENV_FIFOS};
pub use client::{Client, DEFAULT_DEADLINE};
pub use command::{Command, EvlistDetail, Received, Tool, ACK, MAX_LINE};
pub use error::ControlError;
pub use evlist::{write_evlist_group, write_evlist_line};
pub use region::Region;
pub use server::{Events, Server};
