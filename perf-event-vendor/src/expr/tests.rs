use super::*;
use crate::tables;
use crate::CpuidRule;
use std::collections::HashMap;

fn eval(text: &str, env: &ExprInputs) -> f64 {
    Expr::parse(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .eval(env)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn ids(text: &str, env: &ExprInputs) -> Vec<String> {
    Expr::parse(text).unwrap().ids_with(env).unwrap()
}

fn foo_bar() -> ExprInputs {
    [("FOO", 1.0), ("BAR", 2.0)].into_iter().collect()
}

/// perf's own test, `tools/perf/tests/expr.c` (Linux 6.12), case by case.
#[test]
fn perf_tests_expr_c() {
    let ctx = foo_bar();
    for (text, value) in [
        ("1+1", 2.0),
        ("FOO+BAR", 3.0),
        ("(BAR/2)%2", 1.0),
        ("1 - -4", 5.0),
        ("(FOO-1)*2 + (BAR/2)%2 - -4", 5.0),
        ("1-1 | 1", 1.0),
        ("1-1 & 1", 0.0),
        ("min(1,2) + 1", 2.0),
        ("max(1,2) + 1", 3.0),
        ("1+1 if 3*4 else 0", 2.0),
        ("100 if 1 else 200 if 1 else 300", 100.0),
        ("100 if 0 else 200 if 1 else 300", 200.0),
        ("100 if 1 else 200 if 0 else 300", 100.0),
        ("100 if 0 else 200 if 0 else 300", 300.0),
        ("1.1 + 2.1", 3.2),
        (".1 + 2.", 2.1),
        ("d_ratio(1, 2)", 0.5),
        ("d_ratio(2.5, 0)", 0.0),
        ("1.1 < 2.2", 1.0),
        ("2.2 > 1.1", 1.0),
        ("1.1 < 1.1", 0.0),
        ("2.2 > 2.2", 0.0),
        ("2.2 < 1.1", 0.0),
        ("1.1 > 2.2", 0.0),
        ("1.1e10 < 1.1e100", 1.0),
        ("1.1e2 > 1.1e-2", 1.0),
    ] {
        assert_eq!(eval(text, &ctx), value, "{text}");
    }
    assert!(eval("FOO/0", &ctx).is_nan());
    let e = Expr::parse("BAR/").unwrap_err();
    assert_eq!((e.offset(), e.found()), (4, "the end of the expression"));

    // expr__find_ids(..., "FOO", ...) removes FOO afterwards.
    let mut found = ids("FOO + BAR + BAZ + BOZO", &ExprInputs::new());
    found.retain(|id| id != "FOO");
    assert_eq!(found, ["BAR", "BAZ", "BOZO"]);

    let e = Expr::parse("EVENT1\\,param\\=?@ + EVENT2\\,param\\=?@").unwrap();
    assert_eq!(
        e.with_runtime(3).ids().unwrap(),
        ["EVENT1,param=3@", "EVENT2,param=3@"]
    );
    assert_eq!(
        ids("dash\\-event1 - dash\\-event2", &ExprInputs::new()),
        ["dash-event1", "dash-event2"]
    );

    for (literal, name) in [
        (ExprLiteral::SmtOn, "#smt_on"),
        (ExprLiteral::CoreWide, "#core_wide"),
    ] {
        for on in [0.0, 1.0] {
            let mut machine = ExprInputs::new();
            machine.set_literal(literal, on);
            let text = format!("EVENT1 if {name} else EVENT2");
            let want = if on == 1.0 { "EVENT1" } else { "EVENT2" };
            assert_eq!(ids(&text, &machine), [want], "{text} with {on}");
        }
    }
    let none = ExprInputs::new();
    assert!(ids("1.0 if EVENT1 > 100.0 else 1.0", &none).is_empty());
    assert!(ids("0 & EVENT1 > 0", &none).is_empty());
    assert!(ids("EVENT1 > 0 & 0", &none).is_empty());
    assert_eq!(ids("1 & EVENT1 > 0", &none), ["EVENT1"]);
    assert_eq!(ids("EVENT1 > 0 & 1", &none), ["EVENT1"]);
    assert!(ids("1 | EVENT1 > 0", &none).is_empty());
    assert!(ids("EVENT1 > 0 | 1", &none).is_empty());
    assert_eq!(ids("0 | EVENT1 > 0", &none), ["EVENT1"]);
    assert_eq!(ids("EVENT1 > 0 | 0", &none), ["EVENT1"]);

    // The topology literals read the machine's values.
    let mut machine = ExprInputs::new();
    for (l, v) in [
        (ExprLiteral::NumCpusOnline, 8.0),
        (ExprLiteral::NumCpus, 8.0),
        (ExprLiteral::NumCores, 4.0),
        (ExprLiteral::NumDies, 1.0),
        (ExprLiteral::NumPackages, 1.0),
        (ExprLiteral::SystemTscFreq, 2.1e9),
    ] {
        machine.set_literal(l, v);
        assert_eq!(eval(l.name(), &machine), v);
    }
    assert_eq!(
        Expr::parse("#num_cores").unwrap().eval(&ExprInputs::new()),
        Err(ExprEvalError::UnknownLiteral(ExprLiteral::NumCores))
    );

    assert_eq!(ids("source_count(EVENT1)", &none), ["EVENT1"]);

    let mut machine = foo_bar();
    machine.set_cpuid(CpuidRule::X86, "GenuineIntel-6-55-4");
    assert_eq!(eval("strcmp_cpuid_str(0x0)", &machine), 0.0);
    assert_eq!(
        eval("strcmp_cpuid_str(GenuineIntel\\-6\\-55\\-4)", &machine),
        1.0
    );
    machine.insert("cycles", 2.0);
    assert_eq!(eval("has_event(cycles)", &machine), 1.0);
    assert_eq!(eval("has_event(instructions)", &machine), 0.0);
}

#[test]
fn precedence_is_expr_y_s() {
    let none = ExprInputs::new();
    for (text, value) in [
        ("1 + 2 * 3", 7.0),
        ("(1 + 2) * 3", 9.0),
        ("8 / 4 / 2", 1.0),
        ("8 - 4 - 2", 2.0),
        ("-2 * 3", -6.0),
        ("- 2 + 3", 1.0),
        ("2 * -3", -6.0),
        ("1 < 2 + 3", 1.0),
        // `&` binds tighter than `^`, `^` than `|`: 1 | (0 ^ (1 & 0)).
        ("1 | 0 ^ 1 & 0", 1.0),
        ("0 ^ 1 & 0", 0.0),
        ("1 ^ 1 | 1", 1.0),
        // comparisons bind tighter than `&`, unlike Python.
        ("3 > 2 & 2 > 1", 1.0),
        // `if` is loosest and right-associative in its `else`.
        ("1 + 1 if 0 else 2 + 2", 4.0),
        ("7 % 4 * 2", 6.0),
        ("-7 % 4", -3.0),
        ("2 * 3 % 4", 2.0),
    ] {
        assert_eq!(eval(text, &none), value, "{text}");
    }
    // A trailing `if` inside a function's arguments needs parentheses.
    assert!(Expr::parse("min(1 if 1 else 2, 3)").is_err());
    assert_eq!(eval("min((1 if 1 else 2), 3)", &none), 1.0);
    let e = Expr::parse("a - (b - c)").unwrap();
    assert_eq!(e.to_string(), "a - (b - c)");
    assert_eq!(Expr::parse("(a - b) - c").unwrap().to_string(), "a - b - c");
    assert_eq!(Expr::parse("(a * b) + c").unwrap().to_string(), "a * b + c");
    assert_eq!(Expr::parse("-(a + b)").unwrap().to_string(), "-(a + b)");
}

#[test]
fn values_follow_expr_y() {
    let mut env: ExprInputs = [("A", 10.0), ("B", 0.0), ("N", f64::NAN)]
        .into_iter()
        .collect();
    env.set_literal(ExprLiteral::SmtOn, 1.0);
    // Division by zero is NaN, d_ratio by zero 0; an unknown id is NaN.
    assert!(eval("A / B", &env).is_nan());
    assert_eq!(eval("d_ratio(A, B)", &env), 0.0);
    assert_eq!(eval("d_ratio(A, 4)", &env), 2.5);
    assert!(eval("A + UNKNOWN", &env).is_nan());
    // NaN on either side of arithmetic or a comparison is NaN.
    assert!(eval("N < 1", &env).is_nan());
    assert!(eval("N * 0", &env).is_nan());
    // `|` and `&` with one finite side decide on it or pass the other side.
    assert_eq!(eval("N | 1", &env), 1.0);
    assert!(eval("N | 0", &env).is_nan());
    assert_eq!(eval("N & 0", &env), 0.0);
    assert_eq!(eval("A & 1", &env), 1.0);
    assert_eq!(eval("0 | A", &env), 1.0);
    assert!(eval("N ^ 1", &env).is_nan());
    // An `if` is false only on zero: NaN is true.
    assert_eq!(eval("1 if N else 2", &env), 1.0);
    assert_eq!(eval("1 if B else 2", &env), 2.0);
    assert_eq!(eval("A / 2 if #smt_on else A", &env), 5.0);
    assert_eq!(eval("A / 2 if #SMT_on else A", &env), 5.0);
    // min and max are C's ternaries: NaN loses to the right side.
    assert_eq!(eval("min(A, 3)", &env), 3.0);
    assert_eq!(eval("max(A, 3)", &env), 10.0);
    assert_eq!(eval("min(N, 3)", &env), 3.0);
    assert!(eval("min(3, N)", &env).is_nan());
    // `%` truncates; by zero it fails.
    assert_eq!(eval("7.9 % 2.5", &env), 1.0);
    assert_eq!(
        Expr::parse("A % B").unwrap().eval(&env),
        Err(ExprEvalError::ModuloByZero)
    );
    assert_eq!(
        Expr::parse("A % 0.5").unwrap().eval(&env),
        Err(ExprEvalError::ModuloByZero)
    );
    // Even in the branch not taken, as perf reduces both.
    assert!(Expr::parse("1 if 1 else A % 0")
        .unwrap()
        .eval(&env)
        .is_err());
    // source_count defaults to 1 for a known id.
    env.set_source_count("A", 4.0);
    assert_eq!(eval("source_count(A) + source_count(B)", &env), 5.0);
    assert!(eval("source_count(Z)", &env).is_nan());
    // NaN is a number.
    assert!(eval("NaN", &env).is_nan());
    // A plain map is an environment.
    let map: HashMap<String, f64> = [("X".to_owned(), 6.0)].into();
    assert_eq!(Expr::parse("X / 3").unwrap().eval(&map), Ok(2.0));
}

#[test]
fn ids_fold_as_perf_find_ids() {
    let none = ExprInputs::new();
    // A constant zero divisor drops the dividend's events.
    assert!(ids("A / 0", &none).is_empty());
    assert!(ids("d_ratio(A, 0)", &none).is_empty());
    assert!(ids("d_ratio(A, 1 - 1)", &none).is_empty());
    assert_eq!(ids("d_ratio(A, B)", &none), ["A", "B"]);
    // min/max always need both sides.
    assert_eq!(ids("min(A, 1) + max(2, B)", &none), ["A", "B"]);
    // Not knowing #smt_on, both branches and nothing of the condition.
    assert_eq!(ids("A if #smt_on else B", &none), ["A", "B"]);
    assert_eq!(ids("A if C > 1 else B", &none), ["A", "C", "B"]);
    assert_eq!(ids("A if 0 else B", &none), ["B"]);
    assert_eq!(ids("A if 2 else B", &none), ["A"]);
    // has_event on a machine that has the event or not.
    let mut machine = ExprInputs::new();
    machine.set_events(["A"]);
    assert_eq!(ids("A if has_event(A) else B", &machine), ["A"]);
    assert_eq!(
        ids("B if has_event(C) else 0", &machine),
        Vec::<String>::new()
    );
    assert_eq!(ids("A if has_event(A) else B", &none), ["A", "B"]);
    // Repeats once, in first-seen order.
    assert_eq!(ids("B + A * B - A", &none), ["B", "A"]);
    // `%` by a constant zero fails id finding too.
    assert!(Expr::parse("A % 0").unwrap().ids().is_err());
}

#[test]
fn the_scanner_is_expr_l_s() {
    let parse = |s: &str| Expr::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
    // Hexadecimal is a name; a number followed by letters is a name.
    assert_eq!(parse("0x410fd493"), Expr::Id("0x410fd493".into()));
    assert_eq!(parse("1e9x"), Expr::Id("1e9x".into()));
    assert_eq!(parse("1e9"), Expr::Number(1e9));
    assert_eq!(parse("2.5e-3"), Expr::Number(2.5e-3));
    // `1e+9` is the name `1e`, then `+ 9`; `1E9` a name.
    assert_eq!(parse("1e+9").to_string(), "1e + 9");
    assert_eq!(parse("1E9"), Expr::Id("1E9".into()));
    // Keywords only when nothing longer matches.
    assert_eq!(parse("ifx"), Expr::Id("ifx".into()));
    assert_eq!(parse("maximum"), Expr::Id("maximum".into()));
    assert!(parse("nan") == Expr::Id("nan".into()));
    // Escapes, `@` and modifiers.
    assert_eq!(
        parse("cpu@INST_RETIRED.ANY\\,cmask\\=1\\,edge@"),
        Expr::Id("cpu@INST_RETIRED.ANY,cmask=1,edge@".into())
    );
    assert_eq!(
        parse("CPU_CLK_UNHALTED.THREAD_P:k"),
        Expr::Id("CPU_CLK_UNHALTED.THREAD_P:k".into())
    );
    // Other characters are skipped: `a $ b` is two names (an error), and
    // an unescaped `=` splits a name.
    assert_eq!(parse("a\t+\n$b"), parse("a + b"));
    assert!(Expr::parse("a=b").is_err());
    // A backslash before another character is skipped too.
    assert!(Expr::parse("a\\.b").is_err());
    // Literals: known ones only, `-` is part of the literal.
    assert_eq!(parse("#slots"), Expr::Literal(ExprLiteral::Slots));
    let e = Expr::parse("#num_cpus-1").unwrap_err();
    assert!(e.found().contains("#num_cpus-1"), "{e}");
    assert!(Expr::parse("#NUM_CPUS").is_err());
    // Out of strtod's range.
    assert!(Expr::parse("1e999").is_err());
    assert!(Expr::parse("1e-320").is_err());
    assert_eq!(parse("0e-999"), Expr::Number(0.0));
}

#[test]
fn errors_say_where_and_what() {
    let e = Expr::parse("a + * b").unwrap_err();
    assert_eq!(e.offset(), 4);
    assert_eq!(e.found(), "`*`");
    assert!(e.expected().starts_with("an operand"), "{e}");
    let e = Expr::parse("a if b").unwrap_err();
    assert_eq!((e.offset(), e.expected()), (6, "`else` or an operator"));
    let e = Expr::parse("min(a b)").unwrap_err();
    assert_eq!(e.offset(), 6);
    let e = Expr::parse("source_count(1)").unwrap_err();
    assert!(e.expected().contains("a name"), "{e}");
    let e = Expr::parse("(a").unwrap_err();
    assert_eq!(e.found(), "the end of the expression");
    let text = Expr::parse("a + )").unwrap_err().to_string();
    assert!(
        text.contains("at byte 4") && text.ends_with("    ^"),
        "{text}"
    );
    // Nesting is bounded, not a stack overflow.
    let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(Expr::parse(&deep).is_err());
    let long = vec!["a"; 100_000].join(" + ");
    assert!(Expr::parse(&long).is_err());
    assert!(Expr::parse(&"-".repeat(100_000)).is_err());
    // The deepest the grammar accepts evaluates, prints and drops in a test
    // thread's stack, unoptimized.
    for text in [
        vec!["a"; MAX_HEIGHT].join(" + "),
        format!(
            "{}a{}",
            "(".repeat(MAX_HEIGHT - 1),
            ")".repeat(MAX_HEIGHT - 1)
        ),
        format!("{}a", "-".repeat(MAX_HEIGHT - 1)),
        format!(
            "{}a{}",
            "min(1, ".repeat(MAX_HEIGHT - 1),
            ")".repeat(MAX_HEIGHT - 1)
        ),
    ] {
        assert!(check_one(&text), "{}", &text[..20]);
    }
    assert!(Expr::parse(&vec!["a"; MAX_HEIGHT + 1].join(" + ")).is_err());
}

#[test]
fn simplify_is_metric_py_s() {
    let s = |t: &str| Expr::parse(t).unwrap().simplify().to_string();
    assert_eq!(s("a * 1000"), "a * 1e3");
    assert_eq!(s("a * 100000"), "a * 100e3");
    assert_eq!(s("a + 0.000001"), "a + 0.000001");
    assert_eq!(s("a * 0.0000001"), "a * 100e-9");
    assert_eq!(s("(1 + 2) * a"), "3 * a");
    assert_eq!(s("a - (2 - 3)"), "a - -1");
    assert_eq!(s("c * (0 * b)"), "0");
    assert_eq!(s("0 * TOPDOWN.SLOTS + a"), "0 * TOPDOWN.SLOTS + a");
    assert_eq!(s("1 * a + b * 1 + 0"), "a + b");
    assert_eq!(s("x if 1 < 2 else y"), "x");
    assert_eq!(s("x if #smt_on else x"), "x");
    assert_eq!(
        s("1 if a else 2 if b else 3"),
        "(1 if a else (2 if b else 3))"
    );
    assert_eq!(s("min(a, (b if c else d))"), "min(a, (b if c else d))");
    assert_eq!(s("d_ratio(1, 0)"), "0");
    assert_eq!(s("10 / 4"), "2.5");
    assert_eq!(s("1 / 3"), "0.3333333333333333");
    assert_eq!(s("0.1 + 0.2"), "0.30000000000000004");
    assert_eq!(s("12e20"), "1.2e21");
    assert_eq!(s("1e22"), "10e21");
}

#[test]
fn number_formatting_is_python_decimal_s() {
    for (v, text) in [
        (0.0, "0"),
        (1.0, "1"),
        (100.0, "100"),
        (1000.0, "1e3"),
        (123456.0, "123456"),
        (1e9, "1e9"),
        (1e16, "10e15"),
        (0.5, "0.5"),
        (0.001, "0.001"),
        (1e-6, "0.000001"),
        (1e-7, "100e-9"),
        (-2.0, "-2"),
        (2.5e-3, "0.0025"),
        (9.765625e-4, "0.0009765625"),
    ] {
        assert_eq!(format_number(v), text, "{v}");
    }
}

/// Every `MetricExpr` and `MetricThreshold` of every architecture's tables
/// parses, and its ids can be found.
#[test]
fn every_table_expression_parses() {
    let mut exprs = Vec::new();
    let mut thresholds = Vec::new();
    for t in tables::all() {
        for model in &t.tables.models {
            for m in &model.metrics {
                exprs.push(m.expr);
                thresholds.extend(m.threshold);
            }
        }
    }
    let (metrics, with_threshold) = (exprs.len(), thresholds.len());
    for list in [&mut exprs, &mut thresholds] {
        list.sort_unstable();
        list.dedup();
    }
    let mut failures = Vec::new();
    for text in exprs.iter().chain(&thresholds) {
        match Expr::parse(text) {
            Ok(e) => {
                if let Err(err) = e.ids().and(e.simplify().ids()) {
                    failures.push(format!("{text:?}: {err}"));
                }
                let again = Expr::parse(&e.to_string()).expect("its rendering parses");
                assert_eq!(again.to_string(), e.to_string());
            }
            Err(e) => failures.push(format!("{text:?}: {e}")),
        }
    }
    note(&format!(
        "parsed the expressions of {metrics} metrics ({} distinct) and {with_threshold} \
         thresholds ({} distinct): {} failures",
        exprs.len(),
        thresholds.len(),
        failures.len()
    ));
    assert!(exprs.len() > 2_000 && thresholds.len() > 150);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A line on stderr that libtest does not capture: what was checked.
fn note(line: &str) {
    use std::io::Write;
    let _ = std::io::stderr()
        .lock()
        .write_all(format!("{line}\n").as_bytes());
}

/// A deterministic generator (xorshift), counted in steps.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Pieces the generator strings together: every token kind, near misses
/// and bytes perf skips.
const PIECES: &[&str] = &[
    "a",
    "INST_RETIRED.ANY",
    "cpu@X\\,cmask\\=1@",
    "msr@tsc@",
    "x:k",
    "?",
    "0x1f",
    "1",
    "0",
    "2.5",
    ".5",
    "1.",
    "1e3",
    "1e-3",
    "1e+3",
    "1e999",
    "NaN",
    "nan",
    "#smt_on",
    "#SMT_ON",
    "#slots",
    "#bad",
    "#",
    "if",
    "else",
    "min",
    "max",
    "d_ratio",
    "source_count",
    "has_event",
    "strcmp_cpuid_str",
    "(",
    ")",
    ",",
    "|",
    "^",
    "&",
    "<",
    ">",
    "-",
    "+",
    "*",
    "/",
    "%",
    " ",
    "\\",
    "\\-",
    "=",
    "!",
    "é",
    "\n",
    "@",
    "tma_slots",
];

/// Checks the invariants on one input: no panic anywhere; an error points
/// inside the input; a parsed expression's rendering parses back to the
/// same rendering and value.
pub(crate) fn check_one(text: &str) -> bool {
    let mut env: ExprInputs = [("a", 3.0), ("x:k", 0.0), ("INST_RETIRED.ANY", f64::NAN)]
        .into_iter()
        .collect();
    env.set_literal(ExprLiteral::SmtOn, 1.0);
    env.set_literal(ExprLiteral::Slots, 4.0);
    env.set_cpuid(CpuidRule::X86, "GenuineIntel-6-55-4");
    match Expr::parse(text) {
        Ok(e) => {
            let shown = e.to_string();
            let again =
                Expr::parse(&shown).unwrap_or_else(|err| panic!("{text:?} -> {shown:?}: {err}"));
            assert_eq!(again.to_string(), shown, "{text:?}");
            let (v1, v2) = (e.eval(&env), again.eval(&env));
            match (v1, v2) {
                (Ok(x), Ok(y)) => assert!(x == y || (x.is_nan() && y.is_nan()), "{text:?}"),
                (x, y) => assert_eq!(x.is_err(), y.is_err(), "{text:?}"),
            }
            let _ = e.ids();
            let _ = e.ids_with(&env);
            let s = e.simplify();
            let _ = Expr::parse(&s.to_string()).unwrap_or_else(|err| panic!("{text:?}: {err}"));
            let _ = e.with_runtime(7).names();
            true
        }
        Err(err) => {
            assert!(err.offset() + err.len() <= text.len(), "{text:?}: {err:?}");
            assert!(text.is_char_boundary(err.offset()));
            let _ = err.to_string();
            false
        }
    }
}

#[test]
fn no_input_panics() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut parsed = 0;
    // Random token strings.
    for _ in 0..20_000 {
        let n = 1 + rng.below(12);
        let text: String = (0..n)
            .map(|_| PIECES[rng.below(PIECES.len())])
            .collect::<Vec<_>>()
            .join(if rng.below(2) == 0 { "" } else { " " });
        parsed += usize::from(check_one(&text));
    }
    // The tables' expressions, cut and with a piece inserted.
    let mut exprs: Vec<&str> = tables::all()
        .iter()
        .flat_map(|t| t.tables.models.iter().flat_map(|m| m.metrics.iter()))
        .flat_map(|m| std::iter::once(m.expr).chain(m.threshold))
        .collect();
    exprs.sort_unstable();
    exprs.dedup();
    for _ in 0..5_000 {
        let e = exprs[rng.below(exprs.len())];
        let mut at = rng.below(e.len() + 1);
        while !e.is_char_boundary(at) {
            at -= 1;
        }
        let text = match rng.below(3) {
            0 => e[..at].to_owned(),
            1 => format!(
                "{}{}{}",
                &e[..at],
                PIECES[rng.below(PIECES.len())],
                &e[at..]
            ),
            _ => format!("{}{}", &e[at..], &e[..at]),
        };
        parsed += usize::from(check_one(&text));
    }
    assert!(parsed > 2_000, "only {parsed} inputs parsed");
}

/// The fuzz target's seed corpus (`fuzz/corpus/metric_expr`, in the
/// repository) parses, seed by seed, under the same checks.
#[test]
fn fuzz_corpus_seeds_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/metric_expr");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        // The published package has no fuzz directory.
        assert!(
            !dir.parent().unwrap().exists(),
            "{} is missing",
            dir.display()
        );
        return;
    };
    let mut seeds = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(check_one(&text), "seed {} must parse", path.display());
        seeds += 1;
    }
    assert!(seeds >= 5, "{}: only {seeds} seeds", dir.display());
}

/// The README's example.
#[test]
fn readme_example() -> Result<(), Box<dyn std::error::Error>> {
    let expr = Expr::parse("INST_RETIRED.ANY / (CLKS / 2 if #smt_on else CLKS)")?;
    let mut inputs: ExprInputs = [("INST_RETIRED.ANY", 4e9), ("CLKS", 2e9)]
        .into_iter()
        .collect();
    inputs.set_literal(ExprLiteral::SmtOn, 1.0);
    assert_eq!(expr.ids_with(&inputs)?, ["INST_RETIRED.ANY", "CLKS"]);
    assert_eq!(expr.eval(&inputs)?, 4.0);
    Ok(())
}
