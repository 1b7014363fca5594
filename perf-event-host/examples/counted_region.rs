//! A benchmark whose measured region alone is counted by an external
//! `perf stat`, through perf's control protocol.
//!
//! ```sh
//! cargo run --release -p perf-event-host --example counted_region
//! ```
//!
//! Run like this, the example is the harness: it starts
//! `perf stat -D -1 --control fd:N,M -e task-clock,page-faults -- <itself>`
//! with the channel's other ends in the benchmark's environment
//! (`PERF_CTL_FD`, `PERF_CTL_ACK_FD`: [`Channel::workload_env`]). The
//! benchmark (this program again, seeing those variables) sets up outside
//! the region (1 MiB allocated and touched: 256 page faults that are not
//! counted), then marks the region with [`Region::enable`] /
//! [`Region::disable`], each returning once perf has acknowledged it, and
//! touches 4 MiB inside it: perf reports about 1024 page faults, the
//! region's only. Without perf, the stat example of this package serves the
//! same protocol: `COUNTER=path/to/stat` uses it instead
//! (`cargo build --release -p perf-event-host --example stat`).
//!
//! Any benchmark does the same with two calls: `Region::from_env()` finds
//! the channel a harness gave (or none: then `enable` and `disable` are one
//! branch each and nothing else).

use perf_event_host::control::{Channel, ControlError, Region, Tool, ENV_FDS};
use std::process::Command;

/// Touches every page of a new `len`-byte buffer: one page fault each.
fn touch(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    for page in v.chunks_mut(4096) {
        page[0] = 1;
    }
    std::hint::black_box(v)
}

/// The benchmark: setup, then the region.
fn benchmark() -> Result<(), ControlError> {
    let mut region = Region::from_env()?;
    let setup = touch(1 << 20); // not counted
    region.enable()?;
    let measured = touch(4 << 20); // counted
    region.disable()?;
    drop((setup, measured));
    Ok(())
}

/// The harness: perf stat (or the stat example) around this program.
fn harness() -> Result<(), ControlError> {
    let counter = std::env::var("COUNTER").ok();
    let mut channel = Channel::pipes()?;
    let mut cmd = match &counter {
        Some(stat) => Command::new(stat),
        None => {
            let mut perf = Command::new("perf");
            perf.arg("stat");
            perf
        }
    };
    cmd.args(["-D", "-1", "--control", &channel.control_arg()])
        .args(["-e", "task-clock,page-faults", "--"])
        .arg(std::env::current_exe().expect("this program's path"))
        .envs(channel.workload_env()?);
    // The program drives the channel; the harness only waits.
    let client = channel.spawn(&mut cmd, Tool::Stat)?;
    let status = client.finish()?;
    let status = status.map_or_else(|| "?".to_owned(), |s| s.to_string());
    println!(
        "counted by {}: {status}",
        counter.as_deref().unwrap_or("perf stat")
    );
    Ok(())
}

fn main() {
    let result = if std::env::var_os(ENV_FDS[0]).is_some() {
        benchmark()
    } else {
        harness()
    };
    if let Err(e) = result {
        eprintln!("counted_region: {e} (without perf: COUNTER=path/to/the/stat/example)");
        std::process::exit(1);
    }
}
