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

/// Whether an index entry holds stable row ids rather than row addresses on a dataset with
/// stable row ids (pylance 14): bitmap, label-list, n-gram, full-text and vector indexes
/// do, and so does a BTREE of index version 0 (version 1 marks one that keeps addresses).
/// Zone maps, bloom filters and entries of unknown type are taken to hold addresses.
pub fn keyed_by_row_id(idx: &pb::IndexMetadata) -> bool {
    let url = idx.index_details.as_ref().map(|d| d.type_url.as_str()).unwrap_or("");
    match url.rsplit('.').next().unwrap_or(url) {
        "BitmapIndexDetails"
        | "LabelListIndexDetails"
        | "NGramIndexDetails"
        | "InvertedIndexDetails"
        | "VectorIndexDetails" => true,
        "BTreeIndexDetails" => idx.index_version.unwrap_or(0) == 0,
        _ => false,
    }
}

/// The groups of a Rewrite (old transactions list one group's fragments at the top level).
pub fn rewrite_groups(r: &pb::transaction::Rewrite) -> Vec<pb::transaction::rewrite::RewriteGroup> {
    if r.groups.is_empty() {
        vec![pb::transaction::rewrite::RewriteGroup {
            old_fragments: r.old_fragments.clone(),
            new_fragments: r.new_fragments.clone(),
        }]
    } else {
        r.groups.clone()
    }
}

fn ids_of(frags: &[pb::DataFragment]) -> RoaringBitmap {
    frags.iter().filter_map(|f| u32::try_from(f.id).ok()).collect()
}

/// The entries a new version keeps, given the entries of the version it was built on and
/// the operation (pylance 14's rules). `m` is the new version's manifest (its schema,
/// fragments and feature flags).
///
/// - appends, deletes, updates and configuration changes keep every entry as it is: rows
///   they add sit in fragments outside the index's bitmap and are scanned, rows they remove
///   are masked at query time;
/// - an overwrite drops every index; a restore takes the restored version's (`restored`);
/// - a schema change (Merge, Project) drops the entries of fields that are gone;
/// - CreateIndex removes its `removed_indices` and adds its `new_indices` (one the version
///   has already, by uuid, replaces it);
/// - a rewrite (compaction) changes bitmaps as [`rewritten_bitmap`] says.
pub fn carry_indices(
    base: &[pb::IndexMetadata],
    op: &Operation,
    m: &pb::Manifest,
    restored: Option<Vec<pb::IndexMetadata>>,
) -> Result<Vec<pb::IndexMetadata>> {
    let mut out: Vec<pb::IndexMetadata> = match op {
        Operation::Overwrite(_) => Vec::new(),
        Operation::Restore(_) => restored.unwrap_or_default(),
        Operation::CreateIndex(c) => {
            // An entry committed again (same uuid) replaces itself.
            let gone: HashSet<Vec<u8>> = c
                .removed_indices
                .iter()
                .chain(&c.new_indices)
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
            let stable = m.reader_feature_flags & crate::manifest::FLAG_STABLE_ROW_IDS != 0;
            let present: HashSet<u64> = m.fragments.iter().map(|f| f.id).collect();
            let mut kept = Vec::with_capacity(base.len());
            for idx in base {
                let mut idx = idx.clone();
                let record = r
                    .rewritten_indices
                    .iter()
                    .find(|ri| ri.old_id.is_some() && ri.old_id == idx.uuid);
                if let Some(ri) = record {
                    // Remapped onto the new fragments by whoever rewrote them.
                    idx.uuid = ri.new_id.clone();
                    if ri.new_index_details.is_some() {
                        idx.index_details = ri.new_index_details.clone();
                    }
                    idx.index_version = Some(i32::try_from(ri.new_index_version).unwrap_or(0));
                    if !ri.new_index_files.is_empty() {
                        idx.files = ri.new_index_files.clone();
                    }
                }
                let bitmap = rewritten_bitmap(&idx, r, record.is_some(), stable, &present)?;
                idx.fragment_bitmap = encode_fragment_bitmap(&bitmap).into();
                kept.push(idx);
            }
            kept
        }
        _ => base.to_vec(),
    };
    if matches!(op, Operation::Merge(_) | Operation::Project(_)) {
        // Entries of fields the new schema no longer has (dropped, or replaced by a cast) go.
        let ids: HashSet<i32> = m.fields.iter().map(|f| f.id).collect();
        out.retain(|i| i.fields.iter().all(|f| ids.contains(f)));
    }
    Ok(out)
}

/// The fragments index `idx` covers after rewrite `r`, by pylance 14's rules, where `new`
/// are the ids the new fragments carry in the transaction (0 for those that were numbered
/// at commit) and `old` the ids rewritten:
///
/// - an index the rewrite remapped (`remapped`: named in its `rewritten_indices`):
///   (bitmap - old) + new;
/// - otherwise on a dataset without stable row ids: unchanged (its row addresses still
///   point into the old fragments, which are gone, and the new fragments are scanned);
/// - with stable row ids, an index keyed by row id ([`keyed_by_row_id`]) still finds the
///   rewritten rows: (bitmap - old) + the new fragments of each group whose old fragments
///   it covered; a group that mixes covered and uncovered fragments is an error;
/// - any other index with stable row ids: bitmap - old.
///
/// One thing differs from pylance: a bitmap never gains the id of a fragment of the new
/// version that the index does not describe (pylance would add id 0 for a new fragment
/// numbered at commit, which names fragment 0 when it still exists, and keeps an old id a
/// new fragment took again): the index would then answer for rows it never saw.
pub fn rewritten_bitmap(
    idx: &pb::IndexMetadata,
    r: &pb::transaction::Rewrite,
    remapped: bool,
    stable: bool,
    present: &HashSet<u64>,
) -> Result<RoaringBitmap> {
    let groups = rewrite_groups(r);
    let bitmap = fragment_bitmap(idx).map_err(Error::InvalidArgument)?;
    let mut old = RoaringBitmap::new();
    let mut new = RoaringBitmap::new();
    for g in &groups {
        old |= ids_of(&g.old_fragments);
        new |= ids_of(&g.new_fragments);
    }
    let kept = &bitmap - &old;
    let (mut out, added) = if remapped {
        (&kept | &new, new.clone())
    } else if !stable {
        (bitmap.clone(), RoaringBitmap::new())
    } else if keyed_by_row_id(idx) {
        let mut added = RoaringBitmap::new();
        for g in &groups {
            let old_g = ids_of(&g.old_fragments);
            let covered = &old_g & &bitmap;
            if covered.is_empty() {
                continue;
            }
            if covered != old_g {
                return Err(Error::InvalidArgument(format!(
                    "The compaction plan included a rewrite group that was a split of indexed and non-indexed data \
                     (index {:?} covers fragments {:?} of the group's {:?})",
                    idx.name,
                    covered.iter().collect::<Vec<_>>(),
                    old_g.iter().collect::<Vec<_>>()
                )));
            }
            added |= ids_of(&g.new_fragments);
        }
        (&kept | &added, added)
    } else {
        (kept.clone(), RoaringBitmap::new())
    };
    // Ids a caller chose for new fragments (0 is numbered at commit, so never one).
    let chosen: RoaringBitmap = added.iter().filter(|id| *id != 0).collect();
    let wrong: Vec<u32> = out
        .iter()
        .filter(|id| present.contains(&u64::from(*id)) && !kept.contains(*id) && !chosen.contains(*id))
        .collect();
    for id in wrong {
        out.remove(id);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]

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

    fn entry(type_url: &str, version: i32, frags: &[u32]) -> pb::IndexMetadata {
        pb::IndexMetadata {
            name: "i".into(),
            index_details: Some(prost_types::Any {
                type_url: type_url.into(),
                value: Vec::new(),
            }),
            index_version: Some(version),
            fragment_bitmap: encode_fragment_bitmap(&frags.iter().copied().collect()).into(),
            ..Default::default()
        }
    }

    fn rewrite(groups: &[(&[u64], &[u64])]) -> pb::transaction::Rewrite {
        let frag = |id: &u64| pb::DataFragment {
            id: *id,
            ..Default::default()
        };
        pb::transaction::Rewrite {
            groups: groups
                .iter()
                .map(|(old, new)| pb::transaction::rewrite::RewriteGroup {
                    old_fragments: old.iter().map(frag).collect(),
                    new_fragments: new.iter().map(frag).collect(),
                })
                .collect(),
            ..Default::default()
        }
    }

    fn after(idx: &pb::IndexMetadata, r: &pb::transaction::Rewrite, stable: bool, present: &[u64]) -> Vec<u32> {
        let present: HashSet<u64> = present.iter().copied().collect();
        rewritten_bitmap(idx, r, false, stable, &present)
            .unwrap()
            .iter()
            .collect()
    }

    const BITMAP: &str = "/lance.table.BitmapIndexDetails";
    const BTREE: &str = "/lance.table.BTreeIndexDetails";
    const ZONEMAP: &str = "/lance.table.ZoneMapIndexDetails";

    #[test]
    fn rewritten_bitmaps_follow_pylance_per_index_kind() {
        // Fragments 0..3 indexed; 0 and 1 rewritten into one fragment numbered at commit (4).
        let r = rewrite(&[(&[0, 1], &[0])]);
        let present = [2, 3, 4];
        // Without stable row ids the bitmap stays (the old ids name nothing any more).
        assert_eq!(
            after(&entry(BITMAP, 0, &[0, 1, 2, 3]), &r, false, &present),
            [0, 1, 2, 3]
        );
        // With them, indexes keyed by row id gain the new fragment as the transaction
        // names it (0), the others only lose the old fragments.
        assert_eq!(after(&entry(BITMAP, 0, &[0, 1, 2, 3]), &r, true, &present), [0, 2, 3]);
        assert_eq!(after(&entry(BTREE, 0, &[0, 1, 2, 3]), &r, true, &present), [0, 2, 3]);
        assert_eq!(after(&entry(BTREE, 1, &[0, 1, 2, 3]), &r, true, &present), [2, 3]);
        assert_eq!(after(&entry(ZONEMAP, 0, &[0, 1, 2, 3]), &r, true, &present), [2, 3]);
        // Chosen ids (as compaction gives them) go in as they are.
        let r = rewrite(&[(&[0, 1], &[4])]);
        assert_eq!(after(&entry(BITMAP, 0, &[0, 1, 2, 3]), &r, true, &present), [2, 3, 4]);
        // Rewriting fragments an index does not cover leaves it alone.
        assert_eq!(after(&entry(BITMAP, 0, &[2, 3]), &r, true, &present), [2, 3]);
        // A group of covered and uncovered fragments is refused.
        let err = rewritten_bitmap(&entry(BITMAP, 0, &[1, 2]), &r, false, true, &HashSet::new()).unwrap_err();
        assert!(
            err.to_string().contains("split of indexed and non-indexed data"),
            "{err}"
        );
    }

    #[test]
    fn a_bitmap_never_claims_a_fragment_the_index_does_not_describe() {
        // Fragment 0 is not indexed and stays; 2 and 3 are rewritten into a fragment
        // numbered at commit: pylance would add 0 to the bitmap.
        let r = rewrite(&[(&[2, 3], &[0])]);
        assert!(after(&entry(BITMAP, 0, &[2, 3]), &r, true, &[0, 1, 4]).is_empty());
        // A new fragment taking an old fragment's id is not covered by the old index.
        let r = rewrite(&[(&[1], &[1])]);
        assert_eq!(after(&entry(BTREE, 0, &[0, 1]), &r, false, &[0, 1]), [0]);
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
