//! Event strings as people write them for the perf tool, parsed against a
//! fixture system (Intel + arm64 PMUs, a tracefs with known ids) into the
//! attr values the kernel would get; malformed strings rejected at the
//! byte that is wrong.

use crate::attr_want;
use crate::sysfs_support;

use attr_want::*;
use perf_event_host::parse::{parse, Builtin, System};
use perf_event_host::sysfs::{Pmus, Tracefs};
use sysfs_support::*;

const fn cache(cache: u64, op: u64, result: u64) -> Want {
    w(CACHE, cache | op << 8 | result << 16)
}

/// (string, one entry per event, in order).
const TABLE: &[(&str, &[Want])] = &[
    ("cycles", &[w(HW, 0)]),
    ("cpu-cycles", &[w(HW, 0)]),
    ("instructions", &[w(HW, 1)]),
    ("cache-references", &[w(HW, 2)]),
    ("cache-misses", &[w(HW, 3)]),
    ("branches", &[w(HW, 4)]),
    ("branch-instructions", &[w(HW, 4)]),
    ("branch-misses", &[w(HW, 5)]),
    ("bus-cycles", &[w(HW, 6)]),
    ("stalled-cycles-frontend", &[w(HW, 7)]),
    ("idle-cycles-backend", &[w(HW, 8)]),
    ("ref-cycles", &[w(HW, 9)]),
    ("cpu-clock", &[w(SW, 0)]),
    ("task-clock", &[w(SW, 1)]),
    ("page-faults", &[w(SW, 2)]),
    ("faults", &[w(SW, 2)]),
    ("cs", &[w(SW, 3)]),
    ("context-switches", &[w(SW, 3)]),
    ("migrations", &[w(SW, 4)]),
    ("minor-faults", &[w(SW, 5)]),
    ("major-faults", &[w(SW, 6)]),
    ("alignment-faults", &[w(SW, 7)]),
    ("emulation-faults", &[w(SW, 8)]),
    ("dummy", &[w(SW, 9)]),
    ("bpf-output", &[w(SW, 10)]),
    ("cgroup-switches", &[w(SW, 11)]),
    ("L1-dcache-loads", &[cache(0, 0, 0)]),
    ("L1-dcache-load-misses", &[cache(0, 0, 1)]),
    ("L1-dcache-stores", &[cache(0, 1, 0)]),
    ("L1-dcache-prefetch-misses", &[cache(0, 2, 1)]),
    ("L1-icache-load-misses", &[cache(1, 0, 1)]),
    ("LLC-loads", &[cache(2, 0, 0)]),
    ("LLC-load-misses", &[cache(2, 0, 1)]),
    ("LLC-store-misses", &[cache(2, 1, 1)]),
    ("LLC-prefetches", &[cache(2, 2, 0)]),
    ("dTLB-load-misses", &[cache(3, 0, 1)]),
    ("dTLB-stores", &[cache(3, 1, 0)]),
    ("iTLB-load-misses", &[cache(4, 0, 1)]),
    ("branch-loads", &[cache(5, 0, 0)]),
    ("branch-load-misses", &[cache(5, 0, 1)]),
    ("node-loads", &[cache(6, 0, 0)]),
    ("node-store-misses", &[cache(6, 1, 1)]),
    ("l1d-misses", &[cache(0, 0, 1)]),
    ("LLC-loads:u", &[cache(2, 0, 0).f(U)]),
    ("cycles:u", &[w(HW, 0).f(U)]),
    ("cycles:k", &[w(HW, 0).f(K)]),
    ("cycles:h", &[w(HW, 0).f(H)]),
    ("cycles:uk", &[w(HW, 0).f(EH | EG)]),
    ("instructions:ukh", &[w(HW, 1).f(EG)]),
    ("cycles:uG", &[w(HW, 0).f(EK | EH | EHOST)]),
    ("cycles:G", &[w(HW, 0).f(EHOST)]),
    ("cycles:H", &[w(HW, 0).f(EG)]),
    ("cycles:GH", &[w(HW, 0)]),
    ("cycles:p", &[w(HW, 0).f(P1)]),
    ("cycles:pp", &[w(HW, 0).f(P2)]),
    ("cycles:ppp", &[w(HW, 0).f(P3)]),
    ("cycles:upp", &[w(HW, 0).f(U | P2)]),
    ("cycles:I", &[w(HW, 0).f(EI)]),
    ("cycles:D", &[w(HW, 0).f(PINNED)]),
    ("cycles:e", &[w(HW, 0).f(EXCL)]),
    ("cycles:S", &[w(HW, 0).read()]),
    ("cycles:P", &[w(HW, 0)]),
    ("r1a8", &[w(RAW, 0x1a8)]),
    ("r003c:u", &[w(RAW, 0x3c).f(U)]),
    ("rc0:pp", &[w(RAW, 0xc0).f(P2)]),
    ("rffffffffffffffff", &[w(RAW, u64::MAX)]),
    ("4:0x3c", &[w(4, 0x3c)]),
    ("1:1", &[w(SW, 1)]),
    ("cpu/event=0x3c,umask=0x00/k", &[w(4, 0x3c).f(K)]),
    ("cpu/event=0x3c,umask=0x00/:k", &[w(4, 0x3c).f(K)]),
    (
        "cpu/event=0xc0,umask=0x01,inv,cmask=1/u",
        &[w(4, 0xc0 | 1 << 8 | 1 << 23 | 1 << 24).f(U)],
    ),
    ("cpu/mem-loads,ldlat=30/P", &[w(4, 0x1cd).c1(30)]),
    ("cpu/mem-loads/pp", &[w(4, 0x1cd).c1(3).f(P2)]),
    ("cpu/cpu-cycles/", &[w(4, 0x3c)]),
    ("cpu/cycles-ct/", &[w(4, 0x3c | 3 << 32)]),
    (
        "cpu/event=0x3c,period=100000/",
        &[w(4, 0x3c).period(100000)],
    ),
    (
        "cpu/event=0x3c,freq=4000/",
        &[w(4, 0x3c).period(4000).f(FREQ)],
    ),
    ("cpu/event=0x3c,inherit/", &[w(4, 0x3c).f(INHERIT)]),
    ("cpu/event=0x3c,no-inherit/", &[w(4, 0x3c)]),
    (
        "cpu/event=0xb7,umask=0x01,offcore_rsp=0x3f803c0091/",
        &[w(4, 0x1b7).c1(0x3f803c0091)],
    ),
    (
        "cpu/config=0x1234,config1=5,config2=6/",
        &[w(4, 0x1234).c1(5).c2(6)],
    ),
    ("msr/tsc/", &[w(9, 0)]),
    ("msr/aperf/", &[w(9, 1)]),
    ("tsc", &[w(9, 0)]),
    ("mperf:u", &[w(9, 2).f(U)]),
    ("mem-loads:pp", &[w(4, 0x1cd).c1(3).f(P2)]),
    ("power/energy-pkg/", &[w(17, 2)]),
    ("uncore_imc_0/cas_count_read/", &[w(14, 0x304)]),
    (
        "uncore_imc/event=0x04,umask=0x03/",
        &[w(14, 0x304), w(15, 0x304)],
    ),
    ("cas_count_read", &[w(14, 0x304), w(15, 0x304)]),
    (
        "intel_pt/tsc,mtc_period=3,branch/u",
        &[w(8, 1 << 10 | 3 << 14 | 1 << 13).f(U)],
    ),
    ("uprobe/retprobe/", &[w(7, 1)]),
    (
        "armv8_pmuv3_0/cpu_cycles,long,rdpmc/u",
        &[w(10, 0x11).c1(3).f(U)],
    ),
    ("armv8_pmuv3/event=0x8/", &[w(10, 8), w(11, 8)]),
    (
        "arm_spe_0/ts_enable=1,load_filter=1,min_latency=64/",
        &[w(12, 1 | 1 << 32).c2(64)],
    ),
    ("sched:sched_switch", &[w(TP, 316)]),
    ("syscalls:sys_enter_prctl:k", &[w(TP, 267).f(K)]),
    ("irq:irq_handler_entry", &[w(TP, 150)]),
    ("block:block_rq_issue:u", &[w(TP, 1190).f(U)]),
    ("mem:0x1000", &[bp_at(3, 0x1000, 4)]),
    ("mem:0x1000:w", &[bp_at(2, 0x1000, 4)]),
    ("mem:0x1000/8:rw", &[bp_at(3, 0x1000, 8)]),
    ("mem:0x1000:rw/8", &[bp_at(3, 0x1000, 8)]),
    ("mem:0x7ffc0000:r", &[bp_at(1, 0x7ffc0000, 4)]),
    ("mem:0x400000:x", &[bp_at(4, 0x400000, 8)]),
    ("mem:4096/2:wr:u", &[bp_at(3, 4096, 2).f(U)]),
    ("mem:0x1000:k", &[bp_at(3, 0x1000, 4).f(K)]),
    ("cycles/period=1000/", &[w(HW, 0).period(1000)]),
    ("task-clock/freq=100/u", &[w(SW, 1).period(100).f(FREQ | U)]),
    (
        "L1-dcache-load-misses/period=10007/",
        &[cache(0, 0, 1).period(10007)],
    ),
    ("r1a8/period=5/", &[w(RAW, 0x1a8).period(5)]),
    ("cycles,instructions", &[w(HW, 0), w(HW, 1)]),
    ("page-faults:u,cs:k", &[w(SW, 2).f(U), w(SW, 3).f(K)]),
    ("{cycles,instructions}", &[w(HW, 0), w(HW, 1)]),
    ("{cycles,instructions}:u", &[w(HW, 0).f(U), w(HW, 1).f(U)]),
    (
        "{cycles:k,instructions}:u",
        &[w(HW, 0).f(EH | EG), w(HW, 1).f(U)],
    ),
    (
        "{cycles,instructions}:S",
        &[w(HW, 0).group_read(), w(HW, 1).group_read()],
    ),
    ("{cycles}:S", &[w(HW, 0).read()]),
    ("{cycles,instructions}:D", &[w(HW, 0).f(PINNED), w(HW, 1)]),
    ("{cycles,instructions}:W", &[w(HW, 0), w(HW, 1)]),
    (
        "{cycles:p,instructions}:p",
        &[w(HW, 0).f(P2), w(HW, 1).f(P1)],
    ),
    (
        "{cpu/event=0x3c/,cpu/event=0xc0/}:pp",
        &[w(4, 0x3c).f(P2), w(4, 0xc0).f(P2)],
    ),
    (
        "{mem-loads:p,msr/tsc/},sched:sched_wakeup",
        &[w(4, 0x1cd).c1(3).f(P1), w(9, 0), w(TP, 318)],
    ),
];

fn fixture_system(tree: &Tree) -> System {
    intel(tree);
    arm64(tree);
    System::new(
        Pmus::read_from(&tree.devices()).unwrap(),
        Some(Tracefs::at(&tracefs(tree))),
    )
}

#[test]
fn real_world_event_strings_round_trip_into_attrs() {
    assert!(TABLE.len() >= 50, "{} strings", TABLE.len());
    let tree = Tree::new("strings");
    let system = fixture_system(&tree);
    assert!(
        system.pmus.skipped().is_empty(),
        "{:?}",
        system.pmus.skipped()
    );
    let mut failures = Vec::new();
    for &(input, want) in TABLE {
        match parse(input, &system) {
            Ok(list) => {
                let have: Vec<Want> = list.events().iter().map(got).collect();
                if have != want {
                    failures.push(format!("{input}:\n  want {want:x?}\n  have {have:x?}"));
                }
                for e in list.events() {
                    assert!(e.attr.check().is_ok(), "{input}: {:?}", e.attr.check());
                    assert_eq!(&input[e.position..e.position + e.text.len()], e.text);
                }
            }
            Err(e) => failures.push(format!("{input}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        TABLE.len(),
        failures.join("\n")
    );
    println!("{} event strings round-trip", TABLE.len());
}

#[test]
fn groups_names_aliases_and_modifiers_are_reported() {
    let tree = Tree::new("groups");
    let system = fixture_system(&tree);
    let list = parse(
        "{cycles,instructions}:W,cas_count_read,cpu/mem-loads,name=loads/P",
        &system,
    )
    .unwrap();
    let groups: Vec<Vec<&str>> = list
        .groups()
        .map(|g| g.iter().map(|e| e.text).collect())
        .collect();
    assert_eq!(
        groups,
        [
            vec!["cycles", "instructions"],
            vec!["cas_count_read"],
            vec!["cas_count_read"],
            vec!["cpu/mem-loads,name=loads/P"]
        ]
    );
    let g = &list.group_list()[0];
    assert!(g.braced && g.modifiers.weak && list.events()[1].modifiers.weak);
    assert_eq!(list.events()[1].group, 0);
    let imc: Vec<&str> = list.events()[2..4]
        .iter()
        .map(|e| e.pmu.unwrap().name())
        .collect();
    assert_eq!(imc, ["uncore_imc_0", "uncore_imc_1"]);
    let alias = list.events()[2].alias.unwrap();
    assert_eq!(
        (alias.unit(), alias.scale().unwrap().factor),
        (Some("MiB"), 6.103515625e-5)
    );
    let loads = &list.events()[4];
    assert_eq!(
        (loads.name, loads.alias.unwrap().name()),
        (Some("loads"), "mem-loads")
    );
    assert!(loads.modifiers.precise_max);
    // Without sysfs only the built-in names parse.
    assert_eq!(
        parse("cycles:u,L1-dcache-loads,r1a8,mem:0x10", &Builtin)
            .unwrap()
            .events()
            .len(),
        4
    );
    let e = parse("msr/tsc/", &Builtin).unwrap_err();
    assert!(e.to_string().contains("(this system has: none)"), "{e}");
    let e = parse("sched:sched_switch", &Builtin).unwrap_err();
    assert!(e.to_string().contains("tracefs is not mounted"), "{e}");
}

/// (string, byte position, text the message must contain).
const MALFORMED: &[(&str, usize, &str)] = &[
    ("", 0, "expected an event"),
    ("cycles:x", 7, "unknown modifier `x`"),
    ("cycles:u2", 8, "unknown modifier `2`"),
    ("cycles:uu", 8, "modifier `u` given twice"),
    ("cycles:pppp", 10, "at most 3"),
    ("cycles:", 7, "modifier letters after `:`"),
    ("cycles:W", 7, "(weak group) is for groups"),
    ("cycles:b", 7, "perf tool feature"),
    ("cycles,,instructions", 7, "expected an event"),
    ("cycles,", 7, "expected an event"),
    ("{cycles,instructions", 0, "`{` without its `}`"),
    ("{cycles,{instructions}}", 8, "groups do not nest"),
    ("{}", 1, "expected an event"),
    ("cycles}", 6, "`}` without a `{`"),
    ("cycles instructions", 6, "`,` between events"),
    (
        "{cycles instructions}",
        7,
        "`,` or `}` after an event in a group",
    ),
    ("{cycles}:x", 9, "unknown modifier `x`"),
    ("{cycles,instructions:D}", 21, "applies to a group leader"),
    ("{cycles:ppp,instructions}:p", 26, "at most 3"),
    ("tsc:uk:k", 6, "`,` between events"),
    ("cycles:é", 7, "modifier letters after `:`"),
    ("cyclés", 0, "unknown event"),
    ("nosuchevent", 0, "unknown event"),
    ("L1-dcache-loadz", 10, "not a cache operation"),
    ("iTLB-stores", 5, "an operation this cache does not have"),
    ("LLC-load-store", 9, "a second cache operation"),
    ("duration_time", 0, "perf tool event"),
    ("nopmu/event=1/", 0, "no PMU of that name"),
    ("cpu/event=0x3c", 3, "no closing `/`"),
    (
        "cpu/event=0x100/",
        10,
        "value 0x100 does not fit: `event` is 8 bits (config:0-7)",
    ),
    ("cpu/bogus=1/", 4, "term `bogus`: no such format or event"),
    ("cpu/umask/", 4, "needs a value"),
    ("cpu/event=0x3c,,umask=1/", 15, "expected a term name"),
    ("cpu/event=0x3cq/", 10, "malformed number"),
    ("cpu/event=1,event=2/", 12, "given twice"),
    ("cpu/mem-loads,mem-stores/", 14, "a second event name"),
    ("cpu/event=1/x", 12, "unknown modifier `x`"),
    ("cpu/event=1/:", 13, "modifier letters after `:`"),
    ("cycles/event=1/", 7, "takes only config terms"),
    ("cpu/event=1,percore/", 12, "perf tool setting"),
    (
        "cpu/event=1,call-graph=xx/",
        23,
        "takes fp, dwarf[,size], lbr or no",
    ),
    ("cs/call-graph='fp,8'/", 14, "only `dwarf` takes a size"),
    ("cs/stack-size=70000/", 14, "1 to 65528 bytes"),
    ("cs/umask=1/", 3, "takes only config terms"),
    ("sched:sched_switch/event=1/", 19, "takes only config terms"),
    ("mem:0x1000/name=x", 10, "no closing `/`"),
    ("cpu/event=1,period=abc/", 19, "takes a number"),
    ("cpu/event=1,inherit=2/", 20, "takes 0 or 1"),
    (
        "armv8_pmuv3_0/event=0x10000/",
        20,
        "is 16 bits (config:0-15)",
    ),
    ("sched:nope", 0, "sched/nope/id does not exist"),
    ("nosys:evt", 0, "no tracepoint system `nosys`"),
    ("sched:nomatch_*", 0, "no tracepoint matches"),
    ("*:nomatch", 0, "no tracepoint matches"),
    ("cycl*", 0, "wildcards match tracepoints"),
    ("nopmu*/event=1/", 0, "no PMU of that name"),
    ("grp*{cycles}", 0, "a group name without wildcards"),
    ("mem:", 4, "expected an address"),
    ("mem:zz", 4, "expected an address"),
    ("mem:0x1000/9", 11, "length of 1 to 8"),
    ("mem:0x1000:rwx", 11, "`x` does not combine"),
    ("mem:0x1000:rr", 12, "access letter given twice"),
    ("r12345678901234567", 0, "at most 16 hex digits"),
    ("99999999999:1", 0, "does not fit in 32 bits"),
    ("4:zz", 2, "config number"),
];

#[test]
fn malformed_event_strings_are_rejected_at_the_offending_byte() {
    let tree = Tree::new("malformed-strings");
    let system = fixture_system(&tree);
    let mut failures = Vec::new();
    for &(input, position, needle) in MALFORMED {
        match parse(input, &system) {
            Ok(list) => failures.push(format!(
                "{input:?}: accepted as {} events",
                list.events().len()
            )),
            Err(e) => {
                let text = e.to_string();
                if e.position != position || !text.contains(needle) {
                    failures.push(format!(
                        "{input:?}: want byte {position} with {needle:?}, got {text}"
                    ));
                }
                assert!(
                    e.input == input && e.position + e.len <= input.len(),
                    "{input:?}"
                );
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let e = parse("cpu/event=0x3c,umask=0x100/u", &system).unwrap_err();
    assert_eq!(
        e.to_string(),
        "event string, byte 21 (`0x100`): PMU `cpu`, term `umask`: value 0x100 does not fit: \
         `umask` is 8 bits (config:8-15), at most 0xff\n  cpu/event=0x3c,umask=0x100/u\n  \
         \x20                    ^^^^^"
    );
}
