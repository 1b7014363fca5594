//! The events and where they are opened: the attrs perf record would open
//! (the user's `-e` events, or its default `cycles:P`), the places (per
//! CPU for a command or `-a`, per thread for `-p`), and each event opened
//! at every place through perf record's fallbacks.

use super::args::{usage, Args, Target};
use perf_event_core::attr::Attr;
use perf_event_core::event::{Event, Hardware, Software};
use perf_event_core::fallback::{self, Attempt, Policy};
use perf_event_core::fd::EventFd;
use perf_event_core::open::{open, OpenError, Scope};
use perf_event_core::record::SampleLayout;
use perf_event_core::sys;
use perf_event_host::parse::{parse, Builtin, EventList, Modifiers, Resolver, System};
use perf_event_host::ringset::Entry;
use perf_event_host::workload::Workload;

/// The events to open: name, attr, and whether perf's `:P` asks for the
/// highest precision (perf record's default `cycles:P` included).
pub type Wanted = (String, Attr, bool);

/// Where events are opened: a pid (-1: every task) and a CPU (`None`:
/// wherever the thread runs).
pub type Place = (i32, Option<u32>);

/// The attrs to open: the user's events, or perf record's default
/// `cycles:P` (cpu-clock where the machine has no PMU for it, by the
/// fallback policy at open); with `-D`, then the tracking event
/// ([`TRACKING`], last: see [`tracking`]).
pub fn attrs(a: &Args) -> Vec<Wanted> {
    let mut out = Vec::new();
    if a.events.is_empty() {
        out.push(default_event(a));
    }
    let resolver = resolver();
    for text in &a.events {
        for (name, attr, max_precise, rate) in parse_event(text, resolver.as_ref()) {
            out.push((name, sampling(a, attr, rate), max_precise));
        }
    }
    if a.delay_ms != 0 {
        out.push((TRACKING.to_string(), tracking_event(a), false));
    } else if let Some((_, first, _)) = out.first_mut() {
        // The first event also reports mappings, exec names and forks
        // (once is enough).
        *first = with_side_band(*first);
    }
    out
}

/// The name of the tracking event added with `-D`, as perf record 6.1
/// names its own (`dummy:HG` in its `evlist` control command).
pub const TRACKING: &str = "dummy:HG";

/// The index of the tracking event among the `n` events [`attrs`]
/// returned for `a`: with `-D`, the last.
pub fn tracking(a: &Args, n: usize) -> Option<usize> {
    (a.delay_ms != 0 && n > 0).then(|| n - 1)
}

/// What an event reports besides its samples: mappings, exec names,
/// forks and exits.
fn with_side_band(attr: Attr) -> Attr {
    attr.mmap(true).mmap2(true).comm(true).task(true)
}

/// perf record's tracking event with `-D` (its `evlist__add_dummy` in
/// `record__config`): the software dummy, which never samples, carrying
/// the side band, enabled at the command's exec (`-a`, `-p`: at the
/// start) while the events wait for the delay or an `enable`; period 1,
/// as perf sets it.
fn tracking_event(a: &Args) -> Attr {
    let dummy = sampling(a, Attr::new(Event::Software(Software::Dummy)), None);
    with_side_band(dummy)
        .sample_period(1)
        .enable_on_exec(matches!(a.target, Target::Command(_)))
}

/// perf 6.1's evsel__new_cycles: user space only when the kernel may
/// not be profiled (paranoid > 1 without CAP_PERFMON), the highest
/// precision, and the guest not excluded: bookworm's perf 6.1.187
/// leaves `exclude_guest` 0 on its default event (its message names
/// `cpu-clock:ppp` after the fallback, where a set bit would make
/// it `cpu-clock:pppH`), while events written with `-e` still get
/// it ([`parse_event`]).
fn default_event(a: &Args) -> Wanted {
    let user_only = !kernel_allowed();
    let cycles = Attr::new(Event::Hardware(Hardware::CpuCycles)).exclude_kernel(user_only);
    let name = if user_only { "cycles:u" } else { "cycles" };
    (name.to_string(), sampling(a, cycles, None), true)
}

/// This machine's PMUs and tracefs; built with feature `vendor`, with perf's
/// vendor event names of this CPU (or of `PERF_CPUID`'s) as PMU aliases.
fn resolver() -> Box<dyn Resolver> {
    #[cfg(feature = "vendor")]
    match perf_event_host::vendor::VendorSystem::discover() {
        Ok(system) => return Box::new(system),
        Err(e) => eprintln!("vendor events not available: {e}"),
    }
    match System::discover() {
        Ok(system) => Box::new(system),
        Err(_) => Box::new(Builtin),
    }
}

/// The events of one `-e` string (perf's syntax), each with its name
/// (perf's: the `name=` term, the tracepoint a wildcard expanded to, or
/// the event's own text in the string) and whether it asks for the
/// highest precision (`:P`); with sysfs's PMUs where they can be read
/// (`system`), else the built-in events alone.
fn parse_event(text: &str, resolver: &dyn Resolver) -> Vec<(String, Attr, bool, Option<TermRate>)> {
    let each = |l: EventList<'_, '_>| {
        l.events()
            .iter()
            // perf 6.1 excludes the guest from an event written
            // without modifiers (its event_attr_init; modifiers decide
            // otherwise, as the parser does).
            .map(|e| {
                let bare = e.modifiers == Modifiers::default();
                let attr = if bare {
                    e.attr.exclude_guest(true)
                } else {
                    e.attr
                };
                let name = e.name.or(e.expanded).unwrap_or(e.text).to_string();
                (name, attr, e.modifiers.precise_max, term_rate(e))
            })
            .collect::<Vec<_>>()
    };
    parse(text, resolver)
        .map(each)
        .unwrap_or_else(|e| usage(&format!("{text}: {e}")))
}

/// Where an event's sample rate came from, when its terms set one (perf's
/// PERIOD and FREQ config terms).
#[derive(Clone, Copy, PartialEq, Eq)]
enum TermRate {
    /// The user's `period=` / `freq=`: it wins over `-c` and `-F`.
    User,
    /// Its alias's `period=` (a vendor event's JSON period): a weak term,
    /// which `-c` overrides and `-F` does not.
    Alias,
}

/// The rate `e`'s terms set: the alias's when the attr holds the alias's
/// own `period=` (a user's `period=` of the same value counts as the
/// alias's: it would differ only under `-c`).
fn term_rate(e: &perf_event_host::parse::ParsedEvent<'_, '_>) -> Option<TermRate> {
    use perf_event_host::sysfs::TermValue;
    let freq = e.attr.flags() & perf_event_core::abi::bitfield::attr_flags::FREQ.mask() != 0;
    let period = e.attr.to_raw().sample_period();
    if period == 0 {
        return None;
    }
    let alias_period = e.alias.and_then(|alias| {
        alias
            .terms()
            .flatten()
            .find_map(|t| match (t.name, t.value) {
                ("period", TermValue::Number(n)) => Some(n),
                _ => None,
            })
    });
    Some(if !freq && alias_period == Some(period) {
        TermRate::Alias
    } else {
        TermRate::User
    })
}

/// `attr` set up to sample as asked: disabled until the recording starts,
/// what each sample carries, inherited by a command's children (enabled
/// at its exec, but with `-D`: by the delay or an `enable` command),
/// `-c` or `-F`, and `-o`'s clock.
fn sampling(a: &Args, attr: Attr, rate: Option<TermRate>) -> Attr {
    let inherit = matches!(a.target, Target::Command(_));
    // A tracepoint's samples carry its fields (PERF_SAMPLE_RAW), as
    // perf record asks for them.
    let raw = match attr.to_raw().type_ {
        sys::PERF_TYPE_TRACEPOINT => sys::PERF_SAMPLE_RAW as u64,
        _ => 0,
    };
    let attr = attr
        .disabled(true)
        .sample_type_raw(sample_type(a.callchain) | raw)
        .sample_id_all(true)
        .inherit(inherit)
        .enable_on_exec(inherit && a.delay_ms == 0);
    // perf record's evsel__apply_config_terms: the event's own rate wins,
    // an alias's only without -c.
    let attr = match (rate, a.period) {
        (Some(TermRate::User), _) | (Some(TermRate::Alias), None) => attr,
        (_, Some(p)) => attr.sample_period(p),
        (None, None) => attr.sample_freq(a.freq),
    };
    // -o: sample times on CLOCK_MONOTONIC, recorded with the wall-clock
    // time that goes with it (perf record -k monotonic).
    match a.output {
        Some(_) => attr.clockid(libc::CLOCK_MONOTONIC),
        None => attr,
    }
}

/// What every sample carries (with `-g` its callchain too).
fn sample_type(callchain: bool) -> u64 {
    (sys::PERF_SAMPLE_IDENTIFIER
        | sys::PERF_SAMPLE_IP
        | sys::PERF_SAMPLE_TID
        | sys::PERF_SAMPLE_TIME
        | sys::PERF_SAMPLE_CPU
        | sys::PERF_SAMPLE_PERIOD) as u64
        | if callchain {
            sys::PERF_SAMPLE_CALLCHAIN as u64
        } else {
            0
        }
}

/// Whether this process may profile the kernel (perf's
/// `perf_event_can_profile_kernel`: paranoid at most 1, or CAP_PERFMON /
/// CAP_SYS_ADMIN).
fn kernel_allowed() -> bool {
    let paranoid = perf_event_core::linux::system::perf_event_paranoid();
    paranoid.is_some_and(|p| p.allows_kernel())
        || perf_event_core::linux::access::Caller::current().perfmon
}

/// The online CPUs (CPU 0 when they cannot be read).
fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
            cpus.extend(a..=b);
        }
    }
    if cpus.is_empty() {
        cpus.push(0);
    }
    cpus
}

/// Where each event is opened: per CPU (command: inherited by its
/// children; -a: every task), or per thread of a running process.
pub fn places(target: &Target, workload: Option<&Workload>) -> Vec<Place> {
    match target {
        Target::Command(_) => {
            let pid = workload.map_or(-1, |w| w.pid());
            online_cpus().into_iter().map(|c| (pid, Some(c))).collect()
        }
        Target::All(_) => online_cpus().into_iter().map(|c| (-1, Some(c))).collect(),
        Target::Pid(p) => std::fs::read_dir(format!("/proc/{p}/task"))
            .unwrap_or_else(|e| usage(&format!("process {p}: {e}")))
            .flatten()
            .filter_map(|t| t.file_name().to_str()?.parse().ok())
            .map(|tid: i32| (tid, None))
            .collect(),
    }
}

/// Every event opened at every place: the ring set's entries, and each
/// event's attempt (the fallbacks it took, its attr as opened). An event
/// that cannot be opened ends the tool with perf record's status 255; a
/// thread gone since the listing is left out.
pub fn open_all(wanted: &[Wanted], places: &[Place], verbose: u8) -> (Vec<Entry>, Vec<Attempt>) {
    // perf record's fallbacks, taken on each event's first placement and
    // kept for the others.
    let mut attempts: Vec<Attempt> = wanted
        .iter()
        .map(|(_, attr, max)| {
            let a = Attempt::new(*attr, Policy::PERF);
            if *max {
                a.max_precise()
            } else {
                a
            }
        })
        .collect();
    let mut settled = vec![false; wanted.len()];
    let mut entries = Vec::new();
    for &(pid, cpu) in places {
        for (event, (name, _, _)) in wanted.iter().enumerate() {
            let scope = match (pid, cpu) {
                (-1, Some(c)) => Scope::all_tasks_on(c),
                (p, Some(c)) => Scope::thread_on(p, c),
                (p, None) => Scope::thread(p),
            };
            let attempt = &mut attempts[event];
            let opened = open_at(attempt, settled[event], scope, pid, verbose);
            let attr = attempt.attr();
            match opened {
                Ok(fd) => {
                    settled[event] = true;
                    entries.push(Entry {
                        fd,
                        event,
                        layout: SampleLayout::from_attr(&attr),
                        cpu: cpu.map_or(-1, |c| c as i32),
                        thread: pid,
                    })
                }
                // A thread may exit between the listing and the open.
                Err(e) if cpu.is_none() && e.errno.map(|e| e.0) == Some(libc::ESRCH) => {}
                Err(e) => {
                    let name = fallback::renamed(name, attempt.fallbacks(), &attr);
                    eprintln!("sample: {name}: {e}");
                    // perf record's status when an event cannot be opened.
                    std::process::exit(255);
                }
            }
        }
    }
    (entries, attempts)
}

/// One event opened on `scope`: through perf record's fallbacks until it
/// `settled` (-v prints those taken, -vv the attr and the outcome, as
/// perf prints them), then as it settled.
fn open_at(
    attempt: &mut Attempt,
    settled: bool,
    scope: Scope,
    pid: i32,
    verbose: u8,
) -> Result<EventFd, OpenError> {
    if settled {
        return open(&attempt.attr(), scope, None, attempt.flags());
    }
    let r = fallback::open(attempt, scope, None);
    if verbose > 0 {
        for taken in attempt.fallbacks().iter() {
            eprintln!("Warning:\n{taken}");
        }
    }
    if verbose > 1 {
        let outcome = match &r {
            Ok(_) => format!(
                "sys_perf_event_open: pid {pid}  cpu {} = opened",
                scope.cpu()
            ),
            Err(e) => format!(
                "sys_perf_event_open: pid {pid}  cpu {} failed, error -{}",
                scope.cpu(),
                e.errno.map_or(0, |e| e.0)
            ),
        };
        eprintln!("{}\n{outcome}", attempt.attr().perf_print());
    }
    r
}

/// The events as opened: perf's names after the fallbacks, and the attrs.
pub fn opened(wanted: &[Wanted], attempts: &[Attempt]) -> Vec<(String, Attr)> {
    wanted
        .iter()
        .zip(attempts)
        .map(|((name, _, _), at)| {
            (
                fallback::renamed(name, at.fallbacks(), &at.attr()).to_string(),
                at.attr(),
            )
        })
        .collect()
}
