//! Driving a perf-speaking tool (perf stat / record, the stat and sample
//! examples) through perf's control protocol, around a workload whose
//! phases make known numbers of getpid system calls.
//!
//! The workload is the test binary itself, re-run in the role
//! [`PHASES_ROLE`] (see [`phases_workload`]): it reads a number per line on
//! its stdin, makes that many getpid calls, and answers `done N` on its
//! stdout. The tool passes its stdin and stdout through to the workload, so
//! the test steps the workload and the tool in turn with no sleep.
//!
//! A tool attached to the workload (`-p PID`, [`Driven::attach`]) runs
//! beside it instead: the test starts the workload, steps it through its
//! own pipes, and reaps it at the end, before the tool can see it gone.
#![allow(dead_code)] // each test binary uses part of it

use crate::set_support;
use perf_event_host::control::{Channel, Client, Tool};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The role of the phases workload ([`set_support::ROLE_VAR`]).
pub const PHASES_ROLE: &str = "control-phases";

/// How long any one step waits before the test fails instead of hanging.
pub const STEP: Duration = Duration::from_secs(20);

/// In a tool's command line for [`Driven::attach`]: the workload's pid.
pub const WORKLOAD_PID: &str = "WORKLOAD_PID";

/// The phases workload: a number per stdin line, that many getpid calls,
/// `done N` on stdout; exits at end of input.
pub fn phases_workload() -> ! {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    for line in stdin.lock().lines() {
        let Ok(n) = line.unwrap_or_default().trim().parse::<u64>() else {
            continue;
        };
        set_support::getpids(n);
        writeln!(out, "done {n}").unwrap();
        out.flush().unwrap();
    }
    std::process::exit(0)
}

/// A tool started on the phases workload, with its control client (when
/// the test drives it through [`Client`]) or without (when the test
/// writes the control bytes itself).
pub struct Driven {
    client: Option<Client>,
    child: Option<Child>,
    /// The workload, when the test started it beside the tool.
    workload: Option<Child>,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Receiver<String>,
    /// Every stderr line seen so far.
    pub log: Vec<String>,
}

/// The command line that runs this test binary as the phases workload of
/// test `test` (of module `module`, pass `module_path!()`).
pub fn workload_argv(module: &str, test: &str) -> Vec<String> {
    set_support::child_argv(module, test, &[])
}

impl Driven {
    /// The command that starts `tool_argv` (the tool and its options up to
    /// `--`; an argument `CONTROL` is replaced by `control`) on the phases
    /// workload `workload`, its stdio piped.
    pub fn command(tool_argv: &[&str], control: &str, workload: &[String]) -> Command {
        let mut cmd = Command::new(tool_argv[0]);
        for a in &tool_argv[1..] {
            cmd.arg(if *a == "CONTROL" { control } else { a });
        }
        cmd.arg("--")
            .args(workload)
            .env(set_support::ROLE_VAR, PHASES_ROLE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Starts `tool_argv` on the phases workload over `channel` (see
    /// [`Driven::command`]), driven through its [`Client`].
    pub fn start(tool_argv: &[&str], workload: &[String], channel: Channel, tool: Tool) -> Driven {
        let cmd = Driven::command(tool_argv, &channel.control_arg(), workload);
        Driven::start_with(cmd, channel, tool)
    }

    /// Starts `cmd` (from [`Driven::command`], with `channel`'s control
    /// value) through `channel`, keeping its client.
    pub fn start_with(mut cmd: Command, channel: Channel, tool: Tool) -> Driven {
        let mut client = channel.spawn(&mut cmd, tool).expect("start the tool");
        client.set_deadline(STEP);
        let child = client.child().unwrap();
        let mut driven = Driven::piped(child);
        driven.client = Some(client);
        driven
    }

    /// Starts `cmd` (from [`Driven::command`]); the test writes the control
    /// bytes itself.
    pub fn spawn(mut cmd: Command) -> Driven {
        let mut child = cmd.spawn().expect("start the tool");
        let mut driven = Driven::piped(&mut child);
        driven.child = Some(child);
        driven
    }

    /// Starts the phases workload `workload` alone, lets it make `first`
    /// getpid calls (once they are made its every thread is there), then
    /// starts `tool_argv` with no command (an argument [`WORKLOAD_PID`]
    /// replaced by the workload's pid, `CONTROL` by `channel`'s control
    /// value), driven through its [`Client`], or without a channel.
    /// [`Driven::phase`] steps the workload; [`Driven::end`] ends and
    /// reaps it, then waits for the tool.
    pub fn attach(
        tool_argv: &[&str],
        workload: &[String],
        first: u64,
        channel: Option<Channel>,
        tool: Tool,
    ) -> Driven {
        let mut w = Command::new(&workload[0])
            .args(&workload[1..])
            .env(set_support::ROLE_VAR, PHASES_ROLE)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the workload");
        let stdin = w.stdin.take();
        let stdout = BufReader::new(w.stdout.take().unwrap());
        let pid = w.id().to_string();
        let control = channel.as_ref().map(Channel::control_arg);
        let mut cmd = Command::new(tool_argv[0]);
        for a in &tool_argv[1..] {
            cmd.arg(match *a {
                WORKLOAD_PID => &pid,
                "CONTROL" => control.as_deref().expect("a channel for CONTROL"),
                a => a,
            });
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut driven = Driven::with_stderr(None, stdin, stdout);
        driven.workload = Some(w);
        driven.phase(first);
        match channel {
            Some(channel) => {
                let mut client = channel.spawn(&mut cmd, tool).expect("start the tool");
                client.set_deadline(STEP);
                driven.take_stderr(client.child().unwrap());
                driven.client = Some(client);
            }
            None => {
                let mut child = cmd.spawn().expect("start the tool");
                driven.take_stderr(&mut child);
                driven.child = Some(child);
            }
        }
        driven
    }

    fn piped(child: &mut Child) -> Driven {
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Driven::with_stderr(Some(child), stdin, stdout)
    }

    /// A driven tool stepping the workload through `stdin` / `stdout`,
    /// reading `child`'s stderr (later with [`Driven::take_stderr`]).
    fn with_stderr(
        child: Option<&mut Child>,
        stdin: Option<ChildStdin>,
        stdout: BufReader<ChildStdout>,
    ) -> Driven {
        let (_, rx) = channel();
        let mut driven = Driven {
            client: None,
            child: None,
            workload: None,
            stdin,
            stdout,
            stderr: rx,
            log: Vec::new(),
        };
        if let Some(child) = child {
            driven.take_stderr(child);
        }
        driven
    }

    /// Reads the tool's stderr, line by line, from a thread of its own.
    fn take_stderr(&mut self, child: &mut Child) {
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        self.stderr = rx;
    }

    /// The control client ([`Driven::start`]).
    pub fn client(&mut self) -> &mut Client {
        self.client.as_mut().expect("started with a client")
    }

    /// The workload makes `n` getpid calls; returns when it has.
    pub fn phase(&mut self, n: u64) {
        let stdin = self.stdin.as_mut().expect("the workload's stdin");
        writeln!(stdin, "{n}").unwrap();
        stdin.flush().unwrap();
        let want = format!("done {n}");
        let mut line = String::new();
        // libtest's own lines ("running 1 test") share the stdout.
        while !line.trim_end().ends_with(&want) {
            line.clear();
            let got = self.stdout.read_line(&mut line).unwrap();
            assert!(
                got > 0,
                "the workload ended before `{want}`; stderr: {:?}",
                self.log
            );
        }
    }

    /// Waits until the tool's stderr has shown a line equal to `line`
    /// `nth` times in all (counting from the start).
    pub fn wait_stderr(&mut self, line: &str, nth: usize) {
        let until = Instant::now() + STEP;
        while self.log.iter().filter(|l| *l == line).count() < nth {
            let left = until.saturating_duration_since(Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(l) => self.log.push(l),
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "no {line:?} on the tool's stderr in {STEP:?}: {:?}",
                        self.log
                    )
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the tool closed stderr before {line:?}: {:?}", self.log)
                }
            }
        }
    }

    /// Ends the workload (end of its input; one the test started is
    /// reaped: a zombie is still there for perf's `-p`) and waits for the
    /// tool (killed, and the test failed, if it has not exited within
    /// [`STEP`]); its status and its whole stderr.
    pub fn end(mut self) -> (ExitStatus, Vec<String>) {
        drop(self.stdin.take());
        if let Some(mut w) = self.workload.take() {
            let status = exit_within_step(&mut w, "the workload");
            assert!(status.success(), "the workload: {status}");
        }
        let child = match (&mut self.client, &mut self.child) {
            (Some(client), _) => client.child().unwrap(),
            (None, Some(child)) => child,
            (None, None) => unreachable!("a tool without a process"),
        };
        let status = exit_within_step(child, "the tool");
        drop(self.client.take());
        self.log.extend(self.stderr.iter());
        (status, self.log)
    }
}

/// Waits for `child` (`what`) to exit: its status; killed, and the test
/// failed, if it has not exited within [`STEP`] of the workload's end.
fn exit_within_step(child: &mut Child, what: &str) -> ExitStatus {
    let until = Instant::now() + STEP;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not exit within {STEP:?} of the workload's end");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The first field of the `-x,` line of `event` in a stat report: the
/// count, or perf's `<not counted>`.
pub fn csv_value(log: &[String], event: &str) -> String {
    log.iter()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f.len() > 2 && f[2] == event)
        .map(|f| f[0].to_owned())
        .unwrap_or_else(|| panic!("no {event} line in {log:?}"))
}

/// The role of the region workload ([`region_workload`]).
pub const REGION_ROLE: &str = "control-region";

/// A measured program marking its own region with
/// [`perf_event_host::control::Region`] from the environment the harness
/// gave it: 100 getpid calls before, 1000 inside, 50 between, 7 inside the
/// second region, 3 after; exits 0, or 1 with the error.
pub fn region_workload() -> ! {
    use perf_event_host::control::Region;
    let run = || -> Result<(), perf_event_host::control::ControlError> {
        let mut region = Region::from_env()?;
        assert!(region.is_active(), "no channel in the environment");
        set_support::getpids(100);
        region.enable()?;
        set_support::getpids(1000);
        region.disable()?;
        set_support::getpids(50);
        region.enable()?;
        set_support::getpids(7);
        region.disable()?;
        set_support::getpids(3);
        Ok(())
    };
    match run() {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("region workload: {e}");
            std::process::exit(1)
        }
    }
}

/// Runs the workload this process was re-run as, if it was: the phases
/// or the region workload (never returns then).
pub fn run_role() {
    match set_support::role().as_deref() {
        Some(PHASES_ROLE) => phases_workload(),
        Some(REGION_ROLE) => region_workload(),
        _ => {}
    }
}
