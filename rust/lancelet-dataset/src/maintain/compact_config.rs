//! Compaction defaults from the table config: pylance 14 reads the keys
//! `lance.compaction.<option>` ([`CONFIG_KEYS`]) for every option of `compact_files` the
//! caller did not give. [`Dataset::compaction_options`] resolves an option as the
//! caller's value, else the config key's, else the built-in default
//! ([`CompactionOptions::default`]).
//!
//! As in pylance, every key present is checked, even when the caller gives the option
//! (`Invalid value for lance.compaction.batch_size: 'x' (expected a non-negative
//! integer)`); integers are plain digits, booleans `true`/`false` in any case. Keys this
//! crate only accepts for compatibility (`max_rows_per_group`, `compaction_mode`...) are
//! checked but do not change the result. Unknown `lance.compaction.*` keys are ignored.
//!
//! ```no_run
//! # async fn demo(ds: lancelet_dataset::Dataset) -> lancelet_dataset::Result<()> {
//! use lancelet_dataset::maintain::compact_config::CompactionArgs;
//! // The target from `lance.compaction.target_rows_per_fragment` when set, else 1M rows.
//! let opts = ds.compaction_options(&CompactionArgs::default())?;
//! let (ds, metrics) = ds.compact_files(&opts).await?;
//! # Ok(()) }
//! ```

use std::collections::HashMap;

use crate::maintain::compact::CompactionOptions;
use crate::{Dataset, Error, Result};

/// The prefix of compaction config keys.
pub(crate) const PREFIX: &str = "lance.compaction.";

/// How a config value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A non-negative integer, digits only.
    Count,
    /// `true` or `false`, in any case.
    Flag,
    /// A float (pylance does not check its range when it comes from the config).
    Fraction,
    /// One of `reencode`, `try_binary_copy`, `force_binary_copy`.
    Mode,
    /// A Lance file version (`2.0`, `2.1`, `stable`...).
    FileVersion,
}

/// The config keys pylance 14 reads (after [`PREFIX`]) and how each is read.
pub(crate) const CONFIG_KEYS: [&str; 13] = [
    "target_rows_per_fragment",
    "max_rows_per_group",
    "max_bytes_per_file",
    "materialize_deletions",
    "materialize_deletions_threshold",
    "defer_index_remap",
    "batch_size",
    "compaction_mode",
    "binary_copy_read_batch_bytes",
    "max_source_fragments",
    "max_source_rows",
    "max_source_bytes",
    "data_storage_version",
];

fn kind(option: &str) -> Kind {
    match option {
        "materialize_deletions" | "defer_index_remap" => Kind::Flag,
        "materialize_deletions_threshold" => Kind::Fraction,
        "compaction_mode" => Kind::Mode,
        "data_storage_version" => Kind::FileVersion,
        _ => Kind::Count,
    }
}

/// A checked config value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Count(u64),
    Flag(bool),
    Fraction(f64),
    /// Checked, but not used by this crate.
    Other,
}

fn parse(option: &str, raw: &str) -> Result<Value> {
    let bad = |expected: &str| {
        Error::InvalidArgument(format!(
            "Invalid value for {PREFIX}{option}: {raw:?} (expected {expected})"
        ))
    };
    match kind(option) {
        Kind::Count => {
            if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("a non-negative integer"));
            }
            raw.parse().map(Value::Count).map_err(|_| bad("a non-negative integer"))
        }
        Kind::Flag => match raw.to_ascii_lowercase().as_str() {
            "true" => Ok(Value::Flag(true)),
            "false" => Ok(Value::Flag(false)),
            _ => Err(bad("'true' or 'false'")),
        },
        Kind::Fraction => raw
            .parse::<f64>()
            .ok()
            .filter(|v| !v.is_nan())
            .map(Value::Fraction)
            .ok_or_else(|| bad("a float between 0.0 and 1.0")),
        Kind::Mode => match raw {
            "reencode" | "try_binary_copy" | "force_binary_copy" => Ok(Value::Other),
            _ => Err(Error::InvalidArgument(format!(
                "Invalid compaction mode {raw:?} in {PREFIX}compaction_mode; valid values: \
                 \"reencode\", \"try_binary_copy\", \"force_binary_copy\""
            ))),
        },
        Kind::FileVersion => lancelet_file::FileVersion::parse(raw)
            .map(|_| Value::Other)
            .map_err(|e| bad(&format!("a Lance file version: {e}"))),
    }
}

/// Every `lance.compaction.*` key of `config` pylance reads, checked, by option name.
fn config_values(config: &HashMap<String, String>) -> Result<HashMap<&'static str, Value>> {
    let mut out = HashMap::new();
    for option in CONFIG_KEYS {
        if let Some(raw) = config.get(&format!("{PREFIX}{option}")) {
            out.insert(option, parse(option, raw)?);
        }
    }
    Ok(out)
}

/// The options of `compact_files` a caller gave explicitly (`None`: not given). The ones
/// this crate does not use are accepted for pylance's signature.
#[derive(Debug, Clone, Default)]
pub struct CompactionArgs {
    /// Rows per fragment to aim for (positive).
    pub target_rows_per_fragment: Option<u64>,
    /// Rewrite fragments with many deleted rows even when they are large.
    pub materialize_deletions: Option<bool>,
    /// The deleted fraction above which a fragment is rewritten, in `[0, 1]`.
    pub materialize_deletions_threshold: Option<f64>,
    /// Rows per batch while rewriting (positive).
    pub batch_size: Option<u64>,
}

impl CompactionArgs {
    /// Refuses explicit values out of range.
    fn check(&self) -> Result<()> {
        let positive = |name: &str, v: Option<u64>| match v {
            Some(0) => Err(Error::InvalidArgument(format!(
                "{name} must be a positive integer, got 0"
            ))),
            _ => Ok(()),
        };
        positive("target_rows_per_fragment", self.target_rows_per_fragment)?;
        positive("batch_size", self.batch_size)?;
        if let Some(t) = self.materialize_deletions_threshold {
            if !(0.0..=1.0).contains(&t) {
                return Err(Error::InvalidArgument(format!(
                    "materialize_deletions_threshold must be in [0, 1], got {t}"
                )));
            }
        }
        Ok(())
    }
}

impl Dataset {
    /// The options of a compaction: `args` where given, else this version's
    /// `lance.compaction.*` config, else the defaults (see the module docs).
    pub fn compaction_options(&self, args: &CompactionArgs) -> Result<CompactionOptions> {
        args.check()?;
        let config = config_values(&self.manifest().config)?;
        let d = CompactionOptions::default();
        let count = |name: &str| match config.get(name) {
            Some(Value::Count(v)) => Some(*v),
            _ => None,
        };
        let target = match args.target_rows_per_fragment.or(count("target_rows_per_fragment")) {
            Some(0) => {
                return Err(Error::InvalidArgument(format!(
                    "Invalid value for {PREFIX}target_rows_per_fragment: \"0\" (expected a positive integer)"
                )))
            }
            t => t.unwrap_or(d.target_rows_per_fragment),
        };
        let batch_size = match args.batch_size.or(count("batch_size")) {
            Some(0) => {
                return Err(Error::InvalidArgument(format!(
                    "Invalid value for {PREFIX}batch_size: \"0\" (expected a positive integer)"
                )))
            }
            Some(b) => usize::try_from(b).unwrap_or(usize::MAX),
            None => d.batch_size,
        };
        let materialize = args
            .materialize_deletions
            .or(match config.get("materialize_deletions") {
                Some(Value::Flag(v)) => Some(*v),
                _ => None,
            });
        let threshold = args
            .materialize_deletions_threshold
            .or(match config.get("materialize_deletions_threshold") {
                Some(Value::Fraction(v)) => Some(*v),
                _ => None,
            });
        Ok(CompactionOptions {
            target_rows_per_fragment: target,
            materialize_deletions: materialize.unwrap_or(d.materialize_deletions),
            materialize_deletions_threshold: threshold.unwrap_or(d.materialize_deletions_threshold),
            batch_size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_as_pylance_reads_them() {
        assert_eq!(parse("batch_size", "42").unwrap(), Value::Count(42));
        for bad in ["", "-5", " 40", "4.0", "x"] {
            let e = parse("target_rows_per_fragment", bad).unwrap_err().to_string();
            assert!(e.contains("expected a non-negative integer"), "{e}");
        }
        assert_eq!(parse("materialize_deletions", "TRUE").unwrap(), Value::Flag(true));
        assert_eq!(parse("defer_index_remap", "False").unwrap(), Value::Flag(false));
        assert!(parse("materialize_deletions", "yes").is_err());
        assert_eq!(
            parse("materialize_deletions_threshold", "2").unwrap(),
            Value::Fraction(2.0)
        );
        assert!(parse("materialize_deletions_threshold", "x").is_err());
        assert_eq!(parse("compaction_mode", "reencode").unwrap(), Value::Other);
        assert!(parse("compaction_mode", "x").is_err());
        assert!(parse("data_storage_version", "2.1").is_ok());
        assert!(parse("data_storage_version", "x").is_err());
    }
}
