//! The index section of a manifest and what each operation does to the indices.
//!
//! A manifest file that has indices starts with `u32 length, IndexSection`, and the
//! manifest's `index_section` (field 6) holds that offset, 0 in every file pylance 14 and
//! lancelet write. The entries say which index covers which fields and fragments; the index
//! files themselves live under `_indices/{uuid}/` and are never changed once written, so a
//! commit only decides which entries the new version keeps ([`carry_indices`]).

use std::collections::HashSet;

use prost::Message;
use roaring::RoaringBitmap;

use crate::{pb, Error, Result};
use pb::transaction::Operation;

/// The directory holding index directories, relative to the dataset root.
pub const INDICES_DIR: &str = "_indices";

/// Reads the index entries a manifest file carries (none when it has no index section).
pub fn decode_index_section(bytes: &[u8], m: &pb::Manifest, path: &str) -> Result<Vec<pb::IndexMetadata>> {
    let Some(pos) = m.index_section else {
        return Ok(Vec::new());
    };
    let bad = |what: String| Error::corrupt(path, format!("index section: {what}"));
    let pos = usize::try_from(pos).map_err(|_| bad(format!("offset {pos} is out of range")))?;
    let len = bytes
        .get(pos..pos.saturating_add(4))
        .filter(|b| b.len() == 4)
        .ok_or_else(|| bad(format!("offset {pos} lies outside the file")))?;
    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let body = bytes
        .get(pos + 4..(pos + 4).saturating_add(len))
        .filter(|b| b.len() == len)
        .ok_or_else(|| bad(format!("{len} bytes at {pos} run past the end of the file")))?;
    let section = pb::IndexSection::decode(body).map_err(|e| bad(format!("does not parse: {e}")))?;
    for idx in &section.indices {
        fragment_bitmap(idx).map_err(|e| bad(format!("index {:?}: {e}", idx.name)))?;
        uuid_string(idx).map_err(|e| bad(format!("index {:?}: {e}", idx.name)))?;
    }
    Ok(section.indices)
}

/// The index section as pylance writes it: `u32 length, IndexSection`.
pub fn encode_index_section(indices: &[pb::IndexMetadata]) -> Vec<u8> {
    let body = pb::IndexSection {
        indices: indices.to_vec(),
    }
    .encode_to_vec();
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// The fragments an index covers.
pub fn fragment_bitmap(idx: &pb::IndexMetadata) -> std::result::Result<RoaringBitmap, String> {
    if idx.fragment_bitmap.is_empty() {
        return Ok(RoaringBitmap::new());
    }
    RoaringBitmap::deserialize_from(idx.fragment_bitmap.as_ref()).map_err(|e| format!("bad fragment bitmap: {e}"))
}

/// `bitmap` in the portable form pylance writes.
pub fn encode_fragment_bitmap(bitmap: &RoaringBitmap) -> Vec<u8> {
    let mut out = Vec::with_capacity(bitmap.serialized_size());
    // Writing into a Vec cannot fail.
    let _ = bitmap.serialize_into(&mut out);
    out
}

/// The index's uuid in the hyphenated lowercase form that names its directory.
pub fn uuid_string(idx: &pb::IndexMetadata) -> std::result::Result<String, String> {
    let raw = idx.uuid.as_ref().map(|u| u.uuid.as_ref()).unwrap_or_default();
    let bytes: [u8; 16] = raw
        .try_into()
        .map_err(|_| format!("uuid has {} bytes, not 16", raw.len()))?;
    Ok(uuid::Uuid::from_bytes(bytes).hyphenated().to_string())
}

/// The directory of an index's files, relative to the dataset root.
pub fn index_dir(idx: &pb::IndexMetadata) -> std::result::Result<String, String> {
    Ok(format!("{INDICES_DIR}/{}", uuid_string(idx)?))
}

/// The entries a new version keeps, given the entries of the version it was built on and
/// the operation (pylance 14's rules). `fields` is the new version's schema.
///
/// - appends, deletes, updates and configuration changes keep every entry as it is: rows
///   they add sit in fragments outside the index's bitmap and are scanned, rows they remove
///   are masked at query time;
/// - an overwrite drops every index; a restore takes the restored version's (`restored`);
/// - a rewrite (compaction) takes the entries its `rewritten_indices` name, and removes the
///   rewritten fragments from the bitmap of every other entry, which then covers only what it
///   still describes (the new fragments are scanned until the index is rebuilt);
/// - a schema change drops the entries of fields that are gone;
/// - CreateIndex removes its `removed_indices` and adds its `new_indices`.
pub fn carry_indices(
    base: &[pb::IndexMetadata],
    op: &Operation,
    fields: &[lancelet_proto::pbfile::Field],
    restored: Option<Vec<pb::IndexMetadata>>,
) -> Result<Vec<pb::IndexMetadata>> {
    let mut out: Vec<pb::IndexMetadata> = match op {
        Operation::Overwrite(_) => Vec::new(),
        Operation::Restore(_) => restored.unwrap_or_default(),
        Operation::CreateIndex(c) => {
            let gone: HashSet<Vec<u8>> = c
                .removed_indices
                .iter()
                .filter_map(|i| i.uuid.as_ref().map(|u| u.uuid.to_vec()))
                .collect();
            let mut kept: Vec<pb::IndexMetadata> = base
                .iter()
                .filter(|i| !i.uuid.as_ref().is_some_and(|u| gone.contains(u.uuid.as_ref())))
                .cloned()
                .collect();
            kept.extend(c.new_indices.iter().cloned());
            kept
        }
        Operation::Rewrite(r) => {
            let mut old: RoaringBitmap = r
                .old_fragments
                .iter()
                .filter_map(|f| u32::try_from(f.id).ok())
                .collect();
            for g in &r.groups {
                old.extend(g.old_fragments.iter().filter_map(|f| u32::try_from(f.id).ok()));
            }
            let mut kept = Vec::with_capacity(base.len());
            for idx in base {
                let rewritten = r
                    .rewritten_indices
                    .iter()
                    .find(|ri| ri.old_id.is_some() && ri.old_id == idx.uuid);
                let mut idx = idx.clone();
                if let Some(ri) = rewritten {
                    // Remapped onto the new fragments by whoever compacted.
                    idx.uuid = ri.new_id.clone();
                    if ri.new_index_details.is_some() {
                        idx.index_details = ri.new_index_details.clone();
                    }
                    idx.index_version = Some(i32::try_from(ri.new_index_version).unwrap_or(0));
                    if !ri.new_index_files.is_empty() {
                        idx.files = ri.new_index_files.clone();
                    }
                    let mut bitmap = fragment_bitmap(&idx).map_err(Error::InvalidArgument)?;
                    bitmap -= &old;
                    for g in &r.groups {
                        bitmap.extend(g.new_fragments.iter().filter_map(|f| u32::try_from(f.id).ok()));
                    }
                    idx.fragment_bitmap = encode_fragment_bitmap(&bitmap).into();
                } else {
                    let mut bitmap = fragment_bitmap(&idx).map_err(Error::InvalidArgument)?;
                    if bitmap.is_disjoint(&old) {
                        kept.push(idx);
                        continue;
                    }
                    bitmap -= &old;
                    idx.fragment_bitmap = encode_fragment_bitmap(&bitmap).into();
                }
                kept.push(idx);
            }
            kept
        }
        _ => base.to_vec(),
    };
    // Entries of fields the new schema no longer has (dropped, or replaced by a cast) go.
    let ids: HashSet<i32> = fields.iter().map(|f| f.id).collect();
    out.retain(|i| i.fields.iter().all(|f| ids.contains(f)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn fragment_bitmaps_are_written_as_pylance_writes_them() {
        let b: RoaringBitmap = [0u32, 1].into_iter().collect();
        let hex: String = encode_fragment_bitmap(&b).iter().map(|x| format!("{x:02x}")).collect();
        assert_eq!(hex, "3a30000001000000000001001000000000000100");
        let b: RoaringBitmap = [2u32].into_iter().collect();
        let hex: String = encode_fragment_bitmap(&b).iter().map(|x| format!("{x:02x}")).collect();
        assert_eq!(hex, "3a3000000100000000000000100000000200");
    }

    #[test]
    fn a_damaged_index_section_is_corrupt_not_a_panic() {
        let m = pb::Manifest {
            index_section: Some(0),
            ..Default::default()
        };
        for bytes in [
            &b""[..],
            &[1, 0, 0],
            &[200, 0, 0, 0, 1],
            &[3, 0, 0, 0, 0xff, 0xff, 0xff],
        ] {
            assert!(matches!(
                decode_index_section(bytes, &m, "x"),
                Err(Error::Corrupt { .. })
            ));
        }
    }
}
