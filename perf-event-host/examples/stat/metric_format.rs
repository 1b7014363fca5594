//! perf 6.1's text of a metric (`generic_metric`, `print_metric_std`,
//! `print_metric_csv` of `tools/perf/util/stat-shadow.c` and
//! `stat-display.c`): pure functions, also included by the tests
//! (`tests/simulated/stat_metric_format.rs`).

// Without feature `vendor` the example computes no metric (and the tests
// that include this file have no such feature).
#![allow(dead_code)]

/// A metric's value as printed: its text formatted (`None`: perf could not
/// compute it and prints nothing) and its unit column.
pub struct Printed {
    pub value: Option<String>,
    pub unit: String,
}

/// The tool event an id names, and the factor that makes its count (ns,
/// µs) seconds, as perf's `prepare_metric` scales them.
pub fn tool_scale(id: &str) -> Option<f64> {
    match id {
        "duration_time" => Some(1e-9),
        "user_time" | "system_time" => Some(1e-6),
        _ => None,
    }
}

/// perf 6.1's `generic_metric` text: `%8.1f` and `UNIT  NAME` with a
/// `ScaleUnit` (`NAME_RUNTIME` for an expression with `?`), else `%8.2f`
/// and the name.
pub fn format_metric(
    name: &str,
    scale_unit: Option<(&str, bool)>,
    runtime: u32,
    value: Option<f64>,
) -> Printed {
    let (text, unit) = match scale_unit {
        Some((unit, has_runtime)) => {
            let label = if has_runtime {
                format!("{unit}  {name}_{runtime}")
            } else {
                format!("{unit}  {name}")
            };
            (value.map(|v| c_fixed(v, 8, 1)), label)
        }
        None => (value.map(|v| c_fixed(v, 8, 2)), name.to_owned()),
    };
    Printed { value: text, unit }
}

/// C's `%W.Pf`: `nan`, `-nan`, `inf` as printf writes them.
pub fn c_fixed(v: f64, width: usize, precision: usize) -> String {
    let text = if v.is_nan() {
        if v.is_sign_negative() { "-nan" } else { "nan" }.to_owned()
    } else if v.is_infinite() {
        if v < 0.0 { "-inf" } else { "inf" }.to_owned()
    } else {
        format!("{v:.precision$}")
    };
    format!("{text:>width$}")
}

/// A metric in perf 6.1's CSV (`print_metric_csv`): `SEP VALUE SEP UNIT`,
/// the value's leading blanks skipped and cut at its first character that
/// is no digit or `.` (so a negative or NaN value prints empty), the
/// unit's leading blanks skipped; `SEP SEP` when it could not be computed.
pub fn csv_metric(printed: &Printed, sep: &str) -> String {
    match &printed.value {
        None => format!("{sep}{sep}"),
        Some(text) => {
            let text = text.trim_start();
            let end = text
                .find(|c: char| !c.is_ascii_digit() && c != '.')
                .unwrap_or(text.len());
            format!("{sep}{}{sep}{}", &text[..end], printed.unit.trim_start())
        }
    }
}

/// A metric in perf 6.1's table (`print_metric_std`): ` # VALUE UNIT`, the
/// unit padded to the 35 columns of a metric; 35 blanks when it could not
/// be computed.
pub fn std_metric(printed: &Printed) -> String {
    match &printed.value {
        None => format!("{:35}", ""),
        Some(text) => {
            // printf's `%-*s` takes a negative width as its magnitude.
            let width = (35 - (3 + text.len() as isize) - 1).unsigned_abs();
            format!(" # {text} {:<width$}", printed.unit)
        }
    }
}
