//! What perf prints of a perf.data file, read back for
//! [`crate::perf_data_fields::compare`]: `perf script`'s blocks,
//! `perf report --stats`' record counts, `-s cgroup`'s samples per cgroup,
//! `-D`'s PERF_RECORD_READ values, and `perf evlist -v`'s attrs checked
//! against the crate's.

use crate::sample_support::perf_on;
use perf_data_file::PerfData;
use std::collections::BTreeMap;
use std::path::Path;

/// A callchain entry as compared: kernel addresses as perf prints them
/// (kallsyms is the identity map), user ones only counted (perf prints
/// them relative to their object when it finds one).
pub fn chain_entry(ip: u64) -> String {
    if ip >= 0xffff_8000_0000_0000 {
        format!("{ip:x}")
    } else {
        "u".into()
    }
}

/// perf's names of record types (`perf_event__name`), as `--stats` prints them.
pub fn kind_name(kind: u32) -> String {
    const NAMES: &[(u32, &str)] = &[
        (1, "MMAP"),
        (2, "LOST"),
        (3, "COMM"),
        (4, "EXIT"),
        (5, "THROTTLE"),
        (6, "UNTHROTTLE"),
        (7, "FORK"),
        (8, "READ"),
        (9, "SAMPLE"),
        (10, "MMAP2"),
        (11, "AUX"),
        (12, "ITRACE_START"),
        (13, "LOST_SAMPLES"),
        (14, "SWITCH"),
        (15, "SWITCH_CPU_WIDE"),
        (16, "NAMESPACES"),
        (17, "KSYMBOL"),
        (18, "BPF_EVENT"),
        (19, "CGROUP"),
        (20, "TEXT_POKE"),
        (21, "AUX_OUTPUT_HW_ID"),
        (64, "ATTR"),
        (65, "EVENT_TYPE"),
        (66, "TRACING_DATA"),
        (67, "BUILD_ID"),
        (68, "FINISHED_ROUND"),
        (69, "ID_INDEX"),
        (73, "THREAD_MAP"),
        (74, "CPU_MAP"),
        (78, "EVENT_UPDATE"),
        (79, "TIME_CONV"),
        (80, "FEATURE"),
        (81, "COMPRESSED"),
        (82, "FINISHED_INIT"),
    ];
    NAMES
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(format!("type {kind}"), |(_, n)| n.to_string())
}

/// `perf report -s cgroup`: the samples of each cgroup (perf 6.1's perf
/// script has no cgroup field).
pub fn perf_cgroups(data: &Path) -> BTreeMap<String, usize> {
    let text = perf_on(
        data,
        &["report", "--stdio", "-s", "cgroup", "-F", "sample,cgroup"],
    );
    let rows = text.lines().filter(|l| !l.starts_with('#'));
    rows.filter_map(|l| {
        let (n, path) = l.trim().split_once(char::is_whitespace)?;
        Some((path.trim().to_string(), n.parse().ok()?))
    })
    .collect()
}

/// `perf report --stats`: the aggregated count of each record type.
pub fn perf_stats(data: &Path) -> BTreeMap<String, usize> {
    let text = perf_on(data, &["report", "--stats"]);
    let section = text.split("Aggregated stats:").nth(1).unwrap_or("");
    let mut out = BTreeMap::new();
    for l in section.lines() {
        // Then each event's own stats.
        if l.trim_end().ends_with(" stats:") {
            break;
        }
        let Some((name, rest)) = l.trim().split_once(" events:") else {
            continue;
        };
        if name != "TOTAL" {
            let n = rest.split_whitespace().next().unwrap().parse().unwrap();
            out.insert(name.to_string(), n);
        }
    }
    out
}

/// `perf evlist -v`: each event's sample_type and read_format as perf
/// names them, against the crate's attrs.
pub fn attrs_agree(data: &Path, file: &PerfData) {
    // In perf's order (`perf_event_attr_fprintf.c`), by PERF_SAMPLE_* bit.
    const SAMPLE: [(u32, &str); 24] = [
        (0, "IP"),
        (1, "TID"),
        (2, "TIME"),
        (3, "ADDR"),
        (4, "READ"),
        (5, "CALLCHAIN"),
        (6, "ID"),
        (7, "CPU"),
        (8, "PERIOD"),
        (9, "STREAM_ID"),
        (10, "RAW"),
        (11, "BRANCH_STACK"),
        (12, "REGS_USER"),
        (13, "STACK_USER"),
        (16, "IDENTIFIER"),
        (18, "REGS_INTR"),
        (15, "DATA_SRC"),
        (14, "WEIGHT"),
        (19, "PHYS_ADDR"),
        (20, "AUX"),
        (21, "CGROUP"),
        (22, "DATA_PAGE_SIZE"),
        (23, "CODE_PAGE_SIZE"),
        (24, "WEIGHT_STRUCT"),
    ];
    const READ: [(u32, &str); 5] = [
        (0, "TOTAL_TIME_ENABLED"),
        (1, "TOTAL_TIME_RUNNING"),
        (2, "ID"),
        (3, "GROUP"),
        (4, "LOST"),
    ];
    let names = |bits: u64, table: &[(u32, &str)]| {
        let set: Vec<&str> = table
            .iter()
            .filter(|(b, _)| bits & (1 << b) != 0)
            .map(|(_, n)| *n)
            .collect();
        set.join("|")
    };
    let text = perf_on(data, &["evlist", "-v"]);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(", sample_type: "))
        .collect();
    assert_eq!(lines.len(), file.attrs.len(), "{text}");
    for (a, l) in file.attrs.iter().zip(lines) {
        let name = a.name.as_deref().unwrap();
        assert!(l.starts_with(&format!("{name}: ")), "{name}: {l}");
        let st = format!(", sample_type: {},", names(a.raw.sample_type, &SAMPLE));
        assert!(l.contains(&st), "{st} not in {l}");
        let rf = format!(", read_format: {},", names(a.raw.read_format, &READ));
        assert!(a.raw.read_format == 0 || l.contains(&rf), "{rf} not in {l}");
    }
    // Each event's ids, as the header's event_desc lists them.
    let header = perf_on(data, &["report", "--header-only", "-I"]);
    let ids: Vec<&str> = header
        .lines()
        .filter(|l| l.starts_with("# event : name = "))
        .filter_map(|l| l.split_once(", id = { ")?.1.split_once(" }"))
        .map(|(ids, _)| ids)
        .collect();
    assert_eq!(ids.len(), file.attrs.len(), "{header}");
    for (a, perf) in file.attrs.iter().zip(ids) {
        let ours: Vec<String> = a.ids.iter().map(u64::to_string).collect();
        assert_eq!(ours.join(", "), perf, "ids of {:?}", a.name);
    }
}

/// perf script's blocks, whitespace collapsed: a sample line with its
/// callchain lines after " |" (kernel entries as printed, user ones as
/// "u"), or a side-band record with its continuation lines.
pub fn script_blocks(data: &Path, fields: &[&str], show: &[&str]) -> Vec<String> {
    let f = fields.join(",");
    let mut args = vec!["script", "--ns", "-F", &f];
    args.extend(show);
    let text = perf_on(data, &args);
    let mut out: Vec<String> = Vec::new();
    for l in text.lines() {
        if l.trim().is_empty() {
            continue;
        }
        let side_band = out.last().is_some_and(|b| b.contains("PERF_RECORD_"));
        if l.starts_with('\t') && !out.is_empty() {
            let last = out.last_mut().unwrap();
            if side_band {
                last.push(' ');
                last.push_str(&l.split_whitespace().collect::<Vec<_>>().join(" "));
            } else {
                if !last.contains(" |") {
                    last.push_str(" |");
                }
                let ip = u64::from_str_radix(l.trim(), 16).unwrap();
                last.push(' ');
                last.push_str(&chain_entry(ip));
            }
            continue;
        }
        out.push(without_data_src_text(l));
    }
    out
}

/// The words of a line, without the decoded data source perf prints
/// after its value ("|OP N/A|LVL N/A or N/A|...|BLK  N/A").
pub fn without_data_src_text(l: &str) -> String {
    let mut words = Vec::new();
    let mut decoded = false;
    let mut blk = false;
    for w in l.split_whitespace() {
        if w.starts_with("|OP") {
            decoded = true;
        }
        if decoded {
            if w.contains("|BLK") {
                blk = true;
            } else if blk && !matches!(w, "N/A" | "Data" | "Addr") {
                decoded = false;
            }
        }
        if !decoded {
            words.push(w);
        }
    }
    words.join(" ")
}

/// `perf report -D`: its PERF_RECORD_READ lines ("pid tid name value"
/// and the enabled, running, id and lost values under it), and each
/// sample's `sample_read` lines (dots left out) by the sample's offset.
pub fn dumped_reads(data: &Path) -> (Vec<String>, BTreeMap<usize, String>) {
    let text = perf_on(data, &["report", "-D"]);
    let mut out: Vec<String> = Vec::new();
    let mut samples: BTreeMap<usize, String> = BTreeMap::new();
    let mut under_read = false;
    let mut sample_at = None;
    let mut under_sample_read = false;
    for l in text.lines() {
        if let Some((_, r)) = l.split_once("PERF_RECORD_READ: ") {
            out.push(r.trim().to_string());
            under_read = true;
            continue;
        }
        if l.contains(": PERF_RECORD_SAMPLE(") {
            // "[TIME ]0x560 [0x60]: PERF_RECORD_SAMPLE(...": its offset.
            let w: Vec<&str> = l.split_whitespace().collect();
            let offset = w
                .iter()
                .position(|t| t.starts_with("[0x"))
                // printf's `%#lx` writes offset 0 as "0" (a sample first
                // in a `--threads` data.N stream).
                .and_then(|at| {
                    let o = w.get(at.checked_sub(1)?)?;
                    if *o == "0" {
                        Some("0")
                    } else {
                        o.strip_prefix("0x")
                    }
                })
                .and_then(|o| usize::from_str_radix(o, 16).ok());
            sample_at =
                Some(offset.unwrap_or_else(|| panic!("perf report -D: no offset in {l:?}")));
            continue;
        }
        if l == "... sample_read:" {
            under_sample_read = true;
            continue;
        }
        if under_sample_read {
            if let Some(v) = l.strip_prefix("....") {
                let v = v.trim_start_matches('.').trim();
                let s = samples.entry(sample_at.unwrap()).or_default();
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(v);
                continue;
            }
            under_sample_read = false;
        }
        let value = l.strip_prefix("... ").and_then(|r| r.split_once(" : "));
        match (under_read, value) {
            (true, Some((_, v))) => {
                let last = out.last_mut().unwrap();
                last.push(' ');
                last.push_str(v.trim());
            }
            _ => under_read = false,
        }
    }
    (out, samples)
}
