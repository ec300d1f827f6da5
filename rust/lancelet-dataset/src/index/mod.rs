//! Secondary indexes of a dataset version: the entries its manifest names, dropping them,
//! and their statistics. Index files are built and searched by `lancelet-index`; this module
//! joins them to the table (fragments, deletions, transactions).

pub mod build;
pub mod fts;
pub mod hybrid;
pub mod knn;
pub mod progress;
pub mod segments;
pub mod vector_build;

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use futures::FutureExt;
use lancelet_index::scalar::IndexStore;
use lancelet_io::ReadAt;
use lancelet_io::Storage;
use lancelet_table::indices::{fragment_bitmap, uuid_string};
use lancelet_table::pb;

use crate::{Dataset, Error, Result};

/// One index segment as `list_indices` reports it (pylance's keys).
#[derive(Debug, Clone)]
pub struct IndexSegment {
    /// The index's name (several segments may share one).
    pub name: String,
    /// The display name of its type (`BTree`, `Bitmap`, `IVF_PQ`, ...).
    pub index_type: String,
    /// Its uuid, the name of its directory under `_indices/`.
    pub uuid: String,
    /// The names of the indexed columns (dotted paths for struct fields).
    pub fields: Vec<String>,
    /// The indexed field ids.
    pub field_ids: Vec<i32>,
    /// The version the index was built against.
    pub dataset_version: u64,
    /// The fragments it covers.
    pub fragment_ids: Vec<u32>,
    /// The details message's type URL.
    pub type_url: String,
    /// The index format version.
    pub index_version: i32,
    /// Creation time, milliseconds since the epoch.
    pub created_at: Option<u64>,
    /// The base path its files live under (`None`: the dataset root).
    pub base_id: Option<u32>,
    /// Its files and their sizes.
    pub files: Vec<(String, u64)>,
    /// The fields it only carries (a suffix of `field_ids`).
    pub covering_fields: Vec<i32>,
}

/// The display name pylance gives an index type, from its details' type URL (`Unknown`
/// for an entry without details, as committed by hand for a full-text index).
pub(crate) fn index_type_name(type_url: &str, details: &[u8]) -> String {
    if type_url.is_empty() {
        return "Unknown".into();
    }
    let short = type_url.rsplit('.').next().unwrap_or(type_url);
    match short {
        "BTreeIndexDetails" => "BTree".into(),
        "BitmapIndexDetails" => "Bitmap".into(),
        "LabelListIndexDetails" => "LabelList".into(),
        "ZoneMapIndexDetails" => "ZoneMap".into(),
        "NGramIndexDetails" => "NGram".into(),
        "BloomFilterIndexDetails" => "BloomFilter".into(),
        "InvertedIndexDetails" => "Inverted".into(),
        "FragmentReuseIndexDetails" => "FragmentReuse".into(),
        "JsonIndexDetails" => "Json".into(),
        "VectorIndexDetails" => vector_type_name(details),
        other => other.trim_end_matches("IndexDetails").to_string(),
    }
}

/// IVF_PQ, IVF_FLAT, ... from a `VectorIndexDetails` message: the compression oneof (4 pq,
/// 5 sq, 6 rq, 8 flat) and whether an HNSW config (3) is present.
fn vector_type_name(details: &[u8]) -> String {
    let mut hnsw = false;
    let mut kind = "FLAT";
    let mut i = 0usize;
    while i < details.len() {
        let Some((key, n)) = varint(&details[i..]) else { break };
        i += n;
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => match varint(&details[i..]) {
                Some((_, n)) => i += n,
                None => break,
            },
            2 => match varint(&details[i..]) {
                Some((len, n)) => {
                    i = i
                        .saturating_add(n)
                        .saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
                }
                None => break,
            },
            1 => i += 8,
            5 => i += 4,
            _ => break,
        }
        match field {
            3 => hnsw = true,
            4 => kind = "PQ",
            5 => kind = "SQ",
            6 => kind = "RQ",
            8 => kind = "FLAT",
            _ => {}
        }
    }
    if hnsw {
        format!("IVF_HNSW_{kind}")
    } else {
        format!("IVF_{kind}")
    }
}

fn varint(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

impl Dataset {
    /// The index entries of this version, in creation order.
    pub async fn indices(&self) -> Result<Arc<Vec<pb::IndexMetadata>>> {
        let got = self
            .indices
            .get_or_try_init(|| async {
                let list =
                    lancelet_table::commit::read_indices(self.store.as_ref(), self.naming, &self.manifest).await?;
                Ok::<_, Error>(Arc::new(list))
            })
            .await?;
        Ok(got.clone())
    }

    /// The dotted column path of a field id.
    pub(crate) fn field_path(&self, id: i32) -> Option<String> {
        let by_id: HashMap<i32, &lancelet_proto::pbfile::Field> =
            self.manifest.fields.iter().map(|f| (f.id, f)).collect();
        let mut parts = Vec::new();
        let mut at = by_id.get(&id)?;
        loop {
            parts.push(at.name.clone());
            if at.parent_id < 0 {
                break;
            }
            at = by_id.get(&at.parent_id)?;
        }
        parts.reverse();
        Some(parts.join("."))
    }

    /// Every index segment of this version, as `list_indices` reports them.
    pub async fn list_indices(&self) -> Result<Vec<IndexSegment>> {
        let path = self.root.display().to_string();
        let mut out = Vec::new();
        for idx in self.indices().await?.iter() {
            let bad = |e: String| Error::corrupt(&path, format!("index {:?}: {e}", idx.name));
            let (type_url, details) = idx
                .index_details
                .as_ref()
                .map(|a| (a.type_url.clone(), a.value.to_vec()))
                .unwrap_or_default();
            out.push(IndexSegment {
                name: idx.name.clone(),
                index_type: index_type_name(&type_url, &details),
                uuid: uuid_string(idx).map_err(bad)?,
                fields: idx.fields.iter().filter_map(|f| self.field_path(*f)).collect(),
                field_ids: idx.fields.clone(),
                dataset_version: idx.dataset_version,
                fragment_ids: fragment_bitmap(idx).map_err(bad)?.iter().collect(),
                type_url,
                index_version: idx.index_version.unwrap_or(0),
                created_at: idx.created_at,
                base_id: idx.base_id,
                files: idx.files.iter().map(|f| (f.path.clone(), f.size_bytes)).collect(),
                covering_fields: idx.covering_fields.clone(),
            });
        }
        Ok(out)
    }

    /// The index segment with id `uuid` in this version.
    pub(crate) async fn index_segment(&self, uuid: &str) -> Result<pb::IndexMetadata> {
        self.indices()
            .await?
            .iter()
            .find(|i| lancelet_table::indices::uuid_string(i).ok().as_deref() == Some(uuid))
            .cloned()
            .ok_or_else(|| Error::InvalidArgument(format!("no index segment {uuid}")))
    }

    /// The entries (segments) of index `name` in this version.
    pub(crate) async fn index_entries_named(&self, name: &str) -> Result<Vec<pb::IndexMetadata>> {
        Ok(self
            .indices()
            .await?
            .iter()
            .filter(|i| i.name == name)
            .cloned()
            .collect())
    }

    /// Drops the index `name` (every segment): a CreateIndex that only removes. The files
    /// stay until cleanup removes the versions that use them.
    pub async fn drop_index(&self, name: &str) -> Result<Self> {
        let removed = self.index_entries_named(name).await?;
        if removed.is_empty() {
            return Err(Error::InvalidArgument(format!("index {name:?} does not exist")));
        }
        self.commit_index_change(Vec::new(), removed).await
    }
}

/// The type URL of vector index details.
pub(crate) const VECTOR_DETAILS_URL: &str = "/lance.index.pb.VectorIndexDetails";

/// The files of one index directory in the dataset's store.
#[derive(Clone)]
pub(crate) struct DirStore {
    pub(crate) store: Arc<dyn Storage>,
    pub(crate) dir: String,
}

impl IndexStore for DirStore {
    fn write<'a>(&'a self, name: &'a str, bytes: Vec<u8>) -> BoxFuture<'a, lancelet_index::Result<u64>> {
        async move {
            let n = bytes.len() as u64;
            let path = format!("{}/{name}", self.dir);
            // An I/O failure (permission denied, disk full) stays an I/O error.
            self.store.put(&path, bytes.into()).await.map_err(|e| match e.kind() {
                lancelet_io::ErrorKind::Io => lancelet_index::Error::File(e.into()),
                _ => lancelet_index::Error::InvalidArgument(format!("writing {path}: {e}")),
            })?;
            Ok(n)
        }
        .boxed()
    }

    fn open<'a>(&'a self, name: &'a str) -> BoxFuture<'a, lancelet_index::Result<Arc<dyn ReadAt>>> {
        async move {
            Ok(self
                .store
                .open_file(&format!("{}/{name}", self.dir))
                .await
                .map_err(lancelet_file::Error::from)?)
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_index_names_follow_the_compression_and_hnsw_fields() {
        assert_eq!(vector_type_name(&[0x22, 0x04, 0x08, 0x08, 0x10, 0x04]), "IVF_PQ");
        assert_eq!(vector_type_name(&[]), "IVF_FLAT");
        assert_eq!(vector_type_name(&[0x1a, 0x00, 0x2a, 0x00]), "IVF_HNSW_SQ");
        assert_eq!(index_type_name("/lance.table.BTreeIndexDetails", &[]), "BTree");
        assert_eq!(index_type_name("", &[]), "Unknown");
    }
}
