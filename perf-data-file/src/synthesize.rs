//! What perf record synthesizes besides the kernel's records: the
//! kernel's mapping (`[kernel.kallsyms]_text`) and, for processes running
//! before the recording, their threads' names and executable mappings
//! from /proc (read by perf-event-host's `sysfs`), with a zero sample_id
//! trailer (id 0), as perf writes them.

use super::header::align;
use super::writer::{header_bytes, Writer};
use perf_event_core::sys;
use perf_event_host::ringset::RingSet;
use perf_event_host::sysfs;
use std::io::{self, Write};

impl<W: Write> Writer<W> {
    /// Writes a record perf synthesizes (native order): `body` after the
    /// header, padded to 8 bytes, then a zero sample_id trailer of the
    /// first event's layout (perf's synthesized records carry id 0).
    fn synthesize(&mut self, kind_: u32, misc: u16, body: &[u8]) -> io::Result<()> {
        let trailer = self.layouts.first().map_or(0, |l| l.sample_id_size());
        let padded = align(body.len(), 8);
        let size = 8 + padded + trailer;
        let mut rec = header_bytes(kind_, misc, size)?.to_vec();
        rec.extend_from_slice(body);
        rec.resize(size, 0);
        self.write_bytes(None, &rec)
    }

    /// Writes, for each event whose rings lost samples, one
    /// PERF_RECORD_LOST_SAMPLES with the count of them that the ring set's
    /// PERF_RECORD_LOST records gave ([`RingSet::event_losses`]), its
    /// sample_id naming the event's first id: what `perf record` (6.0 and
    /// later) writes at the end of a recording from the kernel's
    /// `PERF_FORMAT_LOST` count, and what `perf report --stats` shows as the
    /// event's `LOST_SAMPLES`. Call it once, after the last drain; the
    /// writer's events are the ring set's, in its order.
    pub fn write_lost_samples(&mut self, set: &RingSet) -> io::Result<()> {
        for e in 0..self.events.len() {
            let lost = set.event_losses(e).lost;
            let Some(&id) = self.events[e].ids.first() else {
                continue;
            };
            if lost == 0 {
                continue;
            }
            let raw = self.events[e].attr.to_raw();
            let mut rec = Vec::with_capacity(64);
            rec.extend_from_slice(&[0u8; 8]);
            rec.extend_from_slice(&lost.to_ne_bytes());
            if raw.sample_id_all() != 0 {
                // struct sample_id: TID, TIME, ID, STREAM_ID, CPU,
                // IDENTIFIER, each present with its sample_type bit; the
                // id in ID and IDENTIFIER, the rest 0 (as perf writes it).
                let t = raw.sample_type;
                for (bit, value) in [
                    (sys::PERF_SAMPLE_TID, 0),
                    (sys::PERF_SAMPLE_TIME, 0),
                    (sys::PERF_SAMPLE_ID, id),
                    (sys::PERF_SAMPLE_STREAM_ID, 0),
                    (sys::PERF_SAMPLE_CPU, 0),
                    (sys::PERF_SAMPLE_IDENTIFIER, id),
                ] {
                    if t & bit as u64 != 0 {
                        rec.extend_from_slice(&value.to_ne_bytes());
                    }
                }
            }
            let header = header_bytes(sys::PERF_RECORD_LOST_SAMPLES, 0, rec.len())?;
            rec[..8].copy_from_slice(&header);
            self.write_bytes(Some(e), &rec)?;
        }
        Ok(())
    }

    /// Writes the kernel's mapping as perf record synthesizes it
    /// (PERF_RECORD_MMAP of pid -1 named `[kernel.kallsyms]_text`, from
    /// `_text` in /proc/kallsyms to the end of the address space), which
    /// perf report needs to resolve kernel addresses. Nothing is written
    /// when /proc/kallsyms hides the addresses.
    pub fn write_kernel_mmap(&mut self) -> io::Result<()> {
        let Some(start) = sysfs::kallsyms_address("_text").filter(|&a| a != 0) else {
            return Ok(());
        };
        let mut body = Vec::new();
        body.extend_from_slice(&u32::MAX.to_ne_bytes());
        body.extend_from_slice(&0u32.to_ne_bytes());
        body.extend_from_slice(&start.to_ne_bytes());
        body.extend_from_slice(&(u64::MAX - start).to_ne_bytes());
        body.extend_from_slice(&start.to_ne_bytes());
        body.extend_from_slice(b"[kernel.kallsyms]_text\0");
        self.synthesize(
            sys::PERF_RECORD_MMAP,
            sys::PERF_RECORD_MISC_KERNEL as u16,
            &body,
        )
    }

    /// Writes what perf record synthesizes for a process running before
    /// the recording: PERF_RECORD_COMM for each of its threads and
    /// PERF_RECORD_MMAP2 for each executable mapping of /proc/PID/maps
    /// (the mappings were made before any record could report them). A
    /// process that is gone is skipped.
    pub fn write_process(&mut self, pid: u32) -> io::Result<()> {
        // The kernel's pid_t: /proc names no pid above i32::MAX.
        let Ok(proc_pid) = i32::try_from(pid) else {
            return Ok(());
        };
        let Ok(maps) = sysfs::maps(proc_pid) else {
            return Ok(());
        };
        for tid in sysfs::tasks(proc_pid).unwrap_or_default() {
            let Ok(comm) = sysfs::comm(proc_pid, tid) else {
                continue;
            };
            let mut body = Vec::new();
            body.extend_from_slice(&pid.to_ne_bytes());
            body.extend_from_slice(&(tid as u32).to_ne_bytes());
            body.extend_from_slice(comm.as_bytes());
            body.push(0);
            self.synthesize(sys::PERF_RECORD_COMM, 0, &body)?;
        }
        for line in maps.lines() {
            let mut w = line.split_whitespace();
            let (Some(range), Some(perms), Some(off), Some(dev), Some(ino)) =
                (w.next(), w.next(), w.next(), w.next(), w.next())
            else {
                continue;
            };
            let name = w.collect::<Vec<_>>().join(" ");
            if !perms.contains('x') || name.is_empty() {
                continue;
            }
            let (Some((a, b)), Some((maj, min))) = (range.split_once('-'), dev.split_once(':'))
            else {
                continue;
            };
            let hex = |s: &str| u64::from_str_radix(s, 16).unwrap_or(0);
            let (start, end) = (hex(a), hex(b));
            let mut prot = 0u32;
            for (c, bit) in [('r', 1), ('w', 2), ('x', 4)] {
                if perms.contains(c) {
                    prot |= bit;
                }
            }
            let flags: u32 = if perms.contains('s') { 1 } else { 2 };
            let mut body = Vec::new();
            body.extend_from_slice(&pid.to_ne_bytes());
            body.extend_from_slice(&pid.to_ne_bytes());
            body.extend_from_slice(&start.to_ne_bytes());
            body.extend_from_slice(&(end - start.min(end)).to_ne_bytes());
            body.extend_from_slice(&hex(off).to_ne_bytes());
            body.extend_from_slice(&(hex(maj) as u32).to_ne_bytes());
            body.extend_from_slice(&(hex(min) as u32).to_ne_bytes());
            body.extend_from_slice(&ino.parse::<u64>().unwrap_or(0).to_ne_bytes());
            body.extend_from_slice(&0u64.to_ne_bytes());
            body.extend_from_slice(&prot.to_ne_bytes());
            body.extend_from_slice(&flags.to_ne_bytes());
            body.extend_from_slice(name.as_bytes());
            body.push(0);
            self.synthesize(
                sys::PERF_RECORD_MMAP2,
                sys::PERF_RECORD_MISC_USER as u16,
                &body,
            )?;
        }
        Ok(())
    }
}
