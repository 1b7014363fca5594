//! Side-band records as perf script's `--show-*-events` print them
//! (switches, namespaces, mmaps, comm/fork/exit), and what perf script
//! resolves from earlier records (comms, cgroup paths), for
//! [`crate::perf_data_fields::compare`].

use perf_event_core::record::{MappingId, Parsed, Record};
use perf_event_core::sys;
use std::collections::HashMap;

/// What perf script resolves from earlier records: each thread's comm
/// (COMM, or its parent's at FORK) and each cgroup's path (CGROUP).
#[derive(Default)]
pub struct Names {
    pub comms: HashMap<u32, String>,
    pub cgroups: HashMap<u64, String>,
}

impl Names {
    pub fn comm(&self, tid: u32) -> String {
        if tid == 0 && !self.comms.contains_key(&0) {
            // perf names the idle task itself.
            return "swapper".to_string();
        }
        self.comms
            .get(&tid)
            .cloned()
            // perf prints the tid signed (-1: outside its pid namespace).
            .unwrap_or_else(|| format!(":{}", tid as i32))
    }

    pub fn follow(&mut self, r: &Record) {
        match r {
            Record::Comm { tid, comm, .. } => {
                let comm = String::from_utf8_lossy(comm).into_owned();
                self.comms.insert(*tid, comm);
            }
            Record::Fork { tid, ptid, .. } => {
                // A new thread has its parent's comm until its own COMM.
                if let Some(c) = self.comms.get(ptid).cloned() {
                    self.comms.insert(*tid, c);
                }
            }
            Record::Cgroup { id, path } => {
                let path = String::from_utf8_lossy(path).into_owned();
                self.cgroups.insert(*id, path);
            }
            _ => {}
        }
    }
}

/// C's `%#x`: "0" for zero, else with "0x".
pub fn c_hex(v: u64) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

/// perf's namespace names (`perf_ns__names`), by index.
pub const NAMESPACES: [&str; 7] = ["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];

/// A side-band record as perf script's `--show-*-events` prints it after
/// the prefix; `None` for the types this comparison does not show.
pub fn side_band_text(p: &Parsed) -> Option<String> {
    let misc = u32::from(p.header.misc);
    Some(match &p.record {
        Record::Switch => {
            let out = misc & sys::PERF_RECORD_MISC_SWITCH_OUT != 0;
            let preempt = misc & sys::PERF_RECORD_MISC_SWITCH_OUT_PREEMPT != 0;
            let how = match (out, preempt) {
                (false, _) => "IN",
                (true, false) => "OUT",
                (true, true) => "OUT preempt",
            };
            format!("PERF_RECORD_SWITCH {how}")
        }
        Record::SwitchCpuWide {
            next_prev_pid,
            next_prev_tid,
        } => {
            let out = misc & sys::PERF_RECORD_MISC_SWITCH_OUT != 0;
            let preempt = misc & sys::PERF_RECORD_MISC_SWITCH_OUT_PREEMPT != 0;
            let how = match (out, preempt) {
                (false, _) => "IN prev",
                (true, false) => "OUT next",
                (true, true) => "OUT preempt next",
            };
            let (pid, tid) = (*next_prev_pid as i32, *next_prev_tid as i32);
            format!("PERF_RECORD_SWITCH_CPU_WIDE {how} pid/tid: {pid}/{tid}")
        }
        Record::Namespaces { pid, tid, links } => {
            let n: Vec<u64> = links.iter().collect();
            let each: Vec<String> = n
                .chunks(2)
                .enumerate()
                .map(|(i, l)| {
                    let name = NAMESPACES.get(i).copied().unwrap_or("UNKNOWN");
                    format!("{i}/{name}: {}/{}", l[0], c_hex(l[1]))
                })
                .collect();
            format!(
                "PERF_RECORD_NAMESPACES {pid}/{tid} - nr_namespaces: {} [{}]",
                n.len() / 2,
                each.join(", ")
            )
        }
        Record::Mmap {
            pid,
            tid,
            addr,
            len,
            pgoff,
            filename,
        } => {
            let data = misc & sys::PERF_RECORD_MISC_MMAP_DATA != 0;
            format!(
                "PERF_RECORD_MMAP {}/{}: [{}({}) @ {}]: {} {}",
                *pid as i32,
                *tid as i32,
                c_hex(*addr),
                c_hex(*len),
                c_hex(*pgoff),
                if data { 'r' } else { 'x' },
                String::from_utf8_lossy(filename)
            )
        }
        Record::Mmap2 {
            pid,
            tid,
            addr,
            len,
            pgoff,
            id,
            prot,
            flags,
            filename,
        } => {
            let id = match id {
                MappingId::Inode {
                    maj,
                    min,
                    ino,
                    ino_generation,
                } => format!("{maj:02x}:{min:02x} {ino} {ino_generation}"),
                MappingId::BuildId(b) => {
                    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                    format!("<{hex}>")
                }
            };
            let bit = |set: bool, c: char| if set { c } else { '-' };
            let mode: String = [
                bit(prot & 1 != 0, 'r'),
                bit(prot & 2 != 0, 'w'),
                bit(prot & 4 != 0, 'x'),
                if flags & 1 != 0 { 's' } else { 'p' },
            ]
            .iter()
            .collect();
            format!(
                "PERF_RECORD_MMAP2 {}/{}: [{}({}) @ {} {id}]: {mode} {}",
                *pid as i32,
                *tid as i32,
                c_hex(*addr),
                c_hex(*len),
                c_hex(*pgoff),
                String::from_utf8_lossy(filename)
            )
        }
        Record::Comm { pid, tid, comm } => {
            let exec = if misc & sys::PERF_RECORD_MISC_COMM_EXEC != 0 {
                " exec"
            } else {
                ""
            };
            let comm = String::from_utf8_lossy(comm);
            format!("PERF_RECORD_COMM{exec}: {comm}:{pid}/{tid}")
        }
        Record::Lost { lost, .. } => format!("PERF_RECORD_LOST lost {lost}"),
        Record::Fork {
            pid,
            ppid,
            tid,
            ptid,
            ..
        } => format!("PERF_RECORD_FORK({pid}:{tid}):({ppid}:{ptid})"),
        Record::Exit {
            pid,
            ppid,
            tid,
            ptid,
            ..
        } => format!("PERF_RECORD_EXIT({pid}:{tid}):({ppid}:{ptid})"),
        _ => return None,
    })
}
