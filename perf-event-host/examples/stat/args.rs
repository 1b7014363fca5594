//! The command line, read as perf's parse-options reads it: short options
//! with the value attached (`-x,`, `-r5`) or separate (`-r 5`), bundled
//! switches (`-iv`), `--long=value` and `--long value`, `--` or the first
//! non-option argument starting the command. Unknown options and bad values
//! get perf's messages and status 129.
//!
//! Options live in one table ([`OPTIONS`]): adding one is a row and a match
//! arm in [`Options::set`].

use crate::set_mode::SetOptions;
use crate::DEFAULT_EVENTS;
use perf_event_host::set::TopologyLevel;

/// What an option does with its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Id {
    Event,
    FieldSeparator,
    Repeat,
    Output,
    Append,
    NoInherit,
    Verbose,
    Help,
    // The event-set layer's options (target selection, aggregation,
    // intervals): served by `set_mode`.
    AllCpus,
    Cpu,
    Pid,
    Tid,
    PerThread,
    NoAggr,
    IntervalPrint,
    PerSocket,
    PerDie,
    PerCore,
    PerNode,
    Null,
    BigNum,
    Timeout,
    IntervalCount,
    AllUser,
    AllKernel,
    Delay,
    Control,
    Metrics,
    MetricNoGroup,
    MetricNoMerge,
    VendorKernel,
}

/// One option: its letters, its value's name (None: a switch), its help.
pub struct Opt {
    pub id: Id,
    pub short: Option<char>,
    pub long: &'static str,
    pub value: Option<&'static str>,
    pub help: &'static str,
}

const fn opt(
    id: Id,
    short: Option<char>,
    long: &'static str,
    value: Option<&'static str>,
    help: &'static str,
) -> Opt {
    Opt {
        id,
        short,
        long,
        value,
        help,
    }
}

/// Every option, in perf's help order.
pub const OPTIONS: &[Opt] = &[
    opt(
        Id::AllCpus,
        Some('a'),
        "all-cpus",
        None,
        "system-wide collection from all CPUs",
    ),
    opt(
        Id::NoAggr,
        Some('A'),
        "no-aggr",
        None,
        "disable CPU count aggregation",
    ),
    opt(
        Id::Cpu,
        Some('C'),
        "cpu",
        Some("cpu"),
        "list of cpus to monitor in system-wide",
    ),
    opt(
        Id::Delay,
        Some('D'),
        "delay",
        Some("n"),
        "ms to wait before starting measurement after program start (-1: start with events disabled)",
    ),
    opt(
        Id::Event,
        Some('e'),
        "event",
        Some("event"),
        "event selector. use 'perf list' to list available events",
    ),
    opt(Id::Help, Some('h'), "help", None, "show this help"),
    opt(
        Id::Metrics,
        Some('M'),
        "metrics",
        Some("metric/metric group list"),
        "monitor specified metrics or metric groups (separated by ,)",
    ),
    opt(
        Id::IntervalPrint,
        Some('I'),
        "interval-print",
        Some("n"),
        "print counts at regular interval in ms",
    ),
    opt(
        Id::NoInherit,
        Some('i'),
        "no-inherit",
        None,
        "child tasks do not inherit counters",
    ),
    opt(
        Id::Output,
        Some('o'),
        "output",
        Some("file"),
        "output file name",
    ),
    opt(
        Id::Pid,
        Some('p'),
        "pid",
        Some("pid"),
        "stat events on existing process id",
    ),
    opt(
        Id::Repeat,
        Some('r'),
        "repeat",
        Some("n"),
        "repeat command and print average + stddev (max: 100, forever: 0)",
    ),
    opt(
        Id::Tid,
        Some('t'),
        "tid",
        Some("tid"),
        "stat events on existing thread id",
    ),
    opt(
        Id::Verbose,
        Some('v'),
        "verbose",
        None,
        "be more verbose (show counter open errors, etc)",
    ),
    opt(
        Id::FieldSeparator,
        Some('x'),
        "field-separator",
        Some("separator"),
        "print counts with custom separator",
    ),
    opt(
        Id::Append,
        None,
        "append",
        None,
        "append to the output file",
    ),
    opt(
        Id::Control,
        None,
        "control",
        Some("fd:ctl-fd[,ack-fd] or fifo:ctl-fifo[,ack-fifo]"),
        "Listen on ctl-fd descriptor for command to control measurement ('enable': enable events, 'disable': disable events).\n\t\t\t  Optionally send control command completion ('ack\\n') to ack-fd descriptor.\n\t\t\t  Alternatively, ctl-fifo / ack-fifo will be opened and used as ctl-fd / ack-fd.",
    ),
    opt(
        Id::MetricNoGroup,
        None,
        "metric-no-group",
        None,
        "don't group metric events, impacts multiplexing",
    ),
    opt(
        Id::MetricNoMerge,
        None,
        "metric-no-merge",
        None,
        "don't try to share events between metrics in a group",
    ),
    opt(
        Id::PerThread,
        None,
        "per-thread",
        None,
        "aggregate counts per thread",
    ),
    opt(
        Id::PerSocket,
        None,
        "per-socket",
        None,
        "aggregate counts per processor socket",
    ),
    opt(
        Id::PerDie,
        None,
        "per-die",
        None,
        "aggregate counts per processor die",
    ),
    opt(
        Id::PerCore,
        None,
        "per-core",
        None,
        "aggregate counts per physical processor core",
    ),
    opt(
        Id::PerNode,
        None,
        "per-node",
        None,
        "aggregate counts per numa node",
    ),
    opt(
        Id::Null,
        Some('n'),
        "null",
        None,
        "null run - dont start any counters",
    ),
    opt(
        Id::BigNum,
        Some('B'),
        "big-num",
        None,
        "print large numbers with thousands' separators",
    ),
    opt(
        Id::Timeout,
        None,
        "timeout",
        Some("n"),
        "stop workload and print counts after a timeout period in ms (>= 10ms)",
    ),
    opt(
        Id::IntervalCount,
        None,
        "interval-count",
        Some("n"),
        "print counts for fixed number of times",
    ),
    opt(
        Id::AllUser,
        None,
        "all-user",
        None,
        "Configure all used events to run in user space.",
    ),
    opt(
        Id::AllKernel,
        None,
        "all-kernel",
        None,
        "Configure all used events to run in kernel space.",
    ),
    opt(
        Id::VendorKernel,
        None,
        "vendor-kernel",
        Some("X.Y"),
        "not perf's: the vendor event and metric tables of this kernel's perf (6.12, 6.1)",
    ),
];

/// The parsed command line.
pub struct Options {
    pub events: String,
    /// Runs; 0 repeats until interrupted (perf's "forever").
    pub runs: usize,
    pub csv: Option<String>,
    pub output: Option<String>,
    pub append: bool,
    pub inherit: bool,
    /// `-v` given this many times (`-vv`: each attr opened, as perf prints it).
    pub verbose: u8,
    pub command: Vec<String>,
    /// Targets, aggregation and intervals (`-a -C -p -t --per-thread -A -I`).
    pub set: SetOptions,
    /// `-B` (refused with `-x`, as perf refuses it).
    pub big_num: bool,
    /// `-n`: no counters, only the times.
    pub null: bool,
    /// `--timeout MS`: the command is ended (SIGTERM) after this long.
    pub timeout_ms: Option<u64>,
    /// `--all-user` (exclude_kernel) / `--all-kernel` (exclude_user).
    pub all_user: bool,
    /// See `all_user`.
    pub all_kernel: bool,
    /// `-D MS`: 0 counts from exec, N > 0 from N ms after it, -1 from the
    /// first `enable` control command.
    pub delay_ms: i32,
    /// `--control fd:CTL[,ACK]` / `fifo:CTL[,ACK]`.
    pub control: Option<String>,
    /// `-M LIST`: metrics and metric groups (feature `vendor`).
    pub metrics: Option<String>,
    /// `--metric-no-group`.
    pub metric_no_group: bool,
    /// `--metric-no-merge`.
    pub metric_no_merge: bool,
    /// `--vendor-kernel X.Y` (ours): whose perf's tables.
    pub vendor_kernel: Option<String>,
    /// The `-e` lists, in order.
    event_list: Vec<String>,
}

const USAGE: &str = " Usage: perf stat [<options>] [<command>]";

/// One option's help line, as perf prints it.
fn help_line(o: &Opt) -> String {
    let mut head = match o.short {
        Some(c) => format!("    -{c}, --{}", o.long),
        None => format!("        --{}", o.long),
    };
    if let Some(v) = o.value {
        head.push_str(&format!(" <{v}>"));
    }
    if head.len() <= 24 {
        format!("{head:<26}{}", o.help)
    } else {
        format!("{head}\n{:26}{}", "", o.help)
    }
}

/// `head`, the usage line and every option's help; status 129.
fn full_usage(head: &str) -> ! {
    let mut text = format!("{head}\n{USAGE}\n\n");
    for o in OPTIONS {
        text.push_str(&help_line(o));
        text.push('\n');
    }
    eprintln!("{text}");
    std::process::exit(129)
}

/// perf's message for an unknown option: the whole help, status 129.
fn unknown(what: &str) -> ! {
    full_usage(&format!("  Error: {what}\n"))
}

/// perf's message for a bad value: that option's help, status 129.
fn bad_value(o: &Opt, what: &str) -> ! {
    let name = match o.short {
        Some(c) => format!("switch `{c}'"),
        None => format!("option `{}'", o.long),
    };
    eprintln!(" Error: {name} {what}\n{USAGE}\n\n{}\n", help_line(o));
    std::process::exit(129)
}

/// perf's answer to a `--control` value it cannot use (its callback
/// failed): the usage line and the option's help, status 129.
pub fn option_usage(long: &str) -> ! {
    let o = OPTIONS
        .iter()
        .find(|o| o.long == long)
        .expect("a known option");
    eprintln!("\n{USAGE}\n\n{}\n", help_line(o));
    std::process::exit(129)
}

/// A usage error that is no option's fault, status 129.
pub fn usage(msg: &str) -> ! {
    eprintln!(" Error: {msg}\n{USAGE}\n");
    std::process::exit(129)
}

impl Options {
    fn set(&mut self, o: &Opt, value: Option<String>) {
        let value = value.unwrap_or_default();
        match o.id {
            Id::Event => self.event_list.push(value),
            Id::FieldSeparator => self.csv = Some(value),
            Id::Repeat => match value.parse::<usize>() {
                Ok(n) if n <= 100 => self.runs = n,
                Ok(_) => bad_value(o, "expects a number up to 100"),
                Err(_) => bad_value(o, "expects a numerical value"),
            },
            Id::Output => self.output = Some(value),
            Id::Append => self.append = true,
            Id::NoInherit => self.inherit = false,
            Id::Verbose => self.verbose = self.verbose.saturating_add(1),
            Id::Help => full_usage(""),
            Id::AllCpus => self.set.all_cpus = true,
            Id::Cpu => self.set.cpus = Some(value),
            Id::Pid => self.set.pids = Some(value),
            Id::Tid => self.set.tids = Some(value),
            Id::PerThread => self.set.per_thread = true,
            Id::NoAggr => self.set.no_aggr = true,
            Id::PerSocket => self.set.per = Some(TopologyLevel::Socket),
            Id::PerDie => self.set.per = Some(TopologyLevel::Die),
            Id::PerCore => self.set.per = Some(TopologyLevel::Core),
            Id::PerNode => self.set.per = Some(TopologyLevel::Node),
            Id::Null => self.null = true,
            // perf's separators follow the locale (none in C): accepted.
            Id::BigNum => self.big_num = true,
            Id::Timeout => match value.parse::<u64>() {
                Ok(ms) if ms >= 10 => self.timeout_ms = Some(ms),
                Ok(_) => bad_value(o, "expects at least 10 (ms)"),
                Err(_) => bad_value(o, "expects a numerical value"),
            },
            Id::IntervalCount => match value.parse::<u64>() {
                Ok(n) => self.set.interval_count = Some(n),
                Err(_) => bad_value(o, "expects a numerical value"),
            },
            Id::AllUser => self.all_user = true,
            Id::AllKernel => self.all_kernel = true,
            Id::Delay => match value.parse::<i32>() {
                Ok(ms) if ms >= -1 => self.delay_ms = ms,
                _ => bad_value(o, "expects a numerical value"),
            },
            Id::Control => self.control = Some(value),
            // perf 6.1 joins repeated -M lists with `,`.
            Id::Metrics => match &mut self.metrics {
                Some(list) => {
                    list.push(',');
                    list.push_str(&value);
                }
                None => self.metrics = Some(value),
            },
            Id::MetricNoGroup => self.metric_no_group = true,
            Id::MetricNoMerge => self.metric_no_merge = true,
            Id::VendorKernel => self.vendor_kernel = Some(value),
            Id::IntervalPrint => match value.parse::<u64>() {
                Ok(ms) if ms >= 10 => self.set.interval_ms = Some(ms),
                Ok(_) => bad_value(o, "expects at least 10 (ms)"),
                Err(_) => bad_value(o, "expects a numerical value"),
            },
        }
    }
}

/// Parses `args` (without the program name).
pub fn parse(args: impl IntoIterator<Item = String>) -> Options {
    let mut opts = Options {
        events: String::new(),
        runs: 1,
        csv: None,
        output: None,
        append: false,
        inherit: true,
        verbose: 0,
        command: Vec::new(),
        set: SetOptions::default(),
        big_num: false,
        null: false,
        timeout_ms: None,
        all_user: false,
        all_kernel: false,
        delay_ms: 0,
        control: None,
        metrics: None,
        metric_no_group: false,
        metric_no_merge: false,
        vendor_kernel: None,
        event_list: Vec::new(),
    };
    let mut args = args.into_iter();
    let parsed = &mut opts;
    while let Some(arg) = args.next() {
        if arg == "--" {
            parsed.command.extend(args.by_ref());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            parsed.long(long, &mut args);
            continue;
        }
        let Some(shorts) = arg.strip_prefix('-').filter(|s| !s.is_empty()) else {
            parsed.command.push(arg);
            parsed.command.extend(args.by_ref());
            break;
        };
        parsed.shorts(shorts, &mut args);
    }
    if opts.command.is_empty() && !opts.set.has_target() {
        usage("no command given: this example counts a command it starts (perf stat [<options>] <command>)");
    }
    refuse_combinations(&opts);
    opts.events = if opts.null {
        String::new()
    } else if opts.event_list.is_empty() && opts.metrics.is_none() {
        DEFAULT_EVENTS.to_owned()
    } else {
        opts.event_list.join(",")
    };
    opts
}

impl Options {
    /// `--name` or `--name=value` (`long` without its dashes); a value
    /// not attached is the next argument.
    fn long(&mut self, long: &str, args: &mut impl Iterator<Item = String>) {
        let (name, attached) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (long, None),
        };
        let Some(o) = OPTIONS.iter().find(|o| o.long == name) else {
            unknown(&format!("unknown option `{name}'"));
        };
        let value = match (o.value, attached) {
            (None, Some(_)) => bad_value(o, "takes no value"),
            (None, None) => None,
            (Some(_), Some(v)) => Some(v),
            (Some(_), None) => Some(
                args.next()
                    .unwrap_or_else(|| bad_value(o, "requires a value")),
            ),
        };
        self.set(o, value);
    }

    /// Bundled switches (`shorts` without its dash); a value option takes
    /// the rest of the word, or the next argument.
    fn shorts(&mut self, shorts: &str, args: &mut impl Iterator<Item = String>) {
        for (i, c) in shorts.char_indices() {
            let Some(o) = OPTIONS.iter().find(|o| o.short == Some(c)) else {
                unknown(&format!("unknown switch `{c}'"));
            };
            if o.value.is_none() {
                self.set(o, None);
                continue;
            }
            let rest = &shorts[i + c.len_utf8()..];
            let value = if rest.is_empty() {
                args.next()
                    .unwrap_or_else(|| bad_value(o, "requires a value"))
            } else {
                rest.to_owned()
            };
            self.set(o, Some(value));
            break;
        }
    }
}

/// perf 6.1's refusals of `-B` with `-x` and of `--timeout` with `-I`:
/// its message, the options concerned, status 234 (-EINVAL).
fn refuse_combinations(opts: &Options) {
    if opts.big_num && opts.csv.is_some() {
        // perf 6.1: this message, the two options, status 234 (-EINVAL).
        eprintln!(
            "-B option not supported with -x\n\n{USAGE}\n\n    -B, --big-num         print large numbers with thousands' separators\n    -x, --field-separator <separator>\n                          print counts with custom separator"
        );
        std::process::exit(234);
    }
    let s = &opts.set;
    if opts.metrics.is_some() && s.per_thread {
        usage("-M: this example computes metrics for the whole count, per CPU and per core, die, socket or node (a command, -a, -C, -p, -t, -A, --per-*, each -I interval; not with --per-thread)");
    }
    if opts.timeout_ms.is_some() && opts.set.interval_ms.is_some() {
        // perf 6.1: the message, each option under its own usage line, 234.
        eprintln!(
            "timeout option is not supported with interval-print.\n\n{USAGE}\n\n        --timeout <n>     stop workload and print counts after a timeout period in ms (>= 10ms)\n\n{USAGE}\n\n    -I, --interval-print <n>\n                          print counts at regular interval in ms (overhead is possible for values <= 100ms)"
        );
        std::process::exit(234);
    }
}

/// The command line of this process.
pub fn options() -> Options {
    parse(std::env::args().skip(1))
}
