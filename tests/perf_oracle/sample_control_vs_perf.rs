//! The sample example's `--control` and `-D` against perf record 6.1's,
//! driven the same way through the library's client
//! (`perf_event_host::control::Channel::pipes` + `Client`): each tool
//! records `syscalls:sys_enter_getpid` and `syscalls:sys_enter_getppid`
//! with `-c 1` (one sample per call) on a workload that makes known
//! numbers of calls when told to, and writes perf.data (`-o`), read back
//! with `perf script`.
//!
//! The workload is this test binary re-run in a role (`phases`): it
//! prints `CHILD ready`, then for each `go G P` line on its stdin makes G
//! getpid and P getppid system calls and prints `CHILD done`. The tool's
//! stdin and stdout are the workload's (neither tool reads stdin; the
//! sample example's report on stdout is skipped), so the test steps the
//! workload between commands: every call of a phase is made after the
//! acknowledgement of the command before it was read and before the next
//! command is written. Every wait has a deadline ([`DEADLINE`]: the
//! client's for acknowledgements, the same for the workload's lines and
//! the tool's exit); nothing sleeps, and no duration is asserted.

use crate::lab_support;
use crate::sample_support::{build_sample, perf_on, sample_binary, scratch};
use crate::set_support;
use perf_event_host::control::{Channel, Client, Command as Ctl, EvlistDetail, Tool};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

const GETPID: &str = "syscalls:sys_enter_getpid";
const GETPPID: &str = "syscalls:sys_enter_getppid";

/// How long any one wait lasts before the test fails saying what it
/// waited for (a debug build on a loaded 2-CPU machine included).
const DEADLINE: Duration = Duration::from_secs(60);

/// Whether perf and the syscall tracepoints are here (else the test is
/// reported as skipped, with the reason).
fn tools_here() -> bool {
    let perf = Command::new("perf").arg("--version").output();
    if !perf.is_ok_and(|o| o.status.success()) {
        lab_support::skip(
            "needs perf",
            "perf is not installed (apt-get install linux-perf)",
        );
        return false;
    }
    if !crate::stat_support::tracefs_usable() {
        lab_support::skip(
            "needs tracefs",
            "the syscalls tracepoints are not readable: tracefs is not mounted at \
             /sys/kernel/tracing or /sys/kernel/debug/tracing",
        );
        return false;
    }
    true
}

/// CLOCK_MONOTONIC now, in ns: the clock of both tools' sample times
/// (`perf record -k CLOCK_MONOTONIC`; the example with `-o`).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The workload's side: `phases` (see the module docs). Ends at `exit` or
/// at the end of its stdin.
fn play(role: &str) -> ! {
    assert_eq!(role, "phases", "unknown role");
    let say = |text: &str| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "CHILD {text}").unwrap();
        out.flush().unwrap();
    };
    say("ready");
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["go", g, p] => {
                set_support::getpids(g.parse().unwrap());
                for _ in 0..p.parse::<u64>().unwrap() {
                    // SAFETY: getppid has no arguments.
                    unsafe { libc::syscall(libc::SYS_getppid) };
                }
                say("done");
            }
            ["exit"] => break,
            _ => panic!("unknown cue {line:?}"),
        }
    }
    std::process::exit(0)
}

/// Plays the workload's role when this process is the re-run child.
fn workload_role() {
    if let Some(role) = set_support::role() {
        play(&role);
    }
}

/// The tool under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recorder {
    Perf,
    Sample,
}

impl Recorder {
    /// The tool's command, before its options: perf record with sample
    /// times on CLOCK_MONOTONIC (the example's clock with `-o`).
    fn command(self) -> Command {
        match self {
            Recorder::Perf => {
                let mut c = Command::new("perf");
                c.args(["record", "-k", "CLOCK_MONOTONIC"]);
                c
            }
            Recorder::Sample => Command::new(sample_binary()),
        }
    }
}

/// A tool recording the workload under control: the client, the
/// workload's stdin, its `CHILD` lines and the tool's stderr lines as they
/// come.
struct Controlled {
    tool: Recorder,
    client: Option<Client>,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Receiver<String>,
}

/// Each line of `from`, sent on a channel by a thread of its own, which
/// ends (disconnecting the channel) at the end of the stream.
fn lines_of(from: impl Read + Send + 'static, keep: fn(&str) -> Option<&str>) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if let Some(kept) = keep(&line) {
                if tx.send(kept.to_owned()).is_err() {
                    break;
                }
            }
        }
    });
    rx
}

/// The text of a workload's `CHILD ` line (libtest may have printed
/// "test NAME ... " before it on the same line); other lines are the
/// tool's or libtest's.
fn child_line(line: &str) -> Option<&str> {
    Some(&line[line.find("CHILD ")? + 6..])
}

impl Controlled {
    /// Starts `tool` with `args`, `--control fd:CTL,ACK` and the workload
    /// playing `phases` for `test` (this module's test of that name);
    /// returns once the workload said it is ready.
    fn start(tool: Recorder, args: &[&str], test: &str) -> Controlled {
        let channel = Channel::pipes().unwrap();
        let mut cmd = tool.command();
        cmd.args(args)
            .args(["--control", &channel.control_arg(), "--"])
            .args(set_support::child_argv(module_path!(), test, &[]))
            .env(set_support::ROLE_VAR, "phases")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut client = channel
            .spawn(&mut cmd, Tool::Record)
            .unwrap_or_else(|e| panic!("{tool:?}: {e}"));
        client.set_deadline(DEADLINE);
        let child = client.child().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = lines_of(child.stdout.take().unwrap(), child_line);
        let stderr = lines_of(child.stderr.take().unwrap(), |l| Some(l));
        let mut run = Controlled {
            tool,
            client: Some(client),
            stdin: Some(stdin),
            lines,
            stderr,
        };
        run.expect("ready");
        run
    }

    fn client(&mut self) -> &mut Client {
        self.client.as_mut().unwrap()
    }

    /// Sends `cmd` and waits for its acknowledgement.
    fn send(&mut self, cmd: Ctl<'_>) {
        let tool = self.tool;
        self.client()
            .send(cmd)
            .unwrap_or_else(|e| panic!("{tool:?}: {e}"));
    }

    /// The workload's next line, which must be `what`.
    fn expect(&mut self, what: &str) {
        match self.lines.recv_timeout(DEADLINE) {
            Ok(line) if line == what => {}
            Ok(line) => panic!("{:?}: the workload said {line:?}, not {what:?}", self.tool),
            Err(e) => panic!(
                "{:?}: no {what:?} from the workload within {DEADLINE:?} ({e:?}): {}",
                self.tool,
                self.stderr.try_iter().collect::<Vec<_>>().join("\n")
            ),
        }
    }

    /// `go G P`: the workload makes `getpids` getpid and `getppids`
    /// getppid calls; returns when it said it made them.
    fn go(&mut self, getpids: u64, getppids: u64) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "go {getpids} {getppids}").unwrap();
        stdin.flush().unwrap();
        self.expect("done");
    }

    /// Waits for the tool's stderr line `what` (its message before it),
    /// skipping the lines before it.
    fn stderr_line(&mut self, what: &str) {
        loop {
            match self.stderr.recv_timeout(DEADLINE) {
                Ok(line) if line == what => break,
                Ok(_) => {}
                Err(e) => panic!("{:?}: no {what:?} on stderr ({e:?})", self.tool),
            }
        }
    }

    /// Ends the run: the workload told to exit (`exit`) or not (it runs
    /// until the tool ends it), the tool's stdout read to its end (the tool
    /// and the workload gone), then the client closed: the tool's status
    /// and the stderr lines not read yet.
    fn finish(mut self, exit: bool) -> (ExitStatus, Vec<String>) {
        let mut stdin = self.stdin.take().unwrap();
        if exit {
            writeln!(stdin, "exit").unwrap();
            drop(stdin);
        }
        loop {
            match self.lines.recv_timeout(DEADLINE) {
                Ok(_) => {}
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{:?}: still running after {DEADLINE:?}", self.tool)
                }
            }
        }
        let status = self.client.take().unwrap().finish().unwrap().unwrap();
        let mut stderr = Vec::new();
        loop {
            match self.stderr.recv_timeout(DEADLINE) {
                Ok(line) => stderr.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("{:?}: stderr left open", self.tool),
            }
        }
        (status, stderr)
    }
}

impl Drop for Controlled {
    /// A failed test leaves no tool behind (its workload then reads the
    /// end of its stdin and exits).
    fn drop(&mut self) {
        if let Some(child) = self.client.as_mut().and_then(Client::child) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `(time in ns, event)` of every sample in `data`, as `perf script`
/// reads them.
fn samples(data: &Path) -> Vec<(u64, String)> {
    let text = perf_on(data, &["script", "--ns", "-F", "time,event"]);
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut fields = l.split(':').map(str::trim);
            let time = fields.next().unwrap();
            let (s, ns) = time
                .split_once('.')
                .unwrap_or_else(|| panic!("no time in {l:?}"));
            let ns = s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap();
            let event = fields.collect::<Vec<_>>()[..2].join(":");
            (ns, event)
        })
        .collect()
}

/// An enabled window: from just before its `enable` was written to just
/// after its `disable` was acknowledged, and the calls the workload made
/// in it that the enabled events count.
#[derive(Debug)]
struct Window {
    from_ns: u64,
    to_ns: u64,
    getpid: usize,
    getppid: usize,
}

/// The recording of the phases: calls while disabled, `enable` (all),
/// calls, `disable`, calls, `enable syscalls:sys_enter_getpid`, calls
/// (getppid's disabled), `disable syscalls:sys_enter_getpid`, calls; its
/// enabled windows, each with what it counts; the tool's status.
fn record_phases(tool: Recorder, data: &Path, test: &str) -> (Vec<Window>, ExitStatus) {
    let data_arg = data.to_str().unwrap();
    let args = [
        "-o", data_arg, "-D", "-1", "-e", GETPID, "-e", GETPPID, "-c", "1",
    ];
    let mut run = Controlled::start(tool, &args, test);
    let mut windows = Vec::new();
    run.go(1000, 1000);
    let from_ns = monotonic_ns();
    run.send(Ctl::Enable(None));
    run.go(300, 200);
    run.send(Ctl::Disable(None));
    windows.push(Window {
        from_ns,
        to_ns: monotonic_ns(),
        getpid: 300,
        getppid: 200,
    });
    run.go(700, 700);
    let from_ns = monotonic_ns();
    run.send(Ctl::Enable(Some(GETPID)));
    run.go(500, 400);
    run.send(Ctl::Disable(Some(GETPID)));
    windows.push(Window {
        from_ns,
        to_ns: monotonic_ns(),
        getpid: 500,
        getppid: 0,
    });
    run.go(100, 100);
    let (status, _) = run.finish(true);
    (windows, status)
}

/// Every sample of `data` lies in one of `windows`, and each window holds
/// exactly the calls made in it, per event.
fn check_windows(tool: Recorder, data: &Path, windows: &[Window]) {
    let mut counted = vec![(0usize, 0usize); windows.len()];
    let samples = samples(data);
    for (t, event) in &samples {
        let w = windows
            .iter()
            .position(|w| (w.from_ns..=w.to_ns).contains(t))
            .unwrap_or_else(|| {
                panic!(
                    "{tool:?}: a {event} sample at {t} ns lies in no enabled window: {windows:?}"
                )
            });
        match event.as_str() {
            GETPID => counted[w].0 += 1,
            GETPPID => counted[w].1 += 1,
            _ => panic!("{tool:?}: a sample of {event:?}"),
        }
    }
    let expected: Vec<(usize, usize)> = windows.iter().map(|w| (w.getpid, w.getppid)).collect();
    assert_eq!(
        counted, expected,
        "{tool:?}: (getpid, getppid) samples per enabled window, against the calls made in it"
    );
}

/// `enable` / `disable` (all, then by the event's name) with `-D -1`:
/// the samples in the file are exactly the getpid and getppid calls of
/// the enabled phases, for perf record and for the example.
#[test]
fn enabled_windows_hold_exactly_the_workloads_calls() {
    workload_role();
    if !tools_here() {
        return;
    }
    build_sample();
    let test = "enabled_windows_hold_exactly_the_workloads_calls";
    let dir = crate::sample_support::scratch("control-windows");
    for tool in [Recorder::Perf, Recorder::Sample] {
        let data = dir.join(format!("{tool:?}.data"));
        let (windows, status) = record_phases(tool, &data, test);
        assert!(status.success(), "{tool:?}: {status:?}");
        check_windows(tool, &data, &windows);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `stop` while the workload still runs: acknowledged, the file finished
/// (the samples of the enabled phase in it), the workload ended with
/// SIGTERM, and the tool ends with the same status as perf record 6.1
/// (which dies of the workload's SIGTERM: status 143 in a shell).
#[test]
fn stop_ends_the_recording_with_perfs_status() {
    workload_role();
    if !tools_here() {
        return;
    }
    build_sample();
    let test = "stop_ends_the_recording_with_perfs_status";
    let dir = crate::sample_support::scratch("control-stop");
    let mut statuses = Vec::new();
    for tool in [Recorder::Perf, Recorder::Sample] {
        let data = dir.join(format!("{tool:?}.data"));
        let data_arg = data.to_str().unwrap();
        let args = ["-o", data_arg, "-D", "-1", "-e", GETPID, "-c", "1"];
        let mut run = Controlled::start(tool, &args, test);
        let from_ns = monotonic_ns();
        run.send(Ctl::Enable(None));
        run.go(100, 0);
        run.send(Ctl::Stop);
        let to_ns = monotonic_ns();
        let (status, stderr) = run.finish(false);
        println!("{tool:?}: {status:?}\n{}", stderr.join("\n"));
        let window = Window {
            from_ns,
            to_ns,
            getpid: 100,
            getppid: 0,
        };
        check_windows(tool, &data, &[window]);
        statuses.push(status);
    }
    let (perf, ours) = (statuses[0], statuses[1]);
    assert_eq!(
        (ours.signal(), ours.code()),
        (perf.signal(), perf.code()),
        "after stop: the example's status {ours:?}, perf record's {perf:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The stderr lines from perf's "Events disabled" on, without perf
/// record's closing `[ perf record: ... ]` lines (its warnings before the
/// start, which depend on the machine, are left out), with `evlist -v`'s
/// attr fields cut after the event name: the attrs differ (perf's size
/// 128 and `read_format: ID|LOST`, this library's hex sample_type).
fn control_messages(stderr: &[String]) -> Vec<String> {
    let start = stderr
        .iter()
        .position(|l| l == "Events disabled")
        .unwrap_or_else(|| panic!("no 'Events disabled' in {stderr:?}"));
    stderr[start..]
        .iter()
        .filter(|l| !l.starts_with("[ perf record:"))
        .map(|l| match l.find(": type: ") {
            Some(at) => format!("{} (attr)", &l[..at]),
            None => l.clone(),
        })
        .collect()
}

/// Every command's message and event list, as perf record 6.1 prints
/// them on stderr: `evlist`, `evlist -F`, `evlist -g` and `evlist -v`'s
/// names (both list the tracking event `dummy:HG` that `-D` adds),
/// `enable` / `disable` all and by name, an unknown name, a malformed
/// command; `ping` and `snapshot` acknowledged with no message.
#[test]
fn commands_print_perfs_messages_and_event_lists() {
    workload_role();
    if !tools_here() {
        return;
    }
    build_sample();
    let test = "commands_print_perfs_messages_and_event_lists";
    let dir = crate::sample_support::scratch("control-messages");
    let mut printed = Vec::new();
    for tool in [Recorder::Perf, Recorder::Sample] {
        let data = dir.join(format!("{tool:?}.data"));
        let data_arg = data.to_str().unwrap();
        let args = [
            "-o", data_arg, "-D", "-1", "-e", GETPID, "-e", GETPPID, "-c", "1",
        ];
        let mut run = Controlled::start(tool, &args, test);
        for detail in [
            EvlistDetail::Names,
            EvlistDetail::Freq,
            EvlistDetail::Groups,
            EvlistDetail::Verbose,
        ] {
            run.send(Ctl::Evlist(detail));
        }
        run.send(Ctl::Enable(None));
        run.send(Ctl::Disable(Some(GETPPID)));
        run.send(Ctl::Disable(Some("nope")));
        run.send(Ctl::Ping);
        run.send(Ctl::Snapshot);
        run.client().send_raw(b"enablex\n").unwrap();
        run.send(Ctl::Disable(None));
        let (status, stderr) = run.finish(true);
        assert!(status.success(), "{tool:?}: {status:?}\n{stderr:?}");
        printed.push(control_messages(&stderr));
    }
    println!("perf record:\n{}", printed[0].join("\n"));
    assert_eq!(
        printed[1], printed[0],
        "the example's messages, then perf's"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-D 1`: "Events disabled", then "Events enabled" once the delay is
/// out, from both tools; the calls made after that message are recorded,
/// exactly (what the workload's start made before it may or may not be).
#[test]
fn a_delay_enables_the_events_after_perfs_message() {
    workload_role();
    if !tools_here() {
        return;
    }
    build_sample();
    let test = "a_delay_enables_the_events_after_perfs_message";
    let dir = crate::sample_support::scratch("control-delay");
    for tool in [Recorder::Perf, Recorder::Sample] {
        let data = dir.join(format!("{tool:?}.data"));
        let data_arg = data.to_str().unwrap();
        let args = ["-o", data_arg, "-D", "1", "-e", GETPID, "-c", "1"];
        let mut run = Controlled::start(tool, &args, test);
        run.stderr_line("Events disabled");
        run.stderr_line("Events enabled");
        let from_ns = monotonic_ns();
        run.go(200, 0);
        let to_ns = monotonic_ns();
        let (status, _) = run.finish(true);
        assert!(status.success(), "{tool:?}: {status:?}");
        let in_window = samples(&data)
            .iter()
            .filter(|(t, e)| e == GETPID && (from_ns..=to_ns).contains(t))
            .count();
        assert_eq!(
            in_window, 200,
            "{tool:?}: getpid samples while told to make 200 calls"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `--control` or `-D` value perf record refuses: status 129 and the
/// option's help after the usage, as `perf record -h` prints it (the
/// usage lines themselves are each tool's own). `-D 0` and bad time
/// ranges included.
#[test]
fn bad_values_get_perfs_option_help() {
    if !tools_here() {
        return;
    }
    build_sample();
    // The help after the usage: the text after the first blank line that
    // follows a usage line.
    let help = |stderr: &[u8]| -> String {
        let text = String::from_utf8_lossy(stderr).into_owned();
        let at = text
            .find("sage")
            .unwrap_or_else(|| panic!("no usage in {text:?}"));
        let rest = &text[at..];
        rest[rest.find("\n\n").map_or(rest.len(), |i| i + 2)..].to_owned()
    };
    for args in [
        &["--control", "bogus"][..],
        &["--control", "fd:x"],
        &["--control", "fifo:"],
        &["-D", "abc"],
        &["-D", "-2"],
        &["-D", "5x"],
        &["-D", "0"],
        &["-D", "20-10"],
        &["-D", "10-20,15-30"],
        &["-D", "10-"],
    ] {
        let perf = Command::new("perf")
            .arg("record")
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap();
        let ours = Command::new(sample_binary())
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(perf.status.code(), Some(129), "perf record {args:?}");
        assert_eq!(ours.status.code(), Some(129), "sample {args:?}");
        let (perf_help, our_help) = (help(&perf.stderr), help(&ours.stderr));
        assert!(
            !perf_help.is_empty(),
            "perf record {args:?}: no option help"
        );
        assert_eq!(
            our_help, perf_help,
            "{args:?}: the option's help, ours then perf's"
        );
    }
}

/// `-D START-END,...`: the events are enabled in the ranges only, with
/// perf's message at each bound, and the recording ends with the last
/// range (the command, still sleeping, gets SIGTERM and the tool dies of
/// it): the same messages and status from perf record and the example.
/// Which samples fall in the windows depends on the clock, so only the
/// messages and the status are compared.
#[test]
fn time_ranges_enable_each_window_and_end_the_recording_as_perf() {
    if !tools_here() {
        return;
    }
    build_sample();
    let dir = scratch("sample-ranges");
    let run = |tool: &mut Command, data: &Path| {
        let out = tool
            .arg("-o")
            .arg(data)
            .args(["-e", GETPID, "-D", "10-20,30-40", "--", "sleep", "5"])
            .output()
            .unwrap();
        let messages: Vec<String> = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.starts_with("Events "))
            .map(str::to_owned)
            .collect();
        (messages, out.status.signal(), out.status.code())
    };
    let mut perf = Command::new("perf");
    perf.arg("record");
    let theirs = run(&mut perf, &dir.join("perf.data"));
    let ours = run(&mut Command::new(sample_binary()), &dir.join("ours.data"));
    assert_eq!(
        theirs.0,
        [
            "Events disabled",
            "Events enabled",
            "Events disabled",
            "Events enabled",
            "Events disabled"
        ],
        "perf record"
    );
    assert_eq!(ours, theirs, "the messages and status, ours then perf's");
    let _ = std::fs::remove_dir_all(&dir);
}
