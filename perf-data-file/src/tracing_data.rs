//! HEADER_TRACING_DATA: the formats of the recording's tracepoints, which
//! `perf report` and `perf script` need to read a file with tracepoint
//! events at all ("broken or missing trace data" without them). The layout
//! is perf's (`tools/perf/util/trace-event-info.c`, version 0.6, read by
//! `trace-event-read.c`): a magic and the machine's endianness, long and
//! page sizes; tracefs's `events/header_page` and `events/header_event`;
//! the `format` file of each tracepoint recorded (the `ftrace` system's
//! first, then the others grouped by system); an empty kallsyms; tracefs's
//! `printk_formats`; an empty saved_cmdlines. Only the tracepoints the
//! events name are written, as `perf record` does.

use super::writer::RecordedEvent;
use perf_event_core::sys;
use perf_event_host::sysfs::Tracefs;
use std::io;
use std::path::Path;

/// perf's tracing data version.
const VERSION: &[u8] = b"0.6\0";

/// A tracepoint: its system and name.
type Tracepoint = (String, String);

/// The tracing data for `events`, `None` when none is a tracepoint. An
/// error says which tracepoint's format could not be read, and why.
pub(super) fn for_events(events: &[RecordedEvent]) -> io::Result<Option<Vec<u8>>> {
    let ids: Vec<(u64, &str)> = events
        .iter()
        .filter_map(|e| {
            let raw = e.attr.to_raw();
            (raw.type_ == sys::PERF_TYPE_TRACEPOINT).then_some((raw.config, e.name.as_str()))
        })
        .collect();
    if ids.is_empty() {
        return Ok(None);
    }
    let tracefs = Tracefs::find().map_err(|e| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "perf.data tracing data: {e}; perf needs the tracepoints' formats to read \
                 the file (mount tracefs at /sys/kernel/tracing)"
            ),
        )
    })?;
    let mut tracepoints: Vec<Tracepoint> = Vec::new();
    for (id, name) in ids {
        let tp = find(&tracefs, id, name)?;
        if !tracepoints.contains(&tp) {
            tracepoints.push(tp);
        }
    }
    encode(&tracefs.root().join("events"), &tracepoints).map(Some)
}

/// The tracepoint of id `id`: the event's name (`system:event`) when its
/// id file says `id`, else the tracepoint of tracefs with that id.
fn find(tracefs: &Tracefs, id: u64, name: &str) -> io::Result<Tracepoint> {
    if let Some((s, rest)) = name.split_once(':') {
        // A name with modifiers (`sys:event:u`) keeps its first two parts.
        let e = rest.split(':').next().unwrap_or(rest);
        if tracefs.tracepoint_id(s, e).is_ok_and(|got| got == id) {
            return Ok((s.to_owned(), e.to_owned()));
        }
    }
    let events = tracefs.root().join("events");
    for system in dir_names(&events)? {
        for event in dir_names(&events.join(&system)).unwrap_or_default() {
            let path = events.join(&system).join(&event).join("id");
            let found = std::fs::read_to_string(path)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok());
            if found == Some(id) {
                return Ok((system, event));
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!(
            "perf.data tracing data: no tracepoint under {} has id {id} (event {name:?}); \
             perf could not decode its samples",
            events.display()
        ),
    ))
}

/// The names of the directories in `dir`, sorted.
fn dir_names(dir: &Path) -> io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| {
            let e = e.ok()?;
            e.file_type()
                .ok()?
                .is_dir()
                .then(|| e.file_name().into_string().ok())?
        })
        .collect();
    names.sort();
    Ok(names)
}

/// perf's tracing data for `tracepoints`, their formats read under `events`
/// (tracefs's `events/` directory).
pub(super) fn encode(events: &Path, tracepoints: &[Tracepoint]) -> io::Result<Vec<u8>> {
    let read = |path: &Path| {
        read_whole(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("perf.data tracing data: reading {}: {e}", path.display()),
            )
        })
    };
    let mut out = vec![23, 8, 68];
    out.extend_from_slice(b"tracing");
    out.extend_from_slice(VERSION);
    out.push(u8::from(cfg!(target_endian = "big")));
    out.push(core::mem::size_of::<core::ffi::c_long>() as u8);
    out.extend_from_slice(&(perf_event_core::linux::mmap::page_size() as u32).to_ne_bytes());
    for header in ["header_page", "header_event"] {
        out.extend_from_slice(header.as_bytes());
        out.push(0);
        sized_u64(&mut out, &read(&events.join(header))?);
    }
    // The ftrace system's events first, then each other system's.
    let (ftrace, others): (Vec<&Tracepoint>, Vec<&Tracepoint>) =
        tracepoints.iter().partition(|(s, _)| s == "ftrace");
    let format = |(s, e): &Tracepoint| read(&events.join(s).join(e).join("format"));
    out.extend_from_slice(&(ftrace.len() as u32).to_ne_bytes());
    for tp in ftrace {
        sized_u64(&mut out, &format(tp)?);
    }
    let mut systems: Vec<&str> = others.iter().map(|(s, _)| s.as_str()).collect();
    systems.sort_unstable();
    systems.dedup();
    out.extend_from_slice(&(systems.len() as u32).to_ne_bytes());
    for system in systems {
        out.extend_from_slice(system.as_bytes());
        out.push(0);
        let of_system: Vec<&&Tracepoint> = others.iter().filter(|(s, _)| s == system).collect();
        out.extend_from_slice(&(of_system.len() as u32).to_ne_bytes());
        for tp in of_system {
            sized_u64(&mut out, &format(tp)?);
        }
    }
    // kallsyms: empty, as perf writes it.
    out.extend_from_slice(&0u32.to_ne_bytes());
    // printk formats (the bprint events' strings), when tracefs has them.
    let printk = events
        .parent()
        .and_then(|root| read_whole(&root.join("printk_formats")).ok())
        .unwrap_or_default();
    out.extend_from_slice(&(printk.len() as u32).to_ne_bytes());
    out.extend_from_slice(&printk);
    // saved_cmdlines: empty (the samples carry pid and tid).
    out.extend_from_slice(&0u64.to_ne_bytes());
    Ok(out)
}

/// A tracefs file whole, read in 64 KiB pieces: these files say their size
/// is 0, and some (`events/header_page` on Linux 6.18) end after the first
/// `read(2)` however short it was, so a reader that starts with a small
/// probe read gets only its first bytes.
fn read_whole(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// `bytes` after their length as a u64.
fn sized_u64(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_ne_bytes());
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tracefs of two systems in a temporary directory (simulated: the
    /// real one is read by the perf oracle test of a tracepoint recording).
    #[test]
    fn the_layout_is_perfs() {
        let root = std::env::temp_dir().join(format!("tracing-data-{}", std::process::id()));
        let events = root.join("events");
        let put = |p: &Path, text: &str| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put(&events.join("header_page"), "page");
        put(&events.join("header_event"), "event!");
        put(&events.join("sys_b/two/format"), "name: two");
        put(&events.join("sys_a/one/format"), "name: one");
        put(&events.join("ftrace/function/format"), "name: function");
        put(&root.join("printk_formats"), "fmt");
        let tps = [("sys_b", "two"), ("ftrace", "function"), ("sys_a", "one")]
            .map(|(s, e)| (s.to_string(), e.to_string()));
        let got = encode(&events, &tps).unwrap();
        let _ = std::fs::remove_dir_all(&root);
        let mut want = vec![23u8, 8, 68];
        want.extend_from_slice(b"tracing0.6\0");
        want.push(u8::from(cfg!(target_endian = "big")));
        want.push(core::mem::size_of::<core::ffi::c_long>() as u8);
        want.extend_from_slice(&(perf_event_core::linux::mmap::page_size() as u32).to_ne_bytes());
        let sized = |w: &mut Vec<u8>, b: &[u8]| {
            w.extend_from_slice(&(b.len() as u64).to_ne_bytes());
            w.extend_from_slice(b);
        };
        want.extend_from_slice(b"header_page\0");
        sized(&mut want, b"page");
        want.extend_from_slice(b"header_event\0");
        sized(&mut want, b"event!");
        want.extend_from_slice(&1u32.to_ne_bytes());
        sized(&mut want, b"name: function");
        want.extend_from_slice(&2u32.to_ne_bytes());
        for (system, format) in [("sys_a", "name: one"), ("sys_b", "name: two")] {
            want.extend_from_slice(system.as_bytes());
            want.push(0);
            want.extend_from_slice(&1u32.to_ne_bytes());
            sized(&mut want, format.as_bytes());
        }
        want.extend_from_slice(&0u32.to_ne_bytes());
        want.extend_from_slice(&3u32.to_ne_bytes());
        want.extend_from_slice(b"fmt");
        want.extend_from_slice(&0u64.to_ne_bytes());
        assert_eq!(got, want);
    }

    #[test]
    fn a_missing_format_names_its_file() {
        let e = encode(Path::new("/nonexistent/events"), &[]).unwrap_err();
        assert!(
            e.to_string().contains("/nonexistent/events/header_page"),
            "{e}"
        );
    }
}
