//! perf's metric expression parser (perf-event-vendor's `expr`) on
//! arbitrary text: it must never panic, errors must point inside the
//! input, and a parsed expression's rendering must parse back to the same
//! rendering and value; evaluating, finding ids and simplifying must not
//! panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perf_event_vendor::expr::{Expr, ExprInputs, ExprLiteral};
use perf_event_vendor::CpuidRule;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut env: ExprInputs = [("a", 3.0), ("x:k", 0.0), ("INST_RETIRED.ANY", f64::NAN)]
        .into_iter()
        .collect();
    env.set_literal(ExprLiteral::SmtOn, 1.0);
    env.set_literal(ExprLiteral::Slots, 4.0);
    env.set_cpuid(CpuidRule::X86, "GenuineIntel-6-55-4");
    match Expr::parse(text) {
        Ok(e) => {
            let shown = e.to_string();
            let again = Expr::parse(&shown).expect("the rendering parses");
            assert_eq!(again.to_string(), shown);
            match (e.eval(&env), again.eval(&env)) {
                (Ok(x), Ok(y)) => assert!(x == y || (x.is_nan() && y.is_nan())),
                (x, y) => assert_eq!(x.is_err(), y.is_err()),
            }
            let _ = e.ids();
            let _ = e.ids_with(&env);
            let simple = e.simplify();
            Expr::parse(&simple.to_string()).expect("the simplified rendering parses");
            let _ = e.with_runtime(7).names();
        }
        Err(err) => {
            assert!(err.offset() + err.len() <= text.len());
            assert!(text.is_char_boundary(err.offset()));
            let _ = err.to_string();
        }
    }
});
