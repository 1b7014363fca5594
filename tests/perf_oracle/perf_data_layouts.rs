//! The crate's reader on perf record's own files, layout by layout: each
//! layout's every `perf script -F` field, side-band record, READ record
//! and sample read values, attrs and ids, features, and the count of each
//! record type agree with what perf prints of the same file
//! ([`crate::perf_data_fields::compare`]). With the seven layouts of
//! `perf_data_perfs_files` and the three of `perf_compare`, these make
//! the list and more: hardware breakpoints, group sampling
//! (PERF_SAMPLE_READ, with times, in a pipe), per-thread counts (`-s`),
//! interrupt and user registers, physical addresses and page sizes, page
//! faults, context switch (per task and CPU-wide), namespace and mmap
//! records, lost records and rounds, `--no-inherit`, `-P`, another clock,
//! no timestamps, cgroups, `--overwrite`, `--per-thread`, the directory
//! format of `--threads`, events of three sample_types, user-only and
//! software-event callchains, a tracepoint with callchains, a pipe through
//! `perf inject -b`, and branch stacks where the machine has them
//! (reported as skipped where perf record refuses them).

use crate::lab_support;
use crate::perf_data_fields::{compare, perf_record, Output};
use crate::perf_data_perfs_files::perfs_header_agrees;
use crate::sample_support::{hot, hot_fixed, one_busy_test_at_a_time, scratch, tools_here};
use perf_data_file::PerfData;
use perf_event_host::sysfs::Tracefs;
use std::path::Path;

/// One recording: perf record's options and what to compare.
struct Layout<'a> {
    name: &'a str,
    /// perf record's options, the workload included.
    args: Vec<String>,
    /// Compare perf script's `comm` too (the crate follows COMM records).
    comm: bool,
    /// perf script's `--show-*-events` options for side-band records.
    show: &'a [&'a str],
    /// A file, perf's pipe format, or that through `perf inject -b`.
    output: Output,
}

fn layout<'a>(name: &'a str, args: &[&str], workload: &[&str]) -> Layout<'a> {
    Layout {
        name,
        args: args.iter().chain(workload).map(|s| s.to_string()).collect(),
        comm: true,
        show: &[],
        output: Output::File,
    }
}

/// Records and compares each layout (one at a time: they keep a CPU busy);
/// the number compared (refused ones are reported as skipped).
fn run(dir: &Path, layouts: &[Layout], least_samples: usize) -> usize {
    let _busy = one_busy_test_at_a_time();
    let mut compared = 0;
    for l in layouts {
        let args: Vec<&str> = l.args.iter().map(String::as_str).collect();
        let Some(data) = perf_record(dir, l.name, &args, l.output) else {
            continue;
        };
        let c = compare(&data, l.comm, l.show);
        // And the features, as perf's header shows them.
        perfs_header_agrees(&data, &PerfData::open(&data).unwrap());
        println!(
            "layout {}: {} samples compared, {} records ({} side-band, {} READ, {} samples' read values) [perf record {} ({:?})]",
            l.name,
            c.samples,
            c.records,
            c.side_band,
            c.reads,
            c.sample_reads,
            args.join(" "),
            l.output
        );
        assert!(c.samples >= least_samples, "{}: {c:?}", l.name);
        compared += 1;
    }
    compared
}

/// `-e cpu-clock -c 250000` and `extra`.
fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    [&["-e", "cpu-clock", "-c", "250000"][..], extra].concat()
}

fn done(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
}

/// A hardware breakpoint on the workload's global (`mem:ADDR:w` with the
/// data address, `mem:ADDR:rw` with callchains): one sample per write.
#[test]
fn breakpoints_agree_with_perf_script() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-bp");
    let (exe, sink) = hot_fixed(&dir);
    let w = [exe.to_str().unwrap(), "2000000"];
    let (wr, rw) = (format!("mem:{sink:#x}:w"), format!("mem:{sink:#x}:rw"));
    let layouts = [
        layout(
            "breakpoint-w",
            &["-e", &wr, "-c", "1", "-d", "--sample-cpu"],
            &w,
        ),
        // Real data addresses: their physical address and page size, and
        // the registers at the write.
        layout(
            "breakpoint-phys-page-sizes-iregs",
            &[
                "-e",
                &wr,
                "-c",
                "1",
                "-d",
                "--phys-data",
                "--data-page-size",
                "--code-page-size",
                "--intr-regs=ip,sp,ax",
            ],
            &w,
        ),
        layout(
            "breakpoint-rw-fp",
            &["-e", &rw, "-c", "1", "--call-graph", "fp"],
            &w,
        ),
    ];
    // hot writes `sink` twenty times.
    run(&dir, &layouts, 20);
    done(&dir);
}

/// Group sampling (`{a,b}:S`: PERF_SAMPLE_READ with PERF_FORMAT_GROUP,
/// one perf script line per member) and per-thread counts (`-s`:
/// PERF_RECORD_READ at each thread's exit).
#[test]
fn sample_read_and_per_thread_counts_agree_with_perf() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-read");
    let exe = hot(&dir);
    let w = [exe.to_str().unwrap(), "100000000"];
    let two = format!("{0} 30000000 & {0} 30000000; wait", exe.display());
    let layouts = [
        layout(
            "group-read",
            &["-e", "{cpu-clock,task-clock}:S", "-c", "250000"],
            &w,
        ),
        layout(
            "group-read-cpu-period",
            &["-e", "{cpu-clock,task-clock}:S", "-c", "250000", "-P"],
            &[&["--sample-cpu"][..], &w].concat(),
        ),
        layout(
            "group-read-identifier",
            &[
                "-e",
                "{cpu-clock,task-clock}:S",
                "-c",
                "250000",
                "--sample-identifier",
            ],
            &w,
        ),
        // PERF_FORMAT_TOTAL_TIME_ENABLED and _RUNNING in each sample.
        layout(
            "group-read-running-time",
            &[
                "-e",
                "{cpu-clock,task-clock}:S",
                "-c",
                "250000",
                "--running-time",
            ],
            &w,
        ),
        layout(
            "group-read-pipe",
            &["-e", "{cpu-clock,task-clock}:S", "-c", "250000"],
            &w,
        ),
        layout(
            "per-thread-counts",
            &["-s", "-e", "cpu-clock", "-c", "250000"],
            &["sh", "-c", &two],
        ),
    ];
    let mut layouts = layouts;
    layouts[4].output = Output::Pipe;
    run(&dir, &layouts, 50);
    done(&dir);
}

/// Registers (interrupt and user), data addresses with physical address
/// and page sizes and the weight struct, page faults with their address.
#[test]
fn registers_and_addresses_agree_with_perf_script() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-regs");
    let exe = hot(&dir);
    let w = [exe.to_str().unwrap(), "100000000"];
    let layouts = [
        layout("intr-regs", &with(&["--intr-regs=ip,sp,bp,ax,bx,r15"]), &w),
        layout("user-regs", &with(&["--user-regs=ip,sp,bp,ax,r15"]), &w),
        layout(
            "phys-addr-page-sizes",
            &with(&[
                "-d",
                "--phys-data",
                "--data-page-size",
                "--code-page-size",
                "-W",
            ]),
            &w,
        ),
    ];
    run(&dir, &layouts, 50);
    let faults = [layout(
        "page-faults-addr",
        &["-e", "page-faults", "-c", "1", "-d", "--sample-cpu"],
        &["ls", "-R", "/usr/share/doc"],
    )];
    run(&dir, &faults, 20);
    done(&dir);
}

/// Context switch records (`--switch-events`) and namespace records, with
/// the task records (COMM, FORK, EXIT) perf script shows with them.
#[test]
fn side_band_records_agree_with_perf_script() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-side");
    let exe = hot(&dir);
    let script = format!("{} 50000000; sleep 0.01; ls / >/dev/null", exe.display());
    let w = ["sh", "-c", &script];
    let mut layouts = [
        layout(
            "switch-events",
            &with(&["--switch-events", "--sample-cpu"]),
            &w,
        ),
        layout("namespaces", &with(&["--namespaces", "--sample-cpu"]), &w),
        // System-wide: PERF_RECORD_SWITCH_CPU_WIDE, on a dummy event too.
        layout("cpu-wide-switches", &with(&["-a", "--switch-events"]), &w),
        // One CPU of the system (-C 0): its tasks' comms from synthesized
        // and live COMM records.
        layout(
            "one-cpu-comms",
            &with(&["-a", "-C", "0", "--sample-cpu"]),
            &w,
        ),
        layout("mmap-events", &with(&["--sample-cpu"]), &w),
        // PERF_RECORD_MISC_MMAP_BUILD_ID: MMAP2 with build ids (5.12).
        layout("buildid-mmap", &with(&["--buildid-mmap"]), &w),
        // A pipe through `perf inject -b`: HEADER_BUILD_ID records.
        layout("pipe-injected-buildids", &with(&["--sample-cpu"]), &w),
    ];
    // perf script's comm of a side-band record is that of its thread
    // when perf script prints it: not compared here.
    layouts[0].comm = false;
    layouts[0].show = &["--show-switch-events", "--show-task-events"];
    layouts[1].comm = false;
    layouts[1].show = &["--show-namespace-events", "--show-task-events"];
    layouts[2].comm = false;
    layouts[2].show = &["--show-switch-events"];
    layouts[6].output = Output::PipeInjected;
    for l in &mut layouts[4..] {
        l.comm = false;
        l.show = &["--show-mmap-events", "--show-task-events"];
    }
    run(&dir, &layouts, 50);
    // A one-page buffer at 50 kHz: LOST (and LOST_SAMPLES) records, and
    // many rounds.
    let mut lost = layout(
        "lost-and-rounds",
        &["-e", "cpu-clock", "-c", "20000", "-m", "1", "--sample-cpu"],
        &[exe.to_str().unwrap(), "30000000"],
    );
    lost.comm = false;
    lost.show = &["--show-lost-events", "--show-round-events"];
    run(&dir, &[lost], 50);
    done(&dir);
}

/// Attr variants: no inheritance, PERF_SAMPLE_PERIOD with a fixed period,
/// another clock, user-only callchains, and a software event sampled on
/// every context switch with its callchain.
#[test]
fn attr_variants_agree_with_perf_script() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-attrs");
    let exe = hot(&dir);
    let w = [exe.to_str().unwrap(), "100000000"];
    let script = format!(
        "for i in 1 2 3 4 5 6; do sleep 0.01; done; {} 10000000",
        exe.display()
    );
    let layouts = [
        // Events of different sample_types: PERF_SAMPLE_IDENTIFIER says
        // which event a record is.
        layout(
            "mixed-sample-types",
            &[
                "-e",
                "cpu-clock/period=250000/",
                "-e",
                "task-clock/period=300000,call-graph=fp/",
                "-e",
                "sched:sched_switch",
            ],
            &w,
        ),
        layout("no-inherit", &with(&["--no-inherit", "--sample-cpu"]), &w),
        layout("period-fixed", &with(&["-P", "-T"]), &w),
        layout("clock-monotonic-raw", &with(&["-k", "monotonic_raw"]), &w),
        layout("no-timestamp", &with(&["--no-timestamp"]), &w),
        // The ring buffer written backwards, read by perf at the end.
        layout("overwrite", &with(&["--overwrite"]), &w),
        layout("per-thread", &with(&["--per-thread", "--sample-cpu"]), &w),
        // perf's directory format: a data.N stream per writer thread.
        layout(
            "threads-dir-format",
            &with(&["--threads", "--sample-cpu"]),
            &w,
        ),
        layout("all-cgroups", &with(&["--all-cgroups", "--sample-cpu"]), &w),
        layout(
            "user-callchains",
            &["-e", "cpu-clock:u", "-c", "250000", "--call-graph", "fp"],
            &w,
        ),
        layout(
            "context-switches-fp",
            &["-e", "context-switches", "-c", "1", "--call-graph", "fp"],
            &["sh", "-c", &script],
        ),
    ];
    run(&dir, &layouts[..10], 50);
    run(&dir, &layouts[10..], 5);
    done(&dir);
}

/// A tracepoint (sched:sched_switch) with callchains: kernel entries
/// compared address for address.
#[test]
fn a_tracepoint_with_callchains_agrees_with_perf_script() {
    if !tools_here() {
        return;
    }
    if Tracefs::find().is_err() {
        let why = "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)";
        lab_support::not_applicable(lab_support::Need::Tracefs, why);
        return;
    }
    let dir = scratch("pd-tp");
    let layouts = [layout(
        "tracepoint-fp",
        &[
            "-e",
            "sched:sched_switch",
            "--call-graph",
            "fp",
            "--sample-cpu",
        ],
        &["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 0.01; done"],
    )];
    run(&dir, &layouts, 8);
    done(&dir);
}

/// Branch stacks (`-b`, `-j any,u`): compared where the PMU records them;
/// elsewhere (no LBR, software events only in a VM) perf record refuses
/// them and the layout is reported as skipped.
#[test]
fn branch_stacks_agree_with_perf_script_where_recorded() {
    if !tools_here() {
        return;
    }
    let dir = scratch("pd-branch");
    let exe = hot(&dir);
    let w = [exe.to_str().unwrap(), "100000000"];
    let layouts = [
        layout("branch-any", &["-e", "cycles", "-c", "100003", "-b"], &w),
        layout(
            "branch-any-user",
            &["-e", "cycles:u", "-c", "100003", "-j", "any,u"],
            &w,
        ),
    ];
    run(&dir, &layouts, 50);
    done(&dir);
}
