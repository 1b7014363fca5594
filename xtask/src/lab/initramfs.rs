//! The guests' initramfs: an uncompressed `newc` cpio archive (the format
//! the kernel unpacks, `Documentation/driver-api/early-userspace/
//! buffer-format.rst`) holding busybox, the test binary and a small init
//! that runs each test area between markers on the serial console and
//! powers off.

use super::testbins::TestBinary;
use crate::shell::Result;
use std::path::Path;

/// Console markers the init prints and `results.rs` reads.
pub mod marker {
    /// `LAB-GUEST-UP kernel=<uname -r> machine=<uname -m>`.
    pub const UP: &str = "LAB-GUEST-UP";
    /// `LAB-BEGIN <area>`: a test area starts.
    pub const BEGIN: &str = "LAB-BEGIN";
    /// `LAB-END <binary> rc=<exit status>`: it ended.
    pub const END: &str = "LAB-END";
    /// `LAB-GUEST-DONE`: every binary ran; the guest powers off.
    pub const DONE: &str = "LAB-GUEST-DONE";
    /// `LAB-INFO ...`: facts for the log.
    pub const INFO: &str = "LAB-INFO";
}

/// The kernel command-line switch that makes the init export
/// `PERF_EVENT_CORE_LAB_BREAK=1` (`cargo xtask lab --break`).
pub const BREAK_SWITCH: &str = "perf_event_core_lab_break=1";

/// The init script for a list of test areas (run in this order), each
/// with its binary and filter.
pub fn init_script(binaries: &[TestBinary]) -> String {
    let runs: String = binaries
        .iter()
        .map(|b| format!("run {} /lab/{} {}\n", b.name, b.guest_file(), b.filter()))
        .collect();
    format!(
        r#"#!/bin/busybox sh
# perf-event-core lab guest init, written by `cargo xtask lab`.
/bin/busybox --install -s /bin
export PATH=/bin HOME=/ TMPDIR=/tmp
# Tests that repeat a kernel-heavy loop scale it down under TCG (see
# tests/support/lab_support.rs: lab_guest()).
export PERF_EVENT_CORE_LAB_GUEST=1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
# A line of its own: ppc64el's kernel leaves its banner unterminated on hvc0.
echo
echo "{up} kernel=$(uname -r) machine=$(uname -m)"
if [ -e /proc/sys/kernel/perf_user_access ]; then
    echo 1 > /proc/sys/kernel/perf_user_access
    echo "{info} perf_user_access=$(cat /proc/sys/kernel/perf_user_access)"
fi
echo "{info} pmus=$(ls /sys/bus/event_source/devices | tr '\n' ' ')"
for arg in $(cat /proc/cmdline); do
    if [ "$arg" = "{switch}" ]; then
        export PERF_EVENT_CORE_LAB_BREAK=1
        echo "{info} break switch on: tests fail on purpose"
    fi
done
# run AREA BINARY FILTER: one area's tests, between markers.
run() {{
    echo "{begin} $1"
    "$2" "$3" --test-threads=1 --nocapture
    echo "{end} $1 rc=$?"
}}
{runs}echo "{done}"
poweroff -f
"#,
        up = marker::UP,
        info = marker::INFO,
        switch = BREAK_SWITCH,
        begin = marker::BEGIN,
        end = marker::END,
        done = marker::DONE,
        runs = runs,
    )
}

/// Writes the initramfs for one guest architecture to `out`: busybox, the
/// test binaries, and `extra` programs the tests run (`/lab/NAME`, not run
/// by the init itself).
pub fn write(
    out: &Path,
    busybox: &Path,
    binaries: &[TestBinary],
    extra: &[(&str, &Path)],
) -> Result {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let mut cpio = Cpio::default();
    for dir in ["bin", "dev", "proc", "sys", "tmp", "lab"] {
        cpio.entry(dir, 0o040_755, &[], (0, 0));
    }
    // The kernel opens /dev/console for init before devtmpfs is mounted.
    cpio.entry("dev/console", 0o020_600, &[], (5, 1));
    cpio.entry("bin/busybox", 0o100_755, &read(busybox)?, (0, 0));
    cpio.entry("init", 0o100_755, init_script(binaries).as_bytes(), (0, 0));
    // Every area runs from the same binary: it is written once.
    let mut written = std::collections::BTreeSet::new();
    for b in binaries {
        if written.insert(b.guest_file()) {
            cpio.entry(
                &format!("lab/{}", b.guest_file()),
                0o100_755,
                &read(&b.path)?,
                (0, 0),
            );
        }
    }
    for (name, path) in extra {
        cpio.entry(&format!("lab/{name}"), 0o100_755, &read(path)?, (0, 0));
    }
    std::fs::write(out, cpio.finish()).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// A `newc` cpio archive being built in memory.
#[derive(Default)]
pub struct Cpio {
    data: Vec<u8>,
    next_inode: u32,
}

impl Cpio {
    /// Appends one entry: `mode` holds type and permission bits, `rdev` the
    /// device numbers of a device node.
    pub fn entry(&mut self, name: &str, mode: u32, body: &[u8], rdev: (u32, u32)) {
        self.next_inode += 1;
        let nlink = if mode & 0o170_000 == 0o040_000 { 2 } else { 1 };
        let fields = [
            self.next_inode,
            mode,
            0, // uid
            0, // gid
            nlink,
            0, // mtime: fixed, so the archive is reproducible
            u32::try_from(body.len()).expect("initramfs member under 4 GiB"),
            0, // devmajor
            0, // devminor
            rdev.0,
            rdev.1,
            u32::try_from(name.len() + 1).expect("short name"),
            0, // check
        ];
        self.data.extend_from_slice(b"070701");
        for f in fields {
            self.data.extend_from_slice(format!("{f:08X}").as_bytes());
        }
        self.data.extend_from_slice(name.as_bytes());
        self.data.push(0);
        self.pad();
        self.data.extend_from_slice(body);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.data.len().is_multiple_of(4) {
            self.data.push(0);
        }
    }

    /// Adds the trailer and returns the archive.
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, &[], (0, 0));
        self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newc_entries_are_aligned_and_end_with_the_trailer() {
        let mut cpio = Cpio::default();
        cpio.entry("init", 0o100_755, b"#!/bin/sh\n", (0, 0));
        let data = cpio.finish();
        assert_eq!(data.len() % 4, 0);
        assert!(data.starts_with(b"070701"));
        // Header 110 bytes + "init\0" (5) = 115, padded to 116, then the body.
        assert_eq!(&data[116..126], b"#!/bin/sh\n");
        // Name size field of the first entry: "init" plus NUL.
        assert_eq!(&data[94..102], b"00000005");
        // Trailer: header 110 + "TRAILER!!!\0" (11) = 121, padded to 124.
        let trailer = data.len() - 124;
        assert_eq!(&data[trailer..trailer + 6], b"070701");
        assert_eq!(&data[trailer + 110..trailer + 120], b"TRAILER!!!");
    }

    #[test]
    fn init_runs_every_area_between_markers() {
        let bins = ["abi", "set"].map(|area| TestBinary {
            name: area.into(),
            path: "/target/lab_areas-0123".into(),
        });
        let init = init_script(&bins);
        assert!(init
            .contains("\nrun abi /lab/lab_areas-0123 abi::\nrun set /lab/lab_areas-0123 set::\n"));
        assert!(init.contains("echo \"LAB-BEGIN $1\""));
        assert!(init.contains("\"$2\" \"$3\" --test-threads=1 --nocapture"));
        assert!(init.contains("echo \"LAB-END $1 rc=$?\""));
        assert!(init.ends_with("poweroff -f\n"));
    }
}
