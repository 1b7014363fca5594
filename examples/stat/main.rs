//! A mini `perf stat`: counts events for a command, as the perf tool does.
//!
//! ```sh
//! cargo run --release --example stat -- [-e EVENTS]... [-r N] [-x SEP] -- CMD ARGS
//! ```
//!
//! The command is forked, waits on a pipe while its events are opened with
//! `disabled` + `enable_on_exec` + `inherit` (CLOEXEC on our fds), then
//! execs: counting starts exactly at exec and covers its threads and
//! children. Events use perf's syntax (`-e cycles:u,{task-clock,page-faults}`);
//! events the machine lacks print `<not supported>`, events that never ran
//! `<not counted>`, multiplexed ones are scaled with the percentage shown.
//! The command's exit status is passed through.

mod args;
mod output;
mod run;

use std::ffi::CString;

const DEFAULT_EVENTS: &str = "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses";

fn main() {
    let opts = args::options();
    let events = run::wanted(&opts.events);
    let argv: Vec<CString> = opts
        .command
        .iter()
        .map(|a| CString::new(a.as_str()).unwrap_or_else(|_| args::usage("NUL in argument")))
        .collect();
    let (mut runs, mut times, mut code) = (Vec::new(), Vec::new(), 0);
    for _ in 0..opts.runs {
        let (outcomes, elapsed, status) = run::run_once(&events, &argv);
        runs.push(outcomes);
        times.push(elapsed.as_secs_f64());
        code = status;
    }
    output::report(&opts, &events, &runs, &times);
    std::process::exit(code);
}
