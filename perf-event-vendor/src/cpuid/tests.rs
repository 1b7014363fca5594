//! perf's choice of a model for real CPU ids, on every architecture's
//! mapfile (each row's CPUs), and the rules' corner cases.

use super::regex::Regex;
use super::CpuidRule;
use crate::tables;

/// The tables of `arch` of the kernel `kernel`.
fn of(kernel: &str, arch: &str) -> &'static tables::TestTables {
    tables::all()
        .iter()
        .find(|t| t.kernel == kernel && t.arch == arch)
        .expect("an architecture of the tables")
}

/// The model perf 6.12 chooses on `arch` for `cpuid`.
fn model_on(arch: &str, cpuid: &str) -> Option<&'static str> {
    model_of("6.12", arch, cpuid)
}

/// The model the perf of `kernel` chooses on `arch` for `cpuid`.
fn model_of(kernel: &str, arch: &str, cpuid: &str) -> Option<&'static str> {
    let t = of(kernel, arch);
    let row = t
        .tables
        .map
        .iter()
        .find(|r| t.rule.matches(r.cpuid, cpuid))?;
    Some(row.model)
}

fn expect(arch: &str, cases: &[(&str, Option<&str>)]) {
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|&(cpuid, want)| {
            let got = model_on(arch, cpuid);
            (got != want).then(|| format!("{cpuid}: {got:?}, want {want:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{arch}:\n{}", wrong.join("\n"));
}

/// Every model row is reached by one of the ids of `cases`.
fn every_row_reached(arch: &str, cases: &[(&str, Option<&str>)]) {
    for row in &of("6.12", arch).tables.map {
        assert!(
            cases.iter().any(|(_, m)| *m == Some(row.model)),
            "{arch}: no case for {}",
            row.model
        );
    }
}

#[test]
fn x86_models_of_real_cpus() {
    // `vendor-family-model-stepping`: family decimal, model and stepping %X.
    let cases = [
        ("GenuineIntel-6-97-2", Some("alderlake")),
        ("GenuineIntel-6-9A-3", Some("alderlake")),
        ("GenuineIntel-6-B7-1", Some("alderlake")), // Raptor Lake
        ("GenuineIntel-6-BA-2", Some("alderlake")),
        ("GenuineIntel-6-BE-0", Some("alderlaken")),
        ("GenuineIntel-6-1C-2", Some("bonnell")),
        ("GenuineIntel-6-3D-4", Some("broadwell")),
        ("GenuineIntel-6-56-3", Some("broadwellde")),
        ("GenuineIntel-6-4F-1", Some("broadwellx")),
        ("GenuineIntel-6-55-7", Some("cascadelakex")),
        ("GenuineIntel-6-55-B", Some("cascadelakex")), // Cooper Lake
        ("GenuineIntel-6-96-1", Some("elkhartlake")),
        ("GenuineIntel-6-CF-2", Some("emeraldrapids")),
        ("GenuineIntel-6-5C-9", Some("goldmont")),
        ("GenuineIntel-6-7A-1", Some("goldmontplus")),
        ("GenuineIntel-6-B6-0", Some("grandridge")),
        ("GenuineIntel-6-AD-1", Some("graniterapids")),
        ("GenuineIntel-6-3C-3", Some("haswell")),
        ("GenuineIntel-6-3F-2", Some("haswellx")),
        ("GenuineIntel-6-7E-5", Some("icelake")),
        ("GenuineIntel-6-6A-6", Some("icelakex")),
        ("GenuineIntel-6-3A-9", Some("ivybridge")),
        ("GenuineIntel-6-3E-4", Some("ivytown")),
        ("GenuineIntel-6-2D-7", Some("jaketown")),
        ("GenuineIntel-6-57-1", Some("knightslanding")),
        ("GenuineIntel-6-BD-1", Some("lunarlake")),
        ("GenuineIntel-6-AA-4", Some("meteorlake")),
        ("GenuineIntel-6-1A-5", Some("nehalemep")),
        ("GenuineIntel-6-2E-6", Some("nehalemex")),
        ("GenuineIntel-6-A7-1", Some("rocketlake")),
        ("GenuineIntel-6-2A-7", Some("sandybridge")),
        ("GenuineIntel-6-8F-8", Some("sapphirerapids")),
        ("GenuineIntel-6-AF-3", Some("sierraforest")),
        ("GenuineIntel-6-4D-8", Some("silvermont")),
        ("GenuineIntel-6-5E-3", Some("skylake")),
        ("GenuineIntel-6-9E-A", Some("skylake")), // Coffee Lake
        ("GenuineIntel-6-55-4", Some("skylakex")),
        ("GenuineIntel-6-86-5", Some("snowridgex")),
        ("GenuineIntel-6-8C-1", Some("tigerlake")),
        ("GenuineIntel-6-2C-2", Some("westmereep-dp")),
        ("GenuineIntel-6-25-5", Some("westmereep-sp")),
        ("GenuineIntel-6-2F-2", Some("westmereex")),
        ("AuthenticAMD-23-1-1", Some("amdzen1")),  // Naples
        ("AuthenticAMD-23-18-1", Some("amdzen1")), // Raven Ridge
        ("AuthenticAMD-23-31-0", Some("amdzen2")), // Rome
        ("AuthenticAMD-23-71-0", Some("amdzen2")), // Matisse
        ("AuthenticAMD-25-1-1", Some("amdzen3")),  // Milan
        ("AuthenticAMD-25-21-0", Some("amdzen3")), // Vermeer
        ("AuthenticAMD-25-11-1", Some("amdzen4")), // Genoa: 1 and 11 are not zen3's
        ("AuthenticAMD-25-61-2", Some("amdzen4")), // Raphael
        ("AuthenticAMD-26-44-0", Some("amdzen5")), // Granite Ridge
        // A row without a stepping ignores the CPU's; a row with one needs it.
        ("GenuineIntel-6-97", Some("alderlake")),
        ("GenuineIntel-6-55", None),
        // Case, other vendors and families, extra parts.
        ("GenuineIntel-6-5e-3", None),
        ("HygonGenuine-24-0-1", None),
        ("GenuineIntel-15-4-1", None),
        ("GenuineIntel-6-55-4-1", None),
    ];
    expect("x86", &cases);
    every_row_reached("x86", &cases);
}

#[test]
fn arm64_models_of_real_cpus() {
    // MIDR_EL1 as sysfs prints it.
    let cases = [
        ("0x00000000410fd034", Some("arm/cortex-a53")), // r0p4
        ("0x00000000420f1000", Some("arm/cortex-a53")), // Broadcom Brahma-B53
        ("0x00000000410fd020", Some("arm/cortex-a34")),
        ("0x00000000410fd040", Some("arm/cortex-a35")),
        ("0x00000000412fd050", Some("arm/cortex-a55")), // r2p0
        ("0x00000000410fd4a0", Some("arm/cortex-a65-e1")), // Neoverse E1
        ("0x00000000410fd083", Some("arm/cortex-a57-a72")), // Cortex-A72 r0p3
        ("0x00000000411fd070", Some("arm/cortex-a57-a72")),
        ("0x00000000410fd090", Some("arm/cortex-a73")),
        ("0x00000000413fd0a1", Some("arm/cortex-a75")),
        ("0x00000000414fd0b1", Some("arm/cortex-a76")),
        ("0x00000000413fd0c1", Some("arm/neoverse-n1")), // Graviton2, Altra
        ("0x00000000411fd0d0", Some("arm/cortex-a77")),
        ("0x00000000411fd401", Some("arm/neoverse-v1")), // Graviton3
        ("0x00000000411fd410", Some("arm/cortex-a78")),
        ("0x00000000411fd440", Some("arm/cortex-x1")),
        ("0x00000000410fd460", Some("arm/cortex-a510")),
        ("0x00000000412fd470", Some("arm/cortex-a710")),
        ("0x00000000412fd480", Some("arm/cortex-x2")),
        ("0x00000000410fd490", Some("arm/neoverse-n2-v2")), // Neoverse N2
        ("0x00000000410fd4f0", Some("arm/neoverse-n2-v2")), // Neoverse V2: Grace, Graviton4
        ("0x00000000431f0af1", Some("cavium/thunderx2")),
        ("0x00000000461f0010", Some("fujitsu/a64fx")),
        ("0x00000000481fd010", Some("hisilicon/hip08")), // Kunpeng 920
        ("0x00000000503f0002", Some("ampere/emag")),
        ("0x00000000c00fac30", Some("ampere/ampereone")),
        ("0x00000000c00fac40", Some("ampere/ampereonex")),
        ("0x00000000610f0220", None), // Apple
        ("0x00000000410fd0e0", None), // Cortex-A76AE: no row
    ];
    expect("arm64", &cases);
    every_row_reached("arm64", &cases);
}

#[test]
fn powerpc_models_of_real_cpus() {
    // The PVR as `0x%.8lx`.
    let cases = [
        ("0x004d0200", Some("power8")), // POWER8 DD2.0
        ("0x004b0201", Some("power8")), // POWER8E
        ("0x004c0100", Some("power8")), // POWER8NVL
        ("0x00660000", Some("power8")), // the mapfile's 0x0066 row
        ("0x004e1202", Some("power9")), // POWER9 DD2.2
        ("0x00800200", Some("power10")),
        ("0x00820200", Some("power10")), // 0x0082: POWER11, on power10's tables here
        ("0x003f0201", None),            // POWER7
        ("0x004e12", None),
        ("0x004e120201", None),
    ];
    expect("powerpc", &cases);
    every_row_reached("powerpc", &cases);
}

#[test]
fn s390_models_of_real_cpus() {
    // get_cpuid's `manufacturer,type,capacity,model,version,authorization`.
    let cases = [
        ("IBM,2097,704,E12,1.2,0002", Some("cf_z10")),
        ("IBM,2817,705,M15,1.2,0002", Some("cf_z196")),
        ("IBM,2827,708,H20,1.2,0002", Some("cf_zec12")),
        ("IBM,2964,400,N30,1.3,002f", Some("cf_z13")),
        ("IBM,3906,704,M03,3.5,002f", Some("cf_z14")),
        ("IBM,8561,703,T01,3.6,002f", Some("cf_z15")),
        ("IBM,3931,704,A01,3.7,0002", Some("cf_z16")),
        ("IBM,3931,704,A01", Some("cf_z16")), // a z/VM guest: no service levels
        ("IBM,8561,703,T01", None),
        ("IBM,9175,704,A01,3.8,0002", None), // a later machine
    ];
    expect("s390", &cases);
    every_row_reached("s390", &cases);
}

#[test]
fn riscv_models_of_real_cpus() {
    // `mvendorid-marchid-mimpid` as /proc/cpuinfo prints them.
    let cases = [
        ("0x489-0x8000000000000007-0x20181004", Some("sifive/u74")), // HiFive Unmatched
        ("0x5b7-0x0-0x0", Some("thead/c900-legacy")),                // C906, C910
        ("0x67e-0x80000000db000080-0x1", Some("starfive/dubhe-80")),
        ("0x67e-0x80000000db000090-0x1", Some("starfive/dubhe-80")),
        ("0x31e-0x8000000000008a45-0x500", Some("andes/ax45")),
        ("0x5b7-0x0-0x1", None),
        ("0x489-0x8000000000000007-0x", None),
        ("0x67e-0x80000000db0000a0-0x1", None),
    ];
    expect("riscv", &cases);
    every_row_reached("riscv", &cases);
}

#[test]
fn every_mapfile_pattern_compiles() {
    for t in tables::all() {
        if t.rule == CpuidRule::Arm64 {
            continue;
        }
        for row in &t.tables.map {
            assert!(
                Regex::new(row.cpuid).is_ok(),
                "{} {}: {}",
                t.kernel,
                t.arch,
                row.cpuid
            );
        }
    }
}

#[test]
fn perf_6_1_chooses_by_its_own_rules() {
    // x86: the same rule, 6.1's mapfile.
    assert_eq!(
        model_of("6.1", "x86", "GenuineIntel-6-55-4"),
        Some("skylakex")
    );
    assert_eq!(
        model_of("6.1", "x86", "GenuineIntel-6-55-7"),
        Some("cascadelakex")
    );
    assert_eq!(
        model_of("6.1", "x86", "GenuineIntel-6-AD-1"),
        None,
        "no graniterapids in 6.1"
    );
    // arm64: the generic regular expression on the MIDR with variant and
    // revision cleared (perf 6.1's get_cpuid_str); a full MIDR (6.12's
    // CPU id) of another revision matches no row.
    assert_eq!(of("6.1", "arm64").rule, CpuidRule::Regex);
    assert_eq!(
        model_of("6.1", "arm64", "0x00000000410fd0c0"),
        Some("arm/cortex-a76-n1")
    );
    assert_eq!(model_of("6.1", "arm64", "0x00000000413fd0c1"), None);
    assert_eq!(
        model_on("arm64", "0x00000000413fd0c1"),
        Some("arm/neoverse-n1")
    );
}

#[test]
fn ids_are_read_as_c_strings() {
    assert!(CpuidRule::X86.matches("GenuineIntel-6-97", "GenuineIntel-6-97-2\0junk"));
    assert!(CpuidRule::Regex.matches("0x004e[[:xdigit:]]{4}\0(", "0x004e1202"));
    assert!(
        !CpuidRule::Regex.matches("(", "("),
        "a pattern regcomp refuses"
    );
}
