//! metric.py's reading of a `MetricExpr`, which jevents compiles into perf
//! in place of the JSON's text: Python's evaluation folds the arithmetic
//! of numbers (`4 * 2` is `8`), then `Simplify()` drops what cannot change
//! the value (`x * 1`, `x + 0`, `0 * x` unless `x` names slots, an `if`
//! with a constant condition or equal branches).

use super::{format_number, Expr, ExprFunction, ExprOp};

/// metric.py's `Constant`: a number other than NaN (which Python reads as
/// an event named `NaN`).
fn constant(e: &Expr) -> Option<f64> {
    match e {
        Expr::Number(v) if !v.is_nan() => Some(*v),
        _ => None,
    }
}

/// A `Constant`'s `value` string is `'0'`.
fn is_zero_text(v: f64) -> bool {
    format_number(v) == "0"
}

/// Python's arithmetic on two numbers, where it succeeds (`|` `&` `^` of
/// integers only, no division by zero).
fn python_fold(op: ExprOp, a: f64, b: f64) -> Option<f64> {
    let ints = a.fract() == 0.0 && b.fract() == 0.0 && a.abs() < 9e15 && b.abs() < 9e15;
    Some(match op {
        ExprOp::Add => a + b,
        ExprOp::Sub => a - b,
        ExprOp::Mul => a * b,
        ExprOp::Div if b != 0.0 => a / b,
        ExprOp::Mod if b != 0.0 => {
            // Python's modulo takes the divisor's sign.
            let r = a % b;
            if r != 0.0 && (r < 0.0) != (b < 0.0) {
                r + b
            } else {
                r
            }
        }
        ExprOp::Less => f64::from(a < b),
        ExprOp::Greater => f64::from(a > b),
        ExprOp::Or if ints => ((a as i64) | (b as i64)) as f64,
        ExprOp::And if ints => ((a as i64) & (b as i64)) as f64,
        ExprOp::Xor if ints => ((a as i64) ^ (b as i64)) as f64,
        _ => return None,
    })
}

/// metric.py's `Equals`.
fn same(a: &Expr, b: &Expr) -> bool {
    match (a, b) {
        (Expr::Number(x), Expr::Number(y)) => format_number(*x) == format_number(*y),
        (Expr::Neg(x), Expr::Neg(y)) => same(x, y),
        (Expr::Binary(o1, l1, r1), Expr::Binary(o2, l2, r2)) => {
            o1 == o2 && same(l1, l2) && same(r1, r2)
        }
        (Expr::Function(f1, l1, r1), Expr::Function(f2, l2, r2)) => {
            f1 == f2 && same(l1, l2) && same(r1, r2)
        }
        (
            Expr::If {
                then: t1,
                cond: c1,
                otherwise: o1,
            },
            Expr::If {
                then: t2,
                cond: c2,
                otherwise: o2,
            },
        ) => same(c1, c2) && same(o1, o2) && same(t1, t2),
        _ => a == b,
    }
}

impl Expr {
    /// The expression as jevents compiles it into perf: what metric.py's
    /// `ParsePerfJson(text).Simplify()` makes of it. Numbers' arithmetic
    /// is folded (Python evaluates it while reading); then, as
    /// `Simplify()`: `0 + x`, `x + 0`, `0 | x`, `x | 0`, `1 * x`, `x * 1`
    /// are `x`; `x * 0` and `0 * x` are `0` (but not `0 * x` where `x` is
    /// an event whose name contains `slots`, which the tables use to ask
    /// for the slots event); an `if` with a constant condition is the
    /// branch it selects, one with equal branches is that branch;
    /// `d_ratio(a, 0)` of a constant `a` is `0`. (Some forms metric.py
    /// cannot fold and fails on, such as an operator on two constants that
    /// only simplification made constant; no table has one, and they are
    /// left as they are.)
    pub fn simplify(&self) -> Expr {
        self.python_eval().metric_py_simplify()
    }

    /// Python's evaluation of the rewritten text: arithmetic of numbers
    /// folded bottom up.
    fn python_eval(&self) -> Expr {
        match self {
            Expr::Neg(e) => {
                let e = e.python_eval();
                match constant(&e) {
                    Some(v) => Expr::Number(-v),
                    None => Expr::Neg(Box::new(e)),
                }
            }
            Expr::Binary(op, l, r) => {
                let (l, r) = (l.python_eval(), r.python_eval());
                if let (Some(a), Some(b)) = (constant(&l), constant(&r)) {
                    if let Some(v) = python_fold(*op, a, b) {
                        return Expr::Number(v);
                    }
                }
                Expr::Binary(*op, Box::new(l), Box::new(r))
            }
            Expr::Function(f, a, b) => {
                Expr::Function(*f, Box::new(a.python_eval()), Box::new(b.python_eval()))
            }
            Expr::If {
                then,
                cond,
                otherwise,
            } => Expr::If {
                then: Box::new(then.python_eval()),
                cond: Box::new(cond.python_eval()),
                otherwise: Box::new(otherwise.python_eval()),
            },
            _ => self.clone(),
        }
    }

    /// `Simplify()`.
    fn metric_py_simplify(&self) -> Expr {
        match self {
            Expr::Neg(e) => Expr::Neg(Box::new(e.metric_py_simplify())),
            Expr::Binary(op, l0, r0) => {
                let (l, r) = (l0.metric_py_simplify(), r0.metric_py_simplify());
                if constant(&l).is_some() && constant(&r).is_some() {
                    // metric.py's fold of two constants fails here.
                    return Expr::Binary(*op, Box::new(l), Box::new(r));
                }
                if let Some(a) = constant(l0) {
                    if matches!(op, ExprOp::Add | ExprOp::Or) && is_zero_text(a) {
                        return r;
                    }
                    let slots =
                        matches!(&r, Expr::Id(name) if name.to_lowercase().contains("slots"));
                    if *op == ExprOp::Mul && is_zero_text(a) && !slots {
                        return Expr::Number(0.0);
                    }
                    if *op == ExprOp::Mul && format_number(a) == "1" {
                        return r;
                    }
                }
                if let Some(b) = constant(&r) {
                    if matches!(op, ExprOp::Add | ExprOp::Or) && is_zero_text(b) {
                        return l;
                    }
                    if *op == ExprOp::Mul && is_zero_text(b) {
                        return Expr::Number(0.0);
                    }
                    // metric.py reads `self.rhs.value`: the unsimplified
                    // right side, a constant here in every table.
                    if *op == ExprOp::Mul && constant(r0).is_some_and(|v| format_number(v) == "1") {
                        return l;
                    }
                }
                Expr::Binary(*op, Box::new(l), Box::new(r))
            }
            Expr::Function(f, a, b) => {
                let (a, b) = (a.metric_py_simplify(), b.metric_py_simplify());
                if *f == ExprFunction::DRatio
                    && constant(&a).is_some()
                    && constant(&b).is_some_and(is_zero_text)
                {
                    return Expr::Number(0.0);
                }
                Expr::Function(*f, Box::new(a), Box::new(b))
            }
            Expr::If {
                then,
                cond,
                otherwise,
            } => {
                let cond = cond.metric_py_simplify();
                let then = then.metric_py_simplify();
                let otherwise = otherwise.metric_py_simplify();
                if let Some(c) = constant(&cond) {
                    return if is_zero_text(c) { otherwise } else { then };
                }
                if same(&then, &otherwise) {
                    return then;
                }
                Expr::If {
                    then: Box::new(then),
                    cond: Box::new(cond),
                    otherwise: Box::new(otherwise),
                }
            }
            _ => self.clone(),
        }
    }
}
