//! Discovery and encoding on fixture trees of PMUs this machine lacks: an
//! Intel and an AMD `cpu` PMU, arm64 `armv8_pmuv3_*` with the user-access
//! bits in `config1`, uncore PMUs with `cpumask`, RAPL with `.scale` /
//! `.unit`; a CPU's sibling lists under their names before and since Linux
//! 5.3; malformed files rejected with the file, text and position.

use crate::sysfs_support;

use perf_event_core::event::Event;
use perf_event_host::sysfs::{
    Alias, ConfigWord, CpuList, EncodeProblem, Format, FormatProblem, Limits, Pmu, Pmus, Probe,
    Problem, Siblings, Tracefs,
};
use std::path::Path;
use sysfs_support::*;

fn words(pmu: &Pmu, terms: &str) -> [u64; 5] {
    pmu.encode(terms)
        .unwrap_or_else(|e| panic!("{terms}: {e}"))
        .0
}

#[test]
fn intel_cpu_pmu_is_read_with_every_file() {
    let tree = Tree::new("intel");
    intel(&tree);
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    assert!(pmus.skipped().is_empty(), "{:?}", pmus.skipped());
    let names: Vec<&str> = pmus.all().iter().map(Pmu::name).collect();
    assert_eq!(
        names,
        [
            "breakpoint",
            "cpu",
            "intel_pt",
            "kprobe",
            "msr",
            "power",
            "software",
            "tracepoint",
            "uncore_imc_0",
            "uncore_imc_1",
            "uprobe"
        ]
    );
    let cpu = pmus.get("cpu").unwrap();
    assert_eq!(cpu.type_id(), 4);
    assert_eq!(cpu.dir(), tree.devices().join("cpu"));
    assert_eq!(
        cpu.format("event"),
        Some(Format::new(ConfigWord::Config, 0xff))
    );
    assert_eq!(cpu.format("ldlat").unwrap().word(), ConfigWord::Config1);
    assert_eq!(cpu.format("inv").unwrap().to_string(), "config:23");
    assert_eq!(cpu.formats().count(), 12);
    let mem_loads = cpu.alias("mem-loads").unwrap();
    assert_eq!(mem_loads.terms_text(), "event=0xcd,umask=0x1,ldlat=3");
    assert_eq!(mem_loads.terms().count(), 3);
    let slots = cpu.alias("topdown-total-slots").unwrap();
    assert_eq!(slots.scale().unwrap().factor, 2.0);
    assert_eq!(cpu.cap("max_precise"), Some("3"));
    assert_eq!(cpu.cap("pmu_name"), Some("skylake"));
    assert_eq!(cpu.rdpmc(), Some(1));
    assert_eq!(cpu.mux_interval_ms(), Some(4));
    assert_eq!(
        (cpu.cpumask(), cpu.cpus(), cpu.nr_addr_filters()),
        (None, None, None)
    );
    assert_eq!(pmus.get("intel_pt").unwrap().nr_addr_filters(), Some(2));

    let power = pmus.get("power").unwrap();
    let pkg = power.alias("energy-pkg").unwrap();
    assert_eq!(pkg.unit(), Some("Joules"));
    let scale = pkg.scale().unwrap();
    assert_eq!(scale.text, "2.3283064365386962890625e-10");
    assert_eq!(scale.factor, 2f64.powi(-32), "2^-32 J per count");
    assert_eq!(
        pkg.to_string(),
        "energy-pkg = event=0x02 (x 2.3283064365386962890625e-10 Joules)"
    );
}

#[test]
fn intel_events_encode_from_aliases_and_terms() {
    let tree = Tree::new("intel-encode");
    intel(&tree);
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    let cpu = pmus.get("cpu").unwrap();
    assert_eq!(cpu.alias_event("cpu-cycles").unwrap(), Event::pmu(4, 0x3c));
    assert_eq!(words(cpu, "event=0x3c,umask=0x00"), [0x3c, 0, 0, 0, 0]);
    assert_eq!(
        words(cpu, "event=0xc0,umask=0x01,inv,cmask=1,edge"),
        [0xc0 | 0x01 << 8 | 1 << 18 | 1 << 23 | 1 << 24, 0, 0, 0, 0]
    );
    assert_eq!(words(cpu, "mem-loads"), [0xcd | 0x1 << 8, 3, 0, 0, 0]);
    // A later term overrides the alias's value; an earlier one is kept.
    assert_eq!(words(cpu, "mem-loads,ldlat=30"), [0x1cd, 30, 0, 0, 0]);
    assert_eq!(words(cpu, "ldlat=50,mem-loads"), [0x1cd, 50, 0, 0, 0]);
    assert_eq!(words(cpu, "cycles-ct"), [0x3c | 3 << 32, 0, 0, 0, 0]);
    assert_eq!(words(cpu, "config=0x1234,config1=7"), [0x1234, 7, 0, 0, 0]);
    assert_eq!(
        words(cpu, "event=0xb7,umask=0x01,offcore_rsp=0x3f803c0091"),
        [0x1b7, 0x3f803c0091, 0, 0, 0]
    );
    let msr = pmus.get("msr").unwrap();
    assert_eq!(msr.alias_event("tsc").unwrap(), Event::pmu(9, 0));
    assert_eq!(words(msr, "event=0xffffffffffffffff")[0], u64::MAX);
}

#[test]
fn intel_encoding_errors_name_the_term_and_width() {
    let tree = Tree::new("intel-errors");
    intel(&tree);
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    let cpu = pmus.get("cpu").unwrap();
    let e = cpu.encode("event=0x3c,umask=0x100").unwrap_err();
    assert_eq!((e.term.as_str(), e.position), ("umask", Some(17)));
    assert_eq!(
        e.problem,
        EncodeProblem::ValueTooWide {
            value: 0x100,
            format: Format::parse("config:8-15").unwrap()
        }
    );
    assert_eq!(
        e.to_string(),
        "PMU `cpu`, term `umask`: value 0x100 does not fit: `umask` is 8 bits (config:8-15), at \
         most 0xff"
    );
    let e = cpu.encode("event=0x3c,bogus=1").unwrap_err();
    assert_eq!((e.term.as_str(), e.position), ("bogus", Some(11)));
    let msg = e.to_string();
    assert!(
        msg.contains("term `bogus`: no such format or event"),
        "{msg}"
    );
    assert!(
        msg.contains("[any, cmask, edge, event, frontend, in_tx"),
        "{msg}"
    );
    let e = cpu.encode("umask").unwrap_err();
    assert!(matches!(e.problem, EncodeProblem::NeedsValue { .. }), "{e}");
    assert!(e.to_string().contains("write `umask=N`"));
    let e = cpu.encode("event=1,event=2").unwrap_err();
    assert_eq!((e.problem, e.position), (EncodeProblem::Duplicate, Some(8)));
    let e = cpu.encode("mem-loads=1").unwrap_err();
    assert_eq!(e.problem, EncodeProblem::AliasWithValue);
    let e = cpu.encode("mem-loads,mem-stores").unwrap_err();
    assert!(matches!(e.problem, EncodeProblem::SecondAlias { .. }));
    let e = cpu.encode("event=cycles").unwrap_err();
    assert_eq!(
        (e.problem, e.position),
        (EncodeProblem::NeedsNumber, Some(6))
    );
    let e = cpu.encode("event=0x3c,,inv").unwrap_err();
    assert!(matches!(e.problem, EncodeProblem::Syntax(_)), "{e}");
    assert_eq!(e.position, Some(11));
    let e = pmus.get("msr").unwrap().alias_event("nope").unwrap_err();
    assert!(e.to_string().contains("it has 3 events"), "{e}");
}

#[test]
fn amd_event_select_spans_two_ranges() {
    let tree = Tree::new("amd");
    amd(&tree);
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    let cpu = pmus.get("cpu").unwrap();
    let event = cpu.format("event").unwrap();
    assert_eq!(event.to_string(), "config:0-7,32-35");
    assert_eq!(event.ranges().collect::<Vec<_>>(), [(0, 7), (32, 35)]);
    assert_eq!(event.width(), 12);
    assert_eq!(
        words(cpu, "event=0x1c0,umask=0x01")[0],
        0xc0 | 0x01 << 8 | 0x1 << 32
    );
    assert_eq!(words(cpu, "event=0xfff")[0], 0xff | 0xf << 32);
    assert_eq!(words(cpu, "ls_dispatch")[0], 0x29 | 0x07 << 8);
    let e = cpu.encode("event=0x1000").unwrap_err();
    assert!(
        e.to_string()
            .contains("is 12 bits (config:0-7,32-35), at most 0xfff"),
        "{e}"
    );
    let l3 = pmus.get("amd_l3").unwrap();
    assert_eq!(
        l3.cpumask().unwrap().iter().collect::<Vec<_>>(),
        [0, 8, 16, 24]
    );
    assert_eq!(
        words(
            l3,
            "event=0x04,umask=0xff,enallcores,enallslices,threadmask=0x3"
        )[0],
        0x04 | 0xff << 8 | 1 << 47 | 1 << 46 | 3 << 56
    );
}

#[test]
fn arm64_user_access_bits_live_in_config1() {
    let tree = Tree::new("arm64");
    arm64(&tree);
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    let big = pmus.get("armv8_pmuv3_0").unwrap();
    assert_eq!(big.cpus().unwrap().to_string(), "0-3");
    assert_eq!(pmus.get("armv8_pmuv3_1").unwrap().cpus().unwrap().len(), 4);
    assert_eq!(big.cap("slots"), Some("0x00000020"));
    assert_eq!(words(big, "cpu_cycles,long,rdpmc"), [0x11, 0b11, 0, 0, 0]);
    assert_eq!(words(big, "event=0x8,rdpmc"), [0x8, 0b10, 0, 0, 0]);
    assert_eq!(
        words(big, "event=0xffff,threshold=0xfff,threshold_compare=2")[1],
        0xfff << 5 | 2 << 3
    );
    assert!(big.encode("event=0x10000").is_err());
    assert!(big.encode("long=2").is_err());
    let spe = pmus.get("arm_spe_0").unwrap();
    assert_eq!(
        words(
            spe,
            "ts_enable=1,load_filter=1,event_filter=0x2,min_latency=64"
        ),
        [1 | 1 << 32, 2, 64, 0, 0]
    );
    let e = spe.encode("min_latency=4096").unwrap_err();
    assert!(e.to_string().contains("is 12 bits (config2:0-11)"), "{e}");
}

#[test]
fn uncore_pmus_have_cpumasks_and_scaled_events() {
    let tree = Tree::new("uncore");
    intel(&tree);
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    let imc: Vec<&str> = pmus.matching("uncore_imc").map(Pmu::name).collect();
    assert_eq!(imc, ["uncore_imc_0", "uncore_imc_1"]);
    assert_eq!(pmus.matching("uncore_imc_1").count(), 1);
    assert_eq!(pmus.matching("uncore").count(), 0);
    let imc0 = pmus.get("uncore_imc_0").unwrap();
    assert_eq!(imc0.cpumask().unwrap().iter().collect::<Vec<_>>(), [0, 24]);
    let read = imc0.alias("cas_count_read").unwrap();
    assert_eq!(
        (read.unit(), read.scale().unwrap().factor),
        (Some("MiB"), 6.103515625e-5)
    );
    assert_eq!(
        imc0.alias_event("cas_count_read").unwrap(),
        Event::pmu(14, 0x304)
    );
}

#[test]
fn placeholders_must_be_filled_by_the_user() {
    let pmu = Pmu::new("hv_24x7", 20)
        .with_format("domain", Format::parse("config:0-3").unwrap())
        .with_format("offset", Format::parse("config:16-31").unwrap())
        .with_format("core", Format::parse("config1:0-15").unwrap())
        .with_alias(Alias::new("PM_CYC", "domain=?,offset=0x60,core=?\n").unwrap());
    let e = pmu.encode("PM_CYC,domain=2").unwrap_err();
    assert_eq!(
        (e.term.as_str(), e.alias.as_deref()),
        ("core", Some("PM_CYC"))
    );
    assert!(e.to_string().contains("add `core=N`"), "{e}");
    assert_eq!(
        words(&pmu, "PM_CYC,domain=2,core=5"),
        [2 | 0x60 << 16, 5, 0, 0, 0]
    );
    assert_eq!(
        words(&pmu, "core=5,domain=1,PM_CYC"),
        [1 | 0x60 << 16, 5, 0, 0, 0]
    );
}

#[test]
fn kprobe_and_uprobe_attrs_carry_pointer_offset_and_retprobe() {
    let tree = Tree::new("probe");
    intel(&tree);
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    let func = c"do_sys_openat2";
    let ev = Probe::kprobe(func, 4)
        .retprobe(true)
        .event(pmus.get("kprobe").unwrap())
        .unwrap();
    let raw = ev.attr().to_raw();
    assert_eq!((raw.type_, raw.config), (6, 1));
    // SAFETY: reading the union members the probe set.
    let (ptr, off) = unsafe {
        (
            raw.__bindgen_anon_3.kprobe_func,
            raw.__bindgen_anon_4.probe_offset,
        )
    };
    assert_eq!((ptr, off), (func.as_ptr() as u64, 4));
    let ev = Probe::kprobe_addr(0xffff_ffff_8100_0000)
        .event(pmus.get("kprobe").unwrap())
        .unwrap();
    let raw = ev.attr().to_raw();
    // SAFETY: as above.
    let (ptr, addr) = unsafe {
        (
            raw.__bindgen_anon_3.kprobe_func,
            raw.__bindgen_anon_4.kprobe_addr,
        )
    };
    assert_eq!((raw.config, ptr, addr), (0, 0, 0xffff_ffff_8100_0000));
    let path = c"/usr/bin/true";
    let ev = Probe::uprobe(path, 0x1040)
        .ref_ctr_offset(0x2a)
        .event(pmus.get("uprobe").unwrap())
        .unwrap()
        .with(|a| a.disabled(true));
    let raw = ev.attr().to_raw();
    assert_eq!((raw.type_, raw.config), (7, 0x2a << 32));
    // A PMU without the format: the error names it.
    let e = Probe::uprobe(path, 0)
        .retprobe(true)
        .event(pmus.get("msr").unwrap())
        .unwrap_err();
    assert_eq!(e.term, "retprobe");
    assert!(
        e.to_string()
            .starts_with("PMU `msr`, term `retprobe`: no such format"),
        "{e}"
    );
}

#[test]
fn malformed_files_are_named_with_their_text_and_position() {
    let tree = Tree::new("malformed");
    intel(&tree);
    tree.pmu("bad_format", 30).format("event", "config:0-7,4-9");
    tree.pmu("bad_event", 31)
        .format("event", "config:0-7")
        .event("x", "event=0x3c,,inv");
    tree.pmu("bad_scale", 32)
        .format("event", "config:0-7")
        .event("x", "event=1")
        .event("x.scale", "lots");
    tree.pmu("orphan", 33).event("y.unit", "MiB");
    tree.pmu("bad_cpumask", 34).file("cpumask", "0-");
    tree.pmu("bad_type", 35).file("type", "four");
    std::fs::create_dir_all(tree.devices().join("no_type")).unwrap();
    let pmus = Pmus::read_from(&tree.devices()).unwrap();
    assert_eq!(pmus.all().len(), 11, "the good PMUs are still read");
    let messages: Vec<String> = pmus.skipped().iter().map(|e| e.to_string()).collect();
    assert_eq!(messages.len(), 7, "{messages:#?}");
    let find = |needle: &str| {
        messages
            .iter()
            .find(|m| m.contains(needle))
            .unwrap_or_else(|| panic!("no message with {needle:?} in {messages:#?}"))
            .clone()
    };
    let m = find("bad_format/format/event");
    assert!(
        m.contains("\"config:0-7,4-9\\n\" at byte 11: bit 4 is named twice"),
        "{m}"
    );
    let m = find("bad_event/events/x");
    assert!(
        m.contains("\"event=0x3c,,inv\" at byte 11: expected a term name"),
        "{m}"
    );
    assert!(find("bad_scale/events/x.scale").contains("found \"lots\""));
    assert!(find("orphan/events/y.unit").contains("without its event file"));
    assert!(find("bad_cpumask/cpumask").contains("\"0-\" at byte 2"));
    assert!(find("bad_type/type").contains("expected a decimal number, found \"four\""));
    assert!(find("no_type/type").contains("does not exist"));
    let bad = pmus
        .skipped()
        .iter()
        .find(|e| e.path.ends_with("format/event"))
        .unwrap();
    match &bad.problem {
        Problem::Format { error, .. } => {
            assert_eq!(
                (error.position, error.what),
                (11, FormatProblem::Overlap { bit: 4 })
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(Pmus::read_from(Path::new("/nonexistent/devices")).is_err());
}

#[test]
fn limits_and_tracefs_read_from_fixtures() {
    let tree = Tree::new("limits");
    for (name, value) in [
        ("perf_event_paranoid", "2"),
        ("perf_event_max_sample_rate", "50000"),
        ("perf_event_max_stack", "127"),
        ("perf_event_mlock_kb", "516"),
        ("perf_cpu_time_max_percent", "0"),
        ("perf_user_access", "1"),
        ("nmi_watchdog", "1"),
    ] {
        tree.file(&format!("kernel/{name}"), value);
    }
    let limits = Limits::read_from(&tree.root().join("kernel")).unwrap();
    assert_eq!(limits.paranoid.unwrap().0, 2);
    assert_eq!(limits.max_sample_rate, Some(50000));
    assert_eq!(limits.max_contexts_per_stack, None);
    assert_eq!(limits.user_access.unwrap().0, 1);
    let lines = limits.explain(perf_event_core::linux::access::Caller::default());
    assert_eq!(lines.len(), 7);
    assert!(lines[0].starts_with("perf_event_paranoid 2: per-thread user-space measurement only"));
    assert!(!lines[0].contains("does not restrict you"));
    assert!(
        lines
            .iter()
            .any(|l| l.contains("one ring of 128 data pages")),
        "{lines:#?}"
    );
    assert!(lines
        .iter()
        .any(|l| l.starts_with("perf_cpu_time_max_percent 0: off")));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("nmi_watchdog 1: the hard-lockup detector")));
    tree.file("kernel/perf_event_max_stack", "lots");
    let e = Limits::read_from(&tree.root().join("kernel")).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("kernel/perf_event_max_stack: expected a decimal number, found \"lots\""),
        "{e}"
    );

    let tracing = tracefs(&tree);
    let tf = Tracefs::at(&tracing);
    assert_eq!(tf.tracepoint_id("sched", "sched_switch").unwrap(), 316);
    let mounts = format!("nodev {} tracefs rw 0 0\n", tracing.display());
    assert_eq!(Tracefs::find_in(&mounts), Some(tf.clone()));
    let debugfs = format!("debugfs {} debugfs rw 0 0\n", tree.root().display());
    assert_eq!(Tracefs::find_in(&debugfs), Some(tf.clone()));
    let e = tf.tracepoint_id("sched", "sched_nope").unwrap_err();
    assert!(
        e.to_string().contains("sched/sched_nope/id does not exist"),
        "{e}"
    );
    let e = tf.tracepoint_id("nosys", "x").unwrap_err();
    assert!(
        e.to_string().starts_with("no tracepoint system `nosys`"),
        "{e}"
    );
}

#[test]
fn cpu_lists_and_sibling_lists_under_both_names() {
    let tree = Tree::new("siblings");
    // cpu0: the names of Linux 5.3 and later, beside the older ones (the
    // kernel keeps both); cpu1: only the older names; cpu2: offline, no
    // topology/; cpu3: a malformed list.
    for (old, new, list) in [
        ("core_siblings_list", "package_cpus_list", "0-3"),
        ("thread_siblings_list", "core_cpus_list", "0-1"),
    ] {
        tree.file(&format!("cpu/cpu0/topology/{new}"), list);
        tree.file(&format!("cpu/cpu0/topology/{old}"), list);
        tree.file(&format!("cpu/cpu1/topology/{old}"), list);
    }
    tree.file("cpu/cpu0/topology/die_cpus_list", "0-3");
    tree.file("cpu/cpu3/topology/core_cpus_list", "3-");
    let cpu = tree.root().join("cpu");
    let list = |text: &str| Some(CpuList::parse(text).unwrap());
    let new = Siblings::read_from(&cpu, 0);
    assert_eq!(
        (new.package, new.die, new.core),
        (list("0-3"), list("0-3"), list("0-1"))
    );
    let old = Siblings::read_from(&cpu, 1);
    assert_eq!(
        (old.package, old.die, old.core),
        (list("0-3"), None, list("0-1"))
    );
    assert_eq!(Siblings::read_from(&cpu, 2), Siblings::default());
    assert_eq!(Siblings::read_from(&cpu, 3).core, None);

    // A list file: absent is no list, malformed an error naming it.
    tree.file("cpu/online", "0-1,3");
    tree.file("cpu/offline", "2,x");
    assert_eq!(CpuList::read(&cpu.join("online")).unwrap(), list("0-1,3"));
    assert_eq!(CpuList::read(&cpu.join("possible")).unwrap(), None);
    let e = CpuList::read(&cpu.join("offline")).unwrap_err();
    assert!(e.path.ends_with("cpu/offline"), "{e}");
    assert!(
        matches!(&e.problem, Problem::CpuList { text, position: 2 } if text == "2,x"),
        "{e}"
    );
}
