//! The same byte sequences (valid, unknown, over-long, without newline,
//! NUL-terminated, prefixed like `enablex`, two commands in one write) sent
//! to perf 6.1 and to this workspace's tools over perf's control protocol:
//! perf stat against the stat example, perf record against the sample
//! example, over a socket pair (`fd:N,N`) and over FIFOs. Each sequence
//! goes to a fresh tool; the acknowledgements are compared byte for byte,
//! and the messages and counts as well. Nothing is decided by a timeout:
//! each sequence is followed by an `evlist -F` whose output on stderr
//! says that everything before it was answered, and the acknowledgements
//! are read once the tool has exited. Every wait has a deadline
//! (`control_support::STEP`), so a tool that does not answer fails the
//! test instead of hanging it.
//!
//! Skipped, saying so, without perf or tracefs.

use crate::control_support::{csv_value, workload_argv, Driven};
use crate::sample_support::{build_sample, sample_binary};
use crate::stat_control_vs_perf::{argv, fifo_path, messages, tools, EVENT};
use perf_event_core::linux::io as os_io;
use std::ffi::CString;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::process::Command;

/// Which protocol server: perf stat's (the count read from its CSV by the
/// function given: `csv_value`, or an interval line's reader) or perf
/// record's (samples in its file, `-c 1`).
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Stat(fn(&[String], &str) -> String),
    Record,
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
pub(crate) fn answer(
    kind: Kind,
    tool: &[String],
    workload: &[String],
    fifo: bool,
    case: &[u8],
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
    let data = fifo_path("perf.data");
    let tool: Vec<String> = tool
        .iter()
        .map(|a| {
            if a == "OUTPUT" {
                data.display().to_string()
            } else {
                a.clone()
            }
        })
        .collect();
    let mut d = Driven::spawn(Driven::command(&argv(&tool), &control, workload));
    drop(inheritable);
    ctl.write_all(case).unwrap();
    ctl.write_all(b"\n").unwrap();
    ctl.write_all(b"evlist -F\n").unwrap();
    let period = if matches!(kind, Kind::Stat(_)) { 0 } else { 1 };
    let sync = format!("{EVENT}: sample_period={period}");
    d.wait_stderr(&sync, 1);
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
    // The messages without the counts, perf record's closing lines (its
    // wake-ups and file size) and the test's own evlist (perf record's
    // lists its tracking event too).
    let mut messages: Vec<String> = messages(&log)
        .into_iter()
        .filter(|m| !m.starts_with("[ perf record:") && m != "dummy:HG: sample_period=1")
        .collect();
    let evlist_at = messages.iter().rposition(|m| *m == sync);
    messages.remove(evlist_at.unwrap());
    let count = match kind {
        Kind::Stat(read) => match read(&log, EVENT) {
            n if n == "<not counted>" => "0".into(),
            n => n,
        },
        Kind::Record => samples(&data).to_string(),
    };
    let _ = std::fs::remove_file(&data);
    Answer {
        acks,
        messages,
        count,
    }
}

/// `perf script`'s sample count in the perf.data file at `data`.
fn samples(data: &std::path::Path) -> usize {
    let out = Command::new("perf")
        .args(["script", "-F", "event", "-i"])
        .arg(data)
        .output()
        .expect("perf script");
    assert!(out.status.success(), "perf script: {out:?}");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// The sequences, each with its name. `with_stop`: `stop` too (perf
/// record ends at it, before the test's `evlist`; its own test is
/// `sample_control_vs_perf::stop_ends_the_recording_with_perfs_status`).
fn cases(with_stop: bool) -> Vec<(&'static str, Vec<u8>)> {
    let long = {
        let mut v = b"enable ".to_vec();
        v.extend([b'x'; 70]);
        v.push(b'\n');
        v
    };
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
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
    if !with_stop {
        cases.retain(|(name, _)| *name != "stop");
    }
    cases
}

/// The sequences whose reading depends on the fd: a blocking one (`fd:`)
/// waits for the rest of a line, a non-blocking one (`fifo:`) ends it
/// where the buffered bytes end. The others are read alike from both and
/// are sent over the socket pair only.
const BY_FD_KIND: [&str; 3] = [
    "enable without newline",
    "enable then disable in one write",
    "over-long (77 bytes)",
];

/// What an `-I` mode reader answers when a log has no interval line:
/// perf 6.1 can leave out the final interval (see `compare`).
pub(crate) const NO_FINAL_INTERVAL: &str = "<no final interval>";

/// Each sequence over a socket pair (and those of [`BY_FD_KIND`] over
/// FIFOs too), to `theirs` and `ours` alike.
pub(crate) fn compare(kind: Kind, theirs: &[String], ours: &[String], workload: &[String]) {
    for fifo in [false, true] {
        for (name, case) in cases(matches!(kind, Kind::Stat(_))) {
            if fifo && !BY_FD_KIND.contains(&name) {
                continue;
            }
            let perf = answer(kind, theirs, workload, fifo, &case);
            let mine = answer(kind, ours, workload, fifo, &case);
            let way = if fifo { "fifos" } else { "a socket pair" };
            println!("{name} over {way}: {perf:?}");
            assert_ne!(mine.count, NO_FINAL_INTERVAL, "{name:?} over {way}: ours");
            if perf.count == NO_FINAL_INTERVAL {
                // perf 6.1's race in `-I` mode (stat_set_control_vs_perf.rs,
                // `perf_left_out_the_final_interval`): no count to compare.
                println!("{name} over {way}: perf stat printed no final interval");
                assert_eq!(
                    (&mine.acks, &mine.messages),
                    (&perf.acks, &perf.messages),
                    "{name:?} ({case:?}) over {way}: ours, then perf's"
                );
                continue;
            }
            assert_eq!(
                mine, perf,
                "{name:?} ({case:?}) over {way}: ours, then perf's"
            );
        }
    }
}

#[test]
fn byte_sequences_get_the_same_answers_from_perf_stat_and_the_stat_example() {
    let Some(tools) = tools() else { return };
    let workload = workload_argv(
        module_path!(),
        "byte_sequences_get_the_same_answers_from_perf_stat_and_the_stat_example",
    );
    compare(Kind::Stat(csv_value), &tools[0].1, &tools[1].1, &workload);
}

#[test]
fn byte_sequences_get_the_same_answers_from_perf_record_and_the_sample_example() {
    let Some(tools) = tools() else { return };
    build_sample();
    let workload = workload_argv(
        module_path!(),
        "byte_sequences_get_the_same_answers_from_perf_record_and_the_sample_example",
    );
    let opts = [
        "-o",
        "OUTPUT",
        "-c",
        "1",
        "-e",
        EVENT,
        "-D",
        "-1",
        "--control",
        "CONTROL",
    ];
    let mut theirs = vec![tools[0].1[0].clone(), "record".to_owned()];
    theirs.extend(opts.map(String::from));
    let mut ours = vec![sample_binary().display().to_string()];
    ours.extend(opts.map(String::from));
    compare(Kind::Record, &theirs, &ours, &workload);
}
