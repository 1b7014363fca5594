//! The feature sections: what the machine, the tool and the recording
//! were (host, kernel, CPUs, memory, command line, events, topology,
//! clock, time span, build ids), each encoded as perf's `write_*` and
//! decoded as its `process_*` functions do (`tools/perf/util/header.c`).
//! Strings are a u32 length (padded to 64) and NUL-padded bytes.

use super::header::{align, feature, Bytes, NAME_ALIGN};
use super::PerfDataError;
use perf_event_core::abi::arch::CpuIdSource;
use perf_event_core::record::attr_from_bytes;
use perf_event_core::sys;
use perf_event_host::sysfs::{self, CpuList, Siblings, Topology};

/// One CPU's core and socket ids as HEADER_CPU_TOPOLOGY records them (its
/// per-CPU part; the full placement is perf-event-host's `sysfs::CpuPlace`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoreAndSocket {
    /// `topology/core_id`.
    pub core_id: u32,
    /// `topology/physical_package_id`.
    pub socket_id: u32,
}

/// HEADER_CPU_TOPOLOGY: the sibling lists (as sysfs prints them, `0-3`)
/// and each CPU's core and socket.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuTopology {
    /// The distinct `package_cpus_list` (core_siblings_list) of the CPUs.
    pub core_siblings: Vec<String>,
    /// The distinct `core_cpus_list` (thread_siblings_list) of the CPUs.
    pub thread_siblings: Vec<String>,
    /// Per CPU 0..nr_cpus_available, its core and socket (`u32::MAX`,
    /// perf's -1, where sysfs has none: an offline CPU).
    pub cpus: Vec<CoreAndSocket>,
    /// The distinct `die_cpus_list` of the CPUs (empty: none written).
    pub die_siblings: Vec<String>,
    /// Per CPU, its `topology/die_id` (with `die_siblings`).
    pub die_ids: Vec<u32>,
}

/// HEADER_CLOCK_DATA: the events' clock and the wall-clock time that went
/// with one of its readings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockData {
    /// The clock (`CLOCK_MONOTONIC`, ...).
    pub clockid: u32,
    /// `CLOCK_REALTIME` in ns.
    pub tod_ns: u64,
    /// The clock at the same moment, in ns.
    pub clockid_ns: u64,
}

/// One event of HEADER_EVENT_DESC.
#[derive(Clone, Debug)]
pub struct EventDesc {
    /// The attr.
    pub attr: sys::perf_event_attr,
    /// The event's name (`cycles`, `sched:sched_switch`).
    pub name: String,
    /// The ids of its fds.
    pub ids: Vec<u64>,
}

/// A mapped object and its build id (HEADER_BUILD_ID).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildId {
    /// The object's path (`[kernel.kallsyms]` for the kernel).
    pub filename: String,
    /// The build id (20 bytes for SHA-1, up to 20).
    pub id: Vec<u8>,
    /// Whether the object is the kernel (PERF_RECORD_MISC_KERNEL).
    pub kernel: bool,
    /// The machine's pid (-1: the host).
    pub pid: i32,
}

impl BuildId {
    /// The id in lowercase hex, as `perf buildid-list` prints it.
    pub fn hex(&self) -> String {
        self.id.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Every feature this module writes and reads; `None`: not present.
#[derive(Clone, Debug, Default)]
pub struct Features {
    /// HEADER_HOSTNAME.
    pub hostname: Option<String>,
    /// HEADER_OSRELEASE.
    pub osrelease: Option<String>,
    /// HEADER_VERSION.
    pub version: Option<String>,
    /// HEADER_ARCH.
    pub arch: Option<String>,
    /// HEADER_NRCPUS: (available, online).
    pub nrcpus: Option<(u32, u32)>,
    /// HEADER_CPUDESC.
    pub cpudesc: Option<String>,
    /// HEADER_CPUID.
    pub cpuid: Option<String>,
    /// HEADER_TOTAL_MEM, kB.
    pub total_mem: Option<u64>,
    /// HEADER_CMDLINE.
    pub cmdline: Option<Vec<String>>,
    /// HEADER_EVENT_DESC.
    pub event_desc: Option<Vec<EventDesc>>,
    /// HEADER_CPU_TOPOLOGY.
    pub cpu_topology: Option<CpuTopology>,
    /// HEADER_SAMPLE_TIME: (first, last).
    pub sample_time: Option<(u64, u64)>,
    /// HEADER_CLOCKID: the clock's resolution in ns.
    pub clockid_res_ns: Option<u64>,
    /// HEADER_CLOCK_DATA.
    pub clock_data: Option<ClockData>,
    /// HEADER_BUILD_ID.
    pub build_ids: Option<Vec<BuildId>>,
    /// HEADER_TRACING_DATA: the formats of the recording's tracepoints in
    /// perf's layout (version 0.6), without which perf refuses a file with
    /// tracepoint events. [`Writer::create`](super::Writer::create) fills it
    /// from tracefs when an event is a tracepoint and it is `None`; the
    /// reader keeps the section's bytes as they are.
    pub tracing_data: Option<Vec<u8>>,
}

fn cpuinfo_field(info: &str, key: &str) -> Option<String> {
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

impl Features {
    /// What the running system says, as perf-event-host's `sysfs` reads it
    /// (and `uname(2)` for the kernel release): the host name, the kernel
    /// release, this crate as the version, the CPUs (present and online
    /// lists, `/proc/cpuinfo`, arm64's MIDR), memory (`/proc/meminfo`),
    /// this process's command line and the CPU topology. The events,
    /// clock, time span and build ids are the writer's.
    pub fn from_system() -> Features {
        let info = sysfs::cpuinfo().unwrap_or_default();
        let present = CpuList::present().ok();
        let online = CpuList::online().ok();
        let avail = present.as_ref().and_then(|p| p.iter().max()).map(|m| m + 1);
        let nrcpus = match (avail, &online) {
            (Some(a), Some(o)) => Some((a, o.len() as u32)),
            _ => None,
        };
        let cpudesc = cpuinfo_field(&info, "model name")
            .or_else(|| cpuinfo_field(&info, "cpu model"))
            .or_else(|| cpuinfo_field(&info, "cpu"))
            .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "));
        let cpuid = match perf_event_core::abi::arch::TARGET.cpuid {
            CpuIdSource::X86Cpuinfo => match (
                cpuinfo_field(&info, "vendor_id"),
                cpuinfo_field(&info, "cpu family"),
                cpuinfo_field(&info, "model"),
                cpuinfo_field(&info, "stepping"),
            ) {
                (Some(v), Some(f), Some(m), Some(s)) => Some(format!("{v},{f},{m},{s}")),
                _ => None,
            },
            CpuIdSource::ArmMidr => sysfs::midr_el1(0).ok(),
            // Unknown, and a source a later core adds: no cpuid line, as
            // perf writes none where it cannot tell.
            _ => None,
        };
        let total_mem = sysfs::meminfo().ok().and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        });
        let cpu_topology = avail.map(|n| {
            let mut t = CpuTopology::default();
            for c in online.iter().flat_map(CpuList::iter) {
                let siblings = Siblings::read(c);
                let core = siblings.package.map(|l| l.to_string());
                let thread = siblings.core.map(|l| l.to_string());
                let die = siblings.die.map(|l| l.to_string()).or_else(|| core.clone());
                for (list, v) in [
                    (&mut t.core_siblings, core),
                    (&mut t.die_siblings, die),
                    (&mut t.thread_siblings, thread),
                ] {
                    if let Some(v) = v {
                        if !list.contains(&v) {
                            list.push(v);
                        }
                    }
                }
            }
            // perf's -1 (`u32::MAX`) where sysfs has no place: a CPU
            // without `topology/` (offline), or none readable at all.
            let places = Topology::read().unwrap_or_default();
            for c in 0..n {
                let place = places.place(c);
                t.cpus.push(CoreAndSocket {
                    core_id: place.map_or(u32::MAX, |p| p.core as u32),
                    socket_id: place.map_or(u32::MAX, |p| p.socket as u32),
                });
                let die = place.map_or(u32::MAX, |p| p.die as u32);
                t.die_ids.push(if die == u32::MAX { 0 } else { die });
            }
            t
        });
        let release = perf_event_core::linux::system::kernel_release().ok();
        Features {
            hostname: sysfs::hostname().ok(),
            osrelease: release.and_then(|r| String::from_utf8(r.as_bytes().to_vec()).ok()),
            version: Some(concat!("perf-event-core ", env!("CARGO_PKG_VERSION")).to_string()),
            arch: Some(std::env::consts::ARCH.to_string()),
            nrcpus,
            cpudesc,
            cpuid,
            total_mem,
            cmdline: Some(std::env::args().collect()),
            cpu_topology,
            ..Features::default()
        }
    }

    /// The features present, in bitmap order, each with its section's
    /// bytes (native order).
    pub fn encode(&self, attr_size: usize) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        let mut put = |f: u32, v: Option<Vec<u8>>| {
            if let Some(v) = v {
                out.push((f, v));
            }
        };
        put(feature::TRACING_DATA, self.tracing_data.clone());
        put(
            feature::BUILD_ID,
            self.build_ids.as_ref().map(|b| encode_build_ids(b, None)),
        );
        put(feature::HOSTNAME, self.hostname.as_deref().map(string));
        put(feature::OSRELEASE, self.osrelease.as_deref().map(string));
        put(feature::VERSION, self.version.as_deref().map(string));
        put(feature::ARCH, self.arch.as_deref().map(string));
        put(
            feature::NRCPUS,
            self.nrcpus
                .map(|(a, o)| [a.to_ne_bytes(), o.to_ne_bytes()].concat()),
        );
        put(feature::CPUDESC, self.cpudesc.as_deref().map(string));
        put(feature::CPUID, self.cpuid.as_deref().map(string));
        put(
            feature::TOTAL_MEM,
            self.total_mem.map(|m| m.to_ne_bytes().to_vec()),
        );
        put(feature::CMDLINE, self.cmdline.as_ref().map(|c| strings(c)));
        put(
            feature::EVENT_DESC,
            self.event_desc
                .as_ref()
                .map(|e| encode_event_desc(e, attr_size)),
        );
        put(
            feature::CPU_TOPOLOGY,
            self.cpu_topology.as_ref().map(encode_topology),
        );
        put(
            feature::SAMPLE_TIME,
            self.sample_time
                .map(|(a, b)| [a.to_ne_bytes(), b.to_ne_bytes()].concat()),
        );
        put(
            feature::CLOCKID,
            self.clockid_res_ns.map(|r| r.to_ne_bytes().to_vec()),
        );
        put(
            feature::CLOCK_DATA,
            self.clock_data.map(|c| {
                let mut v = Vec::with_capacity(24);
                v.extend_from_slice(&1u32.to_ne_bytes());
                v.extend_from_slice(&c.clockid.to_ne_bytes());
                v.extend_from_slice(&c.tod_ns.to_ne_bytes());
                v.extend_from_slice(&c.clockid_ns.to_ne_bytes());
                v
            }),
        );
        out
    }

    /// Reads feature `f`'s section (unknown features are skipped).
    pub(crate) fn decode(&mut self, f: u32, b: Bytes<'_>) -> Result<(), PerfDataError> {
        match f {
            feature::TRACING_DATA => self.tracing_data = Some(b.b.to_vec()),
            feature::BUILD_ID => self.build_ids = Some(decode_build_ids(b)?),
            feature::HOSTNAME => self.hostname = Some(read_string(b, &mut 0)?),
            feature::OSRELEASE => self.osrelease = Some(read_string(b, &mut 0)?),
            feature::VERSION => self.version = Some(read_string(b, &mut 0)?),
            feature::ARCH => self.arch = Some(read_string(b, &mut 0)?),
            feature::NRCPUS => self.nrcpus = Some((b.u32(0, "nr_cpus")?, b.u32(4, "nr_cpus")?)),
            feature::CPUDESC => self.cpudesc = Some(read_string(b, &mut 0)?),
            feature::CPUID => self.cpuid = Some(read_string(b, &mut 0)?),
            feature::TOTAL_MEM => self.total_mem = Some(b.u64(0, "total_mem")?),
            feature::CMDLINE => self.cmdline = Some(read_strings(b, &mut 0)?),
            feature::EVENT_DESC => self.event_desc = Some(decode_event_desc(b)?),
            feature::CPU_TOPOLOGY => {
                let mut at = 0;
                let core_siblings = read_strings(b, &mut at)?;
                let thread_siblings = read_strings(b, &mut at)?;
                let mut t = CpuTopology {
                    core_siblings,
                    thread_siblings,
                    ..CpuTopology::default()
                };
                let n = self.nrcpus.map_or(0, |(a, _)| a as usize);
                // Older perf wrote only the lists, then no dies.
                if at < b.b.len() {
                    for _ in 0..n {
                        t.cpus.push(CoreAndSocket {
                            core_id: b.u32(at, "core_id")?,
                            socket_id: b.u32(at + 4, "socket_id")?,
                        });
                        at += 8;
                    }
                }
                if at < b.b.len() {
                    t.die_siblings = read_strings(b, &mut at)?;
                    for _ in 0..n {
                        t.die_ids.push(b.u32(at, "die_id")?);
                        at += 4;
                    }
                }
                self.cpu_topology = Some(t);
            }
            feature::SAMPLE_TIME => {
                self.sample_time = Some((b.u64(0, "sample_time")?, b.u64(8, "sample_time")?))
            }
            feature::CLOCKID => self.clockid_res_ns = Some(b.u64(0, "clockid")?),
            feature::CLOCK_DATA => {
                if b.u32(0, "clock_data version")? != 1 {
                    return Err(PerfDataError::Invalid {
                        what: "clock_data version",
                        at: 0,
                    });
                }
                self.clock_data = Some(ClockData {
                    clockid: b.u32(4, "clock_data")?,
                    tod_ns: b.u64(8, "clock_data")?,
                    clockid_ns: b.u64(16, "clock_data")?,
                })
            }
            _ => {}
        }

        Ok(())
    }
}

/// A perf header string: u32 length (NUL included, padded to 64), bytes.
pub(crate) fn string(s: &str) -> Vec<u8> {
    let len = align(s.len() + 1, NAME_ALIGN);
    let mut v = Vec::with_capacity(4 + len);
    v.extend_from_slice(&(len as u32).to_ne_bytes());
    v.extend_from_slice(s.as_bytes());
    v.resize(4 + len, 0);
    v
}

fn strings(list: &[String]) -> Vec<u8> {
    let mut v = (list.len() as u32).to_ne_bytes().to_vec();
    for s in list {
        v.extend(string(s));
    }
    v
}

fn read_string(b: Bytes<'_>, at: &mut usize) -> Result<String, PerfDataError> {
    let len = b.u32(*at, "string length")? as usize;
    let bytes = b.slice(*at + 4, len, "string")?;
    *at += 4 + len;
    let end = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
    Ok(String::from_utf8_lossy(&bytes[..end]).into_owned())
}

fn read_strings(b: Bytes<'_>, at: &mut usize) -> Result<Vec<String>, PerfDataError> {
    let n = b.u32(*at, "string count")? as usize;
    *at += 4;
    // Each string takes at least 4 bytes: a count past the section is bad.
    if n > b.b.len() / 4 {
        return Err(PerfDataError::Invalid {
            what: "string count",
            at: *at - 4,
        });
    }
    (0..n).map(|_| read_string(b, at)).collect()
}

fn encode_topology(t: &CpuTopology) -> Vec<u8> {
    let mut v = strings(&t.core_siblings);
    v.extend(strings(&t.thread_siblings));
    for c in &t.cpus {
        v.extend_from_slice(&c.core_id.to_ne_bytes());
        v.extend_from_slice(&c.socket_id.to_ne_bytes());
    }
    // perf reads dies when bytes follow (a pipe-mode record's padding
    // does): always written, with one id per CPU.
    if t.die_ids.len() == t.cpus.len() {
        v.extend(strings(&t.die_siblings));
        for d in &t.die_ids {
            v.extend_from_slice(&d.to_ne_bytes());
        }
    }
    v
}

fn encode_event_desc(events: &[EventDesc], attr_size: usize) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&(events.len() as u32).to_ne_bytes());
    v.extend_from_slice(&(attr_size as u32).to_ne_bytes());
    for e in events {
        let mut raw = e.attr;
        raw.size = attr_size as u32;
        v.extend_from_slice(&raw.to_bytes()[..attr_size]);
        v.extend_from_slice(&(e.ids.len() as u32).to_ne_bytes());
        v.extend(string(&e.name));
        for id in &e.ids {
            v.extend_from_slice(&id.to_ne_bytes());
        }
    }
    v
}

fn decode_event_desc(b: Bytes<'_>) -> Result<Vec<EventDesc>, PerfDataError> {
    let n = b.u32(0, "event_desc count")? as usize;
    let attr_size = b.u32(4, "event_desc attr_size")? as usize;
    if attr_size < sys::PERF_ATTR_SIZE_VER0 as usize || n > b.b.len() / attr_size {
        return Err(PerfDataError::Invalid {
            what: "event_desc",
            at: 0,
        });
    }
    let mut at = 8;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let attr = attr_from_bytes(b.slice(at, attr_size, "event_desc attr")?, b.order)
            .map_err(PerfDataError::Record)?;
        at += attr_size;
        let nr_ids = b.u32(at, "event_desc ids")? as usize;
        at += 4;
        let name = read_string(b, &mut at)?;
        let ids_bytes = b.slice(
            at,
            nr_ids.checked_mul(8).ok_or(PerfDataError::Invalid {
                what: "event_desc ids",
                at,
            })?,
            "event_desc ids",
        )?;
        let ids = (0..nr_ids)
            .map(|i| {
                Bytes {
                    b: ids_bytes,
                    order: b.order,
                }
                .u64(8 * i, "id")
            })
            .collect::<Result<_, _>>()?;
        at += 8 * nr_ids;
        out.push(EventDesc { attr, name, ids });
    }
    Ok(out)
}

/// The size of a build-id record before its file name: header, pid, and
/// the 24-byte id field (20 bytes, its size, padding).
pub(crate) const BUILD_ID_HEAD: usize = 36;
/// PERF_RECORD_MISC_BUILD_ID_SIZE: the record says the id's size.
pub(crate) const MISC_BUILD_ID_SIZE: u16 = 1 << 15;

/// Build-id records (type `kind`: 0 in the file section, HEADER_BUILD_ID
/// in pipe mode), native order.
pub(crate) fn encode_build_ids(ids: &[BuildId], kind: Option<u32>) -> Vec<u8> {
    let mut v = Vec::new();
    for b in ids {
        let len = align(b.filename.len() + 1, NAME_ALIGN);
        let size = BUILD_ID_HEAD + len;
        if size > u16::MAX as usize || b.id.len() > 20 {
            continue;
        }
        let cpumode = if b.kernel {
            sys::PERF_RECORD_MISC_KERNEL
        } else {
            sys::PERF_RECORD_MISC_USER
        } as u16;
        v.extend_from_slice(&kind.unwrap_or(0).to_ne_bytes());
        v.extend_from_slice(&(cpumode | MISC_BUILD_ID_SIZE).to_ne_bytes());
        v.extend_from_slice(&(size as u16).to_ne_bytes());
        v.extend_from_slice(&b.pid.to_ne_bytes());
        let mut id = [0u8; 24];
        id[..b.id.len()].copy_from_slice(&b.id);
        id[20] = b.id.len() as u8;
        v.extend_from_slice(&id);
        v.extend_from_slice(b.filename.as_bytes());
        v.resize(v.len() + len - b.filename.len(), 0);
    }
    v
}

/// One build-id record at the start of `b`: the id and the record's size.
pub(crate) fn decode_build_id(b: Bytes<'_>) -> Result<(BuildId, usize), PerfDataError> {
    let misc = b.u16(4, "build_id misc")?;
    let size = b.u16(6, "build_id size")? as usize;
    if size < BUILD_ID_HEAD {
        return Err(PerfDataError::Invalid {
            what: "build_id size",
            at: 6,
        });
    }
    let body = b.slice(0, size, "build_id")?;
    let pid = b.u32(8, "build_id pid")? as i32;
    let n = if misc & MISC_BUILD_ID_SIZE != 0 {
        (body[32] as usize).min(20)
    } else {
        20
    };
    let name = &body[BUILD_ID_HEAD..];
    let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    Ok((
        BuildId {
            filename: String::from_utf8_lossy(&name[..end]).into_owned(),
            id: body[12..12 + n].to_vec(),
            kernel: u32::from(misc) & sys::PERF_RECORD_MISC_CPUMODE_MASK
                == sys::PERF_RECORD_MISC_KERNEL,
            pid,
        },
        size,
    ))
}

fn decode_build_ids(b: Bytes<'_>) -> Result<Vec<BuildId>, PerfDataError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.b.len() {
        let (id, size) = decode_build_id(Bytes {
            b: &b.b[at..],
            order: b.order,
        })?;
        out.push(id);
        at += size;
    }
    Ok(out)
}
