//! The manifest file container.
//!
//! A manifest file may start with other sections (index and transaction sections, each a
//! length-prefixed protobuf); it ends with the manifest itself:
//! `u32 length, Manifest protobuf, i64 position of that length prefix, u16 major, u16 minor,
//! "LANC"` (all little endian). Readers find the manifest from the footer.

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
    pb::Manifest::decode(body).map_err(|e| Error::corrupt(path, format!("manifest does not parse: {e}")))
}

/// Serializes a manifest file (no extra sections).
pub fn encode_manifest(manifest: &pb::Manifest) -> Vec<u8> {
    let body = manifest.encode_to_vec();
    let mut out = Vec::with_capacity(body.len() + 20);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(&0i64.to_le_bytes());
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
