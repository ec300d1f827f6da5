//! The manifest file container.
//!
//! A manifest file may start with other sections (index and transaction sections, each a
//! length-prefixed protobuf); it ends with the manifest itself:
//! `u32 length, Manifest protobuf, i64 position of that length prefix, u16 major, u16 minor,
//! "LANC"` (all little endian). Readers find the manifest from the footer.
//!
//! ## Checksums (lancelet's own)
//! Manifests lancelet writes carry two CRC32C in fields of their own, which pylance skips
//! (and drops when it rewrites a manifest, so its manifests have none):
//! - `lancelet_sections_crc32c`: every byte before the manifest's length prefix (the index
//!   and transaction sections);
//! - `lancelet_crc32c`: the manifest's protobuf bytes before this field, which is always
//!   encoded last, as the six bytes [`CRC_TAG`] and the CRC, little endian.
//!
//! A manifest is not re-encoded to check it (its maps have no fixed order): the CRC covers
//! the bytes as stored. Readers always check them, when present: a manifest names every
//! file of a version, so one that fails its checksum cannot be trusted for any read. The
//! footer and the length prefix are checked by their structure.

use prost::Message;

use crate::{pb, Error, Result};

/// The magic bytes that end a manifest file.
pub const MAGIC: &[u8; 4] = b"LANC";
/// Format version written in the manifest footer (what pylance 14 writes).
pub const MANIFEST_FORMAT: (u16, u16) = (0, 2);

/// Parses a whole manifest file.
pub fn decode_manifest(bytes: &[u8], path: &str) -> Result<pb::Manifest> {
    let n = bytes.len();
    if n < 16 + 4 {
        return Err(Error::corrupt(path, format!("manifest file is {n} bytes, too small")));
    }
    if &bytes[n - 4..] != MAGIC {
        return Err(Error::corrupt(
            path,
            "not a manifest (the last 4 bytes are not \"LANC\")",
        ));
    }
    let mut pos = [0u8; 8];
    pos.copy_from_slice(&bytes[n - 16..n - 8]);
    let pos = i64::from_le_bytes(pos);
    let start = usize::try_from(pos)
        .ok()
        .filter(|p| p.checked_add(4).is_some_and(|e| e <= n - 16))
        .ok_or_else(|| Error::corrupt(path, format!("manifest position {pos} lies outside the file")))?;
    let mut len = [0u8; 4];
    len.copy_from_slice(&bytes[start..start + 4]);
    let len = u32::from_le_bytes(len) as usize;
    let body = &bytes[start + 4..n - 16];
    if body.len() != len {
        return Err(Error::corrupt(
            path,
            format!("manifest length prefix says {len} bytes but {} are present", body.len()),
        ));
    }
    let m = pb::Manifest::decode(body).map_err(|e| Error::corrupt(path, format!("manifest does not parse: {e}")))?;
    check_crcs(&m, &bytes[..start], body, path)?;
    Ok(m)
}

/// The tag of `Manifest.lancelet_crc32c` (field 1001, wire type fixed32) as a varint.
pub const CRC_TAG: [u8; 2] = [0xCD, 0x3E];

/// Checks a decoded manifest's own checksums against the bytes it was decoded from.
fn check_crcs(m: &pb::Manifest, sections: &[u8], body: &[u8], path: &str) -> Result<()> {
    if m.lancelet_sections_crc32c.is_some() != m.lancelet_crc32c.is_some() {
        // lancelet writes both or neither: one alone means a damaged tag hid the other.
        return Err(Error::corrupt(path, "manifest has only one of its two checksums"));
    }
    if let Some(want) = m.lancelet_crc32c {
        let covered = body.len().checked_sub(6).filter(|&c| body[c..c + 2] == CRC_TAG);
        let Some(covered) = covered else {
            return Err(Error::corrupt(
                path,
                "manifest checksum is not where lancelet writes it",
            ));
        };
        let got = crc32c::crc32c(&body[..covered]);
        if got != want {
            return Err(Error::corrupt(
                path,
                format!("manifest checksum mismatch (stored {want:08x}, computed {got:08x})"),
            ));
        }
    }
    if let Some(want) = m.lancelet_sections_crc32c {
        let got = crc32c::crc32c(sections);
        if got != want {
            return Err(Error::corrupt(
                path,
                format!(
                    "checksum mismatch in the manifest file's first {} bytes (index and transaction sections)",
                    sections.len()
                ),
            ));
        }
    }
    Ok(())
}

/// Serializes a manifest file (no extra sections).
pub fn encode_manifest(manifest: &pb::Manifest) -> Vec<u8> {
    encode_sections(Vec::new(), &mut manifest.clone())
}

/// Serializes a manifest file that also carries its transaction inline, in a section at the
/// start of the file (as pylance 14 writes them; `transaction_section` points at it).
pub fn encode_manifest_with_transaction(manifest: &pb::Manifest, txn: &pb::Transaction) -> Vec<u8> {
    let t = txn.encode_to_vec();
    let mut out = Vec::with_capacity(t.len() + 4);
    out.extend_from_slice(&(t.len() as u32).to_le_bytes());
    out.extend_from_slice(&t);
    let mut m = manifest.clone();
    m.transaction_section = Some(0);
    encode_sections(out, &mut m)
}

/// Serializes a manifest file as pylance 14 lays it out: the index section (when there are
/// indices) at offset 0, then the transaction, then the manifest. Sets the manifest's
/// `index_section` and `transaction_section` offsets accordingly.
pub fn encode_manifest_file(manifest: &pb::Manifest, txn: &pb::Transaction, indices: &[pb::IndexMetadata]) -> Vec<u8> {
    encode_manifest_file_setting(&mut manifest.clone(), txn, indices)
}

/// [`encode_manifest_file`] of a manifest of one's own, whose section offsets are set in
/// place (no copy of a manifest of thousands of fragments).
pub fn encode_manifest_file_setting(
    m: &mut pb::Manifest,
    txn: &pb::Transaction,
    indices: &[pb::IndexMetadata],
) -> Vec<u8> {
    let mut out = Vec::new();
    m.index_section = None;
    if !indices.is_empty() {
        out = crate::indices::encode_index_section(indices);
        m.index_section = Some(0);
    }
    let t = txn.encode_to_vec();
    m.transaction_section = Some(out.len() as u64);
    out.extend_from_slice(&(t.len() as u32).to_le_bytes());
    out.extend_from_slice(&t);
    encode_sections(out, m)
}

/// The transaction stored inline in a manifest file, when it has one.
pub fn decode_transaction_section(bytes: &[u8], m: &pb::Manifest) -> Option<pb::Transaction> {
    let pos = usize::try_from(m.transaction_section?).ok()?;
    let len = bytes.get(pos..pos.checked_add(4)?)?;
    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let body = bytes.get(pos + 4..(pos + 4).checked_add(len)?)?;
    pb::Transaction::decode(body).ok()
}

/// Ends a manifest file: `out` holds its sections; the manifest's checksums are set here.
fn encode_sections(mut out: Vec<u8>, manifest: &mut pb::Manifest) -> Vec<u8> {
    manifest.lancelet_sections_crc32c = Some(crc32c::crc32c(&out));
    manifest.lancelet_crc32c = None;
    let mut body = manifest.encode_to_vec();
    let crc = crc32c::crc32c(&body);
    body.extend_from_slice(&CRC_TAG);
    body.extend_from_slice(&crc.to_le_bytes());
    manifest.lancelet_crc32c = Some(crc);
    let pos = out.len() as i64;
    out.reserve(body.len() + 20);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&pos.to_le_bytes());
    out.extend_from_slice(&MANIFEST_FORMAT.0.to_le_bytes());
    out.extend_from_slice(&MANIFEST_FORMAT.1.to_le_bytes());
    out.extend_from_slice(MAGIC);
    out
}

/// Rows a fragment still holds: physical rows minus deleted rows.
pub fn live_rows(fragment: &pb::DataFragment) -> u64 {
    let deleted = fragment.deletion_file.as_ref().map(|d| d.num_deleted_rows).unwrap_or(0);
    fragment.physical_rows.saturating_sub(deleted)
}

/// Feature flag: fragments may have deletion files.
pub const FLAG_DELETION_FILES: u64 = 1;
/// Feature flag: rows have move-stable row ids.
pub const FLAG_STABLE_ROW_IDS: u64 = 2;
/// Feature flag (deprecated): data files use the v2 file format.
pub const FLAG_USE_V2_FORMAT_DEPRECATED: u64 = 4;
/// Feature flag: the manifest carries a table config.
pub const FLAG_TABLE_CONFIG: u64 = 8;
/// Feature flag: data may live under other base paths.
pub const FLAG_BASE_PATHS: u64 = 16;
/// Feature flag: commits do not write transaction files.
pub const FLAG_DISABLE_TRANSACTION_FILE: u64 = 32;
/// Feature flag: some index carries columns it is not keyed on (`covering_fields`), so an
/// index's `fields` are its keyed fields followed by carried ones. lancelet only uses
/// indexes on exactly one field, which a covering index never is, and keeps the entries
/// as they are, so it reads and writes such manifests.
pub const FLAG_COVERING_INDICES: u64 = 128;
/// Feature flag: data files of different file format versions in one dataset.
pub const FLAG_MIXED_FILE_VERSIONS: u64 = 256;

/// Reader flags this build understands.
const KNOWN_READER_FLAGS: u64 = FLAG_DELETION_FILES
    | FLAG_STABLE_ROW_IDS
    | FLAG_USE_V2_FORMAT_DEPRECATED
    | FLAG_BASE_PATHS
    | FLAG_COVERING_INDICES
    | FLAG_MIXED_FILE_VERSIONS;
/// Writer flags this build maintains correctly when it commits on top of a manifest.
const KNOWN_WRITER_FLAGS: u64 = FLAG_DELETION_FILES
    | FLAG_STABLE_ROW_IDS
    | FLAG_USE_V2_FORMAT_DEPRECATED
    | FLAG_TABLE_CONFIG
    | FLAG_BASE_PATHS
    | FLAG_COVERING_INDICES
    | FLAG_MIXED_FILE_VERSIONS;

fn check_flags(flags: u64, known: u64, what: &str, path: &str) -> Result<()> {
    let unknown = flags & !known;
    if unknown == 0 {
        return Ok(());
    }
    let names: Vec<String> = (0..64)
        .filter(|b| unknown & (1u64 << b) != 0)
        .map(|b| match 1u64 << b {
            FLAG_STABLE_ROW_IDS => "stable row ids".to_string(),
            FLAG_BASE_PATHS => "base paths".to_string(),
            FLAG_DISABLE_TRANSACTION_FILE => "disabled transaction files".to_string(),
            other => format!("flag {other}"),
        })
        .collect();
    Err(Error::Unsupported(format!(
        "{path} needs {what} features lancelet does not support yet: {}",
        names.join(", ")
    )))
}

/// Refuses a manifest this build cannot read correctly.
pub fn check_reader_flags(m: &pb::Manifest, path: &str) -> Result<()> {
    check_flags(m.reader_feature_flags, KNOWN_READER_FLAGS, "reader", path)
}

/// Refuses to commit on top of a manifest whose features this build cannot maintain.
pub fn check_writer_flags(m: &pb::Manifest, path: &str) -> Result<()> {
    check_flags(m.writer_feature_flags, KNOWN_WRITER_FLAGS, "writer", path)
}

/// Column names a scan produces itself; a stored column of that name could never be read
/// (pylance refuses to write one and cannot read a dataset that has one).
pub const SYSTEM_COLUMNS: [&str; 5] = [
    "_rowid",
    "_rowaddr",
    "_rowoffset",
    "_row_created_at_version",
    "_row_last_updated_at_version",
];

/// Refuses field names that pylance cannot read back: top-level names that are empty, are
/// system columns or contain `.` (a dotted name means a struct field in every projection
/// and filter). `is_new` selects the fields to check, so that a dataset which already has
/// such a field (written by an older lancelet) can still be changed.
pub fn check_field_names(
    fields: &[lancelet_proto::pbfile::Field],
    is_new: impl Fn(&lancelet_proto::pbfile::Field) -> bool,
) -> Result<()> {
    for f in fields.iter().filter(|f| is_new(f)) {
        let top = f.parent_id < 0;
        let problem = if top && f.name.is_empty() {
            Some("a column name cannot be empty")
        } else if top && SYSTEM_COLUMNS.contains(&f.name.as_str()) {
            Some("it is the name of a system column")
        } else if top && f.name.contains('.') {
            Some("a top-level name cannot contain '.' (it would mean a struct field); use a struct column")
        } else {
            None
        };
        if let Some(why) = problem {
            return Err(Error::InvalidArgument(format!(
                "invalid column name {:?}: {why}",
                f.name
            )));
        }
    }
    Ok(())
}

/// Refuses to write a manifest whose schema keeps legacy (file format 0.1) dictionaries:
/// their values live inside the manifest file itself, at the offsets the fields name,
/// and lancelet does not write them, so the new manifest would point at other bytes.
pub fn check_legacy_dictionaries(m: &pb::Manifest, path: &str) -> Result<()> {
    match m
        .fields
        .iter()
        .find(|f| f.dictionary.as_ref().is_some_and(|d| d.length > 0))
    {
        Some(f) => Err(Error::Unsupported(format!(
            "committing to {path}: column {:?} is a dictionary of a legacy (0.1) dataset, whose values \
             lancelet cannot carry into a new version",
            f.name
        ))),
        None => Ok(()),
    }
}

/// Sets the feature flags a manifest's content requires.
pub fn set_feature_flags(m: &mut pb::Manifest) {
    // Once a dataset has mixed file versions it keeps the flag, whatever its files later
    // (pylance keeps it after compactions and overwrites too).
    let kept = FLAG_USE_V2_FORMAT_DEPRECATED | FLAG_STABLE_ROW_IDS | FLAG_MIXED_FILE_VERSIONS;
    let mut reader = m.reader_feature_flags & kept;
    let mut writer = m.writer_feature_flags & kept;
    if m.fragments.iter().any(|f| f.deletion_file.is_some()) {
        reader |= FLAG_DELETION_FILES;
        writer |= FLAG_DELETION_FILES;
    }
    if !m.config.is_empty() {
        writer |= FLAG_TABLE_CONFIG;
    }
    if !m.base_paths.is_empty() {
        reader |= FLAG_BASE_PATHS;
        writer |= FLAG_BASE_PATHS;
    }
    let mut versions = m
        .fragments
        .iter()
        .flat_map(|f| f.files.iter().map(|d| (d.file_major_version, d.file_minor_version)));
    if let Some(first) = versions.next() {
        if versions.any(|v| v != first) {
            reader |= FLAG_MIXED_FILE_VERSIONS;
            writer |= FLAG_MIXED_FILE_VERSIONS;
        }
    }
    m.reader_feature_flags = reader;
    m.writer_feature_flags = writer;
}

/// Sets or clears [`FLAG_COVERING_INDICES`] for the index entries `indices` a manifest names
/// (after [`set_feature_flags`], which cannot see them).
pub fn set_index_flags(m: &mut pb::Manifest, indices: &[pb::IndexMetadata]) {
    if indices.iter().any(|i| !i.covering_fields.is_empty()) {
        m.reader_feature_flags |= FLAG_COVERING_INDICES;
        m.writer_feature_flags |= FLAG_COVERING_INDICES;
    } else {
        m.reader_feature_flags &= !FLAG_COVERING_INDICES;
        m.writer_feature_flags &= !FLAG_COVERING_INDICES;
    }
}
