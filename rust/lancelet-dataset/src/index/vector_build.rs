//! Building vector indexes (`create_index`): IVF_FLAT, IVF_PQ, IVF_SQ.
//!
//! The vectors of every live row are read with their row addresses, a model (IVF centroids
//! and the storage's quantizer) is trained on a sample, every row is encoded into
//! `auxiliary.idx` / `index.idx` under `_indices/{uuid}/`, and a CreateIndex records it.

use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use lancelet_file::FileVersion;
use lancelet_index::scalar::IndexStore;
use lancelet_table::indices::{encode_fragment_bitmap, index_dir};
use lancelet_table::pb;
use lancelet_vector::distance::to_f32;
use lancelet_vector::ivf::{self, VectorBuildParams};
use roaring::RoaringBitmap;

use crate::index::{DirStore, VECTOR_DETAILS_URL};
use crate::scan::{Columns, Scan, ScanOptions, ROW_ADDR};
use crate::{Dataset, Error, Result};

/// What `create_index` was asked for.
#[derive(Debug, Clone)]
pub struct VectorIndexRequest {
    /// The vector column.
    pub column: String,
    /// The index name; `{column}_idx` by default.
    pub name: Option<String>,
    /// Replace an index of the same name (otherwise that is an error, pylance's default).
    pub replace: bool,
    /// Build parameters.
    pub params: VectorBuildParams,
}

impl Dataset {
    /// The float type of the items of vector column `column` (a dotted path).
    fn vector_value_type(&self, column: &str) -> ivf::ValueType {
        match crate::fields::arrow_schema_field(self.schema(), column) {
            Some(arrow_schema::DataType::FixedSizeList(item, _)) => ivf::ValueType::of_column(item.data_type()),
            _ => ivf::ValueType::Float32,
        }
    }

    /// The vectors (as f32, row-major) and keys of every live row of `column`, restricted
    /// to `fragments` when given. The keys are row addresses, or stable row ids on a
    /// dataset that has them: vector indexes are keyed by row id there (pylance's files
    /// are), so they survive compaction and updates that move rows.
    pub(crate) async fn read_vectors(
        &self,
        column: &str,
        fragments: Option<Vec<u64>>,
    ) -> Result<(Vec<f32>, Vec<u64>, usize)> {
        let whole = fragments.is_none();
        let by_id = self.has_stable_row_ids();
        let scan = std::sync::Arc::new(
            Scan::plan(
                self,
                ScanOptions {
                    columns: Columns::Names(vec![column.to_string()]),
                    with_row_address: !by_id,
                    with_row_id: by_id,
                    fragments,
                    ..ScanOptions::default()
                },
            )
            .await?,
        );
        let key = if by_id { crate::scan::ROW_ID } else { ROW_ADDR };
        let (mut vectors, mut addrs, mut dim) = (Vec::new(), Vec::new(), 0);
        for b in scan.collect_parallel().await? {
            let a = b
                .column_by_name(key)
                .ok_or_else(|| Error::InvalidArgument(format!("the scan returned no {key}")))?
                .as_primitive::<UInt64Type>()
                .clone();
            // Rows without a vector are not indexed (they have no distance).
            let (col, a) = crate::index::knn::valid_vectors(b.column(0), a)?;
            let (v, d) = to_f32(col.as_ref())?;
            if vectors.is_empty() && whole {
                // Reserved once: growing by doubling would hold two copies at its peak.
                vectors.reserve_exact(usize::try_from(self.count_rows()).unwrap_or(0).saturating_mul(d));
            }
            dim = d;
            vectors.extend_from_slice(&v);
            addrs.extend_from_slice(a.values());
        }
        Ok((vectors, addrs, dim))
    }

    /// Builds a vector index and commits it; returns the new version.
    pub async fn create_vector_index(&self, req: &VectorIndexRequest) -> Result<Self> {
        let name = req.name.clone().unwrap_or_else(|| format!("{}_idx", req.column));
        let removed = self.replaced(&name, req.replace).await?;
        let (mut meta, _) = self.train_vector_segment(&req.column, &req.params, None).await?;
        meta.name = name;
        self.commit_index_change(vec![meta], removed).await
    }

    /// The build parameters an existing vector index was made with (type, metric,
    /// partitions, PQ shape), for rebuilding it over new fragments.
    pub(crate) async fn vector_params_of(&self, idx: &pb::IndexMetadata) -> Result<VectorBuildParams> {
        use prost::Message;
        let index = self.open_vector_index(idx).await?;
        let mut params = VectorBuildParams::new(index.index_type(), index.metric());
        params.num_partitions = Some(index.num_partitions());
        if let Some(d) = &idx.index_details {
            let details = lancelet_vector::proto::VectorIndexDetails::decode(d.value.as_slice())
                .map_err(|e| Error::corrupt("_indices", format!("vector index details: {e}")))?;
            params.target_partition_size = details.target_partition_size.map(|t| t as usize);
            if let Some(lancelet_vector::proto::Compression::Pq(pq)) = details.compression {
                params.num_sub_vectors = Some(pq.num_sub_vectors as usize);
                params.num_bits = pq.num_bits;
            }
        }
        Ok(params)
    }

    /// Trains and writes one vector index segment over every live row of `fragments` (all
    /// when `None`); returns its entry (unnamed) and directory.
    pub(crate) async fn train_vector_segment(
        &self,
        column: &str,
        params: &VectorBuildParams,
        fragments: Option<Vec<u64>>,
    ) -> Result<(pb::IndexMetadata, String)> {
        let field = self
            .field_by_path(column)
            .ok_or_else(|| Error::InvalidArgument(format!("column {column:?} does not exist")))?
            .clone();
        let covered: RoaringBitmap = match &fragments {
            Some(ids) => ids.iter().filter_map(|f| u32::try_from(*f).ok()).collect(),
            None => self
                .fragments()
                .iter()
                .filter_map(|f| u32::try_from(f.id).ok())
                .collect(),
        };
        let (vectors, addrs, dim) = self.read_vectors(column, fragments).await?;
        if addrs.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "column {column:?} has no vectors to train an index on"
            )));
        }
        let mut params = params.clone();
        if let Some(n) = params.num_partitions {
            // A rebuild over fewer rows than the old index had partitions.
            params.num_partitions = Some(n.min(addrs.len()).max(1));
        }
        let mut model = ivf::train_model(&vectors, dim, &params)?;
        model.value_type = self.vector_value_type(column);
        let meta = self
            .write_vector_segment(&model, &vectors, &addrs, dim, field.id, "", &covered)
            .await?;
        let dir = index_dir(&meta).map_err(Error::InvalidArgument)?;
        Ok((meta, dir))
    }
}

/// A trained vector index model as bytes: the index files of a segment without rows (its
/// centroids and quantizer). Built once (on a driver) and shipped to whoever encodes
/// fragments with it, so that every segment shares the model, as delta segments do.
#[derive(Debug, Clone)]
pub struct ModelFiles(pub Vec<(String, Vec<u8>)>);

impl ModelFiles {
    pub(crate) async fn open(&self) -> Result<lancelet_vector::ivf::IvfModel> {
        let store = lancelet_index::scalar::MemoryStore::new();
        for (name, bytes) in &self.0 {
            store.insert(name.clone(), bytes.clone());
        }
        Ok(ivf::IvfIndex::open(&store).await?.model()?)
    }
}

impl Dataset {
    /// Trains a model for `column` on a sample of at most `sample_rows` rows (every row when
    /// the column is smaller), without building an index.
    pub async fn train_vector_model(
        &self,
        column: &str,
        params: &VectorBuildParams,
        sample_rows: usize,
    ) -> Result<ModelFiles> {
        let total = self.count_rows();
        let (vectors, _, dim) = if total as usize <= sample_rows {
            self.read_vectors(column, None).await?
        } else {
            // An even stride over the live rows: deterministic, and spread over fragments.
            let step = total as f64 / sample_rows as f64;
            let idx: Vec<u64> = (0..sample_rows).map(|i| (i as f64 * step) as u64).collect();
            let b = self.take(&idx, Some(&[column.to_string()])).await?;
            let col = b.column(0);
            let (v, d) = to_f32(col.as_ref())?;
            let mut kept = Vec::with_capacity(v.len());
            for i in 0..b.num_rows() {
                if col.is_valid(i) {
                    kept.extend_from_slice(&v[i * d..(i + 1) * d]);
                }
            }
            (kept, Vec::new(), d)
        };
        if vectors.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "column {column:?} has no vectors to train on"
            )));
        }
        let mut model = ivf::train_model(&vectors, dim, params)?;
        model.value_type = self.vector_value_type(column);
        let version = FileVersion::parse(&self.data_storage_version()).unwrap_or(FileVersion::V2_0);
        Ok(ModelFiles(ivf::build(&model, &[], &[], dim, version)?))
    }

    /// Encodes the rows of `fragments` with `model` into a new index segment (files written,
    /// nothing committed); returns its entry, named `name`.
    pub async fn build_vector_segment(
        &self,
        column: &str,
        name: &str,
        model: &ModelFiles,
        fragments: Vec<u64>,
    ) -> Result<pb::IndexMetadata> {
        let model = model.open().await?;
        let field = self
            .field_by_path(column)
            .ok_or_else(|| Error::InvalidArgument(format!("column {column:?} does not exist")))?
            .clone();
        let covered: RoaringBitmap = fragments.iter().filter_map(|f| u32::try_from(*f).ok()).collect();
        let (vectors, addrs, dim) = self.read_vectors(column, Some(fragments)).await?;
        let dim = if addrs.is_empty() { model.dim } else { dim };
        self.write_vector_segment(&model, &vectors, &addrs, dim, field.id, name, &covered)
            .await
    }

    /// Encodes `vectors` (at `addrs`) with `model` and writes the files of a new segment
    /// covering `covered`; returns its entry. A failed write removes what was written.
    #[allow(
        clippy::too_many_arguments,
        reason = "the pieces of one segment, each computed by the caller"
    )]
    async fn write_vector_segment(
        &self,
        model: &ivf::IvfModel,
        vectors: &[f32],
        addrs: &[u64],
        dim: usize,
        field_id: i32,
        name: &str,
        covered: &RoaringBitmap,
    ) -> Result<pb::IndexMetadata> {
        let version = FileVersion::parse(&self.data_storage_version()).unwrap_or(FileVersion::V2_0);
        let files = ivf::build(model, vectors, addrs, dim, version)?;
        let mut meta = pb::IndexMetadata {
            uuid: Some(pb::Uuid {
                uuid: uuid::Uuid::new_v4().as_bytes().to_vec().into(),
            }),
            fields: vec![field_id],
            name: name.to_string(),
            dataset_version: self.version(),
            fragment_bitmap: encode_fragment_bitmap(covered).into(),
            index_details: Some(prost_types::Any {
                type_url: VECTOR_DETAILS_URL.to_string(),
                value: ivf::details(model),
            }),
            index_version: Some(1),
            created_at: Some(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(0),
            ),
            base_id: None,
            files: Vec::new(),
            covering_fields: Vec::new(),
        };
        let dir = index_dir(&meta).map_err(Error::InvalidArgument)?;
        let store = DirStore {
            store: self.store.clone(),
            dir: dir.clone(),
        };
        for (file, bytes) in files {
            match store.write(&file, bytes).await {
                Ok(size) => meta.files.push(pb::IndexFile {
                    path: file,
                    size_bytes: size,
                }),
                Err(e) => {
                    self.remove_index_dir(&dir).await;
                    return Err(e.into());
                }
            }
        }
        Ok(meta)
    }

    /// Commits segments built by [`Dataset::build_vector_segment`] as index `name`,
    /// replacing an index of that name when `replace` (otherwise that is an error).
    pub async fn commit_index_segments(
        &self,
        name: &str,
        segments: Vec<pb::IndexMetadata>,
        replace: bool,
    ) -> Result<Self> {
        let removed = self.replaced(name, replace).await?;
        self.commit_index_change(segments, removed).await
    }

    /// A delta segment of vector index `idx`'s name over `fragments`, encoded with the
    /// model of `idx` (the same centroids and codebook, as pylance's deltas).
    pub(crate) async fn vector_delta(
        &self,
        idx: &pb::IndexMetadata,
        column: &str,
        fragments: Vec<u64>,
    ) -> Result<pb::IndexMetadata> {
        let index = self.open_vector_index(idx).await?;
        let model = index.model()?;
        let version = FileVersion::parse(&self.data_storage_version()).unwrap_or(FileVersion::V2_0);
        let files = ModelFiles(ivf::build(&model, &[], &[], model.dim, version)?);
        self.build_vector_segment(column, &idx.name, &files, fragments).await
    }
}
