//! perf's control protocol (`--control`, `-D -1`) served by the stat
//! example against perf stat 6.1 itself: a workload of phases with known
//! numbers of getpid calls counted exactly in the enabled phases through
//! both, over pipes, a socket pair and FIFOs; and the same byte sequences
//! (valid, unknown, over-long, without newline, NUL-terminated, prefixed)
//! sent to both, with the same acknowledgements byte for byte, the same
//! messages and the same counts. Every wait has a deadline
//! (`control_support::STEP`): a tool that does not answer fails the test
//! instead of hanging it.
//!
//! Skipped, saying so, without perf or tracefs.

use crate::control_support::{csv_value, workload_argv, Driven};
use crate::lab_support;
use crate::stat_support::{stat_binary, tracefs_usable};
use crate::stat_vs_perf::perf;
use perf_event_core::linux::io as os_io;
use perf_event_host::control::{Channel, Tool};
use std::ffi::CString;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;

pub(crate) const EVENT: &str = "syscalls:sys_enter_getpid";

/// perf stat's and the example's command lines up to `--`, the control
/// value left as `CONTROL`; `None` (the test skips, saying why) without
/// perf or tracefs. A re-run of this binary as the phases workload runs
/// the workload instead and exits.
pub(crate) fn tools() -> Option<[(&'static str, Vec<String>); 2]> {
    tools_with(&["-x,", "-e", EVENT, "-D", "-1", "--control", "CONTROL"])
}

/// [`tools`] with the options `opts`.
pub(crate) fn tools_with(opts: &[&str]) -> Option<[(&'static str, Vec<String>); 2]> {
    crate::control_support::run_role();
    let perf = perf()?;
    if !tracefs_usable() {
        lab_support::skip("needs tracefs", "tracefs is not mounted or not readable");
        return None;
    }
    let opts: Vec<String> = opts.iter().map(|o| o.to_string()).collect();
    let mut theirs = vec![perf, "stat".into()];
    theirs.extend(opts.iter().cloned());
    let mut ours = vec![stat_binary().to_str().unwrap().to_owned()];
    ours.extend(opts.iter().cloned());
    Some([("perf stat", theirs), ("stat example", ours)])
}

pub(crate) fn argv(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A path for a FIFO of this test process.
pub(crate) fn fifo_path(name: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::env::temp_dir().join(format!("control-{}-{n}-{name}", std::process::id()))
}

/// The perf messages of a stat log: every line but the CSV counts.
pub(crate) fn messages(log: &[String]) -> Vec<String> {
    log.iter()
        .filter(|l| !l.contains(&format!(",{EVENT},")))
        .cloned()
        .collect()
}

#[test]
fn enabled_phases_count_exactly_through_perf_stat_and_ours() {
    let Some(tools) = tools() else { return };
    let workload = workload_argv(
        module_path!(),
        "enabled_phases_count_exactly_through_perf_stat_and_ours",
    );
    for (label, tool) in &tools {
        for way in ["pipes", "socket pair", "fifos"] {
            let channel = match way {
                "pipes" => Channel::pipes(),
                "socket pair" => Channel::socket_pair(),
                _ => Channel::fifos(&fifo_path("ctl"), &fifo_path("ack")),
            }
            .unwrap();
            let mut d = Driven::start(&argv(tool), &workload, channel, Tool::Stat);
            d.phase(100);
            d.client().enable().unwrap();
            d.phase(1000);
            d.client().disable().unwrap();
            d.phase(50);
            d.client().enable().unwrap();
            d.phase(7);
            d.client().disable().unwrap();
            d.phase(3);
            let (status, log) = d.end();
            println!("{label} over {way}: {log:?}");
            assert!(status.success(), "{label} over {way}: {status}: {log:?}");
            assert_eq!(
                csv_value(&log, EVENT),
                "1007",
                "{label} over {way}: {log:?}"
            );
            assert_eq!(
                messages(&log),
                [
                    "Events disabled",
                    "Events enabled",
                    "Events disabled",
                    "Events enabled",
                    "Events disabled"
                ],
                "{label} over {way}"
            );
        }
    }
}

/// What one byte sequence got from a tool.
#[derive(Debug, PartialEq)]
pub(crate) struct Answer {
    /// Every byte written to the ack fd.
    acks: Vec<u8>,
    /// The tool's messages (stderr without the counts).
    messages: Vec<String>,
    /// The count of the 5 getpid calls made after the sequence (perf's
    /// `<not counted>` read as 0: which of the two an event enabled and
    /// disabled again at once shows depends on whether a clock tick
    /// passed in between, not on the protocol).
    count: String,
}

/// Starts `tool` (fresh, `-D -1`) with its control fd a socket pair
/// (`fd:N,N`) or two FIFOs, writes `case`, then `\n` (ending a command
/// left open, as the next bytes would) and `evlist -F\n`; once the evlist
/// line is on the tool's stderr, every command before it has been
/// answered. Then the workload makes 5 getpid calls and ends, the tool
/// exits, and every acknowledgement is read: no timing decides anything.
/// `count` reads the count in the tool's log ([`csv_value`] for a CSV
/// report).
pub(crate) fn answer(
    tool: &[String],
    workload: &[String],
    fifo: bool,
    case: &[u8],
    count: fn(&[String], &str) -> String,
) -> Answer {
    let (control, mut ctl, mut ack, inheritable, _fifos): (
        String,
        File,
        File,
        Option<OwnedFd>,
        Vec<PathBuf>,
    ) = if fifo {
        let (c, a) = (fifo_path("ctl"), fifo_path("ack"));
        for p in [&c, &a] {
            os_io::mkfifo(&CString::new(p.to_str().unwrap()).unwrap(), 0o600).unwrap();
        }
        let open = |p: &PathBuf| -> File {
            OwnedFd::from(os_io::open_fifo(&CString::new(p.to_str().unwrap()).unwrap()).unwrap())
                .into()
        };
        let control = format!("fifo:{},{}", c.display(), a.display());
        (control, open(&c), open(&a), None, vec![c, a])
    } else {
        let (mine, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let tool_end: OwnedFd = os_io::dup_inheritable(theirs.as_fd()).unwrap().into();
        use std::os::fd::AsRawFd;
        let control = format!("fd:{0},{0}", tool_end.as_raw_fd());
        let ctl = File::from(OwnedFd::from(mine.try_clone().unwrap()));
        (
            control,
            ctl,
            File::from(OwnedFd::from(mine)),
            Some(tool_end),
            vec![],
        )
    };
    let mut d = Driven::spawn(Driven::command(&argv(tool), &control, workload));
    drop(inheritable);
    ctl.write_all(case).unwrap();
    ctl.write_all(b"\n").unwrap();
    ctl.write_all(b"evlist -F\n").unwrap();
    d.wait_stderr(&format!("{EVENT}: sample_period=0"), 1);
    d.phase(5);
    let (status, log) = d.end();
    assert!(status.success(), "{status}: {log:?}");
    drop(ctl);
    let mut acks = Vec::new();
    if fifo {
        // Our own read-write open keeps the FIFO from ending: read what is there.
        let mut buf = [0u8; 4096];
        loop {
            match ack.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => acks.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => panic!("read the acks: {e}"),
            }
        }
        for p in &_fifos {
            let _ = std::fs::remove_file(p);
        }
    } else {
        ack.read_to_end(&mut acks).unwrap();
    }
    // The evlist's own acknowledgement and output are the test's.
    assert!(acks.ends_with(b"ack\n\0"), "{acks:?}");
    acks.truncate(acks.len() - 5);
    let mut messages = messages(&log);
    let evlist_at = messages
        .iter()
        .rposition(|m| m == &format!("{EVENT}: sample_period=0"));
    messages.remove(evlist_at.unwrap());
    Answer {
        acks,
        messages,
        count: match count(&log, EVENT) {
            n if n == "<not counted>" => "0".into(),
            n => n,
        },
    }
}

/// The byte sequences sent to both tools, each with its name: valid,
/// unknown, over-long, without newline, NUL-terminated, prefixed.
pub(crate) fn byte_sequences() -> Vec<(&'static str, Vec<u8>)> {
    let long = {
        let mut v = b"enable ".to_vec();
        v.extend([b'x'; 70]);
        v.push(b'\n');
        v
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("enable", b"enable\n".to_vec()),
        ("enable, NUL-terminated", b"enable\0".to_vec()),
        ("enable without newline", b"enable".to_vec()),
        (
            "enable then disable in one write",
            b"enable\ndisable\n".to_vec(),
        ),
        ("enable by name", format!("enable {EVENT}\n").into_bytes()),
        ("enable an unknown name", b"enable nope\n".to_vec()),
        ("enable, empty name", b"enable \n".to_vec()),
        ("prefixed: enablex", b"enablex\n".to_vec()),
        ("over-long (77 bytes)", long),
        ("unknown", b"hello\n".to_vec()),
        ("ack", b"ack\n".to_vec()),
        ("upper case", b"ENABLE\n".to_vec()),
        ("empty line", b"\n".to_vec()),
        ("snapshot", b"snapshot\n".to_vec()),
        ("stop", b"stop\n".to_vec()),
        ("pingpong", b"pingpong\n".to_vec()),
        ("evlist -x", b"evlist -x\n".to_vec()),
    ];
    cases
}

#[test]
fn byte_sequences_get_the_same_answers_from_perf_stat_and_ours() {
    let Some(tools) = tools() else { return };
    let workload = workload_argv(
        module_path!(),
        "byte_sequences_get_the_same_answers_from_perf_stat_and_ours",
    );
    for fifo in [false, true] {
        for (name, case) in &byte_sequences() {
            let theirs = answer(&tools[0].1, &workload, fifo, case, csv_value);
            let ours = answer(&tools[1].1, &workload, fifo, case, csv_value);
            let way = if fifo { "fifos" } else { "a socket pair" };
            println!("{name} over {way}: {theirs:?}");
            assert_eq!(
                ours, theirs,
                "{name:?} ({case:?}) over {way}: ours, then perf's"
            );
        }
    }
}
