//! The writer: a perf.data file (seekable, the header's data size brought
//! up to date at every round) or perf's pipe format (a stream: attrs and
//! features as records before the data). Records are written as the
//! kernel produced them; the writer only looks at a few (samples for
//! their time, mappings for their file) and holds nothing of them but the
//! set of mapped file names.

use super::build_id;
use super::features::{BuildId, ClockData, EventDesc, Features};
use super::header::{kind, FileHeader, Section, FILE_HEADER_SIZE};
use super::spool::{Out, Spool};
use perf_event_core::attr::Attr;
use perf_event_core::record::{self, MappingId, Record, SampleLayout};
use perf_event_core::ring::RawRecord;
use perf_event_core::sys;
use perf_event_host::ringset::{Drained, KeyOffsets, RingSet};
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};

/// One event of the recording: its attr, its name and the ids of its fds
/// (`EventFd::id`, PERF_EVENT_IOC_ID), which its records carry.
#[derive(Clone, Debug)]
pub struct RecordedEvent {
    /// The attr it was opened with.
    pub attr: Attr,
    /// Its name, as `perf report` prints it.
    pub name: String,
    /// The ids of its fds (one per CPU or thread it was opened on).
    pub ids: Vec<u64>,
}

/// Buffered bytes at which a round's end writes them out.
pub const FLUSH_BYTES: usize = 32 << 10;

/// Time after which a round's end writes out what is buffered, however
/// little: what a writer killed outright can lose.
pub const FLUSH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Counts of what a writer wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Records written (FINISHED_ROUND not counted).
    pub records: u64,
    /// Bytes of records written.
    pub bytes: u64,
    /// FINISHED_ROUND records written.
    pub rounds: u64,
}

/// The attr size written: what perf 6.1 and later read
/// (`PERF_ATTR_SIZE_VER7`, 128 bytes) unless an attr needs more.
pub(super) fn attr_size_of(events: &[RecordedEvent]) -> usize {
    let widest = events
        .iter()
        .map(|e| e.attr.size().bytes() as usize)
        .max()
        .unwrap_or(0);
    widest.max(sys::PERF_ATTR_SIZE_VER7 as usize)
}

pub(super) fn attr_bytes(attr: &Attr, size: usize) -> Vec<u8> {
    let mut raw = attr.to_raw();
    raw.size = size as u32;
    raw.to_bytes()[..size].to_vec()
}

pub(super) fn header_bytes(kind: u32, misc: u16, size: usize) -> io::Result<[u8; 8]> {
    let size = u16::try_from(size)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "record larger than 64 KiB"))?;
    let mut h = [0u8; 8];
    h[..4].copy_from_slice(&kind.to_ne_bytes());
    h[4..6].copy_from_slice(&misc.to_ne_bytes());
    h[6..].copy_from_slice(&size.to_ne_bytes());
    Ok(h)
}

/// A perf.data writer; `W` is the output (a [`File`] in file mode).
///
/// Records go in with [`Writer::write`] (a ring's [`RawRecord`], in one or
/// two parts) or [`Writer::write_bytes`]; [`Writer::finish_round`] closes a
/// round (PERF_RECORD_FINISHED_ROUND: every record written before the
/// previous round's end is older than every record written after this
/// one; a pass that read every ring up to its head, or the time-ordered
/// merge's release of a round, gives that); [`Writer::finish`] writes the
/// feature sections and the final header.
pub struct Writer<W: Write> {
    pub(super) out: BufWriter<Out<W>>,
    /// File mode (the output is spooled, the header updated in place).
    file_mode: bool,
    header: FileHeader,
    pub(super) events: Vec<RecordedEvent>,
    pub(super) layouts: Vec<SampleLayout>,
    /// Where each event's samples hold their time.
    offsets: Vec<KeyOffsets>,
    attr_size: usize,
    pub(super) features: Features,
    times: Option<(u64, u64)>,
    mapped: HashSet<Vec<u8>>,
    /// Mapped files in the order first seen.
    mapped_order: Vec<Vec<u8>>,
    /// Build ids the kernel put in MMAP2 records.
    inline_ids: Vec<BuildId>,
    since_round: u64,
    /// When the rounds were last written out.
    flushed_at: std::time::Instant,
    stats: WriteStats,
    scratch: Vec<u8>,
}

impl Writer<File> {
    /// Starts a perf.data file in `file` (truncated): the header, each
    /// event's ids and attr; the records follow. `features`: usually
    /// [`Features::from_system`]; the writer adds the events, the clock,
    /// the sample time span, the build ids and, when an event is a
    /// tracepoint, the tracepoints' formats read from tracefs (HEADER_TRACING_DATA,
    /// unless `features.tracing_data` is given): an error if tracefs or a
    /// tracepoint's format cannot be read, since perf refuses such a file
    /// without them.
    pub fn create(
        mut file: File,
        events: Vec<RecordedEvent>,
        mut features: Features,
    ) -> io::Result<Self> {
        if features.tracing_data.is_none() {
            features.tracing_data = super::tracing_data::for_events(&events)?;
        }
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        let attr_size = attr_size_of(&events);
        let mut header = FileHeader {
            attr_size: (attr_size + 16) as u64,
            ..FileHeader::default()
        };
        let mut head = vec![0; FILE_HEADER_SIZE as usize];
        let mut id_sections = Vec::new();
        for e in &events {
            let at = head.len() as u64;
            for id in &e.ids {
                head.extend_from_slice(&id.to_ne_bytes());
            }
            id_sections.push(Section {
                offset: at,
                size: 8 * e.ids.len() as u64,
            });
        }
        header.attrs.offset = head.len() as u64;
        for (e, ids) in events.iter().zip(&id_sections) {
            head.extend(attr_bytes(&e.attr, attr_size));
            head.extend_from_slice(&ids.offset.to_ne_bytes());
            head.extend_from_slice(&ids.size.to_ne_bytes());
        }
        header.attrs.size = head.len() as u64 - header.attrs.offset;
        header.data.offset = head.len() as u64;
        head[..FILE_HEADER_SIZE as usize].copy_from_slice(&header.to_bytes());
        let positional = file.try_clone()?;
        let spool = Spool::start(file, positional)?;
        let mut w = Writer::new(Out::Spool(spool), events, features, attr_size, header);
        w.file_mode = true;
        w.out.write_all(&head)?;
        w.out.flush()?;
        Ok(w)
    }
}

impl<W: Write> Writer<W> {
    pub(super) fn new(
        out: Out<W>,
        events: Vec<RecordedEvent>,
        mut features: Features,
        attr_size: usize,
        header: FileHeader,
    ) -> Self {
        let layouts: Vec<SampleLayout> = events
            .iter()
            .map(|e| SampleLayout::from_attr(&e.attr))
            .collect();
        if let Some(first) = events.first() {
            let raw = first.attr.to_raw();
            if raw.use_clockid() != 0 {
                let clock = raw.clockid;
                use perf_event_core::linux::system::{clock_getres_ns, clock_gettime_ns};
                features.clockid_res_ns = clock_getres_ns(clock).ok();
                if let (Ok(tod_ns), Ok(clockid_ns)) = (
                    clock_gettime_ns(perf_event_core::linux::system::CLOCK_REALTIME),
                    clock_gettime_ns(clock),
                ) {
                    features.clock_data = Some(ClockData {
                        clockid: clock as u32,
                        tod_ns,
                        clockid_ns,
                    });
                }
            }
        }
        features.event_desc = Some(
            events
                .iter()
                .map(|e| EventDesc {
                    attr: e.attr.to_raw(),
                    name: e.name.clone(),
                    ids: e.ids.clone(),
                })
                .collect(),
        );
        let offsets = layouts.iter().map(KeyOffsets::of).collect();
        Writer {
            out: BufWriter::with_capacity(1 << 16, out),
            offsets,
            file_mode: false,
            header,
            events,
            layouts,
            attr_size,
            features,
            times: None,
            mapped: HashSet::new(),
            mapped_order: Vec::new(),
            inline_ids: Vec::new(),
            since_round: 0,
            flushed_at: std::time::Instant::now(),
            stats: WriteStats::default(),
            scratch: vec![0; 1 << 16],
        }
    }

    /// What was written so far.
    pub fn stats(&self) -> WriteStats {
        self.stats
    }

    /// The features as they stand (the system's, the events, the clock).
    pub fn features(&self) -> &Features {
        &self.features
    }

    /// Writes one record lent by a ring (in two parts when it wraps);
    /// `event`: the event it belongs to, when known (its layout reads the
    /// sample's time), else the first event's.
    pub fn write(&mut self, event: Option<usize>, rec: &RawRecord<'_>) -> io::Result<()> {
        let (a, b) = rec.parts();
        self.out.write_all(a)?;
        self.out.write_all(b)?;
        self.note(event, rec);
        Ok(())
    }

    /// Counts a record written (or about to be, in a span) and looks at
    /// what the features need: a sample's time, a mapping's file.
    #[inline]
    fn note(&mut self, event: Option<usize>, rec: &RawRecord<'_>) {
        if rec.header.kind == sys::PERF_RECORD_SAMPLE {
            // The hot path: the time at its fixed offset, no parse.
            self.stats.records += 1;
            self.stats.bytes += rec.len() as u64;
            self.since_round += 1;
            let offsets = event
                .and_then(|e| self.offsets.get(e))
                .or(self.offsets.first());
            if let Some(t) = offsets.and_then(|o| o.key(rec).time) {
                self.note_time(t);
            }
            return;
        }
        let (a, b) = rec.parts();
        self.account(event, rec.header.kind, rec.header.misc, a, b);
    }

    /// Writes one whole record (`bytes` holds exactly its header's size,
    /// in this machine's byte order).
    pub fn write_bytes(&mut self, event: Option<usize>, bytes: &[u8]) -> io::Result<()> {
        let h = bytes.get(..8).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a record holds at least its header",
            )
        })?;
        let header = record::Header::from_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
        if header.size as usize != bytes.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the record's size is not its header's",
            ));
        }
        self.out.write_all(bytes)?;
        self.account(event, header.kind, header.misc, bytes, &[]);
        Ok(())
    }

    fn account(&mut self, event: Option<usize>, kind: u32, misc: u16, a: &[u8], b: &[u8]) {
        self.stats.records += 1;
        self.stats.bytes += (a.len() + b.len()) as u64;
        self.since_round += 1;
        let interesting = kind == sys::PERF_RECORD_SAMPLE
            || kind == sys::PERF_RECORD_MMAP2
            || kind == sys::PERF_RECORD_MMAP;
        if !interesting {
            return;
        }
        let Some(layout) = event
            .and_then(|e| self.layouts.get(e))
            .or(self.layouts.first())
        else {
            return;
        };
        let layout = *layout;
        let mut scratch = std::mem::take(&mut self.scratch);
        let bytes = if b.is_empty() {
            a
        } else {
            let n = a.len() + b.len();
            scratch[..a.len()].copy_from_slice(a);
            scratch[a.len()..n].copy_from_slice(b);
            &scratch[..n]
        };
        self.look_at(&layout, misc, bytes);
        self.scratch = scratch;
    }

    fn look_at(&mut self, layout: &SampleLayout, misc: u16, bytes: &[u8]) {
        let Ok(parsed) = record::parse(layout, bytes) else {
            return;
        };
        match parsed.record {
            Record::Sample(s) => {
                if let Some(t) = s.time() {
                    self.note_time(t);
                }
            }
            Record::Mmap2 { filename, id, .. } => {
                if let MappingId::BuildId(bid) = id {
                    if !self.mapped.contains(filename) {
                        let kernel = u32::from(misc) & sys::PERF_RECORD_MISC_CPUMODE_MASK
                            == sys::PERF_RECORD_MISC_KERNEL;
                        self.inline_ids.push(BuildId {
                            filename: String::from_utf8_lossy(filename).into_owned(),
                            id: bid.to_vec(),
                            kernel,
                            pid: -1,
                        });
                    }
                }
                self.note_mapped(filename);
            }
            Record::Mmap { filename, .. } => self.note_mapped(filename),
            _ => {}
        }
    }

    #[inline]
    fn note_time(&mut self, t: u64) {
        self.times = Some(match self.times {
            Some((lo, hi)) => (lo.min(t), hi.max(t)),
            None => (t, t),
        });
    }

    fn note_mapped(&mut self, filename: &[u8]) {
        if filename.first() == Some(&b'/') && !self.mapped.contains(filename) {
            self.mapped.insert(filename.to_vec());
            self.mapped_order.push(filename.to_vec());
        }
    }

    /// Ends a round: PERF_RECORD_FINISHED_ROUND (when records were written
    /// since the last one). The bytes go out, and in file mode the header's
    /// data size is brought up to date (so that a writer killed later
    /// leaves a file readable up to here), once [`FLUSH_BYTES`] are
    /// buffered or [`FLUSH_INTERVAL`] has passed since the last time: a
    /// round costs no system call of its own, however often the rings are
    /// drained.
    pub fn finish_round(&mut self) -> io::Result<()> {
        if self.since_round == 0 {
            return Ok(());
        }
        self.since_round = 0;
        self.out
            .write_all(&header_bytes(kind::FINISHED_ROUND, 0, 8)?)?;
        self.stats.rounds += 1;
        self.stats.bytes += 8;
        let now = std::time::Instant::now();
        let due = self.out.buffer().len() >= FLUSH_BYTES
            || now.duration_since(self.flushed_at) >= FLUSH_INTERVAL;
        if due {
            self.flushed_at = now;
            self.flush_rounds()?;
        }
        Ok(())
    }

    /// Writes out every complete round buffered and, in file mode, the
    /// header's data size up to them.
    fn flush_rounds(&mut self) -> io::Result<()> {
        self.out.flush()?;
        if let Out::Spool(spool) = self.out.get_mut() {
            self.header.data.size = self.stats.bytes;
            spool.write_at(48, &self.header.data.size.to_ne_bytes())?;
        }
        Ok(())
    }

    /// One pass over a ring set as perf record makes it: every ring read
    /// up to its head ([`RingSet::drain_into`], ring order) and written,
    /// then the round closed; `each(ring, event, record)` sees every record
    /// too (as [`RingSet::drain`] lends it). The records go out as the runs
    /// the rings hold ([`Drained::span`]: no copy per record; a run larger
    /// than the writer's 64 KiB buffer is written straight from the ring).
    /// Returns the records written; the first write error stops the
    /// writing (the rings are still freed, `each` still sees every record).
    pub fn write_drained(
        &mut self,
        set: &mut RingSet,
        each: impl FnMut(usize, Option<usize>, &RawRecord<'_>),
    ) -> io::Result<usize> {
        let mut to = Runs {
            w: self,
            each,
            failed: None,
        };
        let n = set.drain_into(&mut to);
        match to.failed {
            Some(e) => Err(e),
            None => self.finish_round().map(|()| n),
        }
    }

    /// One round of a ring set's time-ordered merge
    /// ([`RingSet::drain_ordered`]: every record safe to release, in time
    /// order), then the round closed; `last`: the events are disabled and
    /// this is the final round, so the records still held are flushed too.
    /// Returns the records written. After a write error the round's other
    /// records are given back unwritten and the error is returned.
    pub fn write_ordered(&mut self, set: &mut RingSet, last: bool) -> io::Result<usize> {
        let mut failed = None;
        let mut n = 0;
        set.drain_ordered(last, |held, rec| {
            if failed.is_none() {
                match self.write(held.event(), rec) {
                    Ok(()) => n += 1,
                    Err(e) => failed = Some(e),
                }
            }
        });
        match failed {
            Some(e) => Err(e),
            None => self.finish_round().map(|()| n),
        }
    }

    /// The build ids of the objects mapped in the recording (the kernel's
    /// always, as perf lists it), read from their ELF notes now.
    pub fn build_ids(&self) -> Vec<BuildId> {
        let mut out = Vec::new();
        if let Some(id) = build_id::of_kernel() {
            out.push(BuildId {
                filename: "[kernel.kallsyms]".to_string(),
                id,
                kernel: true,
                pid: -1,
            });
        }
        out.extend(self.inline_ids.iter().cloned());
        for f in &self.mapped_order {
            if self
                .inline_ids
                .iter()
                .any(|b| b.filename.as_bytes() == f.as_slice())
            {
                continue;
            }
            let name = String::from_utf8_lossy(f).into_owned();
            if let Some(id) = build_id::of_file(&name) {
                out.push(BuildId {
                    filename: name,
                    id,
                    kernel: false,
                    pid: -1,
                });
            }
        }
        out
    }

    /// Ends the recording: the last round, the features (with the sample
    /// time span and the build ids), and in file mode the final header.
    /// Returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.finish_round()?;
        self.flush_rounds()?;
        self.features.sample_time = self.times;
        let ids = self.build_ids();
        if !self.file_mode {
            // Pipe: the build ids as records, and the time span.
            self.out.write_all(&super::pipe::tail(&ids, self.times))?;
            self.out.flush()?;
            return match self.out.into_inner().map_err(|e| e.into_error())? {
                Out::Direct(w) => Ok(w),
                Out::Spool(spool) => spool.finish(),
            };
        }
        self.features.build_ids = Some(ids);
        let sections = self.features.encode(self.attr_size);
        let data_end = self.header.data.offset + self.stats.bytes;
        let mut table = Vec::new();
        let mut body = Vec::new();
        let mut at = data_end + 16 * sections.len() as u64;
        for (f, bytes) in &sections {
            self.header.set(*f);
            table.extend_from_slice(&at.to_ne_bytes());
            table.extend_from_slice(&(bytes.len() as u64).to_ne_bytes());
            at += bytes.len() as u64;
            body.extend_from_slice(bytes);
        }
        self.out.write_all(&table)?;
        self.out.write_all(&body)?;
        self.out.flush()?;
        self.header.data.size = self.stats.bytes;
        match self.out.into_inner().map_err(|e| e.into_error())? {
            Out::Direct(w) => Ok(w),
            Out::Spool(mut spool) => {
                // After everything before it, then the thread's end.
                spool.write_at(0, &self.header.to_bytes())?;
                spool.finish()
            }
        }
    }
}

/// A writer taking a drain's records as runs ([`Writer::write_drained`]).
struct Runs<'w, W: Write, F> {
    w: &'w mut Writer<W>,
    each: F,
    failed: Option<io::Error>,
}

impl<W: Write, F: FnMut(usize, Option<usize>, &RawRecord<'_>)> Drained for Runs<'_, W, F> {
    #[inline(always)]
    fn record(&mut self, ring: usize, event: Option<usize>, rec: &RawRecord<'_>) {
        if self.failed.is_none() {
            self.w.note(event, rec);
        }
        (self.each)(ring, event, rec);
    }

    fn span(&mut self, _ring: usize, first: &[u8], second: &[u8]) {
        if self.failed.is_none() {
            let out = &mut self.w.out;
            self.failed = out
                .write_all(first)
                .and_then(|()| out.write_all(second))
                .err();
        }
    }
}
