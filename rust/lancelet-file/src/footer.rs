//! The fixed 40-byte footer that ends every Lance v2 file.
//!
//! Layout (little endian): `u64 column_meta_start, u64 cmo_table_start,
//! u64 gbo_table_start, u32 num_global_buffers, u32 num_columns, u16 major,
//! u16 minor, b"LANC"`.

use crate::error::{Error, Result};

/// Size of the footer in bytes.
pub const FOOTER_LEN: u64 = 40;
/// The magic bytes at the very end of the file.
pub const MAGIC: &[u8; 4] = b"LANC";

/// A file format version as written in the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileVersion {
    /// Lance file format 2.0 (footer `0.3`).
    V2_0,
    /// Lance file format 2.1 (footer `2.1`).
    V2_1,
    /// Lance file format 2.2 (footer `2.2`).
    V2_2,
    /// The legacy file format 0.1 (footer `0.1` or `0.2`); read only.
    Legacy,
}

impl FileVersion {
    /// The version written when none is asked for: 2.2, pylance 14's default ("stable").
    /// The one place this default is set: datasets, [`crate::WriterOptions::default`],
    /// `LanceFileWriter` and `stable_version()` (through
    /// `lancelet._native.file.DEFAULT_FILE_VERSION`) all use it.
    pub const DEFAULT: FileVersion = FileVersion::V2_2;

    /// The `(major, minor)` pair written in the footer.
    pub fn footer_pair(self) -> (u16, u16) {
        match self {
            Self::V2_0 => (0, 3),
            Self::V2_1 => (2, 1),
            Self::V2_2 => (2, 2),
            Self::Legacy => (0, 2),
        }
    }

    /// The user-facing name ("2.0", ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::V2_0 => "2.0",
            Self::V2_1 => "2.1",
            Self::V2_2 => "2.2",
            Self::Legacy => "0.1",
        }
    }

    /// Parses a user-supplied version string, as pylance accepts it.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "2.0" => Ok(Self::V2_0),
            "2.1" => Ok(Self::V2_1),
            "2.2" => Ok(Self::V2_2),
            // pylance's "stable" is the version written by default.
            "stable" => Ok(Self::DEFAULT),
            "0.1" | "legacy" => Err(Error::Unsupported("writing legacy (0.1) files".into())),
            other => Err(Error::InvalidArgument(format!(
                "unknown Lance file version {other:?} (expected \"2.0\", \"2.1\" or \"2.2\")"
            ))),
        }
    }
}

/// The parsed footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// Position of the first column metadata.
    pub column_meta_start: u64,
    /// Position of the column metadata offset table.
    pub cmo_table_start: u64,
    /// Position of the global buffer offset table.
    pub gbo_table_start: u64,
    /// Number of global buffers.
    pub num_global_buffers: u32,
    /// Number of columns.
    pub num_columns: u32,
    /// Major version.
    pub major: u16,
    /// Minor version.
    pub minor: u16,
}

impl Footer {
    /// Serializes the footer.
    pub fn to_bytes(&self) -> [u8; 40] {
        let mut out = [0u8; 40];
        out[0..8].copy_from_slice(&self.column_meta_start.to_le_bytes());
        out[8..16].copy_from_slice(&self.cmo_table_start.to_le_bytes());
        out[16..24].copy_from_slice(&self.gbo_table_start.to_le_bytes());
        out[24..28].copy_from_slice(&self.num_global_buffers.to_le_bytes());
        out[28..32].copy_from_slice(&self.num_columns.to_le_bytes());
        out[32..34].copy_from_slice(&self.major.to_le_bytes());
        out[34..36].copy_from_slice(&self.minor.to_le_bytes());
        out[36..40].copy_from_slice(MAGIC);
        out
    }

    /// Parses the last 40 bytes of a file of `file_size` bytes and checks that every
    /// position it names lies inside the file and in the right order.
    pub fn parse(bytes: &[u8], file_size: u64, path: &str) -> Result<Self> {
        if bytes.len() != FOOTER_LEN as usize {
            return Err(Error::corrupt(
                path,
                format!("footer must be 40 bytes, got {}", bytes.len()),
            ));
        }
        if &bytes[36..40] != MAGIC {
            return Err(Error::corrupt(
                path,
                "not a Lance file (the last 4 bytes are not \"LANC\")",
            ));
        }
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[i..i + 8]);
            u64::from_le_bytes(b)
        };
        let u32_at = |i: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&bytes[i..i + 4]);
            u32::from_le_bytes(b)
        };
        let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        let f = Self {
            column_meta_start: u64_at(0),
            cmo_table_start: u64_at(8),
            gbo_table_start: u64_at(16),
            num_global_buffers: u32_at(24),
            num_columns: u32_at(28),
            major: u16_at(32),
            minor: u16_at(34),
        };
        let meta_end = file_size.saturating_sub(FOOTER_LEN);
        let cmo_end = f.cmo_table_start.checked_add(u64::from(f.num_columns) * 16);
        let gbo_end = f.gbo_table_start.checked_add(u64::from(f.num_global_buffers) * 16);
        let ok = f.column_meta_start <= f.cmo_table_start
            && cmo_end.is_some_and(|e| e <= meta_end)
            && gbo_end.is_some_and(|e| e <= meta_end)
            && f.cmo_table_start <= meta_end
            && f.gbo_table_start <= meta_end;
        if !ok {
            return Err(Error::corrupt(
                path,
                format!(
                    "footer offsets point outside the file (column metadata at {}, tables at {} and {}, \
                     {} columns, {} global buffers, file is {file_size} bytes)",
                    f.column_meta_start, f.cmo_table_start, f.gbo_table_start, f.num_columns, f.num_global_buffers
                ),
            ));
        }
        Ok(f)
    }

    /// The file format version, or an error for versions this build cannot read.
    pub fn version(&self, path: &str) -> Result<FileVersion> {
        match (self.major, self.minor) {
            (0, 3) | (2, 0) => Ok(FileVersion::V2_0),
            (2, 1) => Ok(FileVersion::V2_1),
            (2, 2) => Ok(FileVersion::V2_2),
            (0, 1) | (0, 2) => Err(Error::Unsupported(format!(
                "{path} has a legacy (0.{}) footer but was not read as a legacy file",
                self.minor
            ))),
            (major, minor) => Err(Error::Unsupported(format!(
                "{path} uses Lance file format version {major}.{minor}, which this build does not know"
            ))),
        }
    }
}
