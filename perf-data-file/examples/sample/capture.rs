//! The records of a recording, parsed in time order after it ended: each
//! sample's addresses with the mappings, forks and names seen before it.
//! Symbols are looked up later still, by [`super::report`].

use super::symbols::Map;
use perf_event_core::record::{Callchain, Context, Parsed, Record};
use perf_event_core::ring::RawRecord;
use perf_event_core::sys;
use perf_event_host::ringset::RingSet;
use std::collections::HashMap;

/// One sample: its addresses are `Capture::ips[first..first + len]`, leaf
/// first (the sampled ip alone without `-g`).
pub struct Sample {
    pub event: u32,
    pub pid: u32,
    pub period: u64,
    /// How many of `pid`'s mappings existed when it was taken.
    pub maps_seen: u32,
    pub first: u32,
    pub len: u32,
}

/// An address of a sample, and whether it is in the kernel.
#[derive(Clone, Copy)]
pub struct Ip {
    pub addr: u64,
    pub kernel: bool,
}

/// Everything recorded, in time order.
#[derive(Default)]
pub struct Capture {
    pub samples: Vec<Sample>,
    pub ips: Vec<Ip>,
    /// Mappings per pid, in the order they were made.
    pub maps: HashMap<u32, Vec<Map>>,
    /// A forked process -> its parent and how many of the parent's
    /// mappings it inherited.
    pub parents: HashMap<u32, (u32, u32)>,
    /// The last name of each process.
    pub comms: HashMap<u32, String>,
}

impl Capture {
    /// Takes one record of `event`, in time order.
    pub fn take(&mut self, set: &RingSet, event: usize, rec: &RawRecord<'_>, scratch: &mut [u8]) {
        let Some(layout) = set.layout(event) else {
            return;
        };
        let Ok(parsed) = rec.parse(layout, scratch) else {
            return;
        };
        self.take_parsed(event, &parsed);
    }

    /// Takes one parsed record of `event`, in time order.
    pub fn take_parsed(&mut self, event: usize, parsed: &Parsed<'_>) {
        match parsed.record {
            Record::Mmap {
                pid,
                addr,
                len,
                pgoff,
                filename,
                ..
            } => {
                let file = String::from_utf8_lossy(filename).into_owned();
                self.maps.entry(pid).or_default().push(Map {
                    start: addr,
                    end: addr + len,
                    pgoff,
                    file,
                });
            }
            Record::Mmap2 {
                pid,
                addr,
                len,
                pgoff,
                filename,
                ..
            } => {
                let file = String::from_utf8_lossy(filename).into_owned();
                self.maps.entry(pid).or_default().push(Map {
                    start: addr,
                    end: addr + len,
                    pgoff,
                    file,
                });
            }
            Record::Comm { pid, comm, .. } => {
                let name = comm.split(|&b| b == 0).next().unwrap_or_default();
                self.comms
                    .insert(pid, String::from_utf8_lossy(name).into_owned());
            }
            Record::Fork { pid, ppid, .. } if pid != ppid => {
                let n = self.maps.get(&ppid).map_or(0, |m| m.len() as u32);
                self.parents.insert(pid, (ppid, n));
                if let Some(c) = self.comms.get(&ppid).cloned() {
                    self.comms.entry(pid).or_insert(c);
                }
            }
            Record::Sample(s) => {
                let (Some(ip), Some((pid, _))) = (s.ip(), s.pid_tid()) else {
                    return;
                };
                let first = self.ips.len() as u32;
                match s.callchain() {
                    Some(chain) => {
                        for (ctx, addrs) in Callchain::new(chain).segments() {
                            let kernel = matches!(ctx, Context::Kernel);
                            if !matches!(ctx, Context::Kernel | Context::User) {
                                continue;
                            }
                            self.ips
                                .extend(addrs.iter().map(|addr| Ip { addr, kernel }));
                        }
                    }
                    None => {
                        let kernel = parsed.header.cpumode() == sys::PERF_RECORD_MISC_KERNEL as u16;
                        self.ips.push(Ip { addr: ip, kernel });
                    }
                }
                let len = self.ips.len() as u32 - first;
                self.samples.push(Sample {
                    event: event as u32,
                    pid,
                    period: s.period().unwrap_or(1),
                    maps_seen: self.maps.get(&pid).map_or(0, |m| m.len() as u32),
                    first,
                    len,
                });
            }
            _ => {}
        }
    }

    /// The mappings and names of the processes running now (before the
    /// recording: their mappings were made before any MMAP2 record could
    /// report them), as perf synthesizes them.
    pub fn snapshot(&mut self, pids: impl IntoIterator<Item = u32>) {
        for pid in pids {
            let maps = super::symbols::proc_maps(pid);
            if !maps.is_empty() {
                self.maps.insert(pid, maps);
            }
            if let Ok(c) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
                self.comms.insert(pid, c.trim_end().to_string());
            }
        }
    }

    /// The mapping containing `addr` for a sample of `pid` that saw `seen`
    /// of its mappings (then the parent's, for a forked child).
    pub fn map_of(&self, mut pid: u32, mut seen: u32, addr: u64) -> Option<&Map> {
        for _ in 0..64 {
            let own = self.maps.get(&pid).map_or(&[][..], |m| &m[..seen as usize]);
            if let Some(m) = own.iter().rev().find(|m| (m.start..m.end).contains(&addr)) {
                return Some(m);
            }
            (pid, seen) = *self.parents.get(&pid)?;
        }
        None
    }
}

/// Every pid in /proc now.
pub fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}
