//! This crate's record parser and decoders against perf on real captures:
//! `perf record` writes perf.data files (software samples with callchains,
//! user registers and user stack; the sched:sched_switch and
//! syscalls:sys_enter_openat tracepoints), this crate parses their data
//! sections (the crate's `perf_data` reader), and every record is compared with what perf
//! prints for it: `perf report -D` (each record's offset, type, size and
//! decoded sample fields, registers by name) and `perf script` (tracepoint
//! fields by name, decoded with this crate's tracefs format parser).
//!
//! Needs the perf tool (Debian `linux-perf`) and the right to record; says
//! "skipped: perf not installed" without it.

use crate::lab_support;
use crate::sample_support::perf_on;

use lab_support::{not_applicable, Need};
use perf_data_file::PerfData;
use perf_event_core::abi::arch::RegsArch;
use perf_event_core::record::{Callchain, Context, Record, RegNames};
use perf_event_host::sysfs::{TraceFormat, TraceValue, Tracefs};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn perf_installed() -> bool {
    Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("perf-compare-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `perf record` with `args`; `None` (and the reason reported) when perf
/// is missing or may not record here.
fn record(name: &str, args: &[&str]) -> Option<PathBuf> {
    if !perf_installed() {
        not_applicable(
            Need::PerfTool,
            "perf not installed (Debian: apt-get install linux-perf)",
        );
        return None;
    }
    let out = scratch(name).join("perf.data");
    let o = Command::new("perf")
        .args(["record", "-q", "-o"])
        .arg(&out)
        .args(args)
        .output()
        .unwrap();
    if !o.status.success() {
        let why = String::from_utf8_lossy(&o.stderr).into_owned();
        not_applicable(
            Need::PerfTool,
            &format!("perf record {args:?} failed here: {why}"),
        );
        return None;
    }
    Some(out)
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16)
        .unwrap_or_else(|_| panic!("not hex: {s:?}"))
}

/// What `perf report -D` prints for one sample.
#[derive(Default, Debug)]
struct DumpSample {
    time: Option<u64>,
    pid_tid: (u32, u32),
    ip: u64,
    period: u64,
    chain: Vec<u64>,
    regs_abi: Option<String>,
    regs: Vec<(String, u64)>,
    ustack_size: Option<usize>,
}

/// `perf report -D`: every record's (type, size) by file offset, and the
/// decoded samples by offset.
fn dump(file: &Path) -> (HashMap<usize, (u32, usize)>, HashMap<usize, DumpSample>) {
    let text = perf_on(file, &["report", "-D"]);
    let (mut kinds, mut samples) = (HashMap::new(), HashMap::new());
    let mut current: Option<(usize, DumpSample)> = None;
    for line in text.lines() {
        let t = line.trim();
        if let (Some(at), Some(ev)) = (t.find('@'), t.find("]: event: ")) {
            if t.starts_with("0x") {
                let size = hex(&t[t.find("[0x").unwrap() + 1..ev]);
                kinds.insert(
                    hex(&t[..at]) as usize,
                    (t[ev + 10..].parse().unwrap(), size as usize),
                );
                continue;
            }
        }
        if let Some(p) = t.find(": PERF_RECORD_SAMPLE(") {
            if let Some((off, s)) = current.take() {
                samples.insert(off, s);
            }
            let head: Vec<&str> = t[..p].split_whitespace().collect();
            let bracket = head.iter().position(|w| w.starts_with("[0x")).unwrap();
            let offset = hex(head[bracket - 1]) as usize;
            let time = (bracket >= 2).then(|| head[bracket - 2].parse().unwrap());
            let rest = t.split("): ").nth(1).unwrap();
            let w: Vec<&str> = rest.split_whitespace().collect();
            let (pid, tid) = w[0].trim_end_matches(':').split_once('/').unwrap();
            let s = DumpSample {
                time,
                pid_tid: (pid.parse().unwrap(), tid.parse().unwrap()),
                ip: hex(w[1]),
                period: w[3].parse().unwrap(),
                ..Default::default()
            };
            current = Some((offset, s));
            continue;
        }
        let Some((_, s)) = current.as_mut() else {
            continue;
        };
        if t.is_empty() {
            let (off, s) = current.take().unwrap();
            samples.insert(off, s);
        } else if let Some((i, v)) = t
            .strip_prefix(".....")
            .and_then(|rest| rest.trim_start().split_once(": "))
            .filter(|(i, _)| i.bytes().all(|c| c.is_ascii_digit()))
        {
            // ".....  3: 00007f...": chain entry 3
            assert_eq!(i.parse::<usize>().unwrap(), s.chain.len());
            s.chain.push(hex(v));
        } else if t.starts_with("......") {
            // "...... dso: /usr/lib/...": not a record field
        } else if let Some(rest) = t.strip_prefix("... user regs: mask ") {
            s.regs_abi = Some(rest.split("ABI ").nth(1).unwrap().to_string());
        } else if let Some(rest) = t.strip_prefix(".... ") {
            let mut w = rest.split_whitespace();
            let (name, value) = (w.next().unwrap(), w.next().unwrap());
            s.regs.push((name.to_ascii_lowercase(), hex(value)));
        } else if let Some(rest) = t.strip_prefix("... ustack: size ") {
            s.ustack_size = Some(rest.split(',').next().unwrap().parse().unwrap());
        }
    }
    if let Some((off, s)) = current {
        samples.insert(off, s);
    }
    (kinds, samples)
}

/// Every record's type and size, and every sample's decoded fields, as perf
/// prints them; returns the numbers of samples compared and of records.
fn compare_with_dump(file: &Path) -> (usize, usize) {
    let data = PerfData::open(file).unwrap();
    let (kinds, samples) = dump(file);
    let records: Vec<_> = data.records().map(Result::unwrap).collect();
    assert!(records.len() > 10, "only {} records", records.len());
    let (mut compared, all) = (0, records.len());
    for (offset, bytes) in records {
        let parsed = data.parse(bytes).unwrap();
        let (kind, size) = kinds[&offset];
        assert_eq!(
            (parsed.header.kind, parsed.header.size as usize),
            (kind, size),
            "{offset:#x}"
        );
        let Record::Sample(s) = parsed.record else {
            continue;
        };
        assert_eq!(s.unreturned_field(), None);
        let want = &samples[&offset];
        assert_eq!(s.pid_tid(), Some(want.pid_tid), "{offset:#x}");
        let attr = data.attr_of(bytes).unwrap();
        // Without PERF_SAMPLE_PERIOD (a fixed period) perf prints the attr's.
        let period = s.period().unwrap_or(attr.raw.sample_period());
        assert_eq!(
            (s.ip(), period),
            (Some(want.ip), want.period),
            "{offset:#x}"
        );
        if let Some(t) = want.time {
            assert_eq!(s.time(), Some(t), "{offset:#x}");
        }
        if let Some(chain) = s.callchain() {
            assert_eq!(chain.iter().collect::<Vec<_>>(), want.chain, "{offset:#x}");
            // The segments hold every value that is not a marker, in order.
            let split: Vec<u64> = Callchain::new(chain)
                .segments()
                .flat_map(|(_, ips)| ips.iter())
                .collect();
            let addresses: Vec<u64> = want
                .chain
                .iter()
                .copied()
                .filter(|v| Context::from_marker(*v).is_none())
                .collect();
            assert_eq!(split, addresses, "{offset:#x}");
        }
        if let Some(regs) = s.regs_user() {
            let names = RegNames::of(RegsArch::X86);
            let ours: Vec<(String, u64)> = names
                .named(&regs, attr.raw.sample_regs_user)
                .map(|(n, v)| (n.to_string(), v))
                .collect();
            // perf prints registers by name in mask order, as we do.
            assert_eq!(ours, want.regs, "{offset:#x}");
            let abi = match regs.abi {
                1 => "32-bit",
                2 => "64-bit",
                _ => "none",
            };
            assert_eq!(
                want.regs_abi.as_deref().unwrap_or("none"),
                abi,
                "{offset:#x}"
            );
        }
        if let Some((stack, dyn_size)) = s.stack_user() {
            // perf prints the dynamic size (the bytes actually dumped).
            assert_eq!(Some(dyn_size as usize), want.ustack_size, "{offset:#x}");
            assert!(dyn_size as usize <= stack.len());
        }
        compared += 1;
    }
    (compared, all)
}

/// A busy shell loop: enough cpu-clock samples in user space.
const WORKLOAD: &[&str] = &[
    "--",
    "sh",
    "-c",
    "i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done; ls -R /usr/share/doc >/dev/null",
];

#[test]
fn cpu_clock_samples_with_callchains_and_user_regs_agree_with_perf() {
    if !cfg!(target_arch = "x86_64") {
        not_applicable(
            Need::PerfTool,
            &format!(
                "records x86_64 user registers with perf; this machine is {}",
                std::env::consts::ARCH
            ),
        );
        return;
    }
    let mut args = vec!["-e", "cpu-clock", "-c", "200000", "--call-graph", "fp"];
    args.extend(["--user-regs=ip,sp,bp,ax,r15"]);
    args.extend(WORKLOAD);
    let Some(file) = record("fp", &args) else {
        return;
    };
    let (n, records) = compare_with_dump(&file);
    println!("layout fp-callchain-user-regs: {n} samples compared with perf report -D, {records} records");
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
    assert!(n >= 20, "only {n} samples");
}

#[test]
fn samples_with_user_stack_agree_with_perf() {
    if !cfg!(target_arch = "x86_64") {
        not_applicable(
            Need::PerfTool,
            &format!(
                "records x86_64 user registers with perf; this machine is {}",
                std::env::consts::ARCH
            ),
        );
        return;
    }
    let mut args = vec![
        "-e",
        "cpu-clock",
        "-c",
        "200000",
        "--call-graph",
        "dwarf,2048",
    ];
    args.extend(WORKLOAD);
    let Some(file) = record("dwarf", &args) else {
        return;
    };
    let (n, records) = compare_with_dump(&file);
    println!(
        "layout dwarf-user-stack: {n} samples (user regs and stack) compared with perf report -D, {records} records"
    );
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
    assert!(n >= 20, "only {n} samples");
}

/// `perf script --ns -F tid,time,event,trace` lines by (tid, time).
fn script_lines(file: &Path) -> HashMap<(u32, u64), (String, String)> {
    let text = perf_on(file, &["script", "--ns", "-F", "tid,time,event,trace"]);
    let mut out = HashMap::new();
    for line in text.lines() {
        // "  28596  1427.622971079: syscalls:sys_enter_openat: dfd: 0x..."
        let (tid, rest) = line.trim_start().split_once(char::is_whitespace).unwrap();
        let tid: u32 = tid.parse().unwrap();
        let (time, rest) = rest.trim_start().split_once(": ").unwrap();
        let (secs, nanos) = time.split_once('.').unwrap();
        let ns = secs.parse::<u64>().unwrap() * 1_000_000_000 + nanos.parse::<u64>().unwrap();
        let (event, trace) = rest.trim_start().split_once(": ").unwrap();
        out.insert((tid, ns), (event.trim().to_string(), trace.to_string()));
    }
    out
}

fn int(v: TraceValue<'_>) -> i128 {
    match v {
        TraceValue::Signed(x) => x.into(),
        TraceValue::Unsigned(x) => x.into(),
        other => panic!("not an integer: {other:?}"),
    }
}

#[test]
fn tracepoint_fields_agree_with_perf_script() {
    let args = [
        "-e",
        "sched:sched_switch",
        "-e",
        "syscalls:sys_enter_openat",
        "--",
        "sh",
        "-c",
        "cat /etc/hostname >/dev/null; sleep 0.01; ls / >/dev/null; sleep 0.01; cat /proc/version >/dev/null",
    ];
    let Ok(tracefs) = Tracefs::find() else {
        let why = "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)";
        not_applicable(Need::Tracefs, why);
        return;
    };
    let Some(file) = record("tp", &args) else {
        return;
    };
    let mut formats = HashMap::new();
    for (sys, ev) in [("sched", "sched_switch"), ("syscalls", "sys_enter_openat")] {
        let f = tracefs.format(sys, ev).unwrap();
        formats.insert(f.id.unwrap(), (format!("{sys}:{ev}"), f));
    }
    let data = PerfData::open(&file).unwrap();
    let lines = script_lines(&file);
    let (mut switches, mut opens) = (0, 0);
    for rec in data.records() {
        let (offset, bytes) = rec.unwrap();
        let Record::Sample(s) = data.parse(bytes).unwrap().record else {
            continue;
        };
        let attr = data.attr_of(bytes).unwrap();
        let (name, format): &(String, TraceFormat) = &formats[&attr.raw.config];
        let key = (s.pid_tid().unwrap().1, s.time().unwrap());
        let (event, trace) = &lines[&key];
        assert_eq!(event, name, "{offset:#x}");
        let values = format.decode(s.raw().unwrap(), data.order).unwrap();
        let get = |n: &str| values.iter().find(|(k, _)| *k == n).unwrap().1;
        if name == "sched:sched_switch" {
            // prev_comm=sh prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=...
            // (comms may hold spaces: split at the known keys, in order)
            let mut perf = HashMap::new();
            let mut rest = trace.strip_prefix("prev_comm=").unwrap();
            let mut key = "prev_comm";
            for (sep, next) in [
                (" prev_pid=", "prev_pid"),
                (" prev_prio=", "prev_prio"),
                (" prev_state=", "prev_state"),
                (" ==> next_comm=", "next_comm"),
                (" next_pid=", "next_pid"),
                (" next_prio=", "next_prio"),
            ] {
                let (value, more) = rest.split_once(sep).unwrap();
                perf.insert(key, value);
                (rest, key) = (more, next);
            }
            perf.insert(key, rest);
            for f in ["prev_comm", "next_comm"] {
                let TraceValue::Str(v) = get(f) else { panic!() };
                assert_eq!(String::from_utf8_lossy(v), perf[f], "{f} at {offset:#x}");
            }
            for f in ["prev_pid", "prev_prio", "next_pid", "next_prio"] {
                assert_eq!(int(get(f)).to_string(), perf[f], "{f} at {offset:#x}");
            }
            // perf prints the state as letters: "R" (optionally "R+") is 0.
            let running = int(get("prev_state")) & 0xff == 0;
            assert_eq!(running, perf["prev_state"].starts_with('R'), "{trace}");
            switches += 1;
        } else {
            // dfd: 0xffffff9c, filename: 0x7f.., flags: 0x00080000, mode: 0x00000000
            let perf: HashMap<&str, u64> = trace
                .split(", ")
                .map(|kv| kv.split_once(": ").unwrap())
                .map(|(k, v)| (k, hex(v)))
                .collect();
            for f in ["filename", "flags", "mode"] {
                assert_eq!(int(get(f)), perf[f].into(), "{f} at {offset:#x}");
            }
            // The field is declared `int` in an 8-byte slot; libtraceevent
            // prints it as a 32-bit int, this crate returns the slot's 8 bytes.
            assert_eq!(
                int(get("dfd")) as u32 as u64,
                perf["dfd"],
                "dfd at {offset:#x}"
            );
            opens += 1;
        }
    }
    println!(
        "layout tracepoint-fields: {} samples ({switches} sched_switch, {opens} sys_enter_openat) compared with perf script, {} records",
        switches + opens,
        data.records().count()
    );
    assert!(
        switches >= 2 && opens >= 3,
        "{switches} switches, {opens} opens"
    );
    std::fs::remove_dir_all(file.parent().unwrap()).unwrap();
}
