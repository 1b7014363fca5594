//! The pinned Debian packages the lab boots: kernels and the static busybox
//! of every guest architecture. Each pin carries what fetching it needs with
//! no index (its pool path in the archive, size and SHA-256), the suite
//! whose signed index lists it (to replace it when Debian has moved on),
//! and `family`, the names of the same package series (`*` stands for a run
//! without `-`: the kernel ABI number or the stable sublevel).
//! `cargo xtask lab --update-pins` rewrites this file from the indexes.

use super::guests::Arch;

/// A pinned Debian package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pin {
    /// Guest architecture.
    pub arch: Arch,
    /// Kernel `major.minor` (empty for busybox).
    pub series: &'static str,
    /// The suite whose index lists it (`bookworm-security` is read from the
    /// machine's security archive).
    pub suite: &'static str,
    /// Package name.
    pub package: &'static str,
    /// The package series a replacement may come from.
    pub family: &'static str,
    /// Exact version.
    pub version: &'static str,
    /// Pool path below the archive URI.
    pub filename: &'static str,
    /// Size of the .deb in bytes.
    pub size: u64,
    /// SHA-256 of the .deb.
    pub sha256: &'static str,
    /// The tar wildcard of the one file used (kernel image, busybox).
    pub member: &'static str,
}

/// Kernel images: `boot/vmlinuz-*`; riscv64 ships an uncompressed
/// `boot/vmlinux-*` (an EFI-stub `Image` QEMU boots as is), ppc64el an
/// uncompressed ELF `boot/vmlinux-*` (SLOF loads it); mips64el's
/// `vmlinuz-*` is a self-decompressing ELF QEMU's malta loads.
pub const IMAGE: &str = "./boot/vmlinu[xz]-*";

/// The pinned kernels.
pub const KERNELS: &[Pin] = &[
    Pin {
        arch: Arch::X86_64,
        series: "5.10",
        suite: "bullseye",
        package: "linux-image-5.10.0-32-amd64",
        family: "linux-image-5.10.0-*-amd64",
        version: "5.10.223-1",
        filename: "pool/main/l/linux-signed-amd64/linux-image-5.10.0-32-amd64_5.10.223-1_amd64.deb",
        size: 55749416,
        sha256: "86a6792f3a03ab15a643f385830cdaa921f15e3e9c8bf63aa55a9243c62fc797",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Aarch64,
        series: "5.10",
        suite: "bullseye",
        package: "linux-image-5.10.0-32-arm64",
        family: "linux-image-5.10.0-*-arm64",
        version: "5.10.223-1",
        filename: "pool/main/l/linux-signed-arm64/linux-image-5.10.0-32-arm64_5.10.223-1_arm64.deb",
        size: 45375292,
        sha256: "53850b52e93158e3055c1d18a5527f9f95250f44b16ee48fb5ab0b42bed44665",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Aarch64,
        series: "6.1",
        suite: "bookworm-security",
        package: "linux-image-6.1.0-56-arm64",
        family: "linux-image-6.1.0-*-arm64",
        version: "6.1.192-2",
        filename: "pool/updates/main/l/linux-signed-arm64/linux-image-6.1.0-56-arm64_6.1.192-2_arm64.deb",
        size: 59812568,
        sha256: "6f4ed2d1cb9106bc977c2b1960008f175e2eed5740340634b7894e65ef5acc82",
        member: IMAGE,
    },
    Pin {
        arch: Arch::X86_64,
        series: "6.1",
        suite: "bookworm-security",
        package: "linux-image-6.1.0-56-amd64",
        family: "linux-image-6.1.0-*-amd64",
        version: "6.1.192-2",
        filename: "pool/updates/main/l/linux-signed-amd64/linux-image-6.1.0-56-amd64_6.1.192-2_amd64.deb",
        size: 70550672,
        sha256: "a86e2049672f52354c4536a089203b6c82639420424d31c91cf31a181fd4d8f1",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Aarch64,
        series: "6.12",
        suite: "bookworm-security",
        package: "linux-image-6.12.117+deb12-arm64",
        family: "linux-image-6.12.*+deb12-arm64",
        version: "6.12.117-1~deb12u1",
        filename: "pool/updates/main/l/linux-signed-6.12-arm64/linux-image-6.12.117+deb12-arm64_6.12.117-1~deb12u1_arm64.deb",
        size: 93045540,
        sha256: "29593b2ac908b9325be67b2bfb7252310d8500680bc05e89d540a9378abd01a1",
        member: IMAGE,
    },
    Pin {
        arch: Arch::X86_64,
        series: "6.12",
        suite: "bookworm-security",
        package: "linux-image-6.12.117+deb12-amd64",
        family: "linux-image-6.12.*+deb12-amd64",
        version: "6.12.117-1~deb12u1",
        filename: "pool/updates/main/l/linux-signed-6.12-amd64/linux-image-6.12.117+deb12-amd64_6.12.117-1~deb12u1_amd64.deb",
        size: 107179464,
        sha256: "803d36a7cda13355ae8152122470288b2636f19f1cb58162dd9d8b408af9b1b4",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Riscv64,
        series: "6.12",
        suite: "trixie",
        package: "linux-image-6.12.107+deb13-riscv64",
        family: "linux-image-6.12.*+deb13-riscv64",
        version: "6.12.107-1",
        filename: "pool/main/l/linux/linux-image-6.12.107+deb13-riscv64_6.12.107-1_riscv64.deb",
        size: 112012420,
        sha256: "abe9f65d74b434692149482b031db7a2aaf832921e09f69f775293c0e0c5799c",
        member: IMAGE,
    },
    Pin {
        arch: Arch::S390x,
        series: "6.1",
        suite: "bookworm",
        package: "linux-image-6.1.0-50-s390x",
        family: "linux-image-6.1.0-*-s390x",
        version: "6.1.176-1",
        filename: "pool/main/l/linux/linux-image-6.1.0-50-s390x_6.1.176-1_s390x.deb",
        size: 30529824,
        sha256: "a9cbaa26e37f70caa41b66b23f82169eb82042471c1ee89592613b659b12c0dd",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Armhf,
        series: "6.1",
        suite: "bookworm",
        package: "linux-image-6.1.0-50-armmp-lpae",
        family: "linux-image-6.1.0-*-armmp-lpae",
        version: "6.1.176-1",
        filename: "pool/main/l/linux/linux-image-6.1.0-50-armmp-lpae_6.1.176-1_armhf.deb",
        size: 43379200,
        sha256: "7a1a2b179324d910db6415d67b73c7495a58d239f61103d9cf2b79a11b7ece3e",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Ppc64el,
        series: "6.1",
        suite: "bookworm",
        package: "linux-image-6.1.0-50-powerpc64le",
        family: "linux-image-6.1.0-*-powerpc64le",
        version: "6.1.176-1",
        filename: "pool/main/l/linux/linux-image-6.1.0-50-powerpc64le_6.1.176-1_ppc64el.deb",
        size: 49160448,
        sha256: "0513cb05cef43064db6e62e5b71f6a316cf4854ea4fb873263e8e50a1254999e",
        member: IMAGE,
    },
    Pin {
        arch: Arch::Mips64el,
        series: "6.1",
        suite: "bookworm",
        package: "linux-image-6.1.0-50-5kc-malta",
        family: "linux-image-6.1.0-*-5kc-malta",
        version: "6.1.176-1",
        filename: "pool/main/l/linux/linux-image-6.1.0-50-5kc-malta_6.1.176-1_mips64el.deb",
        size: 46212788,
        sha256: "36ad868468d91b54b4567064178dd326cfa8e2ee0c856f74f1d0cb1d41ed0a35",
        member: IMAGE,
    },
    Pin {
        arch: Arch::I386,
        series: "5.10",
        suite: "bullseye",
        package: "linux-image-5.10.0-32-686-pae",
        family: "linux-image-5.10.0-*-686-pae",
        version: "5.10.223-1",
        filename: "pool/main/l/linux-signed-i386/linux-image-5.10.0-32-686-pae_5.10.223-1_i386.deb",
        size: 46666012,
        sha256: "dddf0e76bd9a8aee8a86ba162af64dcb14d6adb21131a07b2d7e8b8cec4a9c4b",
        member: IMAGE,
    },
    Pin {
        arch: Arch::I386,
        series: "6.1",
        suite: "bookworm",
        package: "linux-image-6.1.0-50-686-pae",
        family: "linux-image-6.1.0-*-686-pae",
        version: "6.1.176-1",
        filename: "pool/main/l/linux-signed-i386/linux-image-6.1.0-50-686-pae_6.1.176-1_i386.deb",
        size: 52136644,
        sha256: "0d6241268f9344a998c3339c11e527ea8048d409d6c770f67c573707606a3f2e",
        member: IMAGE,
    },
];

/// The pinned static busybox, the guests' shell and tools.
pub const BUSYBOX: &[Pin] = &[
    Pin {
        arch: Arch::Aarch64,
        series: "",
        suite: "bookworm",
        package: "busybox-static",
        family: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        filename: "pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_arm64.deb",
        size: 822236,
        sha256: "732c9135564fc71337e0e05fb4da4d11e6c28c1834bce3e405e575afef2a52f5",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::X86_64,
        series: "",
        suite: "bookworm",
        package: "busybox-static",
        family: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        filename: "pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_amd64.deb",
        size: 928188,
        sha256: "3d3fdbe91d4660c873e14b092c213fe81c1da6362daa236eb25d0171eb108744",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::S390x,
        series: "",
        suite: "bookworm",
        package: "busybox-static",
        family: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        filename: "pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_s390x.deb",
        size: 853260,
        sha256: "65e29a4dea3ca365e9ee73a6b4fa2a42c8cbbd3b13753250e68b4835876fe316",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::Armhf,
        series: "",
        suite: "bookworm",
        package: "busybox-static",
        family: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        filename: "pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_armhf.deb",
        size: 815288,
        sha256: "2f68dbeaebeda49f3cde34ac421d5add85fb1c837ff7c4a4971945340d9d66ff",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::Riscv64,
        series: "",
        suite: "trixie",
        package: "busybox-static",
        family: "busybox-static",
        version: "1:1.37.0-6+b9",
        filename: "pool/main/b/busybox/busybox-static_1.37.0-6+b9_riscv64.deb",
        size: 941532,
        sha256: "4add476d2b185c5b487c285b38d790f0881a7e4a8e2ddde835f917e770eb8633",
        member: "./usr/bin/busybox",
    },
    Pin {
        arch: Arch::Ppc64el,
        series: "",
        suite: "bookworm",
        package: "busybox-static",
        family: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        filename: "pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_ppc64el.deb",
        size: 965108,
        sha256: "932deb885b840a8cf529708c03a1e87833dc64e66a70585721f8a356d9fe995b",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::Mips64el,
        series: "",
        suite: "bookworm",
        package: "busybox-static",
        family: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        filename: "pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_mips64el.deb",
        size: 905976,
        sha256: "dccccdabb87cf616c950b72987116c0c5a4f3781e95dac4759899126ac7a285b",
        member: "./bin/busybox",
    },
    Pin {
        arch: Arch::I386,
        series: "",
        suite: "bookworm",
        package: "busybox-static",
        family: "busybox-static",
        version: "1:1.35.0-4+deb12u1+b1",
        filename: "pool/main/b/busybox/busybox-static_1.35.0-4+deb12u1+b1_i386.deb",
        size: 958344,
        sha256: "725ef9e6fbac4ab79b353165b05005e8c140d6e42177ebbc202ff1e13ded8b7c",
        member: "./bin/busybox",
    },
];

/// The kernel sources, newest first: `tools/perf/pmu-events` of each is
/// read by `cargo xtask vendor-events` (perf-event-vendor's tables, one set
/// per kernel), and the first ([`LINUX_SOURCE`]) also gives the lab its
/// libperf. Architecture `all`: `arch` only names the index a replacement
/// is looked up in.
pub const LINUX_SOURCES: &[Pin] = &[
    Pin {
        arch: Arch::Aarch64,
        series: "6.12",
        suite: "bookworm-security",
        package: "linux-source-6.12",
        family: "linux-source-6.12",
        version: "6.12.117-1~deb12u1",
        filename: "pool/updates/main/l/linux-6.12/linux-source-6.12_6.12.117-1~deb12u1_all.deb",
        size: 153476148,
        sha256: "e849faf31ca3555757f3a8877cb01af92122f744f75d1f3102734651c4e14703",
        member: "./usr/src/linux-source-6.12.tar.xz",
    },
    // Linux 6.1, bookworm's kernel: the perf 6.1 installed on the machines
    // that run the tests has its vendor tables compiled in.
    Pin {
        arch: Arch::Aarch64,
        series: "6.1",
        suite: "bookworm-security",
        package: "linux-source-6.1",
        family: "linux-source-6.1",
        version: "6.1.172-1",
        filename: "pool/updates/main/l/linux/linux-source-6.1_6.1.172-1_all.deb",
        size: 139048788,
        sha256: "134a7e880abd2cd07a0aef763d6a8fb7bdd7ba22a5b3e37c3b1f46632216c693",
        member: "./usr/src/linux-source-6.1.tar.xz",
    },
];

/// The kernel source libperf is built from (`tools/lib/perf`, the library
/// perf itself stands on), for the libperf comparison in the aarch64 and
/// riscv64 guests: 6.12, the first Debian source whose libperf reads
/// riscv64 counters from user space.
pub const LINUX_SOURCE: Pin = LINUX_SOURCES[0];
