//! One perf record layout read by the crate and printed by perf, field by
//! field: every field `perf script -F` has for the layout's sample_type
//! (chosen from the attr, so that perf script accepts each one), the
//! side-band records perf script shows (`--show-switch-events` ...), the
//! PERF_RECORD_READ values `perf report -D` prints, each attr's
//! sample_type and read_format as `perf evlist -v` names them, and the
//! number of records of each type as `perf report --stats` counts them.

use crate::lab_support;
use crate::perf_data_printed::{
    attrs_agree, chain_entry, dumped_reads, kind_name, perf_cgroups, perf_stats, script_blocks,
};
use crate::perf_data_side_band::{side_band_text, Names};
use crate::perf_data_support::PERF_MAX_STACK;
use perf_data_file::{FileAttr, PerfData};
use perf_event_core::abi::arch::RegsArch;
use perf_event_core::read_format::{ReadFormat, Reading};
use perf_event_core::record::{Context, Record, RegNames, Regs, Sample, Weight};
use perf_event_core::sys;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one layout's comparison covered.
#[derive(Debug, Default)]
pub struct Compared {
    /// Sample lines (one per group member with PERF_SAMPLE_READ).
    pub samples: usize,
    /// Records of the data section.
    pub records: usize,
    /// Side-band records compared with perf script's `--show-*` lines.
    pub side_band: usize,
    /// PERF_RECORD_READ records compared with `perf report -D`.
    pub reads: usize,
    /// Samples whose PERF_SAMPLE_READ values were compared with `-D`'s.
    pub sample_reads: usize,
}

/// Where perf record writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// A file (`-o FILE`; a directory with `--threads`).
    File,
    /// perf's pipe format (`-o -`), saved to a file.
    Pipe,
    /// The pipe through `perf inject -b` (HEADER_BUILD_ID records added).
    PipeInjected,
}

/// Runs `perf record -q ARGS` into `DIR/NAME.data` as `output` says;
/// `None` after a [`lab_support::skip`] when perf (or the kernel) refuses
/// the options.
pub fn perf_record(dir: &Path, name: &str, args: &[&str], output: Output) -> Option<PathBuf> {
    let data = dir.join(format!("{name}.data"));
    let mut perf = Command::new("perf");
    perf.args(["record", "-q", "-o"]);
    let file = || std::fs::File::create(&data).unwrap();
    let mut inject = None;
    match output {
        Output::File => drop(perf.arg(&data)),
        Output::Pipe => drop(perf.arg("-").stdout(file())),
        Output::PipeInjected => {
            let mut child = Command::new("perf")
                .args(["inject", "-b"])
                .stdin(std::process::Stdio::piped())
                .stdout(file())
                .spawn()
                .unwrap();
            perf.arg("-").stdout(child.stdin.take().unwrap());
            inject = Some(child);
        }
    }
    let out = perf.args(args).output().unwrap();
    drop(perf);
    let injected = inject.is_none_or(|mut c| c.wait().unwrap().success());
    if !out.status.success() || !injected {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
        lab_support::skip(
            &format!("perf record fails for {name}"),
            &format!("perf record {args:?} ({output:?}): {why}"),
        );
        return None;
    }
    Some(data)
}

/// `perf script -F` names of the sample fields, by PERF_SAMPLE_* bit, in
/// the order perf script prints them (after comm, pid/tid, cpu, time,
/// period and the event name).
const FIELDS: &[(u32, &str)] = &[
    (sys::PERF_SAMPLE_ADDR, "addr"),
    (sys::PERF_SAMPLE_DATA_SRC, "data_src"),
    (sys::PERF_SAMPLE_WEIGHT, "weight"),
    (sys::PERF_SAMPLE_WEIGHT_STRUCT, "weight"),
    (sys::PERF_SAMPLE_WEIGHT_STRUCT, "ins_lat"),
    (sys::PERF_SAMPLE_IP, "ip"),
    (sys::PERF_SAMPLE_REGS_INTR, "iregs"),
    (sys::PERF_SAMPLE_REGS_USER, "uregs"),
    (sys::PERF_SAMPLE_BRANCH_STACK, "brstack"),
    (sys::PERF_SAMPLE_PHYS_ADDR, "phys_addr"),
    (sys::PERF_SAMPLE_DATA_PAGE_SIZE, "data_page_size"),
    (sys::PERF_SAMPLE_CODE_PAGE_SIZE, "code_page_size"),
];

/// The `-F` list for `sample_type` (every event of the file has it).
fn script_fields(sample_type: u64, comm: bool) -> Vec<&'static str> {
    let has = |bit: u32| sample_type & u64::from(bit) != 0;
    let mut f = Vec::new();
    if comm && has(sys::PERF_SAMPLE_TID) {
        f.push("comm");
    }
    if has(sys::PERF_SAMPLE_TID) {
        f.extend(["pid", "tid"]);
    }
    if has(sys::PERF_SAMPLE_CPU) {
        f.push("cpu");
    }
    if has(sys::PERF_SAMPLE_TIME) {
        f.push("time");
    }
    f.extend(["period", "event"]);
    for (bit, name) in FIELDS {
        if has(*bit) && !f.contains(name) {
            f.push(name);
        }
    }
    f
}

/// perf's page size name (`get_page_size_name`): "4K", "2M", "N/A" for 0.
fn page_size(mut n: u64) -> String {
    if n == 0 {
        return "N/A".into();
    }
    let mut unit = 0;
    while n / 1024 > 1 && unit < 3 {
        n /= 1024;
        unit += 1;
    }
    format!("{n}{}", ['B', 'K', 'M', 'G'][unit])
}

/// " ABI:2 AX:0x.. SP:0x.." as perf script prints registers (nothing
/// without registers).
fn regs_text(regs: Option<Regs<'_>>, mask: u64, out: &mut Vec<String>) {
    let Some(regs) = regs.filter(|r| r.abi != 0) else {
        return;
    };
    out.push(format!("ABI:{}", regs.abi));
    for (name, v) in RegNames::of(RegsArch::X86).named(&regs, mask) {
        out.push(format!("{}:{v:#x}", name.to_ascii_uppercase()));
    }
}

/// The prefix perf script prints for every record: comm, pid/tid, cpu, time.
fn prefix(fields: &[&str], comm: &str, pid_tid: (u32, u32), cpu: u32, time: u64) -> Vec<String> {
    let mut out = Vec::new();
    if fields.contains(&"comm") {
        out.push(comm.to_string());
    }
    if fields.contains(&"pid") {
        // perf prints them signed: -1 for a task outside perf's pid
        // namespace (the kernel's perf_event_pid()).
        out.push(format!("{}/{}", pid_tid.0 as i32, pid_tid.1 as i32));
    }
    if fields.contains(&"cpu") {
        out.push(format!("[{cpu:03}]"));
    }
    if fields.contains(&"time") {
        out.push(format!(
            "{}.{:09}:",
            time / 1_000_000_000,
            time % 1_000_000_000
        ));
    }
    out
}

/// One sample line as perf script prints it for event `attr` with
/// `period`, whitespace collapsed; callchain entries after " |".
fn sample_line(s: &Sample, attr: &FileAttr, fields: &[&str], names: &Names, period: u64) -> String {
    let has = |f: &str| fields.contains(&f);
    let pid_tid = s.pid_tid().unwrap_or((0, 0));
    let mut out = prefix(
        fields,
        &names.comm(pid_tid.1),
        pid_tid,
        s.cpu().unwrap_or(0),
        s.time().unwrap_or(0),
    );
    out.push(period.to_string());
    out.push(format!("{}:", attr.name.as_deref().unwrap_or("?")));
    let hex = |v: Option<u64>| format!("{:x}", v.unwrap());
    if has("addr") {
        out.push(hex(s.addr()));
    }
    if has("data_src") {
        out.push(hex(s.data_src()));
    }
    let weight_struct = attr.raw.sample_type & u64::from(sys::PERF_SAMPLE_WEIGHT_STRUCT) != 0;
    if has("weight") {
        let w = s.weight().unwrap();
        // perf prints a weight struct's var1_dw.
        let w = if weight_struct {
            Weight::from_word(w).var1_dw.into()
        } else {
            w
        };
        out.push(w.to_string());
    }
    if has("ins_lat") {
        out.push(Weight::from_word(s.weight().unwrap()).var2_w.to_string());
    }
    let chain = s.callchain();
    if has("ip") && chain.is_none() {
        out.push(hex(s.ip()));
    }
    if has("iregs") {
        regs_text(s.regs_intr(), attr.raw.sample_regs_intr, &mut out);
    }
    if has("uregs") {
        regs_text(s.regs_user(), attr.raw.sample_regs_user, &mut out);
    }
    if has("brstack") {
        for e in s.branch_stack().unwrap().iter() {
            out.push(format!("{:#x}/{:#x}", e.from, e.to));
        }
    }
    if has("phys_addr") {
        out.push(hex(s.phys_addr()));
    }
    if has("data_page_size") {
        out.push(page_size(s.data_page_size().unwrap()));
    }
    if has("code_page_size") {
        out.push(page_size(s.code_page_size().unwrap()));
    }
    let mut line = out.join(" ");
    if let Some(c) = chain.filter(|_| has("ip")) {
        line.push_str(" |");
        let ips = c.iter().filter(|v| Context::from_marker(*v).is_none());
        for ip in ips.take(PERF_MAX_STACK) {
            line.push(' ');
            line.push_str(&chain_entry(ip));
        }
    }
    line
}

/// A sample's PERF_SAMPLE_READ values as `perf report -D` prints them
/// (`sample_read__printf`), one line each, dots left out.
fn sample_read_text(r: &Reading, read_format: u64) -> String {
    let mut out = Vec::new();
    if let Some(t) = r.time_enabled() {
        out.push(format!("time enabled {t:016x}"));
    }
    if let Some(t) = r.time_running() {
        out.push(format!("time running {t:016x}"));
    }
    if read_format & u64::from(sys::PERF_FORMAT_GROUP) != 0 {
        out.push(format!("group nr {}", r.len()));
    }
    for v in r.values() {
        let mut line = format!("id {:016x}, value {:016x}", v.id.unwrap_or(0), v.value);
        if let Some(lost) = v.lost {
            line.push_str(&format!(", lost {lost}"));
        }
        out.push(line);
    }
    out.join("\n")
}

/// The crate's PERF_RECORD_READ as `perf report -D` prints it.
fn read_text(file: &PerfData, bytes: &[u8], pid: u32, tid: u32, values: &[u8]) -> String {
    let attr = file.attr_of(bytes).unwrap();
    let r = ReadFormat(attr.raw.read_format)
        .parse_in(values, file.order)
        .unwrap();
    let v = r.get(0).unwrap();
    let mut s = format!("{pid} {tid} {} {}", attr.name.as_deref().unwrap(), v.value);
    for x in [r.time_enabled(), r.time_running(), v.id, v.lost]
        .into_iter()
        .flatten()
    {
        s.push_str(&format!(" {x}"));
    }
    s
}

/// Compares everything perf prints of `data` with the crate's reading:
/// sample lines (with `comm` when asked), the side-band records `show`
/// asks perf script for, READ records, attrs and record counts.
pub fn compare(data: &Path, comm: bool, show: &[&str]) -> Compared {
    let file = PerfData::open(data).unwrap();
    assert!(!file.recovered);
    attrs_agree(data, &file);
    // The fields every event has (perf script -F refuses one an event
    // lacks).
    let st = file.attrs.iter().fold(!0, |st, a| st & a.raw.sample_type);
    let fields = script_fields(st, comm);
    let mut ours = Vec::new();
    let mut names = Names::default();
    let mut in_cgroups: BTreeMap<String, usize> = BTreeMap::new();
    let mut last_read: HashMap<u64, u64> = HashMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let (mut reads, mut side_band, mut records) = (Vec::new(), 0, 0);
    // In time order, as perf script delivers them (a thread's COMM may
    // come later in the file than its next sample, from another CPU's
    // buffer).
    let mut all: Vec<(u64, usize, &[u8])> = Vec::new();
    for rec in file.records() {
        let (offset, bytes) = rec.unwrap();
        let p = file.parse(bytes).unwrap();
        let time = match &p.record {
            Record::Sample(s) => s.time(),
            _ => p.sample_id.and_then(|i| i.time),
        };
        all.push((time.unwrap_or(0), offset, bytes));
    }
    all.sort_by_key(|(t, _, _)| *t);
    let mut sample_reads = BTreeMap::new();
    for (_, offset, bytes) in all {
        records += 1;
        let p = file.parse(bytes).unwrap();
        *counts.entry(kind_name(p.header.kind)).or_default() += 1;
        names.follow(&p.record);
        if let Record::Read { pid, tid, values } = &p.record {
            reads.push(read_text(&file, bytes, *pid, *tid, values));
        }
        let Record::Sample(s) = &p.record else {
            let shown = match p.header.kind {
                1 | 10 => show.contains(&"--show-mmap-events"),
                3 | 4 | 7 => show.contains(&"--show-task-events"),
                14 | 15 => show.contains(&"--show-switch-events"),
                16 => show.contains(&"--show-namespace-events"),
                2 => show.contains(&"--show-lost-events"),
                68 => show.contains(&"--show-round-events"),
                _ => false,
            };
            if shown && p.header.kind == 68 {
                // Printed bare: a round has no sample_id.
                ours.push("PERF_RECORD_FINISHED_ROUND".into());
                side_band += 1;
                continue;
            }
            if let (true, Some(text)) = (shown, side_band_text(&p)) {
                let id = p.sample_id.unwrap_or_default();
                let pid_tid = id.pid_tid.unwrap_or((0, 0));
                let mut line = prefix(
                    &fields,
                    &names.comm(pid_tid.1),
                    pid_tid,
                    id.cpu.unwrap_or(0),
                    id.time.unwrap_or(0),
                );
                line.push(text);
                ours.push(
                    line.join(" ")
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                );
                side_band += 1;
            }
            continue;
        };
        assert_eq!(s.unreturned_field(), None);
        if let Some(id) = s.cgroup() {
            let path = names.cgroups.get(&id).map_or("N/A", String::as_str);
            *in_cgroups.entry(path.to_string()).or_default() += 1;
        }
        let attr = file.attr_of(bytes).unwrap();
        if let Some(r) = s.read_values() {
            let text = sample_read_text(&r, attr.raw.read_format);
            // perf -D counts a pipe's offsets from the end of its header.
            let at = if file.pipe {
                offset - file.data.start
            } else {
                offset
            };
            sample_reads.insert(at, text);
        }
        let Some(reading) = s.read_values() else {
            // A fixed period is the attr's (perf script prints it).
            let period = s.period().unwrap_or(attr.raw.sample_period());
            ours.push(sample_line(s, attr, &fields, &names, period));
            continue;
        };
        // PERF_SAMPLE_READ: perf delivers one sample per value, its
        // period the value's increase since that id's last sample (none
        // when it did not grow).
        for v in reading.values() {
            let id = v.id.unwrap();
            let member = file.attrs.iter().find(|a| a.ids.contains(&id)).unwrap();
            let before = last_read.insert(id, v.value).unwrap_or(0);
            let period = v.value.wrapping_sub(before);
            if period != 0 {
                ours.push(sample_line(s, member, &fields, &names, period));
            }
        }
    }
    if st & u64::from(sys::PERF_SAMPLE_CGROUP) != 0 {
        assert_eq!(
            in_cgroups,
            perf_cgroups(data),
            "{data:?}: samples by cgroup"
        );
    }
    let mut perf = script_blocks(data, &fields, show);
    ours.sort();
    perf.sort();
    assert_eq!(
        ours.len(),
        perf.len(),
        "{data:?}: lines of perf script -F {fields:?}"
    );
    for (a, b) in ours.iter().zip(&perf) {
        assert_eq!(a, b, "{data:?}: the crate read it, perf script printed it");
    }
    let (mut dumped, dumped_sample_reads) = dumped_reads(data);
    assert_eq!(
        sample_reads, dumped_sample_reads,
        "{data:?}: PERF_SAMPLE_READ values"
    );
    reads.sort();
    dumped.sort();
    assert_eq!(reads, dumped, "{data:?}: PERF_RECORD_READ");
    assert_eq!(counts, perf_stats(data), "{data:?}: records of each type");
    let samples = ours.len() - side_band;
    Compared {
        samples,
        records,
        side_band,
        reads: reads.len(),
        sample_reads: sample_reads.len(),
    }
}
