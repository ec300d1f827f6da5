//! The scalar index types and everything that is a fixed property of a type: names,
//! `type_url`, `index_version`, the details message, the files and the accepted column
//! types. One table holds them so the views cannot drift apart.

use arrow_schema::DataType;

use super::ScalarParams;
use crate::error::{Error, Result};

/// A scalar index type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarIndexType {
    /// Sorted values in pages plus a page lookup; exact.
    BTree,
    /// One row-address bitmap per distinct value; exact.
    Bitmap,
    /// One bitmap per distinct list element (for `array_has_any/all`); exact.
    LabelList,
    /// Min/max/null counts per zone of rows; inexact.
    ZoneMap,
    /// Trigram posting lists of strings (for `contains`); inexact.
    NGram,
    /// A split-block bloom filter per zone of rows; inexact.
    BloomFilter,
}

/// One row of the table: `(type, name, list_indices name, type_url, index_version, files)`.
struct Row {
    kind: ScalarIndexType,
    name: &'static str,
    display: &'static str,
    type_url: &'static str,
    index_version: i32,
    files: &'static [&'static str],
}

const TABLE: [Row; 6] = [
    Row {
        kind: ScalarIndexType::BTree,
        name: "BTREE",
        display: "BTree",
        type_url: "/lance.table.BTreeIndexDetails",
        index_version: 0,
        files: &["page_data.lance", "page_lookup.lance"],
    },
    Row {
        kind: ScalarIndexType::Bitmap,
        name: "BITMAP",
        display: "Bitmap",
        type_url: "/lance.table.BitmapIndexDetails",
        index_version: 0,
        files: &["bitmap_page_lookup.lance"],
    },
    Row {
        kind: ScalarIndexType::LabelList,
        name: "LABEL_LIST",
        display: "LabelList",
        type_url: "/lance.table.LabelListIndexDetails",
        index_version: 1,
        files: &["bitmap_page_lookup.lance"],
    },
    Row {
        kind: ScalarIndexType::ZoneMap,
        name: "ZONEMAP",
        display: "ZoneMap",
        type_url: "/lance.table.ZoneMapIndexDetails",
        index_version: 0,
        files: &["zonemap.lance"],
    },
    Row {
        kind: ScalarIndexType::NGram,
        name: "NGRAM",
        display: "NGram",
        type_url: "/lance.table.NGramIndexDetails",
        index_version: 0,
        files: &["ngram_postings.lance"],
    },
    Row {
        kind: ScalarIndexType::BloomFilter,
        name: "BLOOMFILTER",
        display: "BloomFilter",
        type_url: "/lance.index.pb.BloomFilterIndexDetails",
        index_version: 0,
        files: &["bloomfilter.lance"],
    },
];

/// Letters and digits only, lowercased: "LABEL_LIST", "label_list" and "LabelList" agree.
fn normalize(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

impl ScalarIndexType {
    /// Every type, in table order.
    pub const ALL: [ScalarIndexType; 6] = [
        Self::BTree,
        Self::Bitmap,
        Self::LabelList,
        Self::ZoneMap,
        Self::NGram,
        Self::BloomFilter,
    ];

    fn row(self) -> &'static Row {
        // The table has one row per variant in `ALL` order.
        &TABLE[self as usize]
    }

    /// Parses the name given to `create_scalar_index` ("BTREE", "btree", "LABEL_LIST",
    /// "LabelList", "bloomfilter", ...), case- and underscore-insensitively.
    pub fn parse(s: &str) -> Result<Self> {
        let n = normalize(s);
        TABLE
            .iter()
            .find(|r| normalize(r.name) == n)
            .map(|r| r.kind)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "unknown scalar index type {s:?} (expected one of {})",
                    TABLE.iter().map(|r| r.name).collect::<Vec<_>>().join(", ")
                ))
            })
    }

    /// The canonical name ("BTREE", "LABEL_LIST", ...).
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The `type` shown by pylance's `list_indices` ("BTree", "LabelList", ...).
    pub fn display_name(self) -> &'static str {
        self.row().display
    }

    /// The `google.protobuf.Any` type URL of the index details (leading slash, no host).
    pub fn type_url(self) -> &'static str {
        self.row().type_url
    }

    /// The type whose details carry `url`; a host prefix (`type.googleapis.com/...`) or a
    /// missing leading slash is accepted.
    pub fn from_type_url(url: &str) -> Option<Self> {
        let message = url.rsplit('/').next().unwrap_or(url);
        TABLE
            .iter()
            .find(|r| r.type_url.trim_start_matches('/') == message)
            .map(|r| r.kind)
    }

    /// The `index_version` recorded in the manifest.
    pub fn index_version(self) -> i32 {
        self.row().index_version
    }

    /// The files of an index of this type, in write order.
    pub fn files(self) -> &'static [&'static str] {
        self.row().files
    }

    /// The `value` bytes of the details `Any` (empty except for ZONEMAP, whose message is
    /// `{1: rows_per_zone, 2: 0, 3: 1}` as pylance writes it).
    pub fn details(self, params: &ScalarParams) -> Vec<u8> {
        match self {
            Self::ZoneMap => {
                let mut out = vec![0x08];
                put_varint(&mut out, params.rows_per_zone);
                out.extend_from_slice(&[0x10, 0x00, 0x18, 0x01]);
                out
            }
            _ => Vec::new(),
        }
    }

    /// Whether a column of type `dt` can be indexed with this type.
    pub fn supports(self, dt: &DataType) -> bool {
        match self {
            Self::BTree | Self::Bitmap | Self::ZoneMap => is_orderable(dt),
            Self::LabelList => match dt {
                DataType::List(f) | DataType::LargeList(f) => is_orderable(f.data_type()),
                _ => false,
            },
            Self::NGram => matches!(dt, DataType::Utf8 | DataType::LargeUtf8),
            Self::BloomFilter => super::bloom::hashable(dt),
        }
    }

    /// [`ScalarIndexType::supports`] as an error naming the type and column type.
    pub fn check_supports(self, dt: &DataType) -> Result<()> {
        if self.supports(dt) {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "a {} index cannot be built on a column of type {dt}",
                self.name()
            )))
        }
    }
}

/// The scalar types BTREE, BITMAP and ZONEMAP accept (pylance's list: integers, floats,
/// bool, strings, binaries, temporal types, decimals, fixed-size binary).
pub(crate) fn is_orderable(dt: &DataType) -> bool {
    use DataType::*;
    matches!(
        dt,
        Int8 | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float16
            | Float32
            | Float64
            | Boolean
            | Utf8
            | LargeUtf8
            | Binary
            | LargeBinary
            | Date32
            | Date64
            | Time32(_)
            | Time64(_)
            | Timestamp(_, _)
            | Duration(_)
            | Decimal128(_, _)
            | Decimal256(_, _)
            | FixedSizeBinary(_)
    )
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
