//! The file-mode writer's output: a thread of its own writes the file, so
//! the thread draining the rings never waits for the file system (a new
//! page of a file costs a page allocation, and on a virtual machine its
//! first touch: 16 us per 4 KiB page on the machine of BENCHMARKS.md,
//! long enough for a busy ring to fill). What perf record's `--aio` and
//! `--threads` are for.
//!
//! When the recording thread is bound to some CPUs only, the file's thread
//! is bound to the other online CPUs, so that the file's cost never takes
//! the recorder's CPU time.
//!
//! Bounded: at most [`SPOOL_CHUNKS`] chunks are in flight; when all are,
//! the writing waits for one to come back (the rings then wait, as they
//! would for a synchronous write). The file's thread makes the chunks and
//! touches every page of them before the first is needed, so that the
//! thread draining the rings never takes a page fault for them (on the
//! VM of BENCHMARKS.md a new page costs 16 us, and the drain faulting in
//! 4 MiB lost records under the storm that the ring set alone did not).

use perf_event_core::linux::system::{self, CpuMask};
use perf_event_host::sysfs::CpuList;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

/// Chunks of the writer's buffer (64 KiB each) that may be waiting for
/// the file at once: 4 MiB.
pub const SPOOL_CHUNKS: usize = 64;

/// The size of one chunk: 64 KiB.
const CHUNK_BYTES: usize = 64 << 10;

enum Msg {
    /// Bytes to append.
    Data(Vec<u8>),
    /// Bytes to write at an offset (the header), after what came before.
    At(u64, Vec<u8>),
}

/// The online CPUs the calling thread is not bound to, when it is bound to
/// some of them only (a recorder pinned to its CPUs): the file's thread
/// then runs there and never takes the recorder's CPU time.
fn off_the_callers_cpus() -> Option<CpuMask> {
    let mine = system::thread_affinity().ok()?;
    let online = CpuList::online().ok()?;
    let mut other: CpuMask = [0; 16];
    for cpu in online.iter().filter(|&c| c < 1024) {
        let (word, bit) = (cpu as usize / 64, cpu % 64);
        if mine[word] & (1 << bit) == 0 {
            other[word] |= 1 << bit;
        }
    }
    other.iter().any(|&w| w != 0).then_some(other)
}

/// The output of a [`super::Writer`]: the caller's `W` (pipe mode), or a
/// file written by a thread of its own (file mode).
pub(super) enum Out<W: Write> {
    Direct(W),
    Spool(Spool<W>),
}

/// A file written by its own thread: `W` appended to, a second handle of
/// the same file for the writes at an offset.
pub(super) struct Spool<W> {
    to: Option<Sender<Msg>>,
    free: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<io::Result<W>>>,
}

impl<W: Write + Send + 'static> Spool<W> {
    /// Starts the thread that appends to `out` (at its current offset) and
    /// writes at offsets through `positional` (the same file).
    pub(super) fn start(out: W, positional: File) -> io::Result<Spool<W>> {
        let (to, from) = channel::<Msg>();
        let (back, free) = channel::<Vec<u8>>();
        let elsewhere = off_the_callers_cpus();
        let thread = std::thread::Builder::new()
            .name("perf.data writer".into())
            .spawn(move || {
                if let Some(mask) = elsewhere {
                    // Only a preference: where it fails, the thread runs
                    // wherever the scheduler puts it.
                    let _ = system::set_thread_affinity(&mask);
                }
                // The chunks, made here and touched (every page faulted
                // in) before the recording needs them: the thread that
                // drains the rings never takes a page fault for them.
                for _ in 0..SPOOL_CHUNKS {
                    let mut chunk = vec![1u8; CHUNK_BYTES];
                    chunk.clear();
                    if back.send(chunk).is_err() {
                        break;
                    }
                }
                let mut out = out;
                for msg in from {
                    match msg {
                        Msg::Data(mut bytes) => {
                            out.write_all(&bytes)?;
                            bytes.clear();
                            let _ = back.send(bytes);
                        }
                        Msg::At(offset, bytes) => positional.write_all_at(&bytes, offset)?,
                    }
                }
                Ok(out)
            })?;
        Ok(Spool {
            to: Some(to),
            free,
            thread: Some(thread),
        })
    }
}

impl<W> Spool<W> {
    /// The thread's error once it stopped (its channel is closed).
    fn ended(&mut self) -> io::Error {
        self.to = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(Err(e))) => e,
            Some(Err(_)) => io::Error::other("the perf.data writer thread panicked"),
            _ => io::Error::other("the perf.data writer thread has ended"),
        }
    }

    fn send(&mut self, msg: Msg) -> io::Result<()> {
        match self.to.as_ref().map(|to| to.send(msg)) {
            Some(Ok(())) => Ok(()),
            _ => Err(self.ended()),
        }
    }

    /// Writes `bytes` at `offset` once everything sent before is written.
    pub(super) fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        self.send(Msg::At(offset, bytes.to_vec()))
    }

    /// Waits for every byte sent to be written; returns the output.
    pub(super) fn finish(mut self) -> io::Result<W> {
        self.to = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(io::Error::other("the perf.data writer thread panicked")),
        }
    }
}

impl<W> Write for Spool<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // When every chunk is in flight, this waits for the file to take
        // one.
        let Ok(mut chunk) = self.free.recv() else {
            return Err(self.ended());
        };
        chunk.extend_from_slice(buf);
        self.send(Msg::Data(chunk))?;
        Ok(buf.len())
    }

    /// Hands nothing over that `write` did not: the thread writes on its
    /// own; [`Spool::finish`] waits for it.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W> Drop for Spool<W> {
    /// Dropped without [`Spool::finish`] (a writer dropped early): what was
    /// sent still reaches the file before the drop returns.
    fn drop(&mut self) {
        self.to = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl<W: Write> Write for Out<W> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Out::Direct(w) => w.write(buf),
            Out::Spool(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Out::Direct(w) => w.flush(),
            Out::Spool(s) => s.flush(),
        }
    }
}
