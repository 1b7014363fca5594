//! A mini `perf stat`: counts events for a command, as the perf tool does,
//! with perf's options, output and exit status.
//!
//! ```sh
//! cargo run --release --example stat -- [-e EVENTS]... [-M METRICS] [-r N] [-x SEP] [-o FILE] [--] CMD ARGS
//! ```
//!
//! - Options as perf reads them: `-x,` or `-x ,`, `-r5`, `--repeat=5`,
//!   `-e` repeated, `-o FILE` (`--append`), `-i` (no inheritance), `-v`;
//!   unknown options get perf's usage and status 129. `-a`, `-C`, `-p`,
//!   `-t`, `--per-thread`, `-A`, `-I`, `--interval-count`, `--per-core`,
//!   `--per-die`, `--per-socket`, `--per-node` count on the event-set
//!   layer (`set_mode.rs`: the target in `set_target.rs`, the counting
//!   window in `set_window.rs`, the report lines in `set_report.rs`).
//!   `-n` (times only), `--timeout MS` (SIGTERM to the command),
//!   `--all-user` / `--all-kernel`, `-B` (refused with `-x`).
//! - `-D MS` / `--delay` (`-1`: start with the events disabled) and
//!   `--control fd:CTL[,ACK]` / `fifo:CTL[,ACK]`: perf's control protocol,
//!   served as perf 6.1 serves it (`enable`, `disable`, `enable NAME`,
//!   `evlist [-v|-g|-F]`, `stop`, `ping`; the same acknowledgements and
//!   `Events enabled` / `Events disabled` lines; `control.rs`), for a
//!   command this tool starts and in the event-set mode alike (`-a -D -1
//!   --control fd:5,6 -- CMD`, `-p PID`, `-I MS`: the set enabled and
//!   disabled whole or by event name; `set_window.rs`). As in perf 6.1,
//!   `-D N` waits N ms serving no command (the command's exit or a
//!   signal cuts the wait short) and the elapsed time counts from the
//!   enable; `-I` prints no extra interval at `enable` / `disable`.
//! - `-M METRIC_OR_GROUP[,...]` (feature `vendor`; `--metric-no-group`,
//!   `--metric-no-merge`): perf's metrics of the CPU's table (or
//!   `PERF_CPUID`'s), their events opened after `-e`'s and each metric
//!   printed as perf 6.1 prints it: on the line of its list's first event
//!   it reads, `%8.2f NAME` or, with a `ScaleUnit`, `%8.1f UNIT  NAME`,
//!   later ones on lines of their own, in `-x` CSV as `,VALUE,NAME`
//!   (`metrics.rs`, `metric_format.rs`). `--vendor-kernel X.Y` is ours, not
//!   perf's: the tables of that kernel's perf (`6.1` needs `--features
//!   vendor-6-1`; default the newest, 6.12). As perf 6.1, an unknown name
//!   prints ``Cannot find metric or group `X'`` and the run goes on
//!   without it (perf's default events when there is no `-e`). For a
//!   command and in the event-set mode's totals (`-a`, `-C`, `-p`, `-t`;
//!   `#core_wide` follows `-a` / `-C`), also per `-I` interval (each
//!   interval's metrics from its counts, printed on its stamped lines;
//!   `duration_time` printed as the interval's length, read by the metrics
//!   as the `-I` period, perf 6.1's wall-clock stats; `--interval-count`),
//!   per CPU (`-A`: each CPU's metrics from its counts, every line
//!   prefixed with the CPU, `duration_time` printed once, for the first
//!   CPU) and per core, die, socket or node (`--per-*`: each key's
//!   metrics from its counts, `duration_time` counted for the first CPU's
//!   key, `<not counted>` for the others), not per thread (`--per-thread`:
//!   refused); without feature `vendor`, `-M` is an error saying so.
//! - Events use perf's syntax (`-e cycles:u,{task-clock,page-faults}`,
//!   `-e 'syscalls:sys_enter_w*'`); events the machine lacks print
//!   `<not supported>`, events that never ran `<not counted>`, multiplexed
//!   ones are scaled with the percentage shown.
//! - The report goes to stderr (the command's stdout stays its own), or to
//!   `-o FILE`, in perf 6.x's table layout or, with `-x SEP`, its CSV:
//!   `value,unit,event,run,pct,metric,metric-unit` (`-r` adds the variance
//!   after the event).
//! - The command's exit status is passed through. A command killed by a
//!   signal is reported as perf does (`CMD: Terminated`, status 0, the
//!   counts); a command that cannot be run prints perf's
//!   `Workload failed: ...` and exits 255 with no table. SIGINT to the
//!   tool alone lets the command finish (perf 6.1); SIGTERM ends the tool
//!   at once (status 143), as it ends perf.

mod args;
mod control;
mod metric_format;
mod metrics;
mod output;
mod run;
mod set_mode;
mod set_report;
mod set_target;
mod set_window;

use perf_event_core::linux::process;
use run::{Failure, Run};
use std::ffi::CStr;
use std::io::Write;
use std::sync::atomic::Ordering;

const DEFAULT_EVENTS: &str = "task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches,branch-misses";

/// perf's message for a failure before the command ran; exits 255.
fn fail(failure: Failure) -> ! {
    match failure {
        Failure::Exec(errno) => {
            // SAFETY: strerror returns a NUL-terminated string, copied at once.
            let text = unsafe { CStr::from_ptr(libc::strerror(errno)) };
            eprintln!("Workload failed: {}", text.to_string_lossy())
        }
        Failure::Leader { name, error } => {
            let unsupported = matches!(
                error.errno.map(|e| e.0),
                Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL)
            );
            if unsupported {
                eprintln!("Error:\nThe {name} event is not supported.");
            } else {
                eprintln!("Error:\n{name}: {error}");
            }
        }
    }
    std::process::exit(255)
}

/// `argv0: description` for a command killed by `sig` (psignal(3)).
fn report_signal(argv0: &str, sig: i32) {
    eprintln!("{argv0}: {}", process::strsignal(sig));
}

/// `# started on <ctime>` as perf heads an output file.
fn started_on() -> String {
    let mut buf = [0 as libc::c_char; 64];
    // SAFETY: time(NULL) and ctime_r into a 64-byte buffer (26 needed).
    let text = unsafe {
        let now = libc::time(std::ptr::null_mut());
        libc::ctime_r(&now, buf.as_mut_ptr());
        CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
    };
    format!("# started on {}\n", text.trim_end())
}

fn main() {
    // Rust ignores SIGPIPE; perf dies of it when its reader goes away
    // (`stat -I 100 -- cmd 2>&1 | head -3`: status 141).
    // SAFETY: restoring a signal's default action.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let opts = args::options();
    run::catch_signals();
    let mut server = control::server(opts.control.as_deref());
    if opts.set.active() {
        set_mode::run(&opts, server);
    }
    let (mut events, metrics) = run::wanted(&opts);
    if opts.command.iter().any(|a| a.contains('\0')) {
        args::usage("NUL in an argument");
    }
    let argv = &opts.command;
    let mut runs: Vec<Run> = Vec::new();
    let mut code = 0;
    while opts.runs == 0 || runs.len() < opts.runs {
        let mut drive = run::Drive {
            timeout: opts.timeout_ms.map(std::time::Duration::from_millis),
            delay_ms: opts.delay_ms,
            control: server.as_mut(),
        };
        let run =
            run::run_once(&mut events, argv, opts.verbose, &mut drive).unwrap_or_else(|f| fail(f));
        if let Some(signal) = process::term_signal(run.status) {
            report_signal(&opts.command[0], signal);
        }
        // perf's status: the command's exit code (0 when a signal ended it).
        code = process::exit_code(run.status).unwrap_or(0);
        runs.push(run);
        // -r 0 repeats until Ctrl-C; perf runs every one of -r N.
        if opts.runs == 0 && run::RECEIVED.load(Ordering::SeqCst) != 0 {
            break;
        }
    }
    let text = output::report(&opts.command, opts.csv.as_deref(), &events, &metrics, &runs);
    match &opts.output {
        None => {
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .append(opts.append)
                .truncate(!opts.append)
                .open(path);
            let written = file.and_then(|mut f| {
                f.write_all(started_on().as_bytes())?;
                f.write_all(b"\n")?;
                f.write_all(text.as_bytes())
            });
            if let Err(e) = written {
                eprintln!("stat: {path}: {e}");
                std::process::exit(255);
            }
        }
    }
    std::process::exit(code);
}
