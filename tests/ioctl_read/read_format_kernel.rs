//! Every read_format combination of TOTAL_TIME_ENABLED, TOTAL_TIME_RUNNING,
//! ID and LOST, with and without GROUP, opened on the running kernel and
//! parsed; the parsed id equals PERF_EVENT_IOC_ID. LOST needs Linux 6.0:
//! older kernels must refuse it, and the test says so, except the 5.10 LTS
//! series, which has it as a stable backport.

use crate::lab_support;

use perf_event_core::abi::KernelVersion;
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Software};
use perf_event_core::open::{open, OpenFlags, Scope};
use perf_event_core::read_format::ReadFormat;
use perf_event_core::sys;

#[test]
fn every_read_format_combination_opens_and_parses() {
    let kernel = perf_event_core::linux::system::kernel_version().unwrap();
    let has_lost =
        kernel.at_least(KernelVersion::new(6, 0, 0)) || lab_support::read_format_lost_backported();
    let bits = [
        sys::PERF_FORMAT_TOTAL_TIME_ENABLED,
        sys::PERF_FORMAT_TOTAL_TIME_RUNNING,
        sys::PERF_FORMAT_ID,
        sys::PERF_FORMAT_LOST,
    ];
    let (mut opened, mut refused) = (0, 0);
    for combo in 0..16u32 {
        for group in [false, true] {
            let mut fmt: u64 = (0..4)
                .filter(|i| combo & (1 << i) != 0)
                .map(|i| bits[i] as u64)
                .sum();
            if group {
                fmt |= sys::PERF_FORMAT_GROUP as u64;
            }
            let lost = fmt & sys::PERF_FORMAT_LOST as u64 != 0;
            let attr = Attr::new(Event::Software(Software::TaskClock))
                .disabled(true)
                .read_format_raw(fmt);
            let leader = match open(&attr, Scope::this_thread(), None, OpenFlags::new()) {
                Ok(fd) => fd,
                Err(e) if lost && !has_lost => {
                    println!("read_format {fmt:#x}: refused by Linux {kernel} as expected: {e}");
                    refused += 1;
                    continue;
                }
                Err(e) => panic!("read_format {fmt:#x} on Linux {kernel}: {e}"),
            };
            assert!(
                !lost || has_lost,
                "Linux {kernel} accepted PERF_FORMAT_LOST"
            );
            let member_attr = Attr::new(Event::Software(Software::PageFaults)).read_format_raw(fmt);
            let member = group.then(|| {
                open(
                    &member_attr,
                    Scope::this_thread(),
                    Some(&leader),
                    OpenFlags::new(),
                )
                .unwrap()
            });
            leader.enable(group).unwrap();
            std::hint::black_box(vec![0u8; 1 << 16]);
            leader.disable(group).unwrap();
            let members = if group { 2 } else { 1 };
            let size = ReadFormat(fmt).size(members);
            let mut buf = [0u8; 256];
            // A buffer of exactly the computed size suffices.
            let reading = leader
                .read_into(&mut buf[..size])
                .unwrap_or_else(|e| panic!("{fmt:#x}: {e}"));
            assert_eq!(reading.len(), members);
            assert_eq!(reading.time_enabled().is_some(), fmt & 1 != 0);
            assert_eq!(reading.time_running().is_some(), fmt & 2 != 0);
            let first = reading.get(0).unwrap();
            assert!(first.value > 0, "{fmt:#x}: task-clock read 0");
            if fmt & sys::PERF_FORMAT_ID as u64 != 0 {
                assert_eq!(first.id, Some(leader.id().unwrap()), "{fmt:#x}");
                if let Some(m) = &member {
                    assert_eq!(reading.get(1).unwrap().id, Some(m.id().unwrap()));
                }
            }
            assert_eq!(
                first.lost,
                lost.then_some(0),
                "{fmt:#x}: a counting event loses nothing"
            );
            opened += 1;
        }
    }
    println!("Linux {kernel}: {opened} combinations opened and parsed, {refused} refused (LOST before 6.0)");
    assert_eq!(opened + refused, 32);
    assert_eq!(refused, if has_lost { 0 } else { 16 });
}
