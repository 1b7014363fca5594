//! Samples a command and prints its hottest instruction addresses per
//! binary or library, resolved through the PERF_RECORD_MMAP2 records.
//!
//! ```sh
//! cargo run --release --example sample -- CMD ARGS
//! ```
//!
//! Uses `cycles` when the machine has a PMU, else the `cpu-clock` software
//! event (every 100 µs of CPU time), on the command's main thread, read
//! through the ring buffer while the command runs.

use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::{MappingId, Record, SampleLayout};
use perf_event_core::ring::RingBuffer;
use perf_event_core::sys;
use std::collections::HashMap;
use std::ffi::CString;

struct Map {
    start: u64,
    end: u64,
    pgoff: u64,
    file: String,
}

fn main() {
    let command: Vec<String> = std::env::args().skip(1).skip_while(|a| a == "--").collect();
    if command.is_empty() {
        eprintln!("usage: sample CMD [ARGS...]");
        std::process::exit(129);
    }
    let argv: Vec<CString> = command
        .iter()
        .map(|a| CString::new(a.as_str()).expect("no NUL"))
        .collect();
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let mut pipe = [0; 2];
    // SAFETY: pipe2 fills two fds.
    let rc = unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0);
    // SAFETY: the child makes only async-signal-safe calls before exec.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: as above.
        unsafe {
            let mut b = 0u8;
            libc::read(pipe[0], (&mut b as *mut u8).cast(), 1);
            libc::execvp(ptrs[0], ptrs.as_ptr());
            libc::_exit(127);
        }
    }
    let sample_type = (sys::PERF_SAMPLE_IP | sys::PERF_SAMPLE_TID) as u64;
    let setup = |event| {
        Attr::new(event)
            .disabled(true)
            .enable_on_exec(true)
            .sample_type(sample_type)
            // mmap2 picks the record format; mmap turns the records on.
            .mmap(true)
            .mmap2(true)
            .sample_id_all(true)
            .exclude_hv(true)
    };
    let hardware = setup(Event::Hardware(Hardware::CpuCycles)).sample_freq(4000);
    let software = setup(Event::Software(Software::CpuClock)).sample_period(100_000);
    let (attr, fd) = match open(&hardware, Scope::thread(pid), None, OpenFlags::new()) {
        Ok(fd) => (hardware, fd),
        Err(e) => {
            eprintln!("sample: cycles: {e}\nsample: sampling cpu-clock every 100 us instead");
            (
                software,
                open(&software, Scope::thread(pid), None, OpenFlags::new())
                    .unwrap_or_else(|e| panic!("{e}")),
            )
        }
    };
    let layout = SampleLayout::from_attr(&attr);
    let mut ring = RingBuffer::map(&fd, 64).unwrap_or_else(|e| panic!("{e}"));
    // SAFETY: release the child into exec.
    unsafe {
        libc::write(pipe[1], [1u8].as_ptr().cast(), 1);
        libc::close(pipe[0]);
        libc::close(pipe[1]);
    }
    let (mut maps, mut hits, mut samples, mut lost): (Vec<Map>, HashMap<u64, u64>, u64, u64) =
        Default::default();
    let mut status = 0;
    loop {
        // SAFETY: polling our own child.
        let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid;
        let _ = RingBuffer::wait(&fd, 50);
        let mut batch = ring.records();
        while let Some(rec) = batch.next() {
            let Ok(rec) = rec else { continue };
            let mut scratch = [0u8; 1 << 16];
            let Ok(parsed) = rec.parse(&layout, &mut scratch) else {
                continue;
            };
            match parsed.record {
                Record::Mmap2 {
                    pid: p,
                    addr,
                    len,
                    pgoff,
                    filename,
                    id,
                    ..
                } if p == pid as u32 => {
                    let _: MappingId<'_> = id;
                    maps.push(Map {
                        start: addr,
                        end: addr + len,
                        pgoff,
                        file: String::from_utf8_lossy(filename).into_owned(),
                    })
                }
                Record::Sample(s) => {
                    samples += 1;
                    *hits.entry(s.ip().unwrap_or(0)).or_default() += 1;
                }
                Record::Lost { lost: n, .. } => lost += n,
                _ => {}
            }
        }
        drop(batch);
        if done {
            break;
        }
    }
    let mut per_file: HashMap<&str, Vec<(u64, u64)>> = HashMap::new();
    for (ip, n) in &hits {
        match maps.iter().rev().find(|m| (m.start..m.end).contains(ip)) {
            Some(m) => per_file
                .entry(&m.file)
                .or_default()
                .push((ip - m.start + m.pgoff, *n)),
            None if *ip >= 0xffff_0000_0000_0000 => {
                per_file.entry("[kernel]").or_default().push((*ip, *n))
            }
            None => per_file.entry("[unknown]").or_default().push((*ip, *n)),
        }
    }
    println!(
        "{samples} samples ({lost} lost) of '{}', hottest addresses per object:",
        command.join(" ")
    );
    let mut files: Vec<_> = per_file.into_iter().collect();
    files.sort_by_key(|(_, v)| std::cmp::Reverse(v.iter().map(|x| x.1).sum::<u64>()));
    for (file, mut addrs) in files {
        let total: u64 = addrs.iter().map(|x| x.1).sum();
        println!(
            "\n{:5.1}%  {file}",
            100.0 * total as f64 / samples.max(1) as f64
        );
        addrs.sort_by_key(|x| std::cmp::Reverse(x.1));
        for (offset, n) in addrs.iter().take(5) {
            println!(
                "        {:5.1}%  {offset:#x}",
                100.0 * *n as f64 / samples.max(1) as f64
            );
        }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    std::process::exit(code);
}
