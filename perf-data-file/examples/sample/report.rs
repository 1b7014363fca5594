//! The report, made after the recording from what [`super::capture`] kept:
//! shares by period per object and symbol (`perf report --sort dso,sym`);
//! with callchains also each symbol's share of the samples it is on the
//! stack of (`perf report --children`: "Children" then "Self"); and folded
//! stacks for flame graphs (`comm;caller;...;callee count`, one line per
//! distinct stack, as `perf script | stackcollapse-perf.pl` writes them).

use super::capture::Capture;
use super::symbols::{Key, Resolver};
use std::collections::{HashMap, HashSet};
use std::io::Write;

/// Per event: self and children period per symbol.
#[derive(Default)]
struct Rows {
    own: HashMap<Key, u64>,
    children: HashMap<Key, u64>,
    total: u64,
    samples: u64,
    /// Samples of the tool's own process.
    tool: u64,
    /// Samples of the idle task (pid 0, perf report's `0:swapper`).
    idle: u64,
}

/// The report of one recording.
pub struct Report {
    events: Vec<Rows>,
    /// Folded stacks of the first event -> number of samples.
    folded: HashMap<String, u64>,
}

/// What `--folded` writes for a frame: the symbol, or `[object]` when the
/// address has none (stackcollapse-perf.pl's rule for `[unknown]`).
fn frame(key: &Key) -> String {
    let (dso, _, sym) = key;
    if sym.starts_with("0x") {
        if dso.starts_with('[') {
            dso.clone()
        } else {
            format!("[{dso}]")
        }
    } else {
        sym.clone()
    }
}

impl Report {
    /// Looks up every address of the capture (the only symbol work, done
    /// after the recording ended).
    pub fn new(cap: &Capture, events: usize, folded: bool) -> Report {
        let mut resolver = Resolver::default();
        let me = std::process::id();
        let mut r = Report {
            events: (0..events).map(|_| Rows::default()).collect(),
            folded: HashMap::new(),
        };
        let mut seen = HashSet::new();
        let mut stack = Vec::new();
        for s in &cap.samples {
            let rows = &mut r.events[s.event as usize];
            rows.samples += 1;
            rows.total += s.period;
            if s.pid == me {
                rows.tool += 1;
            }
            if s.pid == 0 {
                rows.idle += 1;
            }
            seen.clear();
            stack.clear();
            let ips = &cap.ips[s.first as usize..(s.first + s.len) as usize];
            for (i, ip) in ips.iter().enumerate() {
                let key = if ip.kernel {
                    resolver.kernel(ip.addr)
                } else {
                    resolver.user(ip.addr, cap.map_of(s.pid, s.maps_seen, ip.addr))
                };
                if i == 0 {
                    *rows.own.entry(key.clone()).or_default() += s.period;
                }
                if folded && s.event == 0 {
                    stack.push(frame(&key));
                }
                if seen.insert(key.clone()) {
                    *rows.children.entry(key).or_default() += s.period;
                }
            }
            if folded && s.event == 0 {
                let comm = cap.comms.get(&s.pid).map_or("[unknown]", |c| c.as_str());
                stack.push(comm.replace(' ', "_"));
                stack.reverse();
                *r.folded.entry(stack.join(";")).or_default() += 1;
            }
        }
        r
    }

    /// Prints the report; `children`: the callchain columns. `tool`: the
    /// lines with the tool's own samples and the idle task's (pid 0: an
    /// idle CPU's cpu-clock samples, `0:swapper` in `perf report --sort
    /// pid`), for system-wide recordings. A tracking event with no
    /// samples (`-D`'s `dummy:HG`, ours or perf's) gets no report, as in
    /// `perf report`.
    pub fn print(&self, names: &[String], lost: &[u64], children: bool, tool: bool) {
        for ((rows, name), lost) in self.events.iter().zip(names).zip(lost) {
            if rows.samples == 0 && name == super::events::TRACKING {
                continue;
            }
            println!("# Event '{name}': {} samples, {lost} lost", rows.samples);
            if tool {
                println!(
                    "# Samples of this tool (pid {}): {} ({:.2}%)",
                    std::process::id(),
                    rows.tool,
                    100.0 * rows.tool as f64 / rows.samples.max(1) as f64
                );
                println!(
                    "# Samples of the idle task (pid 0): {} ({:.2}%)",
                    rows.idle,
                    100.0 * rows.idle as f64 / rows.samples.max(1) as f64
                );
            }
            let pct = |n: u64| 100.0 * n as f64 / rows.total.max(1) as f64;
            if children {
                println!("# Children      Self  Shared Object  Symbol");
                let mut keys: Vec<(&Key, &u64)> = rows.children.iter().collect();
                keys.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                for (key @ (dso, mode, sym), n) in keys {
                    let own = rows.own.get(key).copied().unwrap_or(0);
                    println!("{:8.2}%  {:8.2}%  {dso}  {mode} {sym}", pct(*n), pct(own));
                }
            } else {
                println!("# Overhead  Shared Object  Symbol");
                let mut keys: Vec<(&Key, &u64)> = rows.own.iter().collect();
                keys.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                for ((dso, mode, sym), n) in keys {
                    println!("{:8.2}%  {dso}  {mode} {sym}", pct(*n));
                }
            }
            println!();
        }
    }

    /// Writes the folded stacks, most samples first.
    pub fn write_folded(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut lines: Vec<(&String, &u64)> = self.folded.iter().collect();
        lines.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (stack, n) in lines {
            writeln!(out, "{stack} {n}")?;
        }
        out.flush()
    }
}
