//! A small capture of real records and one text line per record with every
//! value this crate decodes from it. Shared by `tests/examples/record_dump.rs`
//! (run where the records are made, e.g. in an s390x guest) and
//! `tests/ring/foreign_records.rs` (the same bytes parsed on another machine in
//! their foreign byte order): equal lines mean equal values.

#![allow(dead_code)] // the example uses `capture`, the test `describe` too

use perf_event_core::attr::Attr;
use perf_event_core::byte_order::ByteOrder;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::record::{
    self, Callchain, DataSrc, Parsed, Record, RegNames, SampleLayout, Weight,
};
use perf_event_core::ring::RingBuffer;
use perf_event_core::sys;
use perf_event_host::sysfs::{TraceFormat, TraceValue, Tracefs};
use std::fmt::Write;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The values of one parsed record.
pub fn describe(
    p: &Parsed<'_>,
    layout: &SampleLayout,
    regs_mask: u64,
    names: &RegNames,
    format: Option<&TraceFormat>,
) -> String {
    let mut o = format!(
        "kind={} misc={:#x} size={}",
        p.header.kind, p.header.misc, p.header.size
    );
    match p.record {
        Record::Sample(s) => {
            let _ = write!(
                o,
                " ip={:x?} pid_tid={:?} time={:?} id={:?} cpu={:?} period={:?}",
                s.ip(),
                s.pid_tid(),
                s.time(),
                s.id(),
                s.cpu(),
                s.period()
            );
            if let Some(r) = s.read_values() {
                let v: Vec<_> = r.values().map(|v| (v.value, v.id, v.lost)).collect();
                let _ = write!(o, " read={v:?} enabled={:?}", r.time_enabled());
            }
            if let Some(c) = s.callchain() {
                for (ctx, ips) in Callchain::new(c).segments() {
                    let _ = write!(o, " chain[{ctx:?}]={:x?}", ips.iter().collect::<Vec<_>>());
                }
            }
            if let Some(regs) = s.regs_user() {
                let _ = write!(o, " regs_abi={}", regs.abi);
                for (n, v) in names.named(&regs, regs_mask) {
                    let _ = write!(o, " {n}={v:#x}");
                }
            }
            if let Some((stack, dyn_size)) = s.stack_user() {
                let n = stack.len().min(dyn_size as usize).min(32);
                let _ = write!(o, " stack={}/{dyn_size}:{}", stack.len(), hex(&stack[..n]));
            }
            if let Some(w) = s.weight() {
                let _ = write!(o, " weight={:?}", Weight::from_word(w));
            }
            if let Some(d) = s.data_src() {
                let _ = write!(o, " data_src={:?}", DataSrc::from_word(d));
            }
            if let Some(raw) = s.raw() {
                match format.map(|f| f.decode(raw, layout.byte_order)) {
                    Some(Ok(fields)) => {
                        for (name, v) in fields {
                            match v {
                                TraceValue::Str(b) => {
                                    let _ = write!(o, " {name}={:?}", String::from_utf8_lossy(b));
                                }
                                TraceValue::Array(a) => {
                                    let e: Vec<_> = (0..a.len()).filter_map(|i| a.get(i)).collect();
                                    let _ = write!(o, " {name}={e:?}");
                                }
                                v => {
                                    let _ = write!(o, " {name}={v:?}");
                                }
                            }
                        }
                    }
                    Some(Err(e)) => {
                        let _ = write!(o, " raw-error={e}");
                    }
                    None => {
                        let _ = write!(o, " raw={}", raw.len());
                    }
                }
            }
        }
        Record::Comm { pid, tid, comm } => {
            let _ = write!(
                o,
                " comm pid={pid} tid={tid} {:?}",
                String::from_utf8_lossy(comm)
            );
        }
        Record::Exit {
            pid,
            ppid,
            tid,
            ptid,
            time,
        }
        | Record::Fork {
            pid,
            ppid,
            tid,
            ptid,
            time,
        } => {
            let _ = write!(
                o,
                " pid={pid} ppid={ppid} tid={tid} ptid={ptid} time={time}"
            );
        }
        Record::Mmap2 {
            pid,
            tid,
            addr,
            len,
            pgoff,
            prot,
            flags,
            filename,
            ..
        } => {
            let _ = write!(
                o,
                " mmap2 pid={pid} tid={tid} addr={addr:#x} len={len:#x} pgoff={pgoff:#x} \
                 prot={prot} flags={flags} {:?}",
                String::from_utf8_lossy(filename)
            );
        }
        Record::Lost { id, lost } => {
            let _ = write!(o, " lost id={id} n={lost}");
        }
        _ => {}
    }
    if let Some(id) = p.sample_id {
        let _ = write!(o, " sample_id={id:?}");
    }
    o
}

/// A few registers of this architecture: stack pointer, pc and one more,
/// of those this code's register ABI has (32-bit x86 has no `r15`: a
/// 32-bit kernel refuses it in the mask with EINVAL).
fn regs_mask(names: &RegNames) -> u64 {
    let abi = if cfg!(target_pointer_width = "32") {
        sys::PERF_SAMPLE_REGS_ABI_32
    } else {
        sys::PERF_SAMPLE_REGS_ABI_64
    };
    ["sp", "ip", "pc", "r15", "mask", "bp", "x29", "ra"]
        .iter()
        .filter_map(|n| names.number(n))
        .filter(|r| names.in_abi(*r, u64::from(abi)))
        .fold(0, |m, r| m | 1 << r)
}

/// Records this thread's prctl samples and returns the dump text.
pub fn capture() -> Result<String, String> {
    let tracefs =
        Tracefs::find().map_err(|e| format!("{e} (mount -t tracefs nodev /sys/kernel/tracing)"))?;
    let id = tracefs
        .tracepoint_id("syscalls", "sys_enter_prctl")
        .map_err(|e| e.to_string())?;
    let format_path = tracefs
        .root()
        .join("events/syscalls/sys_enter_prctl/format");
    let format_text = std::fs::read_to_string(&format_path).map_err(|e| e.to_string())?;
    let format = TraceFormat::parse(&format_text).map_err(|e| e.to_string())?;
    let names = RegNames::native().ok_or("no register ABI on this architecture")?;
    let mask = regs_mask(&names);

    let mut raw = sys::perf_event_attr {
        type_: sys::PERF_TYPE_TRACEPOINT,
        config: id,
        sample_type: (sys::PERF_SAMPLE_IP
            | sys::PERF_SAMPLE_TID
            | sys::PERF_SAMPLE_TIME
            | sys::PERF_SAMPLE_ID
            | sys::PERF_SAMPLE_CPU
            | sys::PERF_SAMPLE_PERIOD
            | sys::PERF_SAMPLE_READ
            | sys::PERF_SAMPLE_CALLCHAIN
            | sys::PERF_SAMPLE_RAW
            | sys::PERF_SAMPLE_REGS_USER
            | sys::PERF_SAMPLE_STACK_USER) as u64,
        read_format: (sys::PERF_FORMAT_ID | sys::PERF_FORMAT_TOTAL_TIME_ENABLED) as u64,
        sample_regs_user: mask,
        sample_stack_user: 64,
        ..Default::default()
    };
    raw.__bindgen_anon_1.sample_period = 1;
    raw.set_disabled(1);
    raw.set_sample_id_all(1);
    raw.set_comm(1);
    raw.set_task(1);
    let attr = Attr::from_raw(raw);
    let fd =
        open(&attr, Scope::this_thread(), None, OpenFlags::new()).map_err(|e| e.to_string())?;
    let mut ring = RingBuffer::map(&fd, 8).map_err(|e| e.to_string())?;
    let layout = SampleLayout::from_attr(&attr);

    fd.enable(false).map_err(|e| e.to_string())?;
    for option in [libc::PR_GET_DUMPABLE, libc::PR_GET_KEEPCAPS].repeat(3) {
        // SAFETY: these two options only return a flag; nothing is changed.
        unsafe { libc::prctl(option, 0, 0, 0, 0) };
    }
    // A thread: FORK, COMM (PR_SET_NAME of that thread) and EXIT records.
    std::thread::spawn(|| {
        // SAFETY: a NUL-terminated name for PR_SET_NAME.
        unsafe { libc::prctl(libc::PR_SET_NAME, c"dumped".as_ptr(), 0, 0, 0) };
    })
    .join()
    .unwrap();
    fd.disable(false).map_err(|e| e.to_string())?;

    let mut out = String::new();
    let kernel_attr = attr.to_raw();
    // SAFETY: perf_event_attr is plain old data of this size.
    let attr_bytes = unsafe {
        std::slice::from_raw_parts(
            (&kernel_attr as *const sys::perf_event_attr).cast::<u8>(),
            std::mem::size_of::<sys::perf_event_attr>(),
        )
    };
    let _ = writeln!(out, "ORDER {:?}", ByteOrder::NATIVE);
    let _ = writeln!(out, "ARCH {:?}", names.arch());
    let _ = writeln!(out, "ATTR {}", hex(attr_bytes));
    let _ = writeln!(out, "REGS {mask:#x}");
    let _ = writeln!(out, "FORMAT {}", hex(format_text.as_bytes()));
    let mut batch = ring.records();
    let mut scratch = vec![0u8; 1 << 16];
    while let Some(rec) = batch.next() {
        let rec = rec.map_err(|e| e.to_string())?;
        let bytes = rec
            .copy_into(&mut scratch)
            .map_err(|e| e.to_string())?
            .to_vec();
        let parsed = record::parse(&layout, &bytes).map_err(|e| e.to_string())?;
        let _ = writeln!(out, "REC {}", hex(&bytes));
        let _ = writeln!(
            out,
            "VAL {}",
            describe(&parsed, &layout, mask, &names, Some(&format))
        );
    }
    let _ = writeln!(out, "END");
    Ok(out)
}
