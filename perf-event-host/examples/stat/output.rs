//! The report, in perf 6.x's layouts: the table (value `%18`, unit `%-4s`,
//! name `%-32s`, metric ` # %8.3f %-23s`, `( +- x% )` with `-r`, the
//! elapsed / user / sys footer) and the CSV of `-x SEP`
//! (`value,unit,event,run,pct,metric,metric-unit`; `-r` adds the variance
//! after the event, as perf does).

use crate::metric_format::{self as metrics, Printed};
use crate::metrics::Metrics;
use crate::run::{Outcome, Run, Wanted};
use perf_event_core::read_format::Scaled;

/// Mean and the relative standard deviation of the mean (perf's "+-").
pub fn mean_rsd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 || mean == 0.0 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 100.0 * (var / n).sqrt() / mean)
}

/// One event over all runs.
#[derive(Clone, Copy)]
enum Summary {
    NotSupported,
    NotCounted,
    Counted {
        /// Mean scaled value.
        value: f64,
        /// Relative standard deviation of the mean, %.
        rsd: f64,
        /// Mean ns running.
        running: f64,
        /// Mean % of enabled time running.
        percent: f64,
    },
}

fn summarize(runs: &[Run], i: usize) -> Summary {
    let (mut values, mut running, mut percent) = (Vec::new(), Vec::new(), Vec::new());
    for run in runs {
        match run.outcomes[i] {
            Outcome::NotSupported => return Summary::NotSupported,
            Outcome::NotCounted => return Summary::NotCounted,
            Outcome::Counted(c) => {
                let value = match c.scaled() {
                    Scaled::Exact(v) | Scaled::NoTimes(v) => v as f64,
                    Scaled::Estimated { value, .. } => value as f64,
                    Scaled::Inconsistent { value, .. } => value as f64,
                    // Beyond u64: the estimate in floating point.
                    Scaled::TooLarge {
                        value,
                        enabled,
                        running,
                    } => value as f64 * enabled as f64 / running as f64,
                    Scaled::NotCounted => return Summary::NotCounted,
                };
                let (ena, run_ns) = (c.enabled.unwrap_or(0), c.running.unwrap_or(0));
                values.push(value);
                running.push(run_ns as f64);
                percent.push(if ena == 0 {
                    100.0
                } else {
                    100.0 * run_ns as f64 / ena as f64
                });
            }
        }
    }
    let (value, rsd) = mean_rsd(&values);
    let n = runs.len() as f64;
    Summary::Counted {
        // perf keeps the mean in its u64 count: whole units (ns, events).
        value: value.trunc(),
        rsd,
        running: running.iter().sum::<f64>() / n,
        percent: percent.iter().sum::<f64>() / n,
    }
}

/// Whether an event counts a clock as perf's shadow metrics see it
/// (`evsel__is_clock`: its attr is software cpu-clock or task-clock).
fn clock_attr(event: &Wanted) -> bool {
    let raw = event.attr.to_raw();
    !event.tool
        && raw.type_ == perf_event_core::sys::PERF_TYPE_SOFTWARE
        && [
            perf_event_core::sys::PERF_COUNT_SW_CPU_CLOCK,
            perf_event_core::sys::PERF_COUNT_SW_TASK_CLOCK,
        ]
        .contains(&(raw.config as u32))
        && raw.config >> 32 == 0
}

fn is_clock(name: &str) -> bool {
    matches!(base(name), "task-clock" | "cpu-clock")
}

/// The event's name without its modifiers (`task-clock:u` -> `task-clock`):
/// perf's derived metrics pair events by what they count, whatever the
/// privilege levels.
fn base(name: &str) -> &str {
    match name.rsplit_once(':') {
        Some((b, m)) if !m.is_empty() && m.chars().all(|c| "ukhpPGHIDSeW".contains(c)) => b,
        _ => name,
    }
}

/// The value as perf prints it: msec for the clocks, else a count
/// (two decimals when not whole, as for a scaled unit).
fn value_text(tool: bool, name: &str, v: f64) -> (String, &'static str) {
    if tool && name == "duration_time" {
        (format!("{v:.0}"), "ns")
    } else if is_clock(name) {
        (format!("{:.2}", v / 1e6), "msec")
    } else if v.fract() == 0.0 {
        (format!("{v:.0}"), "")
    } else {
        (format!("{v:.2}"), "")
    }
}

/// The derived metric of event `i`: (value text, unit), perf's shadow stats.
fn metric(
    events: &[Wanted],
    stats: &[Summary],
    i: usize,
    elapsed_ns: f64,
) -> Option<(String, &'static str)> {
    let counted = |name: &str| {
        events.iter().zip(stats).find_map(|(e, s)| match s {
            Summary::Counted { value, .. } if base(&e.name) == name => Some(*value),
            _ => None,
        })
    };
    let Summary::Counted { value: v, .. } = stats[i] else {
        return None;
    };
    let name = events[i].name.as_str();
    // perf 6.1's STAT_NSECS: the mean count of the events whose attr is a
    // clock (cpu-clock or task-clock, whatever their names: `-M`'s vendor
    // events over a PMU of the software type too).
    let clocks: Vec<f64> = events
        .iter()
        .zip(stats)
        .filter_map(|(e, s)| match s {
            Summary::Counted { value, .. } if clock_attr(e) => Some(*value),
            _ => None,
        })
        .collect();
    let clock = (!clocks.is_empty()).then(|| clocks.iter().sum::<f64>() / clocks.len() as f64);
    if clock_attr(&events[i]) {
        return Some((format!("{:8.3}", v / elapsed_ns.max(1.0)), "CPUs utilized"));
    }
    match base(name) {
        "instructions" => {
            let c = counted("cycles").filter(|c| *c > 0.0)?;
            Some((format!("{:7.2} ", v / c), "insn per cycle"))
        }
        "branch-misses" => {
            let b = counted("branches").filter(|b| *b > 0.0)?;
            Some((format!("{:7.2}%", 100.0 * v / b), "of all branches"))
        }
        "cycles" | "cpu-cycles" => {
            let ns = clock.filter(|c| *c > 0.0)?;
            Some((format!("{:8.3}", v / ns), "GHz"))
        }
        _ => {
            let ns = clock.filter(|c| *c > 0.0)?;
            let per_sec = v / (ns / 1e9);
            let (v, unit) = if per_sec >= 1e9 {
                (per_sec / 1e9, "G/sec")
            } else if per_sec >= 1e6 {
                (per_sec / 1e6, "M/sec")
            } else if per_sec >= 1e3 {
                (per_sec / 1e3, "K/sec")
            } else {
                (per_sec, "/sec")
            };
            Some((format!("{v:8.3}"), unit))
        }
    }
}

/// The whole report as text.
pub fn report(
    command: &[String],
    csv: Option<&str>,
    events: &[Wanted],
    metrics: &Metrics,
    runs: &[Run],
) -> String {
    let stats: Vec<Summary> = (0..events.len()).map(|i| summarize(runs, i)).collect();
    let times: Vec<f64> = runs.iter().map(|r| r.elapsed.as_secs_f64()).collect();
    let (elapsed, elapsed_rsd) = mean_rsd(&times);
    let lines = Lines {
        events,
        stats: &stats,
        elapsed_ns: elapsed * 1e9,
        repeated: runs.len() > 1,
        metrics,
    };
    let mut out = String::new();
    if let Some(sep) = csv {
        for i in 0..events.len() {
            out.push_str(&lines.csv(i, sep));
            out.push('\n');
        }
        return out;
    }
    let runs_note = if lines.repeated {
        format!(" ({} runs)", runs.len())
    } else {
        String::new()
    };
    out.push_str(&format!(
        "\n Performance counter stats for '{}'{runs_note}:\n\n",
        command.join(" ")
    ));
    for i in 0..events.len() {
        out.push_str(&lines.table(i));
        out.push('\n');
    }
    // perf -n: no event lines, and no blank line for them.
    if !events.is_empty() {
        out.push('\n');
    }
    out.push_str(&footer(runs, elapsed, elapsed_rsd));
    out
}

/// Each event's text of `run` (its line, then its `-M` metrics' lines,
/// `\n`-separated), as [`report`] prints them: the event-set mode's keyed
/// reports (`-A`) prefix each line.
pub fn event_texts(
    csv: Option<&str>,
    events: &[Wanted],
    metrics: &Metrics,
    run: &Run,
) -> Vec<String> {
    let runs = std::slice::from_ref(run);
    let stats: Vec<Summary> = (0..events.len()).map(|i| summarize(runs, i)).collect();
    let lines = Lines {
        events,
        stats: &stats,
        elapsed_ns: run.elapsed.as_secs_f64() * 1e9,
        repeated: false,
        metrics,
    };
    (0..events.len())
        .map(|i| match csv {
            Some(sep) => lines.csv(i, sep),
            None => lines.table(i),
        })
        .collect()
}

/// What the event lines are made of.
struct Lines<'a> {
    events: &'a [Wanted],
    /// Each event over all runs.
    stats: &'a [Summary],
    /// The mean elapsed time, ns.
    elapsed_ns: f64,
    /// More than one run (`-r`): the variance is shown.
    repeated: bool,
    /// `-M`'s metrics.
    metrics: &'a Metrics,
}

impl Lines<'_> {
    /// The `-M` metrics printed on event `i`'s line.
    fn metrics_of(&self, i: usize) -> Vec<Printed> {
        // perf 6.1's `prepare_metric` reads `duration_time` from its
        // wall-clock stats: the elapsed time, and in `-I` mode the
        // interval asked for (the printed count is the interval's length).
        let value = |j: usize| match self.stats[j] {
            _ if self.events[j].tool && self.events[j].name == "duration_time" => {
                Some(self.elapsed_ns)
            }
            Summary::Counted { value, .. } => Some(value),
            _ => None,
        };
        self.metrics.for_event(i, &value)
    }

    /// What follows an event's own metric (perf 6.1's
    /// `perf_stat__print_shadow_stats`): each `-M` metric of the line, the
    /// second and later on a new line (after the event's own metric, the
    /// first too); `shown` says whether the event printed a metric of its
    /// own. With none at all, `none` (the empty metric).
    fn metric_lines(
        &self,
        i: usize,
        shown: bool,
        new_line: &str,
        print: impl Fn(&Printed) -> String,
        none: &str,
    ) -> String {
        let mut out = String::new();
        let mut num = usize::from(shown);
        for printed in self.metrics_of(i) {
            if num > 0 {
                out.push_str(new_line);
            }
            num += 1;
            out.push_str(&print(&printed));
        }
        if num == 0 {
            out.push_str(none);
        }
        out
    }

    /// Event `i`'s CSV line (`-x SEP`): `value,unit,event,run,pct,metric,
    /// metric-unit`, `-r`'s variance after the event.
    fn csv(&self, i: usize, sep: &str) -> String {
        let name = &self.events[i].name;
        let variance = |rsd: f64| {
            if self.repeated {
                format!("{rsd:.2}%{sep}")
            } else {
                String::new()
            }
        };
        match self.stats[i] {
            Summary::Counted {
                value,
                rsd,
                running,
                percent,
            } => {
                let (v, unit) = value_text(self.events[i].tool, name, value);
                let own = metric(self.events, self.stats, i, self.elapsed_ns);
                let shown = own
                    .as_ref()
                    .map(|(m, u)| format!("{sep}{}{sep}{}", m.trim(), u.trim()))
                    .unwrap_or_default();
                // perf 6.1: three fields, `-r`'s variance or not (its `nfields`).
                let fields = 3;
                let new_line = format!("\n{}", sep.repeat(fields));
                let more = self.metric_lines(
                    i,
                    own.is_some(),
                    &new_line,
                    |p| metrics::csv_metric(p, sep),
                    &format!("{sep}{sep}"),
                );
                format!(
                    "{v}{sep}{unit}{sep}{name}{sep}{}{running:.0}{sep}{percent:.2}{shown}{more}",
                    variance(rsd)
                )
            }
            missing => {
                let (what, unit) = uncounted(missing, &self.events[i]);
                format!(
                    "{what}{sep}{unit}{sep}{name}{sep}{}0{sep}100.00{sep}{sep}",
                    variance(0.0)
                )
            }
        }
    }

    /// Event `i`'s line of the table: value, unit, name, metric, `-r`'s
    /// noise, the % running when multiplexed.
    fn table(&self, i: usize) -> String {
        let name = &self.events[i].name;
        let Summary::Counted {
            value,
            rsd,
            percent,
            ..
        } = self.stats[i]
        else {
            let (what, unit) = uncounted(self.stats[i], &self.events[i]);
            return format!("{what:>18} {unit:<4} {name:<32}{:28}", "");
        };
        let (v, unit) = value_text(self.events[i].tool, name, value);
        let own = metric(self.events, self.stats, i, self.elapsed_ns);
        let shown = own
            .as_ref()
            .map(|(m, u)| format!(" # {m:>8} {u:<23}"))
            .unwrap_or_default();
        let new_line = format!("\n{:49}", "");
        let more = self.metric_lines(
            i,
            own.is_some(),
            &new_line,
            metrics::std_metric,
            &format!("{:35}", ""),
        );
        let metric = format!("{shown}{more}");
        let noise = if self.repeated && rsd != 0.0 {
            format!("  ( +-{rsd:6.2}% )")
        } else {
            String::new()
        };
        let running = if percent < 99.995 {
            format!("  ({percent:.2}%)")
        } else {
            String::new()
        };
        format!("{v:>18} {unit:<4} {name:<32}{metric}{noise}{running}")
    }
}

/// What a line shows for an event without a count, and its unit (perf
/// keeps the clocks' unit on these lines too, and `duration_time`'s `ns`).
fn uncounted(summary: Summary, event: &Wanted) -> (&'static str, &'static str) {
    let what = match summary {
        Summary::NotSupported => "<not supported>",
        _ => "<not counted>",
    };
    let unit = if is_clock(&event.name) {
        "msec"
    } else if event.tool && event.name == "duration_time" {
        "ns"
    } else {
        ""
    };
    (what, unit)
}

/// The table's footer: the elapsed time (with `-r` its deviation), or
/// the elapsed, user and sys times of the one run.
fn footer(runs: &[Run], elapsed: f64, elapsed_rsd: f64) -> String {
    if runs.len() > 1 {
        let sd = elapsed * elapsed_rsd / 100.0;
        // perf shows two digits more than the deviation's first one.
        let precision = if sd > 1.0 || sd <= 0.0 {
            2
        } else {
            (-sd.log10()).ceil() as usize + 2
        };
        format!(
            " {elapsed:17.precision$} +- {sd:.precision$} seconds time elapsed  ( +-{elapsed_rsd:6.2}% )\n\n"
        )
    } else {
        let last = &runs[runs.len() - 1];
        format!(
            " {elapsed:17.9} seconds time elapsed\n\n {:17.9} seconds user\n {:17.9} seconds sys\n\n\n",
            last.user.as_secs_f64(),
            last.sys.as_secs_f64()
        )
    }
}
