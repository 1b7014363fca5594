//! Opening the events on a forked command, running it, and the signals
//! around it.
//!
//! The child waits on a pipe while the events are opened on it (leaders
//! `disabled` + `enable_on_exec`, every event `inherit`), then execs:
//! counting starts exactly at exec. An exec failure comes back through a
//! close-on-exec pipe (the errno), and nothing is reported but perf's
//! "Workload failed" line. A group whose leader cannot be opened stops
//! everything before the command runs (perf's "Error: The ... event is not
//! supported."); a group member that cannot be opened closes its whole
//! group (reported `<not counted>`, the member `<not supported>`), so no
//! event ever counts outside its group or before exec.
//!
//! SIGINT to this tool alone is not passed on: the command runs to its
//! end, as perf 6.1 lets it (Ctrl-C from the terminal reaches the command
//! itself). SIGTERM is not caught: the tool dies of it, as perf does.

use crate::args::{usage, Options};
use crate::control::{Fds, StatEvents};
use crate::metrics::Metrics;
use perf_event_core::attr::Attr;
use perf_event_core::fallback::{self, Attempt, Policy};
use perf_event_core::fd::EventFd;
use perf_event_core::open::{OpenError, Scope};
use perf_event_core::read_format::Counts;
use perf_event_core::sys;
use perf_event_host::control::{Events, Server};
use perf_event_host::parse::{parse, Builtin, Modifiers, Resolver, System};
use perf_event_host::workload::{Workload, WorkloadError};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

const TIMES: u64 =
    (sys::PERF_FORMAT_TOTAL_TIME_ENABLED | sys::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;

/// One event as requested: its name and attr, its group leader's index.
#[derive(Clone)]
pub struct Wanted {
    pub name: String,
    pub attr: Attr,
    pub leader: usize,
    /// perf's `:P`: the highest precision the PMU takes.
    pub max_precise: bool,
    /// A tool event (`duration_time`, `user_time`, `system_time`): not
    /// opened, its count is the run's elapsed time in ns (user and system
    /// time in µs), as perf 6.1 reads its tool events.
    pub tool: bool,
}

impl Wanted {
    /// A tool event of `-M`'s lists.
    #[cfg_attr(not(feature = "vendor"), allow(dead_code))]
    pub fn tool(name: &str) -> Wanted {
        Wanted {
            name: name.to_owned(),
            attr: Attr::new(perf_event_core::event::Event::Software(
                perf_event_core::event::Software::Dummy,
            )),
            leader: usize::MAX,
            max_precise: false,
            tool: true,
        }
    }
}

/// One event's result in one run.
#[derive(Clone, Copy)]
pub enum Outcome {
    /// The event could not be opened.
    NotSupported,
    /// Opened but never ran, or its group lost a member.
    NotCounted,
    Counted(Counts),
}

/// One finished run of the command.
pub struct Run {
    pub outcomes: Vec<Outcome>,
    pub elapsed: Duration,
    /// The wait status.
    pub status: i32,
    pub user: Duration,
    pub sys: Duration,
}

/// Why a run produced no counts.
pub enum Failure {
    /// exec failed with this errno.
    Exec(i32),
    /// An event could not be opened and perf stops: a group leader with
    /// members, or any event refused with EACCES / EPERM.
    Leader { name: String, error: Box<OpenError> },
}

/// The signal received (0: none).
pub static RECEIVED: AtomicI32 = AtomicI32::new(0);
/// The write end of the self-pipe the handler writes to (-1: none).
static WAKE: AtomicI32 = AtomicI32::new(-1);
/// Its read end, polled beside the exit watches.
static WAKE_READ: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    RECEIVED.store(sig, Ordering::SeqCst);
    let fd = WAKE.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: write is async-signal-safe; a full pipe just drops it.
        unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
    }
}

/// Catches SIGINT for the whole session, as perf 6.1 does: it is not
/// passed on to the command (Ctrl-C from the terminal reaches the command
/// itself), the command runs to its end; with no command it ends counting
/// and, after the report, the tool dies of it ([`die_of_signal`]).
/// SIGTERM keeps its default action: the tool dies at once (perf: 143).
pub fn catch_signals() {
    let mut fds = [-1; 2];
    // SAFETY: pipe2 fills two fds; both ends non-blocking, close-on-exec.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } == 0 {
        WAKE_READ.store(fds[0], Ordering::SeqCst);
        WAKE.store(fds[1], Ordering::SeqCst);
    }
    // SAFETY: a zeroed sigaction with our handler and an empty mask.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

/// The read end of the signal self-pipe: readable once a signal came.
pub fn signal_fd() -> i32 {
    WAKE_READ.load(Ordering::SeqCst)
}

/// Ends the process by the signal received, if any (perf's `sig_atexit`:
/// the shell sees 128 + the signal); returns when none came.
pub fn die_of_signal() {
    let sig = RECEIVED.load(Ordering::SeqCst);
    if sig == 0 {
        return;
    }
    // SAFETY: restoring the default action, then raising the signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// This machine's PMUs and tracefs; built with feature `vendor`, with perf's
/// vendor event names of this CPU (or of `PERF_CPUID`'s) as PMU aliases,
/// from the tables of `--vendor-kernel` (default: the newest).
#[cfg(feature = "vendor")]
fn resolver(opts: &Options) -> Option<perf_event_host::vendor::VendorSystem> {
    use perf_event_host::vendor::VendorSystem;
    let tables = match opts.vendor_kernel.as_deref() {
        None => &perf_event_vendor::kernels()[0],
        Some(kernel) => perf_event_vendor::tables(kernel).unwrap_or_else(|| {
            let known: Vec<&str> = perf_event_vendor::kernels()
                .iter()
                .map(|t| t.kernel())
                .collect();
            eprintln!(
                "--vendor-kernel {kernel}: this build has the tables of {} (6.1's need \
                 `--features vendor-6-1`)",
                known.join(", ")
            );
            std::process::exit(129)
        }),
    };
    let system = System::discover().map(|s| VendorSystem::with_kernel_tables(s, tables, None));
    match system {
        Ok(Ok(system)) => Some(system),
        Ok(Err(e)) => {
            eprintln!("vendor events not available: {e}");
            None
        }
        Err(e) => {
            eprintln!("vendor events not available: {e}");
            None
        }
    }
}

/// The events of `-e` (and of `-M`'s metrics), with the settings every run
/// needs, and the metrics.
pub fn wanted(opts: &Options) -> (Vec<Wanted>, Metrics) {
    let mut out = Vec::new();
    #[cfg(feature = "vendor")]
    if let Some(vendor) = resolver(opts) {
        push_events(opts, &vendor, &opts.events, &mut out);
        let metrics = crate::metrics::select(opts, &vendor, &mut out);
        return (out, metrics);
    }
    let resolver: Box<dyn Resolver> = match System::discover() {
        Ok(system) => Box::new(system),
        Err(_) => Box::new(Builtin),
    };
    push_events(opts, resolver.as_ref(), &opts.events, &mut out);
    let metrics = match (&opts.metrics, &opts.vendor_kernel) {
        (None, None) => Metrics::default(),
        _ => crate::metrics::unavailable(),
    };
    (out, metrics)
}

/// Parses `events` and appends them to `out`, with the settings every run
/// needs.
pub fn push_events(opts: &Options, resolver: &dyn Resolver, events: &str, out: &mut Vec<Wanted>) {
    if let Err(e) = try_push_events(opts, resolver, events, out) {
        eprintln!("event syntax error: {e}");
        usage("bad event list (-e)")
    }
}

/// [`push_events`], a list that does not parse given back as the
/// parser's error (nothing appended).
pub fn try_push_events(
    opts: &Options,
    resolver: &dyn Resolver,
    events: &str,
    out: &mut Vec<Wanted>,
) -> Result<(), perf_event_host::parse::ParseError> {
    let inherit = opts.inherit;
    if events.is_empty() {
        return Ok(()); // -n
    }
    let list = parse(events, resolver)?;
    for group in list.groups() {
        let leader = out.len();
        for (i, ev) in group.iter().enumerate() {
            // perf 6.1 excludes the guest from an event written without
            // modifiers (its event_attr_init; modifiers decide otherwise,
            // as the parser does).
            let bare = ev.modifiers == Modifiers::default();
            // perf stat counts: a `period=` / `freq=` term (and a vendor
            // event's own period) never reaches its attr (only perf
            // record's evsel__config applies them).
            let attr = ev.attr.sample_period(0);
            let mut attr = attr.read_format_raw(TIMES).inherit(inherit);
            if bare {
                attr = attr.exclude_guest(true);
            }
            // perf's --all-user / --all-kernel: every event one side only.
            if opts.all_user {
                attr = attr.exclude_kernel(true).exclude_user(false);
            }
            if opts.all_kernel {
                attr = attr.exclude_user(true).exclude_kernel(false);
            }
            // Only group leaders wait for exec (or, with -D, for the
            // delay or an `enable` command); members follow their leader.
            let attr = match (i, opts.delay_ms) {
                (0, 0) => attr.disabled(true).enable_on_exec(true),
                (0, _) => attr.disabled(true),
                _ => attr,
            };
            out.push(Wanted {
                name: ev.name.or(ev.expanded).unwrap_or(ev.text).to_owned(),
                attr,
                leader,
                // perf stat leaves `:P`'s precise_ip as written (only
                // perf record's evsel__config raises it).
                max_precise: false,
                tool: false,
            });
        }
    }
    Ok(())
}

/// How a run is driven besides its command: perf's `--timeout`, `-D` and
/// `--control`.
pub struct Drive<'a> {
    /// `--timeout`: the command gets SIGTERM after it.
    pub timeout: Option<Duration>,
    /// `-D`: 0 counts from exec; N > 0 enables the events N ms after the
    /// command started; -1 leaves them disabled for `--control enable`.
    pub delay_ms: i32,
    /// `--control`: commands served while the command runs.
    pub control: Option<&'a mut Server>,
}

/// Forks the command held before exec, opens the events on it, releases
/// it, waits.
pub fn run_once(
    events: &mut [Wanted],
    argv: &[String],
    verbose: u8,
    drive: &mut Drive<'_>,
) -> Result<Run, Failure> {
    let mut workload = Workload::hold(argv).unwrap_or_else(|e| {
        eprintln!("stat: {e}");
        std::process::exit(255)
    });
    let pid = workload.pid();
    let fds = match open_all(events, pid, verbose) {
        Ok(fds) => fds,
        Err(failure) => {
            drop(workload); // the child exits without exec
            return Err(failure);
        }
    };
    if drive.delay_ms != 0 {
        eprintln!("Events disabled");
    }
    let mut start = Instant::now();
    let released = workload.release();
    if let Err(WorkloadError::Exec { errno, .. }) = released {
        return Err(Failure::Exec(errno.0));
    }
    let mut run_events = StatEvents {
        events,
        fds: Fds::Run(&fds),
    };
    if drive.delay_ms > 0 {
        delay(Some(&workload), drive.delay_ms as u64);
        run_events.enable(None);
        eprintln!("Events enabled");
        // perf's elapsed time and --timeout count from here.
        start = Instant::now();
    }
    if drive.timeout.is_some() || drive.control.is_some() {
        wait_serving(&mut workload, start, drive, &mut run_events);
    }
    let exit = workload.reap().unwrap_or_else(|e| {
        eprintln!("stat: {e}");
        std::process::exit(255)
    });
    let elapsed = start.elapsed();
    let outcomes = fds
        .iter()
        .map(|fd| match fd {
            Slot::Open(fd) => match fd.read_counts() {
                Ok(c) => Outcome::Counted(c),
                Err(_) => Outcome::NotCounted,
            },
            Slot::Failed => Outcome::NotSupported,
            Slot::GroupLost => Outcome::NotCounted,
            Slot::Tool => Outcome::NotCounted,
        })
        .collect();
    let outcomes = tool_counts(events, outcomes, elapsed, &exit);
    Ok(Run {
        outcomes,
        elapsed,
        status: exit.status,
        user: exit.user,
        sys: exit.sys,
    })
}

/// `-D MS`: waits the delay out as perf sleeps it out in usleep(3),
/// serving no command meanwhile; the exit of the command (if any) or a
/// signal cuts it short, as SIGCHLD or SIGINT cuts perf's sleep short.
pub fn delay(workload: Option<&Workload>, ms: u64) {
    let deadline = Instant::now() + Duration::from_millis(ms);
    let exit = workload.map_or(-1, |w| w.exit_watch().fd());
    let mut fds = [exit, signal_fd()].map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    });
    while fds.iter().all(|p| p.revents == 0) && RECEIVED.load(Ordering::SeqCst) == 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: two valid pollfd entries of open fds (or -1, ignored).
        unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
    }
}

/// Waits for the command's exit, serving `--control` commands meanwhile
/// and ending the command (SIGTERM) at `--timeout`: one `poll(2)` on the
/// exit watch and the control fd.
fn wait_serving(
    workload: &mut Workload,
    start: Instant,
    drive: &mut Drive<'_>,
    run_events: &mut StatEvents<'_>,
) {
    use std::os::fd::AsRawFd;
    let deadline = drive.timeout.map(|t| start + t);
    loop {
        let ms = match deadline {
            Some(d) => d.saturating_duration_since(Instant::now()).as_millis() as i32,
            None => -1,
        };
        let control = drive
            .control
            .as_deref()
            .and_then(|c| c.fd())
            .map(|fd| fd.as_raw_fd());
        let mut fds = [
            libc::pollfd {
                fd: workload.exit_watch().fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: control.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfd entries; the fds are open (or -1, ignored).
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
        if n < 0 {
            continue; // EINTR: a signal; RECEIVED says which.
        }
        if fds[1].revents != 0 {
            if let Some(server) = drive.control.as_deref_mut() {
                server.serve(fds[1].revents, run_events, &mut std::io::stderr());
            }
        }
        if fds[0].revents != 0 {
            break; // the command exited
        }
        if n == 0 && deadline.is_some_and(|d| Instant::now() >= d) {
            let _ = workload.signal(libc::SIGTERM);
            break;
        }
    }
}

/// An event's fd, or why it has none.
pub enum Slot {
    Open(EventFd),
    Failed,
    /// Its group lost a member: closed, so it counts nothing.
    GroupLost,
    /// A tool event: counted by this tool.
    Tool,
}

/// The tool events' counts, as perf 6.1's `read_single_counter`: the
/// elapsed ns for `duration_time`, the user and system µs for `user_time`
/// and `system_time` (enabled and running the same).
fn tool_counts(
    events: &[Wanted],
    mut outcomes: Vec<Outcome>,
    elapsed: Duration,
    exit: &perf_event_host::workload::Exit,
) -> Vec<Outcome> {
    for (w, outcome) in events.iter().zip(&mut outcomes) {
        let value = match w.name.as_str() {
            _ if !w.tool => continue,
            "duration_time" => elapsed.as_nanos() as u64,
            "user_time" => exit.user.as_micros() as u64,
            _ => exit.sys.as_micros() as u64,
        };
        *outcome = Outcome::Counted(Counts {
            value,
            enabled: Some(value),
            running: Some(value),
        });
    }
    outcomes
}

/// Opens every event on `pid` under perf stat's fallbacks
/// ([`Policy::PERF_STAT`]: `:u` under `perf_event_paranoid` 2, a `:P`
/// event's precision); each event's attr and name become the ones opened,
/// so a repeated run opens the same. A failed leader of a group with
/// members is fatal; a failed member closes its group.
fn open_all(events: &mut [Wanted], pid: libc::pid_t, verbose: u8) -> Result<Vec<Slot>, Failure> {
    let mut slots: Vec<Slot> = Vec::with_capacity(events.len());
    for i in 0..events.len() {
        if events[i].tool {
            slots.push(Slot::Tool);
            continue;
        }
        let leader = events[i].leader;
        let members = events.iter().filter(|e| e.leader == leader).count();
        let group = match slots.get(leader) {
            Some(Slot::Open(fd)) if leader != i => Some(fd),
            Some(_) if leader != i => {
                // The group is already lost: not tried, not counted.
                slots.push(Slot::GroupLost);
                continue;
            }
            _ => None,
        };
        let mut attempt = Attempt::new(events[i].attr, Policy::PERF_STAT);
        if events[i].max_precise {
            attempt = attempt.max_precise();
        }
        let opened = fallback::open(&mut attempt, Scope::thread(pid), group);
        let ev = &mut events[i];
        ev.name = fallback::renamed(&ev.name, attempt.fallbacks(), &attempt.attr()).to_string();
        ev.attr = attempt.attr();
        ev.max_precise = false; // settled
        if verbose > 0 {
            for taken in attempt.fallbacks().iter() {
                eprintln!("Warning:\n{taken}");
            }
        }
        if verbose > 1 {
            let outcome = match &opened {
                Ok(_) => format!("sys_perf_event_open: pid {pid}  cpu -1 = opened"),
                Err(e) => format!(
                    "sys_perf_event_open: pid {pid}  cpu -1 failed, error -{}",
                    e.errno.map_or(0, |e| e.0)
                ),
            };
            eprintln!("{}\n{outcome}", ev.attr.perf_print());
        }
        let ev = &events[i];
        match opened {
            Ok(fd) => slots.push(Slot::Open(fd)),
            Err(error) => {
                if verbose > 0 {
                    eprintln!("stat: {}: {error}", ev.name);
                }
                // perf stat's stat_handle_error: a refused permission
                // (EACCES / EPERM: paranoid, capabilities, a seccomp
                // filter) is fatal for any event, with the explanation.
                let refused = matches!(error.errno.map(|e| e.0), Some(libc::EACCES | libc::EPERM));
                if refused || (ev.leader == i && members > 1) {
                    return Err(Failure::Leader {
                        name: ev.name.clone(),
                        error: Box::new(error),
                    });
                }
                slots.push(Slot::Failed);
                if ev.leader != i {
                    for slot in &mut slots[ev.leader..i] {
                        if matches!(slot, Slot::Open(_)) {
                            *slot = Slot::GroupLost;
                        }
                    }
                }
            }
        }
    }
    Ok(slots)
}
