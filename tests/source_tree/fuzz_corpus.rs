//! Replays the fuzz corpus (`fuzz/corpus/<target>/`, seeds and any crash
//! inputs added as regressions) through the parsers on stable, with the
//! invariants the fuzz targets check: no panic, positions inside the input,
//! renderings that parse back to the same value.

use perf_event_host::parse::{parse, Builtin};
use perf_event_host::sysfs::{Alias, CpuList, Format, Pmu, Pmus, TermLexer};

mod ringset_check;

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = crate::root().join("fuzz/corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|f| f.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} is empty", dir.display());
    files
        .into_iter()
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

#[test]
fn format_spec_corpus_keeps_its_invariants() {
    for (name, data) in corpus("format_spec") {
        let Ok(text) = std::str::from_utf8(&data) else {
            continue;
        };
        if let Ok(format) = Format::parse(text) {
            assert_eq!(Format::parse(&format.to_string()), Ok(format), "{name}");
            let value = format.max_value() / 3;
            assert_eq!(format.unpack(format.pack(value).unwrap()), value, "{name}");
        }
        for term in TermLexer::new(text, 0) {
            if let Err(e) = term {
                assert!(e.position <= text.len(), "{name}: {e}");
            }
        }
        let _ = Alias::new("corpus", text);
        if let Ok(list) = CpuList::parse(text) {
            assert_eq!(CpuList::parse(&list.to_string()), Ok(list), "{name}");
        }
    }
}

#[test]
fn event_string_corpus_keeps_its_invariants() {
    let cpu = Pmu::new("cpu", 4)
        .with_format("event", Format::parse("config:0-7,32-35").unwrap())
        .with_format("umask", Format::parse("config:8-15").unwrap())
        .with_format("ldlat", Format::parse("config1:0-15").unwrap())
        .with_alias(Alias::new("mem-loads", "event=0xcd,umask=0x1,ldlat=3").unwrap());
    let pmus = Pmus::from_pmus(vec![cpu]);
    let mut parsed = 0;
    for (name, data) in corpus("event_string") {
        let Ok(input) = std::str::from_utf8(&data) else {
            continue;
        };
        for result in [
            parse(input, &pmus).map(|l| l.events().len()),
            parse(input, &Builtin).map(|l| l.events().len()),
        ] {
            match result {
                Ok(_) => parsed += 1,
                Err(e) => {
                    assert!(e.position + e.len <= input.len(), "{name}: {e:?}");
                    assert!(!e.to_string().is_empty());
                }
            }
        }
    }
    assert!(parsed > 0, "some seeds parse");
}

#[test]
fn ringset_merge_corpus_keeps_its_invariants() {
    for (name, data) in corpus("ringset_merge") {
        let merged = ringset_check::check(&data);
        if name.ends_with("two_rings_rising") || name.ends_with("wrapping_start") {
            assert_eq!(merged, 15, "{name}: the seed's records all went through");
        }
    }
}

#[test]
fn perf_data_read_corpus_reads_and_mangled_copies_do_not_panic() {
    use perf_data_file::PerfData;
    let walk = |data: &[u8]| -> Option<usize> {
        let file = PerfData::from_bytes(data.to_vec()).ok()?;
        let mut n = 0;
        for rec in file.records() {
            let Ok((_, bytes)) = rec else { break };
            let _ = file.event_of(bytes);
            if file.parse(bytes).is_ok() {
                n += 1;
            }
        }
        Some(n)
    };
    for (name, data) in corpus("perf_data_read") {
        // The seeds are real files (perf's and the writer's, file and
        // pipe mode): they read whole.
        let n = walk(&data).unwrap_or_else(|| panic!("{name} does not read"));
        assert!(n > 10, "{name}: {n} records");
        // The same file cut anywhere and with bytes changed: errors, or
        // fewer records, never a panic.
        for cut in (0..data.len()).step_by(7) {
            let _ = walk(&data[..cut]);
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..500 {
            let mut b = data.clone();
            for _ in 0..3 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let at = (x as usize) % b.len();
                b[at] = (x >> 24) as u8;
            }
            let _ = walk(&b);
        }
    }
}
