//! Fixture trees for PMUs this machine lacks, written the way the kernel
//! writes them: one value per file, a trailing newline (sysfs_emit
//! "%s\n"), `format/` and `events/` directories, `.scale` / `.unit` files
//! beside events, `cpumask` / `cpus` lists, `caps/`.
#![allow(dead_code)] // each test binary uses part of it

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A temporary directory removed on drop.
pub struct Tree {
    root: PathBuf,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

impl Tree {
    pub fn new(tag: &str) -> Tree {
        let root = std::env::temp_dir().join(format!(
            "perf-event-core-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("devices")).unwrap();
        Tree { root }
    }

    /// The `/sys/bus/event_source/devices` of the fixture.
    pub fn devices(&self) -> PathBuf {
        self.root.join("devices")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A PMU directory with its `type` and mux interval.
    pub fn pmu(&self, name: &str, type_: u32) -> PmuDir {
        let dir = self.devices().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let pmu = PmuDir { dir };
        pmu.file("type", &type_.to_string())
            .file("perf_event_mux_interval_ms", "4")
    }

    /// Writes `rel` under the root (parents created), with a newline.
    pub fn file(&self, rel: &str, text: &str) {
        write(&self.root.join(rel), text);
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("{text}\n")).unwrap();
}

pub struct PmuDir {
    pub dir: PathBuf,
}

impl PmuDir {
    pub fn file(self, rel: &str, text: &str) -> PmuDir {
        write(&self.dir.join(rel), text);
        self
    }
    pub fn format(self, name: &str, spec: &str) -> PmuDir {
        self.file(&format!("format/{name}"), spec)
    }
    pub fn event(self, name: &str, terms: &str) -> PmuDir {
        self.file(&format!("events/{name}"), terms)
    }
}

/// An Intel (Skylake-like) machine: `cpu` (type 4), `msr`, `power` (RAPL
/// with `.scale` / `.unit`), two `uncore_imc` instances with `cpumask`,
/// `intel_pt` with address filters, and `kprobe` / `uprobe`.
pub fn intel(tree: &Tree) {
    tree.pmu("cpu", 4)
        .format("event", "config:0-7")
        .format("umask", "config:8-15")
        .format("edge", "config:18")
        .format("pc", "config:19")
        .format("any", "config:21")
        .format("inv", "config:23")
        .format("cmask", "config:24-31")
        .format("in_tx", "config:32")
        .format("in_tx_cp", "config:33")
        .format("ldlat", "config1:0-15")
        .format("offcore_rsp", "config1:0-63")
        .format("frontend", "config1:0-23")
        .event("cpu-cycles", "event=0x3c")
        .event("instructions", "event=0xc0")
        .event("ref-cycles", "event=0x00,umask=0x03")
        .event("branch-instructions", "event=0xc4")
        .event("branch-misses", "event=0xc5")
        .event("bus-cycles", "event=0x3c,umask=0x01")
        .event("cache-references", "event=0x2e,umask=0x4f")
        .event("cache-misses", "event=0x2e,umask=0x41")
        .event("mem-loads", "event=0xcd,umask=0x1,ldlat=3")
        .event("mem-stores", "event=0xd0,umask=0x82")
        .event("cycles-t", "event=0x3c,in_tx=1")
        .event("cycles-ct", "event=0x3c,in_tx=1,in_tx_cp=1")
        .event("topdown-total-slots", "event=0x3c,umask=0x0")
        .event("topdown-total-slots.scale", "2")
        .event("tx-start", "event=0xc9,umask=0x1")
        .file("caps/max_precise", "3")
        .file("caps/branches", "32")
        .file("caps/pmu_name", "skylake")
        .file("rdpmc", "1")
        .file("allow_tsx_force_abort", "1");
    tree.pmu("msr", 9)
        .format("event", "config:0-63")
        .event("tsc", "event=0x00")
        .event("aperf", "event=0x01")
        .event("mperf", "event=0x02");
    tree.pmu("power", 17)
        .format("event", "config:0-7")
        .event("energy-pkg", "event=0x02")
        .event("energy-pkg.scale", "2.3283064365386962890625e-10")
        .event("energy-pkg.unit", "Joules")
        .event("energy-ram", "event=0x03")
        .event("energy-ram.scale", "2.3283064365386962890625e-10")
        .event("energy-ram.unit", "Joules")
        .file("cpumask", "0");
    for (i, ty) in [(0, 14), (1, 15)] {
        tree.pmu(&format!("uncore_imc_{i}"), ty)
            .format("event", "config:0-7")
            .format("umask", "config:8-15")
            .format("edge", "config:18")
            .format("inv", "config:23")
            .format("thresh", "config:24-31")
            .event("cas_count_read", "event=0x04,umask=0x03")
            .event("cas_count_read.scale", "6.103515625e-5")
            .event("cas_count_read.unit", "MiB")
            .event("clockticks", "event=0x00,umask=0x00")
            .file("cpumask", "0,24");
    }
    tree.pmu("intel_pt", 8)
        .format("tsc", "config:10")
        .format("noretcomp", "config:11")
        .format("mtc_period", "config:14-17")
        .format("cyc_thresh", "config:19-22")
        .format("psb_period", "config:24-27")
        .format("branch", "config:13")
        .file("caps/psb_cyc", "1")
        .file("caps/num_address_ranges", "2")
        .file("nr_addr_filters", "2");
    tree.pmu("kprobe", 6).format("retprobe", "config:0");
    tree.pmu("uprobe", 7)
        .format("retprobe", "config:0")
        .format("ref_ctr_offset", "config:32-63");
    tree.pmu("software", 1);
    tree.pmu("tracepoint", 2);
    tree.pmu("breakpoint", 5);
}

/// An AMD Zen machine's `cpu` PMU: the event select spans two ranges.
pub fn amd(tree: &Tree) {
    tree.pmu("cpu", 4)
        .format("event", "config:0-7,32-35")
        .format("umask", "config:8-15")
        .format("edge", "config:18")
        .format("inv", "config:23")
        .format("cmask", "config:24-31")
        .event("cpu-cycles", "event=0x76")
        .event("instructions", "event=0xc0")
        .event("ls_dispatch", "event=0x029,umask=0x07")
        .file("caps/max_precise", "0");
    tree.pmu("amd_l3", 11)
        .format("event", "config:0-7")
        .format("umask", "config:8-15")
        .format("threadmask", "config:56-63")
        .format("coreid", "config:42-44")
        .format("sliceid", "config:48-50")
        .format("enallcores", "config:47")
        .format("enallslices", "config:46")
        .file("cpumask", "0,8,16,24");
}

/// An arm64 machine: `armv8_pmuv3_0` with the user-access bits in
/// `config1` (`long` since Linux 5.18, `rdpmc` since 5.17), `cpus`, `caps/`.
pub fn arm64(tree: &Tree) {
    tree.pmu("armv8_pmuv3_0", 10)
        .format("event", "config:0-15")
        .format("long", "config1:0")
        .format("rdpmc", "config1:1")
        .format("threshold_count", "config1:2")
        .format("threshold_compare", "config1:3-4")
        .format("threshold", "config1:5-16")
        .event("cpu_cycles", "event=0x0011")
        .event("inst_retired", "event=0x0008")
        .event("l1d_cache", "event=0x0004")
        .event("l1d_cache_refill", "event=0x0003")
        .event("br_mis_pred", "event=0x0010")
        .event("stall_backend", "event=0x0024")
        .file("cpus", "0-3")
        .file("caps/slots", "0x00000020")
        .file("caps/bus_slots", "0x00000010")
        .file("caps/bus_width", "0x00000010");
    tree.pmu("armv8_pmuv3_1", 11)
        .format("event", "config:0-15")
        .format("long", "config1:0")
        .format("rdpmc", "config1:1")
        .event("cpu_cycles", "event=0x0011")
        .file("cpus", "4-7");
    tree.pmu("arm_spe_0", 12)
        .format("ts_enable", "config:0")
        .format("pa_enable", "config:1")
        .format("load_filter", "config:32")
        .format("store_filter", "config:33")
        .format("branch_filter", "config:34")
        .format("event_filter", "config1:0-63")
        .format("min_latency", "config2:0-11")
        .file("caps/min_interval", "256")
        .file("caps/count_size", "12");
}

/// An Intel hybrid (Alder Lake-like) machine: `cpu_core` (type 4, CPUs
/// 0-7) and `cpu_atom` (type 10, CPUs 8-15), each with a `cpus` file.
pub fn hybrid(tree: &Tree) {
    for (name, ty, cpus) in [("cpu_core", 4, "0-7"), ("cpu_atom", 10, "8-15")] {
        tree.pmu(name, ty)
            .format("event", "config:0-7")
            .format("umask", "config:8-15")
            .format("cmask", "config:24-31")
            .format("ldlat", "config1:0-15")
            .event("cpu-cycles", "event=0x3c")
            .event("instructions", "event=0xc0")
            .event("branch-misses", "event=0xc5")
            .event("cache-misses", "event=0x2e,umask=0x41")
            .file("cpus", cpus);
    }
    tree.pmu("software", 1);
    tree.pmu("tracepoint", 2);
    tree.pmu("breakpoint", 5);
}

/// A tracefs fixture with a few tracepoint ids.
pub fn tracefs(tree: &Tree) -> PathBuf {
    for (sys, event, id) in [
        ("sched", "sched_switch", 316),
        ("sched", "sched_wakeup", 318),
        ("syscalls", "sys_enter_prctl", 267),
        ("irq", "irq_handler_entry", 150),
        ("block", "block_rq_issue", 1190),
    ] {
        tree.file(&format!("tracing/events/{sys}/{event}/id"), &id.to_string());
    }
    tree.root().join("tracing")
}
