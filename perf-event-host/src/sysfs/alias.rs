//! `events/*` files: a PMU's named events ("aliases"), with the `.scale`,
//! `.unit`, `.per-pkg` and `.snapshot` files the kernel puts beside some.

use super::terms::{TermLexer, TermSyntaxError};
use core::fmt;

/// One `events/<name>` file (since Linux 3.4): a predefined event in the
/// PMU's format terms, e.g. Intel's `mem-loads` = `event=0xcd,umask=0x1,ldlat=3`.
#[derive(Clone, Debug, PartialEq)]
pub struct Alias {
    pub(crate) name: String,
    pub(crate) terms: String,
    pub(crate) scale: Option<Scale>,
    pub(crate) unit: Option<String>,
    pub(crate) per_pkg: bool,
    pub(crate) snapshot: bool,
}

/// `events/<name>.scale` (since Linux 3.14): multiply the raw count by this
/// factor to get [`Alias::unit`]s (RAPL energy counters:
/// `2.3283064365386962890625e-10` Joules per count).
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    /// The text of the file (trimmed), exact as the kernel wrote it.
    pub text: String,
    /// Its value.
    pub factor: f64,
}

impl Alias {
    /// An alias from its name and term text, checking the term syntax.
    pub fn new(name: &str, terms: &str) -> Result<Alias, TermSyntaxError> {
        let terms = terms.strip_suffix('\n').unwrap_or(terms);
        TermLexer::validate(terms)?;
        Ok(Alias {
            name: name.to_owned(),
            terms: terms.to_owned(),
            scale: None,
            unit: None,
            per_pkg: false,
            snapshot: false,
        })
    }

    /// With a scale factor (`.scale` file).
    pub fn with_scale(mut self, scale: Scale) -> Alias {
        self.scale = Some(scale);
        self
    }

    /// With a unit (`.unit` file).
    pub fn with_unit(mut self, unit: &str) -> Alias {
        self.unit = Some(unit.to_owned());
        self
    }

    /// Counted per package (what a `.per-pkg` file of 1 says; perf's JSON
    /// `PerPkg`).
    pub fn with_per_pkg(mut self, per_pkg: bool) -> Alias {
        self.per_pkg = per_pkg;
        self
    }

    /// The event's name (the file name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The term text (`event=0xcd,umask=0x1,ldlat=3`), trailing newline removed.
    pub fn terms_text(&self) -> &str {
        &self.terms
    }

    /// The terms, borrowed from the text (syntax was checked when the alias
    /// was read, so every item is `Ok`). Positions are offsets in the text.
    pub fn terms(&self) -> TermLexer<'_> {
        TermLexer::new(&self.terms, 0)
    }

    /// `.scale`: the factor that turns counts into [`Alias::unit`]s.
    pub fn scale(&self) -> Option<&Scale> {
        self.scale.as_ref()
    }

    /// `.unit` (since Linux 3.14): the unit of scaled counts (`Joules`, `MiB`).
    pub fn unit(&self) -> Option<&str> {
        self.unit.as_deref()
    }

    /// `.per-pkg` (since Linux 4.1): the count is per package; sum one CPU per socket.
    pub fn per_pkg(&self) -> bool {
        self.per_pkg
    }

    /// `.snapshot` (since Linux 4.1): the count is a current value, not a
    /// running total; do not subtract readings.
    pub fn snapshot(&self) -> bool {
        self.snapshot
    }
}

impl Scale {
    /// Parses a `.scale` file's text; `None` when it is not a finite number.
    pub fn parse(text: &str) -> Option<Scale> {
        let text = text.trim();
        let factor: f64 = text.parse().ok()?;
        factor.is_finite().then(|| Scale {
            text: text.to_owned(),
            factor,
        })
    }
}

/// `name = terms` as in `perf list`.
impl fmt::Display for Alias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}", self.name, self.terms)?;
        if let Some(s) = &self.scale {
            write!(f, " (x {}", s.text)?;
            if let Some(u) = &self.unit {
                write!(f, " {u}")?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}
