//! Discovery against this machine's sysfs, tracefs and procfs, and events
//! opened from it: the listed PMUs and their type numbers, `msr/tsc/` from
//! its alias, a uprobe on a function of this test binary, a tracepoint
//! named by an event string, the system limits; the machine's CPU lists
//! and sibling lists, this process's tasks, names, mappings and fds, and
//! the other files the packages read there.

use crate::kernel_support;
use crate::lab_support;

use perf_event_core::attr::Attr;
use perf_event_core::fd::EventFd;
use perf_event_core::linux::access::Caller;
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_host::parse::{parse, System};
use perf_event_host::set::Cpus;
use perf_event_host::sysfs::{self, CpuList, Limits, Pmus, Probe, Siblings, Topology};
use std::path::Path;

fn this_thread(attr: &Attr) -> EventFd {
    open(attr, Scope::this_thread(), None, OpenFlags::new()).unwrap_or_else(|e| panic!("{e}"))
}

fn sysfs_type(pmu: &str) -> u32 {
    let path = Path::new(Pmus::ROOT).join(pmu).join("type");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn every_pmu_is_listed_with_its_real_type_number() {
    let pmus = Pmus::read().unwrap_or_else(|e| panic!("{e}"));
    assert!(pmus.skipped().is_empty(), "{:?}", pmus.skipped());
    let dirs = std::fs::read_dir(Pmus::ROOT).unwrap().count();
    assert_eq!(pmus.all().len(), dirs, "one Pmu per directory");
    for pmu in pmus.all() {
        assert_eq!(pmu.type_id(), sysfs_type(pmu.name()), "{}", pmu.name());
    }
    // The fixed types of the generic PMUs (include/uapi/linux/perf_event.h).
    for (name, fixed) in [("software", 1), ("tracepoint", 2)] {
        assert_eq!(pmus.get(name).map(|p| p.type_id()), Some(fixed), "{name}");
    }
    // The breakpoint PMU exists where the architecture has hardware
    // breakpoints (not mips64el, say), always at its fixed type.
    if let Some(bp) = pmus.get("breakpoint") {
        assert_eq!(bp.type_id(), 5, "breakpoint");
    }
    // msr is x86's; every architecture here has uprobes.
    let mut dynamic = vec!["uprobe"];
    if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        dynamic.push("msr");
        assert_eq!(
            pmus.get("msr")
                .expect("an x86 msr PMU")
                .format("event")
                .unwrap()
                .width(),
            64
        );
    }
    for name in dynamic {
        let pmu = pmus.get(name).unwrap_or_else(|| panic!("no {name} PMU"));
        assert!(
            pmu.type_id() >= perf_event_core::sys::PERF_TYPE_MAX,
            "{name} is dynamic"
        );
    }
    let uprobe = pmus.get("uprobe").unwrap();
    assert_eq!(uprobe.format("retprobe").unwrap().to_string(), "config:0");
    assert_eq!(
        uprobe.format("ref_ctr_offset").unwrap().to_string(),
        "config:32-63"
    );
    assert!(pmus.all().iter().all(|p| p.mux_interval_ms().is_some()));
}

#[test]
fn msr_tsc_encodes_from_its_alias_opens_and_counts() {
    if !cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        lab_support::not_applicable(
            lab_support::Need::X86Msr,
            &format!("the msr PMU is x86's; this is {}", std::env::consts::ARCH),
        );
        return;
    }
    let system = System::discover().unwrap();
    let msr = system.pmus.get("msr").expect("an x86 msr PMU");
    let from_alias = msr.alias_event("tsc").unwrap();
    let list = parse("msr/tsc/", &system).unwrap_or_else(|e| panic!("{e}"));
    let event = &list.events()[0];
    assert_eq!(event.alias.map(|a| a.name()), Some("tsc"));
    let raw = event.attr.to_raw();
    assert_eq!(raw.type_, sysfs_type("msr"));
    assert_eq!(
        raw.config,
        Attr::new(from_alias).to_raw().config,
        "events/tsc: event=0x00"
    );
    let fd = this_thread(&event.attr.disabled(true));
    fd.enable(false).unwrap();
    let first = fd.read_counts().unwrap().value;
    let mut x = 0u64;
    for i in 0..100_000u64 {
        x = std::hint::black_box(x.wrapping_add(i));
    }
    let second = fd.read_counts().unwrap().value;
    fd.disable(false).unwrap();
    assert!(
        first > 0 && second > first,
        "the TSC moves: {first} then {second}"
    );
}

/// The probed function: never inlined, exported unmangled so the symbol
/// table names it.
#[inline(never)]
#[no_mangle]
pub extern "C" fn perf_event_core_uprobe_target(x: u64) -> u64 {
    std::hint::black_box(x).wrapping_mul(3) ^ 0x5a
}

/// File offset of `symbol` in the ELF file `bytes` (32 or 64 bits, either
/// byte order): its symbol-table address, mapped through the `PT_LOAD`
/// segment holding it.
fn elf_file_offset(bytes: &[u8], symbol: &str) -> u64 {
    use object::{Object, ObjectSegment, ObjectSymbol};
    let file = object::File::parse(bytes).expect("this test binary is an ELF file");
    let vaddr = file
        .symbols()
        .find(|s| s.name() == Ok(symbol))
        .unwrap_or_else(|| panic!("no symbol {symbol} (the test binary is not stripped)"))
        .address();
    file.segments()
        .find_map(|seg| {
            let (offset, _) = seg.file_range();
            (seg.address()..seg.address() + seg.size())
                .contains(&vaddr)
                .then(|| vaddr - seg.address() + offset)
        })
        .expect("a PT_LOAD segment holding the symbol")
}

#[test]
fn a_uprobe_on_a_function_of_this_binary_counts_its_calls() {
    let pmus = Pmus::read().unwrap();
    let uprobe = pmus.get("uprobe").expect("a uprobe PMU");
    let exe = std::fs::canonicalize("/proc/self/exe").unwrap();
    let offset = elf_file_offset(
        &std::fs::read(&exe).unwrap(),
        "perf_event_core_uprobe_target",
    );
    let path = std::ffi::CString::new(exe.as_os_str().as_encoded_bytes()).unwrap();
    let target = std::hint::black_box(perf_event_core_uprobe_target as extern "C" fn(u64) -> u64);
    // Every call is counted exactly: 1234 on the host, 123 in a lab guest
    // (a hit traps and single-steps out of line: 2 x 1234 took 25-52 s of
    // host time on riscv64).
    let calls = if lab_support::lab_guest() { 123 } else { 1234 };
    for retprobe in [false, true] {
        let probe = Probe::uprobe(&path, offset)
            .retprobe(retprobe)
            .event(uprobe)
            .unwrap()
            .with(|a| a.disabled(true));
        assert_eq!(
            probe.attr().to_raw().config,
            u64::from(retprobe),
            "format/retprobe is config:0"
        );
        let fd = probe
            .open(Scope::this_thread(), None, OpenFlags::new())
            .unwrap_or_else(|e| panic!("uprobe at {}+{offset:#x}: {e}", exe.display()));
        fd.enable(false).unwrap();
        let mut acc = 0u64;
        for i in 0..calls {
            acc ^= target(i);
        }
        fd.disable(false).unwrap();
        std::hint::black_box(acc);
        assert_eq!(
            fd.read_counts().unwrap().value,
            calls,
            "retprobe {retprobe}"
        );
    }
}

#[test]
fn an_event_string_names_the_prctl_tracepoint_and_it_counts() {
    if let Err(why) = kernel_support::tracefs() {
        lab_support::not_applicable(lab_support::Need::Tracefs, &why);
        return;
    }
    if let Err(why) = kernel_support::syscall_tracepoints() {
        lab_support::not_applicable(lab_support::Need::SyscallTracepoints, &why);
        return;
    }
    let system = System::discover().unwrap();
    let tracefs = system
        .tracefs
        .as_ref()
        .expect("tracefs found through /proc/mounts");
    let id = kernel_support::tracepoint_id("syscalls", "sys_enter_prctl");
    assert_eq!(
        tracefs
            .tracepoint_id("syscalls", "sys_enter_prctl")
            .unwrap(),
        id
    );
    let list = parse("syscalls:sys_enter_prctl", &system).unwrap_or_else(|e| panic!("{e}"));
    let raw = list.events()[0].attr.to_raw();
    assert_eq!(
        (raw.type_, raw.config),
        (perf_event_core::sys::PERF_TYPE_TRACEPOINT, id)
    );
    let fd = this_thread(&list.events()[0].attr.disabled(true));
    fd.enable(false).unwrap();
    kernel_support::prctls(100);
    fd.disable(false).unwrap();
    assert_eq!(fd.read_counts().unwrap().value, 100);
    let e = parse("syscalls:sys_enter_no_such_call", &system).unwrap_err();
    assert!(
        e.to_string()
            .contains("sys_enter_no_such_call/id does not exist"),
        "{e}"
    );
}

#[test]
fn a_parsed_software_group_opens_as_a_group() {
    let system = System::discover().unwrap();
    let list = parse("{task-clock,page-faults:u,cs}", &system).unwrap();
    let group = list.groups().next().unwrap();
    let leader = this_thread(&group[0].attr.disabled(true));
    let members: Vec<EventFd> = group[1..]
        .iter()
        .map(|e| {
            open(
                &e.attr,
                Scope::this_thread(),
                Some(&leader),
                OpenFlags::new(),
            )
            .unwrap()
        })
        .collect();
    leader.enable(true).unwrap();
    let pages: Vec<u8> = vec![1; 1 << 20];
    std::hint::black_box(&pages);
    leader.disable(true).unwrap();
    assert!(leader.read_counts().unwrap().value > 0, "task-clock ran");
    assert!(
        members[0].read_counts().unwrap().value > 0,
        "page faults in user space"
    );
}

#[test]
fn system_limits_match_procfs_and_explain_themselves() {
    let limits = Limits::read().unwrap();
    let sysctl = |name: &str| {
        std::fs::read_to_string(Path::new(Limits::DIR).join(name))
            .ok()
            .map(|s| s.trim().to_owned())
    };
    assert_eq!(
        limits.paranoid.map(|p| p.0.to_string()),
        sysctl("perf_event_paranoid")
    );
    assert_eq!(
        limits.max_sample_rate.map(|v| v.to_string()),
        sysctl("perf_event_max_sample_rate")
    );
    assert_eq!(
        limits.max_stack.map(|v| v.to_string()),
        sysctl("perf_event_max_stack")
    );
    assert_eq!(
        limits.mlock_kb.map(|v| v.to_string()),
        sysctl("perf_event_mlock_kb")
    );
    assert_eq!(
        limits.cpu_time_max_percent.map(|v| v.to_string()),
        sysctl("perf_cpu_time_max_percent")
    );
    assert_eq!(
        limits.user_access.map(|v| v.0.to_string()),
        sysctl("perf_user_access")
    );
    if cfg!(target_arch = "x86_64") {
        assert_eq!(
            limits.user_access, None,
            "perf_user_access is arm64 / riscv only"
        );
    }
    assert_eq!(
        limits.nmi_watchdog.map(|w| u8::from(w.0).to_string()),
        sysctl("nmi_watchdog")
    );
    let paranoid = limits
        .paranoid
        .expect("perf_event_paranoid exists wherever perf does");
    let caller = Caller::current();
    let lines = limits.explain(caller);
    println!("{}", lines.join("\n"));
    let first = &lines[0];
    assert!(first.starts_with(&format!(
        "perf_event_paranoid {}: {}",
        paranoid.0,
        paranoid.meaning()
    )));
    if paranoid.0 == 2 {
        assert!(
            first.contains("per-thread user-space measurement only"),
            "{first}"
        );
    }
    // Root here: the restriction does not apply, and the line says so.
    assert_eq!(first.contains("does not restrict you"), caller.perfmon);
}

#[test]
fn the_machine_s_cpus_and_this_process_as_sysfs_and_procfs_list_them() {
    // The CPU lists: what the event sets use, the present ones beyond.
    let online = CpuList::online().unwrap();
    let cpus: Vec<u32> = online.iter().collect();
    assert_eq!(cpus, Cpus::read().unwrap().online().as_slice());
    let present = CpuList::present().unwrap();
    assert!(cpus.iter().all(|&c| present.contains(c)), "{present}");
    // An online CPU is among its own siblings, wherever the kernel lists them.
    let topology = Topology::read().unwrap();
    for &cpu in &cpus {
        let s = Siblings::read(cpu);
        for list in [&s.package, &s.die, &s.core].into_iter().flatten() {
            assert!(list.contains(cpu), "cpu {cpu}: {s:?}");
        }
        if topology.place(cpu).is_some() {
            assert!(s.package.is_some() && s.core.is_some(), "cpu {cpu}: {s:?}");
        }
    }
    // This process: the calling thread among its tasks, with its name.
    let pid = std::process::id() as i32;
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    let tasks = sysfs::tasks(pid).unwrap();
    assert!(tasks.contains(&pid) && tasks.contains(&tid), "{tasks:?}");
    let comm = sysfs::comm(pid, tid).unwrap();
    assert!(!comm.is_empty() && !comm.ends_with('\n'), "{comm:?}");
    if let Some(name) = std::thread::current().name() {
        // The thread's name, cut to the kernel's 15 bytes.
        assert!(
            name.starts_with(&comm),
            "{comm:?} is not the start of {name:?}"
        );
    }
    assert!(sysfs::tasks(i32::MAX).is_err(), "no such process");
    let exe = std::env::current_exe().unwrap();
    let maps = sysfs::maps(pid).unwrap();
    assert!(
        maps.lines()
            .any(|l| l.contains(" r-xp ") && l.ends_with(exe.to_str().unwrap())),
        "the test binary's code is mapped: {maps}"
    );
    // One more file, one more fd.
    let before = sysfs::fds_in_use();
    let file = std::fs::File::open(&exe).unwrap();
    assert_eq!(sysfs::fds_in_use(), before + 1);
    drop(file);
    // The machine: its description, memory and name.
    assert!(!sysfs::cpuinfo().unwrap().is_empty());
    assert!(sysfs::meminfo().unwrap().starts_with("MemTotal:"));
    // SAFETY: utsname is plain C data; all-zero is a valid value.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `uts` is a valid, writable utsname.
    assert_eq!(unsafe { libc::uname(&mut uts) }, 0);
    // SAFETY: uname NUL-terminates its fields.
    let nodename = unsafe { std::ffi::CStr::from_ptr(uts.nodename.as_ptr()) };
    assert_eq!(sysfs::hostname().unwrap(), nodename.to_str().unwrap());
    if cfg!(target_arch = "aarch64") {
        let midr = sysfs::midr_el1(cpus[0]).unwrap();
        assert!(midr.is_empty() || midr.starts_with("0x"), "{midr:?}");
    } else {
        assert!(sysfs::midr_el1(cpus[0]).is_err(), "arm64 only");
    }
    // The kernel: the first symbol /proc/kallsyms lists found at its
    // address (0 where addresses are hidden from us; which symbols a
    // kernel lists first differs: `_text` is missing on some arm and mips
    // kernels), a name it does not list not found, its notes readable.
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let first: Vec<&str> = kallsyms
        .lines()
        .next()
        .expect("/proc/kallsyms lists the kernel's symbols")
        .split_whitespace()
        .collect();
    assert_eq!(
        sysfs::kallsyms_address(first[2]),
        Some(u64::from_str_radix(first[0], 16).unwrap()),
        "{first:?}"
    );
    assert!(sysfs::kallsyms_address("no such symbol, ever").is_none());
    assert!(!sysfs::kernel_notes().unwrap().is_empty());
}
