//! The command line, parsed the way perf's parse-options reads it: short
//! options with the value attached (`-c100000`, `-F999`, `-ecpu-clock`) or
//! as the next word, flags clustered (`-ag`), long options with `=` or a
//! space, `--` before the command.

use std::time::Duration;

/// What is sampled.
pub enum Target {
    /// A command started by the tool (and its children).
    Command(Vec<String>),
    /// The threads of a running process.
    Pid(u32),
    /// Every task on every CPU, while a command runs (`-a -- CMD`), for
    /// `-d` seconds, or else until Ctrl-C / SIGTERM (as perf record).
    All(Option<Vec<String>>),
}

/// The options.
pub struct Args {
    pub events: Vec<String>,
    pub period: Option<u64>,
    pub freq: u64,
    pub duration: Option<Duration>,
    /// `-g` / `--call-graph fp`: PERF_SAMPLE_CALLCHAIN, the report with
    /// children totals.
    pub callchain: bool,
    /// `--folded FILE`: folded stacks (`comm;caller;callee count`) written
    /// to FILE (`-` for stdout, instead of the report); implies `-g`.
    pub folded: Option<String>,
    /// `-o FILE`: also write the recording as perf.data (`-` for perf's
    /// pipe format on stdout, instead of the report).
    pub output: Option<String>,
    /// `-i FILE`: report on a perf.data file (perf's or ours; `-` for a
    /// pipe-mode stream on stdin) instead of recording.
    pub input: Option<String>,
    pub target: Target,
    /// `-v` given this many times: `-v` prints the fallbacks taken (perf's
    /// warnings), `-vv` also each event's attr as opened, as perf prints it.
    pub verbose: u8,
    /// `-D/--delay MS`: 0 records from the start; N > 0 enables the events
    /// N ms after the command started; -1 leaves them disabled until an
    /// `enable` control command. With ranges, the first one's start.
    pub delay_ms: i32,
    /// `-D START-END,...`: the events are enabled in these windows (ms from
    /// the start) only, and the recording ends with the last one.
    pub delay_ranges: Vec<(u32, u32)>,
    /// `--control fd:CTL[,ACK]` / `fifo:CTL[,ACK]`: perf's control channel.
    pub control: Option<String>,
}

pub const USAGE: &str =
    "usage: sample [-v[v]] [-e EVENT]... [-c PERIOD | -F HZ] [-g] [--folded FILE] [-o FILE] \
                         [-D MS] [--control fd:CTL[,ACK] | --control fifo:CTL[,ACK]] \
                         (CMD ARGS | -i FILE | -a [-- CMD ARGS] | -p PID) [-d SECONDS]";

/// The options whose help perf record prints on a bad value, as `perf
/// record -h` prints them: (long name, help line).
const OPTION_HELP: [(&str, &str); 2] = [
    (
        "delay",
        "    -D, --delay <ms>      ms to wait before starting measurement after program start \
         (-1: start with events disabled), or ranges of time to enable events e.g. '-D 10-20,30-40'",
    ),
    (
        "control",
        "        --control <fd:ctl-fd[,ack-fd] or fifo:ctl-fifo[,ack-fifo]>\n                          \
         Listen on ctl-fd descriptor for command to control measurement ('enable': enable events, \
         'disable': disable events,\n\t\t\t  'snapshot': AUX area tracing snapshot).\n\t\t\t  \
         Optionally send control command completion ('ack\\n') to ack-fd descriptor.\n\t\t\t  \
         Alternatively, ctl-fifo / ack-fifo will be opened and used as ctl-fd / ack-fd.",
    ),
];

pub fn usage(why: &str) -> ! {
    eprintln!("sample: {why}\n{USAGE}");
    std::process::exit(129)
}

/// perf's answer to a value its option callback refused: a blank line,
/// the usage, a blank line and that option's help; status 129.
pub fn option_usage(long: &str) -> ! {
    let help = OPTION_HELP
        .iter()
        .find(|(name, _)| *name == long)
        .map_or("", |(_, help)| help);
    eprintln!("\n{USAGE}\n\n{help}");
    std::process::exit(129)
}

/// `-D`'s value as perf record 6.1 reads it (`evlist__parse_event_enable_time`):
/// a delay in ms (a whole number from -1 up, not 0), or else time ranges
/// `START-END[,START-END]...` (ms from the start, spaces allowed around
/// `-` and `,`, each range after the one before): the first range's start
/// as the delay, and the ranges. Anything else gets that option's help, as
/// perf prints it (`-D 0` included).
fn delay(v: &str) -> (i32, Vec<(u32, u32)>) {
    match v.parse::<i64>() {
        Ok(ms) if ms == -1 || (1..=i64::from(i32::MAX)).contains(&ms) => (ms as i32, Vec::new()),
        _ => match ranges(v) {
            Some(r) => (r[0].0 as i32, r),
            None => option_usage("delay"),
        },
    }
}

/// perf's `parse_event_enable_times`: `START - END` pairs separated by
/// commas, white space allowed around each part, END after START, each
/// START after the previous END.
fn ranges(v: &str) -> Option<Vec<(u32, u32)>> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for part in v.split(',') {
        let (start, end) = part.split_once('-')?;
        let num = |t: &str| -> Option<u32> {
            let t = t.trim();
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok())?
        };
        let (start, end) = (num(start)?, num(end)?);
        if end <= start || out.last().is_some_and(|&(_, prev)| start <= prev) {
            return None;
        }
        out.push((start, end));
    }
    (!out.is_empty()).then_some(out)
}

fn number<T: std::str::FromStr>(opt: &str, v: &str) -> T {
    v.parse()
        .unwrap_or_else(|_| usage(&format!("{opt}: '{v}' is not a valid number")))
}

/// Parses `words` (the arguments after the program name).
pub fn parse(words: &[String]) -> Args {
    let mut p = Parser {
        words,
        i: 0,
        a: Args {
            events: Vec::new(),
            period: None,
            freq: 4000,
            duration: None,
            callchain: false,
            folded: None,
            output: None,
            input: None,
            target: Target::All(None),
            verbose: 0,
            delay_ms: 0,
            delay_ranges: Vec::new(),
            control: None,
        },
        all: false,
        pid: None,
    };
    let mut command = Vec::new();
    while p.i < words.len() {
        let w = words[p.i].as_str();
        if w == "--" {
            command.extend(words[p.i + 1..].iter().cloned());
            break;
        }
        if let Some(long) = w.strip_prefix("--") {
            p.long(long);
        } else if let Some(cluster) = w.strip_prefix('-').filter(|c| !c.is_empty()) {
            p.cluster(cluster);
        } else {
            command.extend(words[p.i..].iter().cloned());
            break;
        }
        p.i += 1;
    }
    p.finish(command)
}

/// The words being read, and what they said so far.
struct Parser<'w> {
    words: &'w [String],
    /// The word being read.
    i: usize,
    a: Args,
    /// `-a`.
    all: bool,
    /// `-p PID`.
    pid: Option<u32>,
}

impl Parser<'_> {
    /// Takes the value of an option: the rest of the word (`attached`),
    /// or the next word.
    fn take(&mut self, attached: &str, opt: &str) -> String {
        if !attached.is_empty() {
            return attached.to_string();
        }
        self.i += 1;
        self.words
            .get(self.i)
            .cloned()
            .unwrap_or_else(|| usage(&format!("{opt} needs a value")))
    }

    /// `--name`, `--name=value` or `--name value` (`long` without its
    /// dashes).
    fn long(&mut self, long: &str) {
        let (name, attached) = long.split_once('=').unwrap_or((long, ""));
        let opt = format!("--{name}");
        match name {
            "event" => {
                let event = self.take(attached, &opt);
                self.a.events.push(event);
            }
            "count" => self.a.period = Some(number(&opt, &self.take(attached, &opt))),
            "freq" => self.a.freq = number(&opt, &self.take(attached, &opt)),
            "all-cpus" => self.all = true,
            "pid" => self.pid = Some(number(&opt, &self.take(attached, &opt))),
            "call-graph" => {
                let mode = self.take(attached, &opt);
                if mode != "fp" {
                    usage(&format!(
                        "--call-graph {mode}: only fp (frame pointers) here"
                    ));
                }
                self.a.callchain = true;
            }
            "folded" => {
                self.a.folded = Some(self.take(attached, &opt));
                self.a.callchain = true;
            }
            "output" => self.a.output = Some(self.take(attached, &opt)),
            "input" => self.a.input = Some(self.take(attached, &opt)),
            "verbose" => self.a.verbose = self.a.verbose.saturating_add(1),
            "delay" => (self.a.delay_ms, self.a.delay_ranges) = delay(&self.take(attached, &opt)),
            "control" => self.a.control = Some(self.take(attached, &opt)),
            "help" => usage("help"),
            _ => usage(&format!("unknown option {opt}")),
        }
    }

    /// Flags clustered after one dash (`-ag`); an option with a value takes
    /// the rest of the word (`-c100000`) or the next word, and ends the
    /// cluster.
    fn cluster(&mut self, cluster: &str) {
        for (at, flag) in cluster.char_indices() {
            let rest = &cluster[at + flag.len_utf8()..];
            let opt = format!("-{flag}");
            match flag {
                'a' => self.all = true,
                'g' => self.a.callchain = true,
                'e' => {
                    let event = self.take(rest, &opt);
                    self.a.events.push(event);
                }
                'c' => self.a.period = Some(number(&opt, &self.take(rest, &opt))),
                'F' => self.a.freq = number(&opt, &self.take(rest, &opt)),
                'p' => self.pid = Some(number(&opt, &self.take(rest, &opt))),
                'o' => self.a.output = Some(self.take(rest, &opt)),
                'i' => self.a.input = Some(self.take(rest, &opt)),
                'd' => {
                    let s: f64 = number(&opt, &self.take(rest, &opt));
                    self.a.duration = Some(Duration::from_secs_f64(s));
                }
                'v' => self.a.verbose = self.a.verbose.saturating_add(1),
                'D' => (self.a.delay_ms, self.a.delay_ranges) = delay(&self.take(rest, &opt)),
                'h' => usage("help"),
                _ => usage(&format!("unknown option {opt}")),
            }
            if matches!(flag, 'e' | 'c' | 'F' | 'p' | 'd' | 'o' | 'i' | 'D') {
                break;
            }
        }
    }

    /// The options read, with the target: exactly one of CMD, `-a`
    /// (with or without `-- CMD`) and `-p PID`, or none with `-i FILE`.
    fn finish(self, command: Vec<String>) -> Args {
        let (mut a, all, pid) = (self.a, self.all, self.pid);
        if a.input.is_some() {
            let recording = a.output.is_some() || a.delay_ms != 0 || a.control.is_some();
            if all || pid.is_some() || !command.is_empty() || recording {
                usage(
                    "-i FILE reports on a recording: no CMD, -a, -p, -o, -D or --control with it",
                );
            }
            return a;
        }
        a.target = match (all, pid, command.is_empty()) {
            (true, None, true) => Target::All(None),
            (true, None, false) => Target::All(Some(command)),
            (false, Some(p), true) => Target::Pid(p),
            (false, None, false) => Target::Command(command),
            _ => usage("give exactly one of CMD, -a [-- CMD], -p PID"),
        };
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Args {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn perf_idioms() {
        let a = p("-c100000 -ecpu-clock -ag -- sleep 1");
        assert_eq!(a.period, Some(100000));
        assert_eq!(a.events, ["cpu-clock"]);
        assert!(a.callchain);
        assert!(matches!(a.target, Target::All(Some(ref c)) if c == &["sleep", "1"]));
        let a = p("-F 999 -e task-clock --folded=out.txt ./hot 5");
        assert_eq!(a.freq, 999);
        assert_eq!(a.folded.as_deref(), Some("out.txt"));
        assert!(matches!(a.target, Target::Command(ref c) if c == &["./hot", "5"]));
        assert!(matches!(p("-p42").target, Target::Pid(42)));
        let a = p("-o - -c 1000 ./hot");
        assert_eq!(a.output.as_deref(), Some("-"));
        assert_eq!(p("-iperf.data").input.as_deref(), Some("perf.data"));
        let a = p("-D -1 --control fd:5,6 -e cpu-clock ./hot");
        assert_eq!(a.delay_ms, -1);
        assert_eq!(a.control.as_deref(), Some("fd:5,6"));
        assert_eq!(p("-D250 ./hot").delay_ms, 250);
        let a = p("--delay=10-20,30-40 --control=fifo:a,b ./hot");
        assert_eq!((a.delay_ms, a.delay_ranges), (10, vec![(10, 20), (30, 40)]));
        assert_eq!(p("-D 0-5 ./hot").delay_ranges, [(0, 5)]);
        assert_eq!(
            super::ranges(" 10 - 20 , 30-40"),
            Some(vec![(10, 20), (30, 40)])
        );
        for bad in ["20-10", "10-20,15-30", "10-", "abc", "10-20,", "1-2-3"] {
            assert_eq!(super::ranges(bad), None, "{bad}");
        }
    }

    /// The help printed for a bad `-D` / `--control` is `perf record -h`'s
    /// line for it (perf 6.1.187's text, tabs and all).
    #[test]
    fn option_help_is_perfs() {
        let help = |long| OPTION_HELP.iter().find(|(n, _)| *n == long).unwrap().1;
        assert!(help("delay").starts_with("    -D, --delay <ms>      ms to wait"));
        assert!(help("delay").ends_with("e.g. '-D 10-20,30-40'"));
        let control: Vec<&str> = help("control").lines().collect();
        assert_eq!(control.len(), 5);
        assert_eq!(
            control[0],
            "        --control <fd:ctl-fd[,ack-fd] or fifo:ctl-fifo[,ack-fifo]>"
        );
        assert!(control[1].starts_with(&format!("{:26}Listen on ctl-fd", "")));
        assert!(control[1].ends_with("'disable': disable events,"));
        assert_eq!(
            control[2],
            "\t\t\t  'snapshot': AUX area tracing snapshot)."
        );
        assert!(control[3].contains("('ack\\n') to ack-fd descriptor."));
    }
}
