//! Index segments built apart from their commit, pylance 14's distributed index build:
//!
//! 1. each worker builds a segment over its fragments ([`Dataset::build_index_segment`],
//!    `create_index_uncommitted`): the files land in `_indices/{uuid}/` and the entry is
//!    returned, nothing is committed;
//! 2. segments may be merged into one ([`Dataset::merge_index_segments`],
//!    `merge_existing_index_segments`): a new segment over the union of their fragments;
//! 3. the segments are committed as one index ([`Dataset::commit_existing_index_segments`]),
//!    a CreateIndex that adds them; a CreateIndex of segments made by anyone (pylance
//!    included) is committed the same way through [`crate::commit::user_ops`].
//!
//! A merge rebuilds the index over the union of the fragments, where pylance merges the
//! segments' files; both give an index over the same rows. Vector segments can only be
//! merged when they share one model (the same centroids and quantizer), as in pylance.

use std::collections::HashMap;

use lancelet_file::FileVersion;
use lancelet_index::scalar::ScalarIndexType;
use lancelet_table::indices::{fragment_bitmap, uuid_string};
use lancelet_table::pb;
use lancelet_vector::ivf;
use roaring::RoaringBitmap;

use crate::commit::user_ops::UserOperation;
use crate::fields::arrow_schema_field;
use crate::index::build::{params_of, ScalarIndexRequest};
use crate::index::vector_build::{ModelFiles, VectorIndexRequest};
use crate::index::VECTOR_DETAILS_URL;
use crate::{Dataset, Error, Result};

/// The index one segment belongs to.
#[derive(Debug, Clone)]
pub enum SegmentRequest {
    /// A scalar index (BTREE, BITMAP, LABEL_LIST, ZONEMAP, NGRAM, BLOOMFILTER).
    Scalar(ScalarIndexRequest),
    /// A vector index (IVF_FLAT, IVF_PQ, IVF_SQ).
    Vector(VectorIndexRequest),
    /// A full-text (INVERTED) index.
    FullText {
        /// The column.
        column: String,
        /// The index name (`{column}_idx` by default).
        name: Option<String>,
        /// Whether an existing index of that name may be replaced.
        replace: bool,
        /// Tokenizer and format.
        params: crate::index::fts::FtsIndexParams,
    },
}

impl Dataset {
    /// Builds one segment of the index `req` describes over the live rows of `fragments`
    /// and writes its files, without committing; returns its entry. Its name is the one
    /// asked for (`{column}_idx` by default); an index of that name is an error unless
    /// `replace` (pylance's checks).
    pub async fn build_index_segment(&self, req: &SegmentRequest, fragments: Vec<u64>) -> Result<pb::IndexMetadata> {
        let (column, name, replace) = match req {
            SegmentRequest::Scalar(r) => (&r.column, &r.name, r.replace),
            SegmentRequest::Vector(r) => (&r.column, &r.name, r.replace),
            SegmentRequest::FullText {
                column, name, replace, ..
            } => (column, name, *replace),
        };
        let field = self
            .field_by_path(column)
            .ok_or_else(|| Error::InvalidArgument(format!("column {column:?} does not exist")))?
            .clone();
        let name = match name {
            Some(n) if n.is_empty() => return Err(Error::InvalidArgument("an index name cannot be empty".into())),
            Some(n) => n.clone(),
            None => format!("{column}_idx"),
        };
        self.replaced(&name, replace).await?;
        for id in &fragments {
            if self.fragment(*id).is_err() {
                return Err(Error::InvalidArgument(format!("No fragment with id {id}")));
            }
        }
        let mut meta = match req {
            SegmentRequest::Scalar(r) => {
                let kind = ScalarIndexType::parse(&r.index_type)?;
                let column_type = arrow_schema_field(self.schema(), column)
                    .ok_or_else(|| Error::InvalidArgument(format!("column {column:?} does not exist")))?;
                if !kind.supports(&column_type) {
                    return Err(Error::InvalidArgument(format!(
                        "a {} index cannot be built on column {column:?} of type {column_type}",
                        kind.name()
                    )));
                }
                self.train_segment(kind, column, &column_type, field.id, &r.params, Some(fragments))
                    .await?
                    .0
            }
            SegmentRequest::Vector(r) => self.train_vector_segment(column, &r.params, Some(fragments)).await?.0,
            SegmentRequest::FullText { params, .. } => {
                self.train_fts_segment(column, field.id, params, Some(fragments))
                    .await?
                    .0
            }
        };
        meta.name = name;
        Ok(meta)
    }

    /// Merges segments of one index (not committed, and not necessarily built on this
    /// version) into a new segment over the union of their fragments, named as the first;
    /// returns its entry. The segments stay as they are.
    pub async fn merge_index_segments(&self, segments: &[pb::IndexMetadata]) -> Result<pb::IndexMetadata> {
        let what = "merge_existing_index_segments";
        let first = segments
            .first()
            .ok_or_else(|| Error::InvalidArgument(format!("{what}: at least one index segment is required")))?;
        let type_url = |i: &pb::IndexMetadata| i.index_details.as_ref().map(|d| d.type_url.clone());
        for s in segments {
            let uuid = uuid_string(s).map_err(Error::InvalidArgument)?;
            if s.fields != first.fields || !s.covering_fields.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "{what}: segment {uuid} was built for fields {:?} (carried {:?}), expected keyed field {:?}",
                    s.fields, s.covering_fields, first.fields
                )));
            }
            if type_url(s) != type_url(first) {
                return Err(Error::InvalidArgument(format!(
                    "{what}: segment {uuid} is a {:?} index, the first a {:?} one",
                    type_url(s).unwrap_or_default(),
                    type_url(first).unwrap_or_default()
                )));
            }
        }
        let [field_id] = first.fields[..] else {
            return Err(Error::InvalidArgument(format!(
                "{what}: only indexes on one field can be merged, not fields {:?}",
                first.fields
            )));
        };
        let column = self
            .field_path(field_id)
            .ok_or_else(|| Error::InvalidArgument(format!("{what}: field id {field_id} is not in the schema")))?;
        let mut covered = RoaringBitmap::new();
        for s in segments {
            covered |= fragment_bitmap(s).map_err(Error::InvalidArgument)?;
        }
        let fragments: Vec<u64> = covered.iter().map(u64::from).collect();
        for id in &fragments {
            if self.fragment(*id).is_err() {
                return Err(Error::InvalidArgument(format!(
                    "{what}: fragment {id} is not in version {} of the dataset",
                    self.version()
                )));
            }
        }
        let url = type_url(first).unwrap_or_default();
        let mut meta = if url == VECTOR_DETAILS_URL {
            let mut models = Vec::with_capacity(segments.len());
            for s in segments {
                models.push(self.open_vector_index(s).await?.model()?);
            }
            let model = &models[0];
            let same = |m: &ivf::IvfModel| {
                m.dim == model.dim
                    && m.centroids == model.centroids
                    && m.pq == model.pq
                    && m.sq == model.sq
                    && m.params.index_type == model.params.index_type
                    && m.params.metric == model.params.metric
            };
            if !models.iter().all(same) {
                return Err(Error::InvalidArgument(format!(
                    "{what}: IVF centroids mismatch across segments: only segments built with the same model \
                     (pass the same ivf_centroids, and pq_codebook for IVF_PQ) can be merged"
                )));
            }
            let version = FileVersion::parse(&self.data_storage_version()).unwrap_or(FileVersion::V2_0);
            let files = ModelFiles(ivf::build(model, &[], &[], model.dim, version)?);
            self.build_vector_segment(&column, "", &files, fragments).await?
        } else if url == lancelet_fts::DETAILS_TYPE_URL {
            let params = self.fts_params_of(first).await?;
            self.train_fts_segment(&column, field_id, &params, Some(fragments))
                .await?
                .0
        } else {
            let kind = ScalarIndexType::from_type_url(&url)
                .ok_or_else(|| Error::Unsupported(format!("{what}: lancelet cannot build indexes of type {url:?}")))?;
            let column_type = arrow_schema_field(self.schema(), &column)
                .ok_or_else(|| Error::InvalidArgument(format!("column {column:?} does not exist")))?;
            let params = params_of(kind, first);
            self.train_segment(kind, &column, &column_type, field_id, &params, Some(fragments))
                .await?
                .0
        };
        meta.name = first.name.clone();
        // The merged segment describes the versions its parts were built on (pylance's).
        meta.dataset_version = segments
            .iter()
            .map(|s| s.dataset_version)
            .min()
            .unwrap_or(meta.dataset_version);
        Ok(meta)
    }

    /// Commits `segments` (built by anyone, their files written) as index `name` on
    /// `column`: a CreateIndex adding them, named `name`. Segments of that name the dataset
    /// has already stay, unless the new ones cover their fragments, which they then replace
    /// (one the new ones cover only in part is an error: its other fragments would lose
    /// their index), as in pylance 14. Each segment must be keyed on `column`.
    pub async fn commit_existing_index_segments(
        &self,
        name: &str,
        column: &str,
        segments: Vec<pb::IndexMetadata>,
    ) -> Result<Self> {
        if segments.is_empty() {
            return Err(Error::InvalidArgument(
                "CreateIndex: at least one index segment is required".into(),
            ));
        }
        let field = self
            .field_by_path(column)
            .ok_or_else(|| Error::InvalidArgument(format!("CreateIndex: column {column:?} does not exist")))?;
        let mut out = Vec::with_capacity(segments.len());
        for mut s in segments {
            let keyed: Vec<i32> = s
                .fields
                .iter()
                .copied()
                .filter(|f| !s.covering_fields.contains(f))
                .collect();
            if keyed != [field.id] {
                return Err(Error::InvalidArgument(format!(
                    "CreateIndex: segment {} was built for fields {keyed:?} (carried {:?}), expected keyed field [{}]",
                    uuid_string(&s).unwrap_or_default(),
                    s.covering_fields,
                    field.id
                )));
            }
            s.name = name.to_string();
            out.push(s);
        }
        let mut incoming = RoaringBitmap::new();
        for s in &out {
            incoming |= fragment_bitmap(s).map_err(Error::InvalidArgument)?;
        }
        let uuids: Vec<_> = out.iter().map(|s| s.uuid.clone()).collect();
        let mut removed = Vec::new();
        for old in self.indices().await?.iter().filter(|i| i.name == name) {
            let bitmap = fragment_bitmap(old).map_err(|e| Error::corrupt("_indices", e))?;
            if uuids.contains(&old.uuid) || (!bitmap.is_empty() && bitmap.is_subset(&incoming)) {
                removed.push(old.clone());
            } else if !bitmap.is_disjoint(&incoming) {
                let orphans: Vec<u32> = (&bitmap - &incoming).iter().collect();
                return Err(Error::InvalidArgument(format!(
                    "CreateIndex: incoming segments for '{name}' would orphan fragments {orphans:?} from existing \
                     segment {}",
                    uuid_string(old).unwrap_or_default()
                )));
            }
        }
        let op = UserOperation::CreateIndex {
            new_indices: out,
            removed_indices: removed,
        };
        self.commit_user_operation(op, HashMap::new(), None).await
    }
}
