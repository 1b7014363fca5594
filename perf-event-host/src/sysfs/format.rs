//! `format/*` files: which bits of which config word a PMU term occupies.
//!
//! Each file under `/sys/bus/event_source/devices/<pmu>/format/` (since
//! Linux 3.4) holds a config word name, a colon and a comma-separated list of
//! bit ranges: `config:0-7`, `config1:1`, `config:0-7,32-35` (perf_event_open(2),
//! "Sysfs"). A value is packed into those bits lowest bit first, so the
//! value `0xabc` of `event=config:0-7,32-35` puts `0xbc` in bits 0-7 and `0xa`
//! in bits 32-35, the way the perf tool packs it.
//!
//! A format is stored as the word and a 64-bit mask: no allocation, and the
//! mask is all that packing needs.

use core::fmt;

/// The attr word a format term lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ConfigWord {
    /// `config` (Linux 2.6.31).
    Config,
    /// `config1` (Linux 2.6.39; shares storage with `bp_addr`, `kprobe_func`, `uprobe_path`).
    Config1,
    /// `config2` (Linux 2.6.39; shares storage with `bp_len`, `kprobe_addr`, `probe_offset`).
    Config2,
    /// `config3` (Linux 6.3).
    Config3,
    /// `config4` (Linux 7.0).
    Config4,
}

impl ConfigWord {
    /// Every word, in attr order.
    pub const ALL: [ConfigWord; 5] = [
        ConfigWord::Config,
        ConfigWord::Config1,
        ConfigWord::Config2,
        ConfigWord::Config3,
        ConfigWord::Config4,
    ];

    /// The name used in format files and event strings (`config1`).
    pub const fn name(self) -> &'static str {
        match self {
            ConfigWord::Config => "config",
            ConfigWord::Config1 => "config1",
            ConfigWord::Config2 => "config2",
            ConfigWord::Config3 => "config3",
            ConfigWord::Config4 => "config4",
        }
    }

    /// The word named `name` (`config`, `config1` .. `config4`).
    pub fn from_name(name: &str) -> Option<ConfigWord> {
        ConfigWord::ALL.into_iter().find(|w| w.name() == name)
    }

    /// Index 0 (`config`) to 4 (`config4`).
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// The five config words of an attr, as a PMU's terms fill them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ConfigWords(pub [u64; 5]);

impl ConfigWords {
    /// The value of one word.
    pub const fn get(&self, word: ConfigWord) -> u64 {
        self.0[word as usize]
    }

    /// Sets one word.
    pub fn set(&mut self, word: ConfigWord, value: u64) {
        self.0[word.index()] = value;
    }

    /// A dynamic PMU event of type `pmu_type` with these words.
    pub const fn event(&self, pmu_type: u32) -> perf_event_core::event::Event {
        perf_event_core::event::Event::Pmu {
            pmu_type,
            config: self.0[0],
            config1: self.0[1],
            config2: self.0[2],
            config3: self.0[3],
            config4: self.0[4],
        }
    }
}

/// A parsed format spec: the word and the bits of it the term occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    word: ConfigWord,
    mask: u64,
}

/// Why a format spec is malformed, and where in its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatSyntaxError {
    /// Byte offset in the spec text.
    pub position: usize,
    /// What is wrong there.
    pub what: FormatProblem,
}

/// What is wrong with a format spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FormatProblem {
    /// The text does not start with `config`, `config1` .. `config4`.
    UnknownWord,
    /// No `:` after the word.
    MissingColon,
    /// A bit number was expected.
    ExpectedBit,
    /// A bit number above 63.
    BitTooLarge,
    /// `hi-lo` with `hi < lo`.
    DescendingRange,
    /// A bit named by two ranges.
    Overlap {
        /// The first bit given twice.
        bit: u8,
    },
    /// Text after the last range (other than a final newline).
    Trailing,
}

impl fmt::Display for FormatSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: ", self.position)?;
        match self.what {
            FormatProblem::UnknownWord => {
                f.write_str("expected `config`, `config1`, `config2`, `config3` or `config4`")
            }
            FormatProblem::MissingColon => f.write_str("expected `:` after the config word"),
            FormatProblem::ExpectedBit => f.write_str("expected a bit number (0 to 63)"),
            FormatProblem::BitTooLarge => f.write_str("bit number above 63"),
            FormatProblem::DescendingRange => {
                f.write_str("range ends below its start (write `lo-hi`)")
            }
            FormatProblem::Overlap { bit } => write!(f, "bit {bit} is named twice"),
            FormatProblem::Trailing => {
                f.write_str("unexpected text after the ranges (expected `,` or the end)")
            }
        }
    }
}

impl std::error::Error for FormatSyntaxError {}

/// Reads a decimal bit number at `at`; returns it and the end offset.
fn bit_at(bytes: &[u8], at: usize) -> Result<(u8, usize), FormatSyntaxError> {
    let digits = bytes[at.min(bytes.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 {
        return Err(FormatSyntaxError {
            position: at,
            what: FormatProblem::ExpectedBit,
        });
    }
    let mut value: u32 = 0;
    for &b in &bytes[at..at + digits] {
        value = value.saturating_mul(10).saturating_add(u32::from(b - b'0'));
    }
    if value > 63 {
        return Err(FormatSyntaxError {
            position: at,
            what: FormatProblem::BitTooLarge,
        });
    }
    Ok((value as u8, at + digits))
}

impl Format {
    /// A format over `mask` of `word` (a zero mask has width 0 and packs
    /// only the value 0).
    pub const fn new(word: ConfigWord, mask: u64) -> Format {
        Format { word, mask }
    }

    /// Parses a format file's text: `config:0-7,32-35`, `config1:1`. One
    /// trailing newline (as sysfs writes it) is allowed; anything else out
    /// of place is an error with its byte position. Ranges may come in any
    /// order (packing follows bit order, as in the perf tool) but may not
    /// overlap.
    pub fn parse(text: &str) -> Result<Format, FormatSyntaxError> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let bytes = text.as_bytes();
        let word_len = bytes
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let word = ConfigWord::from_name(&text[..word_len]).ok_or(FormatSyntaxError {
            position: 0,
            what: FormatProblem::UnknownWord,
        })?;
        if bytes.get(word_len) != Some(&b':') {
            return Err(FormatSyntaxError {
                position: word_len,
                what: FormatProblem::MissingColon,
            });
        }
        let mut at = word_len + 1;
        let mut mask = 0u64;
        loop {
            let start = at;
            let (lo, end) = bit_at(bytes, at)?;
            at = end;
            let hi = if bytes.get(at) == Some(&b'-') {
                let (hi, end) = bit_at(bytes, at + 1)?;
                if hi < lo {
                    return Err(FormatSyntaxError {
                        position: at + 1,
                        what: FormatProblem::DescendingRange,
                    });
                }
                at = end;
                hi
            } else {
                lo
            };
            let range = (u64::MAX >> (63 - (hi - lo))) << lo;
            if mask & range != 0 {
                return Err(FormatSyntaxError {
                    position: start,
                    what: FormatProblem::Overlap {
                        bit: (mask & range).trailing_zeros() as u8,
                    },
                });
            }
            mask |= range;
            match bytes.get(at) {
                None => break,
                Some(b',') => at += 1,
                Some(_) => {
                    return Err(FormatSyntaxError {
                        position: at,
                        what: FormatProblem::Trailing,
                    })
                }
            }
        }
        Ok(Format { word, mask })
    }

    /// The config word.
    pub const fn word(&self) -> ConfigWord {
        self.word
    }

    /// The bits of the word the term occupies.
    pub const fn mask(&self) -> u64 {
        self.mask
    }

    /// How many bits wide a value may be.
    pub const fn width(&self) -> u32 {
        self.mask.count_ones()
    }

    /// The largest value that fits.
    pub const fn max_value(&self) -> u64 {
        match self.width() {
            64 => u64::MAX,
            w => (1u64 << w) - 1,
        }
    }

    /// `value` spread over the format's bits (lowest value bit into the
    /// lowest format bit), or `None` when it is wider than the format.
    pub const fn pack(&self, value: u64) -> Option<u64> {
        if value > self.max_value() {
            return None;
        }
        let mut out = 0u64;
        let mut mask = self.mask;
        let mut i = 0;
        while mask != 0 {
            let bit = mask & mask.wrapping_neg();
            if value >> i & 1 == 1 {
                out |= bit;
            }
            mask &= mask - 1;
            i += 1;
        }
        Some(out)
    }

    /// The value the format's bits hold in `word` (inverse of [`Format::pack`]).
    pub const fn unpack(&self, word: u64) -> u64 {
        let mut out = 0u64;
        let mut mask = self.mask;
        let mut i = 0;
        while mask != 0 {
            let bit = mask & mask.wrapping_neg();
            if word & bit != 0 {
                out |= 1 << i;
            }
            mask &= mask - 1;
            i += 1;
        }
        out
    }

    /// The bit ranges, ascending, as `(lo, hi)` pairs.
    pub fn ranges(&self) -> impl Iterator<Item = (u8, u8)> {
        let mut rest = self.mask;
        core::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let lo = rest.trailing_zeros();
            let run = (rest >> lo).trailing_ones();
            let hi = lo + run - 1;
            rest &= !((u64::MAX >> (64 - run)) << lo);
            Some((lo as u8, hi as u8))
        })
    }
}

/// Renders the spec as sysfs writes it (`config:0-7,32-35`).
impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:", self.word.name())?;
        for (i, (lo, hi)) in self.ranges().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if lo == hi {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}-{hi}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_man_page_example_and_spanning_ranges() {
        let f = Format::parse("config1:1,6-10,44\n").unwrap();
        assert_eq!(f.word(), ConfigWord::Config1);
        assert_eq!(f.mask(), 1 << 1 | 0x1f << 6 | 1 << 44);
        assert_eq!(f.width(), 7);
        assert_eq!(f.to_string(), "config1:1,6-10,44");
        let amd = Format::parse("config:0-7,32-35").unwrap();
        assert_eq!(amd.pack(0xabc), Some(0xbc | 0xa << 32));
        assert_eq!(amd.unpack(0xbc | 0xa << 32), 0xabc);
        assert_eq!(amd.pack(0x1000), None);
        let all = Format::parse("config:0-63").unwrap();
        assert_eq!(all.max_value(), u64::MAX);
        assert_eq!(all.pack(u64::MAX), Some(u64::MAX));
        let out_of_order = Format::parse("config2:32-35,0-7").unwrap();
        assert_eq!(out_of_order, Format::new(ConfigWord::Config2, amd.mask()));
    }

    #[test]
    fn malformed_specs_name_the_position() {
        let cases: &[(&str, usize, FormatProblem)] = &[
            ("", 0, FormatProblem::UnknownWord),
            ("config5:1", 0, FormatProblem::UnknownWord),
            ("event:1", 0, FormatProblem::UnknownWord),
            ("config", 6, FormatProblem::MissingColon),
            ("config 0-7", 6, FormatProblem::MissingColon),
            ("config:", 7, FormatProblem::ExpectedBit),
            ("config:0-", 9, FormatProblem::ExpectedBit),
            ("config:64", 7, FormatProblem::BitTooLarge),
            (
                "config:0-99999999999999999999",
                9,
                FormatProblem::BitTooLarge,
            ),
            ("config:7-0", 9, FormatProblem::DescendingRange),
            ("config:0-7,4-9", 11, FormatProblem::Overlap { bit: 4 }),
            ("config:1,1", 9, FormatProblem::Overlap { bit: 1 }),
            ("config:0-7,", 11, FormatProblem::ExpectedBit),
            ("config:0-7 ", 10, FormatProblem::Trailing),
            ("config:0-7\n\n", 10, FormatProblem::Trailing),
            ("config:-1", 7, FormatProblem::ExpectedBit),
        ];
        for &(text, position, what) in cases {
            assert_eq!(
                Format::parse(text),
                Err(FormatSyntaxError { position, what }),
                "{text:?}"
            );
        }
    }
}
