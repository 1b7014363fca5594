//! Evaluation and id finding: expr.y's actions, which compute a value
//! (`expr__parse`) or the set of ids an expression needs with the constants
//! folded (`expr__find_ids`, `compute_ids`), in one walk.

use super::{Expr, ExprFunction, ExprLiteral, ExprOp};
use crate::CpuidRule;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

/// What an expression reads from outside: the values of its ids and the
/// machine's answers. Every method has a default that knows nothing.
///
/// [`ExprInputs`] is a ready one; a `HashMap<String, f64>` or
/// `BTreeMap<String, f64>` of values by id is one too.
pub trait ExprEnv {
    /// The value of an id: an event's count (by its metric id: the name as
    /// the expression writes it, `INST_RETIRED.ANY`, `cpu@X,cmask=1@`), a
    /// tool event's (`duration_time` in seconds, as perf scales it), or a
    /// referenced metric's value. `None`: not known, which perf reads as
    /// NaN. An event perf could not count is `Some(NaN)`.
    fn value(&self, id: &str) -> Option<f64> {
        let _ = id;
        None
    }

    /// `source_count(id)`: how many counters were aggregated into the id's
    /// value (perf's default and a tool event's: 1).
    fn source_count(&self, id: &str) -> Option<f64> {
        self.value(id).map(|_| 1.0)
    }

    /// A literal's value on the machine (`#smt_on`: 1 or 0, ...). `None`:
    /// not known; evaluation then fails ([`ExprEvalError::UnknownLiteral`],
    /// as perf's scanner fails on a literal it cannot compute) and id
    /// finding takes every branch it could select.
    fn literal(&self, literal: ExprLiteral) -> Option<f64> {
        let _ = literal;
        None
    }

    /// Whether the event `id` exists on the machine (perf's
    /// `has_event` while finding ids: the event parses). `None`: not known.
    /// While evaluating, `has_event(id)` is whether [`ExprEnv::value`]
    /// knows the id, as perf's is whether the id is among the counted ones.
    fn has_event(&self, id: &str) -> Option<bool> {
        let _ = id;
        None
    }

    /// `strcmp_cpuid_str(id)`: whether the machine's CPU id matches `id`
    /// (perf's `strcmp_cpuid_str(id, cpuid) == 0`; [`CpuidRule::matches`]).
    /// `None`: the CPU id is not known (perf's value is then NaN).
    fn cpuid_matches(&self, id: &str) -> Option<bool> {
        let _ = id;
        None
    }
}

impl<T: ExprEnv + ?Sized> ExprEnv for &T {
    fn value(&self, id: &str) -> Option<f64> {
        (**self).value(id)
    }
    fn source_count(&self, id: &str) -> Option<f64> {
        (**self).source_count(id)
    }
    fn literal(&self, literal: ExprLiteral) -> Option<f64> {
        (**self).literal(literal)
    }
    fn has_event(&self, id: &str) -> Option<bool> {
        (**self).has_event(id)
    }
    fn cpuid_matches(&self, id: &str) -> Option<bool> {
        (**self).cpuid_matches(id)
    }
}

/// Knows nothing: every id and literal unknown.
impl ExprEnv for () {}

impl<S: std::hash::BuildHasher> ExprEnv for HashMap<String, f64, S> {
    fn value(&self, id: &str) -> Option<f64> {
        self.get(id).copied()
    }
}

impl<S: std::hash::BuildHasher> ExprEnv for HashMap<&str, f64, S> {
    fn value(&self, id: &str) -> Option<f64> {
        self.get(id).copied()
    }
}

impl ExprEnv for BTreeMap<String, f64> {
    fn value(&self, id: &str) -> Option<f64> {
        self.get(id).copied()
    }
}

impl ExprEnv for BTreeMap<&str, f64> {
    fn value(&self, id: &str) -> Option<f64> {
        self.get(id).copied()
    }
}

/// Values by id and the machine's answers, filled in by the caller: the
/// counts read (by metric id), the literals of the machine, and optionally
/// its CPU id and the events it has.
///
/// ```
/// use perf_event_vendor::expr::{Expr, ExprInputs, ExprLiteral};
/// let mut inputs: ExprInputs = [("INST_RETIRED.ANY", 2e9), ("CPU_CLK_UNHALTED.THREAD", 1e9)]
///     .into_iter()
///     .collect();
/// inputs.set_literal(ExprLiteral::SmtOn, 0.0);
/// let ipc = Expr::parse("INST_RETIRED.ANY / CPU_CLK_UNHALTED.THREAD")?;
/// assert_eq!(ipc.eval(&inputs)?, 2.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct ExprInputs {
    values: HashMap<String, f64>,
    source_counts: HashMap<String, f64>,
    literals: BTreeMap<ExprLiteral, f64>,
    events: Option<HashSet<String>>,
    cpuid: Option<(CpuidRule, String)>,
}

impl ExprInputs {
    /// Knows nothing yet.
    pub fn new() -> ExprInputs {
        ExprInputs::default()
    }

    /// Sets an id's value; the value it had.
    pub fn insert(&mut self, id: impl Into<String>, value: f64) -> Option<f64> {
        self.values.insert(id.into(), value)
    }

    /// An id's value.
    pub fn get(&self, id: &str) -> Option<f64> {
        self.values.get(id).copied()
    }

    /// Sets an id's source count (1 unless set).
    pub fn set_source_count(&mut self, id: impl Into<String>, count: f64) {
        self.source_counts.insert(id.into(), count);
    }

    /// Sets a literal's value.
    pub fn set_literal(&mut self, literal: ExprLiteral, value: f64) {
        self.literals.insert(literal, value);
    }

    /// Sets the machine's CPU id (perf's `get_cpuid_str` form,
    /// `GenuineIntel-6-55-4`, `0x00000000410fd0c0`) and the rule that
    /// compares it (for the target: [`CpuidRule::TARGET`]).
    pub fn set_cpuid(&mut self, rule: CpuidRule, cpuid: impl Into<String>) {
        self.cpuid = Some((rule, cpuid.into()));
    }

    /// Sets the events the machine has, for `has_event` while ids are found
    /// (names as the expressions write them; unless set, unknown).
    pub fn set_events<I: IntoIterator<Item = S>, S: Into<String>>(&mut self, events: I) {
        self.events = Some(events.into_iter().map(Into::into).collect());
    }
}

impl<K: Into<String>> FromIterator<(K, f64)> for ExprInputs {
    fn from_iter<I: IntoIterator<Item = (K, f64)>>(iter: I) -> ExprInputs {
        let mut inputs = ExprInputs::new();
        inputs.extend(iter);
        inputs
    }
}

impl<K: Into<String>> Extend<(K, f64)> for ExprInputs {
    fn extend<I: IntoIterator<Item = (K, f64)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.values.insert(k.into(), v);
        }
    }
}

impl ExprEnv for ExprInputs {
    fn value(&self, id: &str) -> Option<f64> {
        self.values.get(id).copied()
    }
    fn source_count(&self, id: &str) -> Option<f64> {
        self.source_counts
            .get(id)
            .copied()
            .or_else(|| self.values.get(id).map(|_| 1.0))
    }
    fn literal(&self, literal: ExprLiteral) -> Option<f64> {
        self.literals.get(&literal).copied()
    }
    fn has_event(&self, id: &str) -> Option<bool> {
        self.events.as_ref().map(|e| e.contains(id))
    }
    fn cpuid_matches(&self, id: &str) -> Option<bool> {
        self.cpuid
            .as_ref()
            .map(|(rule, cpuid)| rule.matches(id, cpuid))
    }
}

/// Why perf's parser fails on an expression that parses: it computes
/// literals and folds constants while it reads.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExprEvalError {
    /// A literal whose value is not known ([`ExprEnv::literal`]); perf's
    /// scanner fails on a literal it cannot compute.
    UnknownLiteral(ExprLiteral),
    /// `%` by zero (perf aborts the parse), or by a value that truncates to
    /// zero (where perf's integer division traps).
    ModuloByZero,
}

impl fmt::Display for ExprEvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExprEvalError::UnknownLiteral(l) => {
                write!(f, "the value of {} on this machine is not known", l.name())
            }
            ExprEvalError::ModuloByZero => f.write_str("`%` by zero"),
        }
    }
}

impl std::error::Error for ExprEvalError {}

/// A value with, while ids are found, the ids it needs (`struct ids`; no
/// ids is perf's NULL set). While finding ids, NaN is perf's BOTTOM: any
/// value.
struct Val {
    val: f64,
    ids: Option<Vec<String>>,
}

impl Val {
    fn constant(val: f64) -> Val {
        Val { val, ids: None }
    }
}

/// `is_const`: a known value while finding ids.
fn is_const(v: f64) -> bool {
    v.is_finite()
}

/// `ids__union`, keeping the order in which ids first appear.
fn union_ids(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    match (a, b) {
        (None, b) => b,
        (a, None) => a,
        (Some(mut a), Some(b)) => {
            for id in b {
                if !a.contains(&id) {
                    a.push(id);
                }
            }
            Some(a)
        }
    }
}

/// `union_expr`: BOTTOM with both sets.
fn union(a: Val, b: Val) -> Val {
    Val {
        val: f64::NAN,
        ids: union_ids(a.ids, b.ids),
    }
}

/// C's `(long)` of a double as x86-64 computes it (`cvttsd2si`): NaN and
/// values out of range become `LONG_MIN`.
fn c_long(v: f64) -> i64 {
    // 2^63: the first double out of range.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if !(-LIMIT..LIMIT).contains(&v) {
        i64::MIN
    } else {
        v as i64
    }
}

fn is_zero(v: f64) -> bool {
    v == 0.0
}

impl Expr {
    /// The expression's value, as perf's `expr__parse` computes it:
    /// an unknown id is NaN; `a / 0` is NaN, `d_ratio(a, 0)` is 0;
    /// arithmetic and `<` `>` with a NaN side are NaN; `|` `&` `^` are 1
    /// or 0 when both sides are finite (`a | b` with `a` a finite zero is
    /// `b` itself, ...); `c` of an `if` is false only when zero (NaN is
    /// true); `min`/`max` are C's `a < b ? a : b`/`a > b ? a : b`.
    pub fn eval(&self, env: &(impl ExprEnv + ?Sized)) -> Result<f64, ExprEvalError> {
        Ok(self.run(&Dyn(&env), false)?.val)
    }

    /// The ids the expression reads, as perf's `expr__find_ids` finds them
    /// knowing nothing of the machine: every branch of an `if` whose
    /// condition is not a constant, but not the other side of a constant
    /// `0 & x`, `1 | x`, `x / 0`, `d_ratio(x, 0)`, nor of an `if` whose two
    /// values are one constant. Metrics referenced by name are ids too.
    /// In the order they first appear.
    pub fn ids(&self) -> Result<Vec<String>, ExprEvalError> {
        self.ids_with(&())
    }

    /// The ids as perf's `expr__find_ids` finds them on the machine `env`
    /// describes: its literals (`#smt_on`, ...), `has_event` and
    /// `strcmp_cpuid_str` are constants then, and fold the expression as
    /// perf folds it (`a if #smt_on else b` needs one of the two).
    pub fn ids_with(&self, env: &(impl ExprEnv + ?Sized)) -> Result<Vec<String>, ExprEvalError> {
        Ok(self.run(&Dyn(&env), true)?.ids.unwrap_or_default())
    }

    /// expr.y's actions; `compute` is perf's `compute_ids`.
    fn run(&self, env: &Dyn<'_>, compute: bool) -> Result<Val, ExprEvalError> {
        Ok(match self {
            Expr::Number(v) => Val::constant(*v),
            Expr::Literal(l) => match env.0.literal(*l) {
                Some(v) if !v.is_nan() => Val::constant(v),
                _ if compute => Val::constant(f64::NAN),
                _ => return Err(ExprEvalError::UnknownLiteral(*l)),
            },
            Expr::Id(id) | Expr::SourceCount(id) if compute => Val {
                val: f64::NAN,
                ids: Some(vec![id.clone()]),
            },
            Expr::Id(id) => Val::constant(env.0.value(id).unwrap_or(f64::NAN)),
            Expr::SourceCount(id) => Val::constant(env.0.source_count(id).unwrap_or(f64::NAN)),
            Expr::HasEvent(id) => Val::constant(if compute {
                env.0.has_event(id).map_or(f64::NAN, f64::from)
            } else {
                f64::from(env.0.value(id).is_some())
            }),
            Expr::StrcmpCpuidStr(id) => {
                Val::constant(env.0.cpuid_matches(id).map_or(f64::NAN, f64::from))
            }
            Expr::Neg(e) => {
                let v = e.run(env, compute)?;
                Val {
                    val: -v.val,
                    ids: v.ids,
                }
            }
            Expr::Binary(op, l, r) => {
                let (l, r) = (l.run(env, compute)?, r.run(env, compute)?);
                binary(*op, l, r, compute)?
            }
            Expr::Function(f, a, b) => {
                let (a, b) = (a.run(env, compute)?, b.run(env, compute)?);
                match f {
                    ExprFunction::DRatio if is_zero(b.val) => Val::constant(0.0),
                    ExprFunction::DRatio if !compute || (is_const(a.val) && is_const(b.val)) => {
                        Val::constant(a.val / b.val)
                    }
                    _ if compute => union(a, b),
                    ExprFunction::Min => Val::constant(if a.val < b.val { a.val } else { b.val }),
                    ExprFunction::Max => Val::constant(if a.val > b.val { a.val } else { b.val }),
                    ExprFunction::DRatio => unreachable!("handled above"),
                }
            }
            Expr::If {
                then,
                cond,
                otherwise,
            } => {
                // bison reduces all three before the rule's action.
                let then = then.run(env, compute)?;
                let cond = cond.run(env, compute)?;
                let otherwise = otherwise.run(env, compute)?;
                if is_zero(cond.val) {
                    otherwise
                } else if !compute || is_const(cond.val) {
                    then
                } else if then.val == otherwise.val {
                    Val::constant(then.val)
                } else {
                    union(then, union(cond, otherwise))
                }
            }
        })
    }
}

/// An environment behind a reference, so that `run` is not generic.
struct Dyn<'a>(&'a dyn ExprEnvDyn);

/// [`ExprEnv`] as a trait object (for unsized callers too).
trait ExprEnvDyn {
    fn value(&self, id: &str) -> Option<f64>;
    fn source_count(&self, id: &str) -> Option<f64>;
    fn literal(&self, literal: ExprLiteral) -> Option<f64>;
    fn has_event(&self, id: &str) -> Option<bool>;
    fn cpuid_matches(&self, id: &str) -> Option<bool>;
}

impl<T: ExprEnv + ?Sized> ExprEnvDyn for T {
    fn value(&self, id: &str) -> Option<f64> {
        ExprEnv::value(self, id)
    }
    fn source_count(&self, id: &str) -> Option<f64> {
        ExprEnv::source_count(self, id)
    }
    fn literal(&self, literal: ExprLiteral) -> Option<f64> {
        ExprEnv::literal(self, literal)
    }
    fn has_event(&self, id: &str) -> Option<bool> {
        ExprEnv::has_event(self, id)
    }
    fn cpuid_matches(&self, id: &str) -> Option<bool> {
        ExprEnv::cpuid_matches(self, id)
    }
}

/// The binary operators' actions.
fn binary(op: ExprOp, l: Val, r: Val, compute: bool) -> Result<Val, ExprEvalError> {
    let (a, b) = (l.val, r.val);
    Ok(match op {
        ExprOp::Or | ExprOp::And => {
            let or = op == ExprOp::Or;
            // `|`: a known zero side gives the other side; a known
            // non-zero one gives 1. `&` the other way round.
            let decides = |v: f64| is_zero(v) != or;
            if is_const(a) && is_const(b) {
                let v = if or {
                    !(is_zero(a) && is_zero(b))
                } else {
                    !is_zero(a) && !is_zero(b)
                };
                Val::constant(f64::from(v))
            } else if is_const(a) {
                if decides(a) {
                    Val::constant(f64::from(or))
                } else {
                    r
                }
            } else if is_const(b) {
                if decides(b) {
                    Val::constant(f64::from(or))
                } else {
                    l
                }
            } else {
                union(l, r)
            }
        }
        ExprOp::Xor => {
            if is_const(a) && is_const(b) {
                Val::constant(f64::from(is_zero(a) != is_zero(b)))
            } else {
                union(l, r)
            }
        }
        ExprOp::Less | ExprOp::Greater | ExprOp::Add | ExprOp::Sub | ExprOp::Mul => {
            // BINARY_OP
            if !compute || (is_const(a) && is_const(b)) {
                Val::constant(if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    match op {
                        ExprOp::Less => f64::from(a < b),
                        ExprOp::Greater => f64::from(a > b),
                        ExprOp::Add => a + b,
                        ExprOp::Sub => a - b,
                        _ => a * b,
                    }
                })
            } else {
                union(l, r)
            }
        }
        ExprOp::Div => {
            if is_zero(b) {
                Val::constant(f64::NAN)
            } else if !compute || (is_const(a) && is_const(b)) {
                Val::constant(a / b)
            } else {
                union(l, r)
            }
        }
        ExprOp::Mod => {
            if is_zero(b) {
                return Err(ExprEvalError::ModuloByZero);
            } else if !compute || (is_const(a) && is_const(b)) {
                let (x, y) = (c_long(a), c_long(b));
                if y == 0 {
                    return Err(ExprEvalError::ModuloByZero);
                }
                Val::constant(x.wrapping_rem(y) as f64)
            } else {
                union(l, r)
            }
        }
    })
}
