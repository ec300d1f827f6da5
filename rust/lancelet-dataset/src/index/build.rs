//! Building scalar indexes over a dataset version (`create_scalar_index`).
//!
//! The column is scanned with row addresses (deleted rows excluded), handed to
//! `lancelet-index`, whose files land in `_indices/{uuid}/`, and a CreateIndex transaction
//! records the entry. A build that fails, or whose commit fails, removes its files.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use lancelet_file::FileVersion;
use lancelet_index::scalar::{self, ScalarIndex, ScalarIndexType, ScalarParams, TrainingBatch};
use lancelet_table::indices::{encode_fragment_bitmap, index_dir, INDICES_DIR};
use lancelet_table::pb;
use pb::transaction::Operation;
use roaring::RoaringBitmap;

use crate::fields::arrow_schema_field;
use crate::index::DirStore;
use crate::scan::index_query::keyed_by_row_id;
use crate::scan::{Columns, Scan, ScanOptions, ROW_ADDR};
use crate::{Dataset, Error, Result};

/// What `create_scalar_index` was asked for.
#[derive(Debug, Clone)]
pub struct ScalarIndexRequest {
    /// The column (a dotted path for a struct field).
    pub column: String,
    /// BTREE, BITMAP, LABEL_LIST, ZONEMAP, NGRAM or BLOOMFILTER (any case).
    pub index_type: String,
    /// The index name; `{column}_idx` by default.
    pub name: Option<String>,
    /// Replace an index of the same name (pylance's default); otherwise that is an error.
    pub replace: bool,
    /// Training parameters.
    pub params: ScalarParams,
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Dataset {
    /// The Lance field of a (dotted) column path.
    pub(crate) fn field_by_path(&self, path: &str) -> Option<&lancelet_proto::pbfile::Field> {
        let mut parent = -1;
        let mut found = None;
        for part in path.split('.') {
            let f = self
                .manifest
                .fields
                .iter()
                .find(|f| f.parent_id == parent && f.name == part)?;
            parent = f.id;
            found = Some(f);
        }
        found
    }

    /// The Lance file format index files of this dataset are written in (its own).
    pub(crate) fn index_file_version(&self) -> FileVersion {
        FileVersion::parse(&self.data_storage_version()).unwrap_or(FileVersion::V2_0)
    }

    /// Builds a scalar index on `req.column` and commits it; returns the new version.
    pub async fn create_scalar_index(&self, req: &ScalarIndexRequest) -> Result<Self> {
        if ["INVERTED", "FTS"].contains(&req.index_type.to_ascii_uppercase().as_str()) {
            // Full-text indexes take tokenizer parameters: `create_fts_index`.
            return self
                .create_fts_index(&req.column, req.name.clone(), req.replace, &Default::default())
                .await;
        }
        let kind = ScalarIndexType::parse(&req.index_type)?;
        let field = self
            .field_by_path(&req.column)
            .ok_or_else(|| Error::InvalidArgument(format!("column {:?} does not exist", req.column)))?
            .clone();
        let existing = self.indices().await?;
        let type_of = |i: &pb::IndexMetadata| i.index_details.as_ref().map(|d| d.type_url.clone()).unwrap_or_default();
        let name = match &req.name {
            Some(n) if n.is_empty() => return Err(Error::InvalidArgument("an index name cannot be empty".into())),
            Some(n) => n.clone(),
            None => {
                // The default name goes to the next free `_idx_N` when an index of another
                // type holds it, as pylance does.
                let base = format!("{}_idx", req.column);
                let mut name = base.clone();
                let mut k = 2;
                while existing.iter().any(|i| i.name == name && type_of(i) != kind.type_url()) {
                    name = format!("{base}_{k}");
                    k += 1;
                }
                name
            }
        };
        let removed = self.replaced(&name, req.replace).await?;
        let schema = self.schema();
        let column_type = arrow_schema_field(schema, &req.column)
            .ok_or_else(|| Error::InvalidArgument(format!("column {:?} does not exist", req.column)))?;
        if !kind.supports(&column_type) {
            return Err(Error::InvalidArgument(format!(
                "a {} index cannot be built on column {:?} of type {column_type}",
                kind.name(),
                req.column
            )));
        }
        let (mut meta, _) = self
            .train_segment(kind, &req.column, &column_type, field.id, &req.params, None)
            .await?;
        meta.name = name;
        self.commit_index_change(vec![meta], removed).await
    }

    /// The entries index `name` replaces; an existing index of that name is an error unless
    /// `replace`.
    pub(crate) async fn replaced(&self, name: &str, replace: bool) -> Result<Vec<pb::IndexMetadata>> {
        let removed = self.index_entries_named(name).await?;
        if !removed.is_empty() && !replace {
            return Err(Error::InvalidArgument(format!(
                "Index name '{name}' already exists; pass replace=True to replace it"
            )));
        }
        Ok(removed)
    }

    /// Commits a CreateIndex adding `new_indices` (whose files are written) and removing
    /// `removed`; when that surely committed nothing, removes the new index directories.
    pub(crate) async fn commit_index_change(
        &self,
        new_indices: Vec<pb::IndexMetadata>,
        removed: Vec<pb::IndexMetadata>,
    ) -> Result<Self> {
        let dirs: Vec<String> = new_indices.iter().filter_map(|m| index_dir(m).ok()).collect();
        let op = Operation::CreateIndex(pb::transaction::CreateIndex {
            new_indices,
            removed_indices: removed,
        });
        match self.commit_operation(op, None).await {
            Ok(ds) => Ok(ds),
            Err(e) => {
                if crate::write::nothing_committed(&e) {
                    for dir in &dirs {
                        self.remove_index_dir(dir).await;
                    }
                }
                Err(e)
            }
        }
    }

    /// Trains one index segment of `kind` on `column` over `fragments` (all when `None`)
    /// and writes its files; returns its entry (unnamed) and directory.
    pub(crate) async fn train_segment(
        &self,
        kind: ScalarIndexType,
        column: &str,
        column_type: &arrow_schema::DataType,
        field_id: i32,
        params: &ScalarParams,
        fragments: Option<Vec<u64>>,
    ) -> Result<(pb::IndexMetadata, String)> {
        let covered: RoaringBitmap = match &fragments {
            Some(ids) => ids.iter().filter_map(|f| u32::try_from(*f).ok()).collect(),
            None => self
                .fragments()
                .iter()
                .filter_map(|f| u32::try_from(f.id).ok())
                .collect(),
        };
        // pylance 14 keys these indexes by stable row id when the dataset has them (a
        // BTREE keeps row addresses, and says so with index version 1).
        let stable = self.has_stable_row_ids();
        let index_version = if stable && kind == ScalarIndexType::BTree {
            1
        } else {
            kind.index_version()
        };
        let batches = self
            .training_batches(column, fragments, stable && keyed_by_row_id(kind, index_version))
            .await?;
        let uuid = uuid::Uuid::new_v4();
        let mut meta = pb::IndexMetadata {
            uuid: Some(pb::Uuid {
                uuid: uuid.as_bytes().to_vec().into(),
            }),
            fields: vec![field_id],
            name: String::new(),
            dataset_version: self.version(),
            fragment_bitmap: encode_fragment_bitmap(&covered).into(),
            index_details: None,
            index_version: Some(index_version),
            created_at: Some(now_ms()),
            base_id: None,
            files: Vec::new(),
            covering_fields: Vec::new(),
        };
        let dir = index_dir(&meta).map_err(Error::InvalidArgument)?;
        let files = DirStore {
            store: self.store.clone(),
            dir: dir.clone(),
        };
        let built = scalar::train(
            kind,
            params,
            column_type,
            batches.into_iter().map(Ok),
            &files,
            self.index_file_version(),
        )
        .await;
        let created = match built {
            Ok(c) => c,
            Err(e) => {
                self.remove_index_dir(&dir).await;
                return Err(e.into());
            }
        };
        meta.index_details = Some(prost_types::Any {
            type_url: created.type_url.to_string(),
            value: created.details.clone(),
        });
        meta.files = created
            .files
            .iter()
            .map(|(path, size)| pb::IndexFile {
                path: path.clone(),
                size_bytes: *size,
            })
            .collect();
        Ok((meta, dir))
    }

    /// Brings scalar indexes up to date with the fragments (`optimize.optimize_indices`):
    /// with `num_indices_to_merge = Some(0)` each index gains a delta segment over the
    /// fragments no segment covers; otherwise every segment of an index is replaced by one
    /// built over all fragments (pylance merges; a rebuild gives the same index). Indexes
    /// lancelet cannot build (IVF_RQ) are left as they are.
    pub async fn optimize_indices(&self, opts: &OptimizeIndicesOptions) -> Result<Self> {
        let indices = self.indices().await?;
        let live: RoaringBitmap = self
            .fragments()
            .iter()
            .filter_map(|f| u32::try_from(f.id).ok())
            .collect();
        let mut names: Vec<String> = Vec::new();
        for i in indices.iter() {
            if !names.contains(&i.name) && opts.index_names.as_ref().is_none_or(|n| n.contains(&i.name)) {
                names.push(i.name.clone());
            }
        }
        let mut new_indices = Vec::new();
        let mut removed = Vec::new();
        let mut dirs = Vec::new();
        let result: Result<()> = async {
            for name in names {
                let segs: Vec<&pb::IndexMetadata> = indices.iter().filter(|i| i.name == name).collect();
                let Some(first) = segs.first() else { continue };
                let is_vector = first
                    .index_details
                    .as_ref()
                    .is_some_and(|d| d.type_url == crate::index::VECTOR_DETAILS_URL);
                if is_vector {
                    // A delta encodes the unindexed fragments with the index's own model;
                    // merging rebuilds the index with the same type, metric and shape.
                    let [field_id] = first.fields[..] else { continue };
                    let Some(column) = self.field_path(field_id) else {
                        continue;
                    };
                    let params = self.vector_params_of(first).await?;
                    if params.index_type == lancelet_vector::ivf::VectorIndexType::IvfRq {
                        // lancelet cannot encode RaBitQ codes: the index stays as it is and
                        // fragments it does not cover are searched exactly.
                        continue;
                    }
                    if opts.num_indices_to_merge == Some(0) {
                        let mut covered = RoaringBitmap::new();
                        for seg in &segs {
                            covered |= lancelet_table::indices::fragment_bitmap(seg)
                                .map_err(|e| Error::corrupt(INDICES_DIR, e))?;
                        }
                        let unindexed: Vec<u64> = (&live - &covered).iter().map(u64::from).collect();
                        if unindexed.is_empty() {
                            continue;
                        }
                        let meta = self.vector_delta(first, &column, unindexed).await?;
                        if let Ok(dir) = index_dir(&meta) {
                            dirs.push(dir);
                        }
                        new_indices.push(meta);
                        continue;
                    }
                    let (mut meta, dir) = self.train_vector_segment(&column, &params, None).await?;
                    meta.dataset_version = segs
                        .iter()
                        .map(|s| s.dataset_version)
                        .min()
                        .unwrap_or(meta.dataset_version);
                    meta.name = name;
                    removed.extend(segs.iter().map(|s| (*s).clone()));
                    dirs.push(dir);
                    new_indices.push(meta);
                    continue;
                }
                if super::fts::is_fts(first) {
                    // A delta tokenizes the unindexed fragments with the index's own
                    // settings; merging rebuilds one segment over every fragment.
                    let [field_id] = first.fields[..] else { continue };
                    let Some(column) = self.field_path(field_id) else {
                        continue;
                    };
                    let mut covered = RoaringBitmap::new();
                    for seg in &segs {
                        covered |= lancelet_table::indices::fragment_bitmap(seg)
                            .map_err(|e| Error::corrupt(INDICES_DIR, e))?;
                    }
                    let unindexed: Vec<u64> = (&live - &covered).iter().map(u64::from).collect();
                    let stale = !(&covered - &live).is_empty();
                    let params = self.fts_params_of(first).await?;
                    let delta = opts.num_indices_to_merge == Some(0);
                    if unindexed.is_empty() && (delta || (segs.len() == 1 && !stale)) {
                        continue;
                    }
                    let fragments = delta.then_some(unindexed);
                    let (mut meta, dir) = self.train_fts_segment(&column, field_id, &params, fragments).await?;
                    if !delta {
                        meta.dataset_version = segs
                            .iter()
                            .map(|s| s.dataset_version)
                            .min()
                            .unwrap_or(meta.dataset_version);
                        removed.extend(segs.iter().map(|s| (*s).clone()));
                    }
                    meta.name = name;
                    dirs.push(dir);
                    new_indices.push(meta);
                    continue;
                }
                let Some(kind) = first
                    .index_details
                    .as_ref()
                    .and_then(|d| ScalarIndexType::from_type_url(&d.type_url))
                else {
                    continue;
                };
                let [field_id] = first.fields[..] else { continue };
                let Some(column) = self.field_path(field_id) else {
                    continue;
                };
                let Some(column_type) = arrow_schema_field(self.schema(), &column) else {
                    continue;
                };
                let mut covered = RoaringBitmap::new();
                for seg in &segs {
                    covered |=
                        lancelet_table::indices::fragment_bitmap(seg).map_err(|e| Error::corrupt(INDICES_DIR, e))?;
                }
                let unindexed: Vec<u64> = (&live - &covered).iter().map(u64::from).collect();
                let stale = !(&covered - &live).is_empty();
                let params = params_of(kind, first);
                let (mut meta, dir) = if opts.num_indices_to_merge == Some(0) {
                    if unindexed.is_empty() {
                        continue;
                    }
                    self.train_segment(kind, &column, &column_type, field_id, &params, Some(unindexed))
                        .await?
                } else {
                    if unindexed.is_empty() && segs.len() == 1 && !stale {
                        continue;
                    }
                    let (mut meta, dir) = self
                        .train_segment(kind, &column, &column_type, field_id, &params, None)
                        .await?;
                    // A merged index keeps the oldest version it describes, as pylance's do.
                    meta.dataset_version = segs
                        .iter()
                        .map(|s| s.dataset_version)
                        .min()
                        .unwrap_or(meta.dataset_version);
                    removed.extend(segs.iter().map(|s| (*s).clone()));
                    (meta, dir)
                };
                meta.name = name;
                dirs.push(dir);
                new_indices.push(meta);
            }
            Ok(())
        }
        .await;
        if let Err(e) = result {
            for dir in &dirs {
                self.remove_index_dir(dir).await;
            }
            return Err(e);
        }
        if new_indices.is_empty() {
            return Ok(self.clone());
        }
        self.commit_index_change(new_indices, removed).await
    }

    /// The statistics of the scalar index segment `uuid` (empty for other index types).
    pub async fn index_segment_statistics(&self, uuid: &str) -> Result<std::collections::BTreeMap<String, String>> {
        let idx = &self.index_segment(uuid).await?;
        if super::fts::is_fts(idx) {
            let v = self.fts_statistics(idx).await?;
            return Ok(v
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
                        .collect()
                })
                .unwrap_or_default());
        }
        Ok(match self.open_scalar_index(idx).await? {
            Some(index) => index.statistics(),
            None => Default::default(),
        })
    }

    async fn training_batches(
        &self,
        column: &str,
        fragments: Option<Vec<u64>>,
        by_row_id: bool,
    ) -> Result<Vec<TrainingBatch>> {
        let opts = ScanOptions {
            columns: Columns::Names(vec![column.to_string()]),
            with_row_address: !by_row_id,
            with_row_id: by_row_id,
            fragments,
            ..ScanOptions::default()
        };
        let key = if by_row_id { crate::scan::ROW_ID } else { ROW_ADDR };
        let scan = std::sync::Arc::new(Scan::plan(self, opts).await?);
        let mut out = Vec::new();
        for b in scan.collect_parallel().await? {
            let values = b.column(0).clone();
            let addrs = b
                .column_by_name(key)
                .ok_or_else(|| Error::InvalidArgument(format!("the scan returned no {key}")))?
                .as_primitive::<UInt64Type>()
                .clone();
            out.push(TrainingBatch::try_new(values, addrs)?);
        }
        Ok(out)
    }

    pub(crate) async fn remove_index_dir(&self, dir: &str) {
        if let Ok(files) = self.store.list(dir).await {
            for f in files {
                let _ = self.store.delete(&format!("{dir}/{f}")).await;
            }
        }
    }

    /// The open scalar index of entry `idx` (cached by uuid), or `None` when its type is
    /// not a scalar type lancelet searches.
    pub(crate) async fn open_scalar_index(&self, idx: &pb::IndexMetadata) -> Result<Option<Arc<dyn ScalarIndex>>> {
        let Some(kind) = idx
            .index_details
            .as_ref()
            .and_then(|d| ScalarIndexType::from_type_url(&d.type_url))
        else {
            return Ok(None);
        };
        let (index_store, dir) = self.index_files(idx)?;
        if let Some(hit) = self
            .caches
            .scalar_indexes
            .lock()
            .ok()
            .and_then(|c| c.get(&dir).cloned())
        {
            return Ok(Some(hit));
        }
        let files = DirStore {
            store: index_store,
            dir: dir.clone(),
        };
        let opened = scalar::open(kind, &files).await?;
        if let Ok(mut c) = self.caches.scalar_indexes.lock() {
            c.insert(dir, opened.clone());
        }
        Ok(Some(opened))
    }
}

/// What [`Dataset::optimize_indices`] does.
#[derive(Debug, Clone, Default)]
pub struct OptimizeIndicesOptions {
    /// `Some(0)`: only add delta segments; otherwise merge (rebuild) each index.
    pub num_indices_to_merge: Option<usize>,
    /// Only these indexes (all when `None`).
    pub index_names: Option<Vec<String>>,
}

/// Training parameters recorded with an index (a zone map's rows per zone); defaults else.
pub(crate) fn params_of(kind: ScalarIndexType, idx: &pb::IndexMetadata) -> ScalarParams {
    let mut p = ScalarParams::default();
    if kind == ScalarIndexType::ZoneMap {
        // ZoneMapIndexDetails field 1 (varint): rows per zone.
        if let Some(d) = &idx.index_details {
            if let [0x08, rest @ ..] = d.value.as_slice() {
                let mut v = 0u64;
                for (i, b) in rest.iter().enumerate().take(10) {
                    v |= u64::from(b & 0x7f) << (7 * i);
                    if b & 0x80 == 0 {
                        if v > 0 {
                            p.rows_per_zone = v;
                        }
                        break;
                    }
                }
            }
        }
    }
    p
}
