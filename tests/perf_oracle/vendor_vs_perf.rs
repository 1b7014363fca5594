//! perf's vendor events against perf 6.1 itself: `perf list --details`
//! with a fixture PMU tree bind-mounted over
//! `/sys/bus/event_source/devices` in a private mount namespace (so perf
//! sees the machine as the tree describes it) and `PERF_CPUID` naming the
//! CPU prints every event of that CPU's table with its encoding
//! (`cpu/event=0xc0,period=0x1e8483/`). Each printed encoding is parsed
//! with the plain fixture PMUs, each name with perf-event-host's
//! `VendorSystem` over the same tree and the same CPU id, and the attrs
//! (type, config, config1, config2, sample_period) are compared.
//!
//! perf 6.1 compiles in Linux 6.1's tables: `VendorSystem` is built over
//! perf-event-vendor's tables of perf's kernel (`with_kernel_tables`, 6.1's
//! with feature `linux-6-1`), and then every event must agree, and every
//! event of ours must be one perf lists. Over other tables (6.12's) an
//! event whose JSON changed between the two differs for that reason alone:
//! exactly those (`JSON_CHANGES_6_1_TO_6_12`) may. Needs root
//! (`unshare -m`, `mount --bind`) and perf.

use crate::lab_support;
use crate::sysfs_support::Tree;

use perf_event_host::parse::{parse, System};
use perf_event_host::sysfs::Pmus;
use perf_event_host::vendor::VendorSystem;
use perf_event_vendor::Tables;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The attr fields compared.
type Key = (u32, u64, u64, u64, u64);

fn key(attr: &perf_event_core::attr::Attr) -> Key {
    let raw = attr.to_raw();
    // SAFETY: the unions are plain u64 storage; every member is valid.
    let (config1, config2, period) = unsafe {
        (
            raw.__bindgen_anon_3.config1,
            raw.__bindgen_anon_4.config2,
            raw.__bindgen_anon_1.sample_period,
        )
    };
    (raw.type_, raw.config, config1, config2, period)
}

/// Intel's core PMU formats (as the kernel's `cpu/format/` on Skylake).
const INTEL: &[(&str, &str)] = &[
    ("event", "config:0-7"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("pc", "config:19"),
    ("any", "config:21"),
    ("inv", "config:23"),
    ("cmask", "config:24-31"),
    ("in_tx", "config:32"),
    ("in_tx_cp", "config:33"),
    ("ldlat", "config1:0-15"),
    ("frontend", "config1:0-23"),
    ("offcore_rsp", "config1:0-63"),
];

/// AMD Zen's (`event` in two ranges).
const AMD: &[(&str, &str)] = &[
    ("event", "config:0-7,32-35"),
    ("umask", "config:8-15"),
    ("edge", "config:18"),
    ("inv", "config:23"),
    ("cmask", "config:24-31"),
];

/// arm64's PMUv3.
const ARM64: &[(&str, &str)] = &[("event", "config:0-15"), ("long", "config1:0")];

/// `perf version 6.1.158` (or a kernel package version, `6.12.117-1`) as
/// `6.1`.
fn major_minor(version: &str) -> String {
    let v = version.trim().rsplit(' ').next().unwrap_or("");
    v.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// The tables perf-event-vendor has of the kernel perf was built from
/// (Linux 6.1's for perf 6.1, with feature `linux-6-1`, which the tests
/// package turns on), else its newest.
fn tables_for(perf_version: &str) -> &'static Tables {
    perf_event_vendor::tables(&major_minor(perf_version))
        .unwrap_or(&perf_event_vendor::kernels()[0])
}

/// What perf lists of a table's events.
struct PerfListed {
    /// (event name, PMU, printed terms) of each event with an encoding.
    encoded: Vec<(String, String, String)>,
    /// The events without a description, which perf 6.1 lists among the
    /// PMU's own (`NAME OR pmu/NAME/ [Kernel PMU event]`), with no
    /// encoding.
    bare: Vec<String>,
}

/// perf's `list --details --deprecated` for `cpuid` over `devices`.
fn perf_list(devices: &Path, cpuid: &str) -> Result<PerfListed, String> {
    let text = listing(devices, cpuid, "perf list --details --deprecated")?;
    let mut events = Vec::new();
    let mut bare = Vec::new();
    let mut name: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(listed) = trimmed.strip_suffix("[Kernel PMU event]") {
            if let Some((name, _)) = listed.split_once(" OR ") {
                bare.push(name.to_owned());
            }
            continue;
        }
        // An event's line: two spaces, the name, padding.
        if line.starts_with("  ") && !line.starts_with("   ") && !trimmed.contains(' ') {
            name = Some(trimmed.to_owned());
            continue;
        }
        // Its encoding: eight spaces, `pmu/terms/` (then, for a JSON entry
        // that is a metric too, `MetricName: ... MetricExpr: ...`).
        let encoding = trimmed.split(' ').next().unwrap_or("");
        if line.starts_with("        ") && encoding.ends_with('/') && !trimmed.starts_with('[') {
            let Some((pmu, rest)) = encoding.split_once('/') else {
                continue;
            };
            if let Some(name) = name.take() {
                let terms = rest.strip_suffix('/').unwrap_or(rest);
                events.push((name, pmu.to_owned(), terms.to_owned()));
            }
        }
    }
    Ok(PerfListed {
        encoded: events,
        bare,
    })
}

/// The comparison of one CPU's events: how many perf listed, how many
/// agreed, and each difference with its reason.
struct Outcome {
    /// The table we chose for the PMU.
    model: Option<&'static str>,
    listed: usize,
    agreed: usize,
    /// Agreed once our terms are printed as perf 6.1 prints them: its
    /// `__perf_pmu__new_alias` rebuilds an alias's text with `%#x`, the
    /// low 32 bits of each value, so `offcore_rsp=0x3f803c0491` shows as
    /// `0x803c0491` (perf opens the full value; only the listing is short).
    agreed_as_printed: usize,
    differences: Vec<String>,
    ours_only: BTreeSet<String>,
}

/// Our alias's terms as perf 6.1 prints them (`%#x`: each value's low 32
/// bits), parsed with the plain PMUs.
fn as_perf_prints(alias: &perf_event_host::sysfs::Alias, pmu: &str, plain: &Pmus) -> Option<Key> {
    use perf_event_host::sysfs::TermValue;
    let terms: Vec<String> = alias
        .terms()
        .map(|t| {
            let t = t.ok()?;
            Some(match t.value {
                TermValue::Number(n) => format!("{}={:#x}", t.name, n & 0xffff_ffff),
                _ => t.name.to_owned(),
            })
        })
        .collect::<Option<_>>()?;
    let text = format!("{pmu}/{}/", terms.join(","));
    parse(&text, plain).ok().map(|l| key(&l.events()[0].attr))
}

fn compare(tree: &Tree, cpuid: &str, tables: &'static Tables) -> Result<Outcome, String> {
    let PerfListed {
        encoded: listed,
        bare,
    } = perf_list(&tree.devices(), cpuid)?;
    let plain = Pmus::read_from(&tree.devices()).unwrap();
    let vendor = VendorSystem::with_kernel_tables(
        System::new(Pmus::read_from(&tree.devices()).unwrap(), None),
        tables,
        Some(cpuid),
    )
    .unwrap();
    let mut outcome = Outcome {
        model: vendor.tables().iter().find_map(|t| t.model),
        listed: listed.len(),
        agreed: 0,
        agreed_as_printed: 0,
        differences: Vec::new(),
        ours_only: vendor
            .aliases()
            .iter()
            .map(|a| a.event.name.to_owned())
            .collect(),
    };
    for name in &bare {
        outcome.ours_only.remove(name);
    }
    for (name, pmu, terms) in &listed {
        outcome.ours_only.remove(name);
        let printed = format!("{pmu}/{terms}/");
        let theirs = match parse(&printed, &plain) {
            Ok(list) => key(&list.events()[0].attr),
            Err(e) => {
                outcome
                    .differences
                    .push(format!("{name}: perf's {printed} does not parse: {e}"));
                continue;
            }
        };
        let ours = parse(name, &vendor).map(|list| {
            list.events()
                .iter()
                .filter(|e| e.pmu.map(|p| p.name()) == Some(pmu.as_str()))
                .map(|e| (key(&e.attr), e.alias))
                .next()
        });
        match ours {
            Ok(Some((ours, _))) if ours == theirs => outcome.agreed += 1,
            Ok(Some((_, Some(alias)))) if as_perf_prints(alias, pmu, &plain) == Some(theirs) => {
                outcome.agreed_as_printed += 1
            }
            Ok(Some((ours, _))) => outcome.differences.push(format!(
                "{name}: perf {printed} = {theirs:x?}, ours {ours:x?}"
            )),
            Ok(None) => outcome
                .differences
                .push(format!("{name}: ours resolves it on no PMU {pmu}")),
            Err(_) => outcome
                .differences
                .push(format!("{name}: not in our table")),
        }
    }
    Ok(outcome)
}

/// root, `unshare`, perf: the test's needs; `Some(perf --version)`.
pub(crate) fn can_run() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        lab_support::skip(
            "needs root",
            "unshare -m and mount --bind need CAP_SYS_ADMIN",
        );
        return None;
    }
    match Command::new("perf").arg("--version").output() {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        _ => {
            lab_support::skip(
                "needs perf",
                "perf is not installed (apt-get install linux-perf)",
            );
            None
        }
    }
}

/// A tree of core PMUs: (name, type, `cpus` file) with `formats` each.
fn tree(tag: &str, pmus: &[(&str, u32, Option<&str>)], formats: &[(&str, &str)]) -> Tree {
    let tree = Tree::new(tag);
    for &(pmu, ty, cpus) in pmus {
        let mut dir = tree.pmu(pmu, ty);
        for (name, spec) in formats {
            dir = dir.format(name, spec);
        }
        if let Some(cpus) = cpus {
            dir.file("cpus", cpus);
        }
    }
    tree
}

/// The events whose JSON changed between Linux 6.1 (perf's tables) and
/// 6.12 (ours), each checked in the 6.12 JSON: (CPU id, event, what
/// changed).
const JSON_CHANGES_6_1_TO_6_12: &[(&str, &str, &str)] = &[(
    "GenuineIntel-6-97-2",
    "arith.idiv_active",
    "alderlake/pipeline.json, cpu_core: 6.12 adds \"CounterMask\": \"1\" (cmask=1)",
)];

/// One CPU id over one tree: every event perf lists is compared; with
/// tables of perf's kernel all must agree, else exactly the events of
/// [`JSON_CHANGES_6_1_TO_6_12`] for that id differ.
fn check(tree: &Tree, cpuid: &str, perf_version: &str) -> Option<(usize, usize)> {
    let tables = tables_for(perf_version);
    let outcome = match compare(tree, cpuid, tables) {
        Ok(outcome) => outcome,
        Err(e) => {
            lab_support::skip("needs a private mount namespace", &e);
            return None;
        }
    };
    let differing = outcome.differences.len();
    eprintln!(
        "vendor_vs_perf {cpuid} (our table {:?} of Linux {}): perf lists {} events with an encoding, {} \
         agree, {} more agree as perf 6.1 prints values (32 bits), {} differ, {} only in our \
         table",
        outcome.model,
        tables.kernel(),
        outcome.listed,
        outcome.agreed,
        outcome.agreed_as_printed,
        differing,
        outcome.ours_only.len()
    );
    for d in &outcome.differences {
        eprintln!("  differs: {d}");
    }
    if !outcome.ours_only.is_empty() {
        let names: Vec<&str> = outcome.ours_only.iter().map(String::as_str).collect();
        eprintln!("  only ours: {}", names.join(" "));
    }
    assert_eq!(
        outcome.agreed + outcome.agreed_as_printed + differing,
        outcome.listed
    );
    if tables.kernel() == major_minor(perf_version) {
        assert!(
            outcome.differences.is_empty() && outcome.ours_only.is_empty(),
            "the tables are of perf's kernel: every event must agree"
        );
    } else {
        let differing: Vec<&str> = outcome
            .differences
            .iter()
            .map(|d| d.split(':').next().unwrap())
            .collect();
        let changed: Vec<&str> = JSON_CHANGES_6_1_TO_6_12
            .iter()
            .filter(|(id, ..)| *id == cpuid)
            .map(|(_, name, _)| *name)
            .collect();
        assert_eq!(
            differing, changed,
            "only the events whose JSON changed between 6.1 and 6.12 may differ"
        );
    }
    Some((outcome.listed, differing))
}

#[test]
fn skylakex_events_encode_as_perf_encodes_them() {
    let Some(version) = can_run() else { return };
    let tree = tree("vendor-oracle-skx", &[("cpu", 4, None)], INTEL);
    // Two instances of the memory controller's uncore PMU (a `cpumask`
    // file makes them uncore): perf lists uncore_imc_0's events.
    for (name, ty) in [("uncore_imc_0", 14), ("uncore_imc_1", 15)] {
        tree.pmu(name, ty)
            .format("event", "config:0-7")
            .format("umask", "config:8-15")
            .format("edge", "config:18")
            .format("inv", "config:23")
            .format("thresh", "config:24-31")
            .file("cpumask", "0");
    }
    let Some((listed, differing)) = check(&tree, "GenuineIntel-6-55-4", &version) else {
        return;
    };
    // perf 6.1's skylakex table has some 470 core events and 130
    // uncore_imc events.
    assert!(listed > 550, "perf listed {listed}");
    assert_eq!(differing, 0, "of {listed}");
}

#[test]
fn zen3_events_encode_as_perf_encodes_them() {
    let Some(version) = can_run() else { return };
    let tree = tree("vendor-oracle-zen3", &[("cpu", 4, None)], AMD);
    // Family 25 model 1 (Milan): amdzen3 in both kernels' mapfiles (model
    // 0x11, Genoa, is amdzen3 for 6.1 and amdzen4 since 6.2).
    let Some((listed, differing)) = check(&tree, "AuthenticAMD-25-1-1", &version) else {
        return;
    };
    assert!(listed > 200, "perf listed {listed}");
    assert_eq!(differing, 0, "of {listed}");
}

/// Hybrid Alder Lake: `cpu_core` and `cpu_atom` (each with a `cpus`
/// file), every event on its own PMU; perf 6.1 prints `cpu_atom/.../` or
/// `cpu_core/.../` and our name resolves on that PMU.
#[test]
fn alderlake_hybrid_events_encode_as_perf_encodes_them() {
    let Some(version) = can_run() else { return };
    let pmus = [("cpu_core", 4, Some("0-1")), ("cpu_atom", 10, Some("2-3"))];
    let tree = tree("vendor-oracle-adl", &pmus, INTEL);
    let Some((listed, differing)) = check(&tree, "GenuineIntel-6-97-2", &version) else {
        return;
    };
    assert!(listed > 400, "perf listed {listed}");
    // `check` demands none over perf's kernel's tables, arith.idiv_active
    // over 6.12's.
    assert!(differing <= 1, "of {listed}");
}

/// perf's tables are its build architecture's: x86 perf has no arm64
/// rows, so a cortex-a72 MIDR in `PERF_CPUID` gives no vendor event, in
/// perf and here (the arm64 tables are proven in the lab's aarch64 guest).
#[test]
fn an_arm64_cpu_id_gives_x86_perf_no_events() {
    let Some(version) = can_run() else { return };
    let tree = tree(
        "vendor-oracle-a72",
        &[("armv8_pmuv3_0", 8, Some("0-1"))],
        ARM64,
    );
    let Some((listed, differing)) = check(&tree, "0x00000000410fd080", &version) else {
        return;
    };
    if cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        assert_eq!((listed, differing), (0, 0));
    }
}

/// The `list` example (feature `vendor`, and Linux 6.1's tables beside
/// the default 6.12's for `--vendor-kernel 6.1`).
pub(crate) fn list_binary() -> std::path::PathBuf {
    crate::stat_support::example_binary(
        "perf-event-host",
        "list",
        Some("vendor,perf-event-vendor/linux-6-1"),
        None,
    )
}

/// `command` (perf list or the example) in a private mount namespace over
/// `devices`, with `PERF_CPUID`.
fn listing(devices: &Path, cpuid: &str, command: &str) -> Result<String, String> {
    let script = format!(
        "mount --bind {} /sys/bus/event_source/devices && exec {command}",
        devices.display()
    );
    let out = Command::new("unshare")
        .args(["-m", "bash", "-c", &script])
        .env("PERF_CPUID", cpuid)
        .output()
        .map_err(|e| format!("unshare: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{command} in a private mount namespace failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// perf list's vendor events: from the first topic heading after the
/// software and tool events to the raw event descriptor's line.
fn vendor_section(perf: &str) -> String {
    let lines: Vec<&str> = perf.lines().collect();
    let start = lines
        .iter()
        .position(|l| !l.starts_with(' ') && l.ends_with(':'))
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .position(|l| l.starts_with("  rNNN "))
        .unwrap_or(lines.len());
    let mut section = lines[start..end.max(start)].join("\n");
    while section.ends_with('\n') {
        section.pop();
    }
    section
}

/// The list example over Linux 6.1's tables prints what perf 6.1's `perf
/// list --details` prints for the vendor events, byte for byte, but for
/// an event without a description (amdzen3's
/// `l2_request_g1.all_no_prefetch`), which perf 6.1 lists among the PMU's
/// own events (`... OR cpu/l2_request_g1.all_no_prefetch/ [Kernel PMU
/// event]`) and the example with the others, left out of ours here.
#[test]
fn list_example_prints_what_perf_list_prints() {
    if can_run().is_none() {
        return;
    }
    let tree = tree("vendor-oracle-list", &[("cpu", 4, None)], AMD);
    let cpuid = "AuthenticAMD-25-1-1";
    let perf = match listing(&tree.devices(), cpuid, "perf list --details") {
        Ok(text) => vendor_section(&text),
        Err(e) => {
            lab_support::skip("needs a private mount namespace", &e);
            return;
        }
    };
    let example = format!("{} --details --vendor-kernel 6.1", list_binary().display());
    let ours = listing(&tree.devices(), cpuid, &example).unwrap();
    let no_description = "  l2_request_g1.all_no_prefetch                     \n        \
                          cpu/event=0x60,umask=0xf9/ \n";
    assert!(ours.contains(no_description));
    let ours = ours.replacen(no_description, "", 1);
    // The metric groups that follow (perf prints them after its other
    // events): `vendor_metrics_vs_perf` compares them.
    let ours = &ours[..ours.find("\nMetric Groups:").unwrap_or(ours.len())];
    let perf_lines: Vec<&str> = perf.lines().collect();
    let our_lines: Vec<&str> = ours.trim_end_matches('\n').lines().collect();
    assert!(perf_lines.len() > 800, "perf printed {}", perf_lines.len());
    for (i, (p, o)) in perf_lines.iter().zip(&our_lines).enumerate() {
        assert_eq!(p, o, "line {} of the vendor section", i + 1);
    }
    assert_eq!(perf_lines.len(), our_lines.len());
}
