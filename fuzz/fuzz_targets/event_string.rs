//! The event-string parser on arbitrary text, against in-memory PMUs and
//! tracepoints: it must never panic, errors must point inside the input,
//! and every event's text must be the input's bytes at its position.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perf_event_host::parse::{parse, Resolver};
use perf_event_host::sysfs::{Alias, Format, Pmu, TracepointError};
use std::sync::OnceLock;

struct Fixture {
    pmus: Vec<Pmu>,
}

impl Resolver for Fixture {
    fn pmus(&self) -> &[Pmu] {
        &self.pmus
    }
    fn tracepoint_id(&self, system: &str, event: &str) -> Result<u64, TracepointError> {
        match (system, event) {
            ("sched", "sched_switch") => Ok(316),
            ("syscalls", "sys_enter_prctl") => Ok(267),
            _ => Err(TracepointError::NotMounted),
        }
    }
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let f = |s| Format::parse(s).unwrap();
        let a = |n, t| Alias::new(n, t).unwrap();
        let cpu = Pmu::new("cpu", 4)
            .with_format("event", f("config:0-7,32-35"))
            .with_format("umask", f("config:8-15"))
            .with_format("inv", f("config:23"))
            .with_format("cmask", f("config:24-31"))
            .with_format("ldlat", f("config1:0-15"))
            .with_alias(a("cpu-cycles", "event=0x3c"))
            .with_alias(a("mem-loads", "event=0xcd,umask=0x1,ldlat=3"))
            .with_alias(a("todo", "event=0x1,cmask=?"));
        let imc = |n, t| {
            Pmu::new(n, t)
                .with_format("event", f("config:0-7"))
                .with_format("umask", f("config:8-15"))
                .with_alias(a("cas_count_read", "event=0x04,umask=0x03"))
        };
        let arm = Pmu::new("armv8_pmuv3_0", 10)
            .with_format("event", f("config:0-15"))
            .with_format("long", f("config1:0"))
            .with_format("rdpmc", f("config1:1"));
        let msr = Pmu::new("msr", 9)
            .with_format("event", f("config:0-63"))
            .with_alias(a("tsc", "event=0x00"));
        Fixture {
            pmus: vec![
                cpu,
                imc("uncore_imc_0", 14),
                imc("uncore_imc_1", 15),
                arm,
                msr,
            ],
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    match parse(input, fixture()) {
        Ok(list) => {
            for event in list.events() {
                assert_eq!(
                    &input[event.position..event.position + event.text.len()],
                    event.text
                );
                let _ = event.attr.check();
                let _ = event.attr.to_raw();
            }
            let grouped: usize = list.groups().map(<[_]>::len).sum();
            assert_eq!(grouped, list.events().len());
        }
        Err(e) => {
            assert!(e.position + e.len <= input.len(), "{e:?}");
            assert!(
                input.is_char_boundary(e.position) && input.is_char_boundary(e.position + e.len)
            );
            let _ = e.to_string();
        }
    }
});
