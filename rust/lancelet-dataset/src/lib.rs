//! Lance datasets: a versioned table made of fragments, each made of data files.
//!
//! This first slice is read-only: open a dataset directory at its latest or any earlier
//! version, see its schema and row counts, and read fragments as Arrow with deleted rows
//! removed. Deleted rows are skipped by reading only the surviving row ranges of each
//! data file, not by filtering after the read.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchOptions};
use arrow_schema::{Schema, SchemaRef};
use lancelet_file::io::LocalFile;
use lancelet_file::schema::from_lance_fields;
use lancelet_file::{Error, FileReader, Result};
use lancelet_table::deletion::{decode_deletions, deletion_file_path};
use lancelet_table::manifest::live_rows;
use lancelet_table::pb;
use lancelet_table::versions::{list_versions, read_version, VersionEntry};

/// The directory holding data files, relative to the dataset root.
pub const DATA_DIR: &str = "data";

/// One version of a dataset, opened for reading.
#[derive(Debug)]
pub struct Dataset {
    root: PathBuf,
    manifest: pb::Manifest,
    schema: SchemaRef,
}

fn table_err(e: lancelet_table::Error) -> Error {
    match e {
        lancelet_table::Error::Corrupt { path, message } => Error::Corrupt { path, message },
        lancelet_table::Error::Io { path, source } => Error::io(&path, source),
        lancelet_table::Error::VersionNotFound { path, version } => {
            Error::InvalidArgument(format!("version {version} of dataset {path} does not exist"))
        }
        other => Error::InvalidArgument(other.to_string()),
    }
}

impl Dataset {
    /// Opens `root` at `version` (the latest when `None`).
    pub fn open(root: &Path, version: Option<u64>) -> Result<Self> {
        if !root.join(lancelet_table::naming::VERSIONS_DIR).is_dir() {
            return Err(Error::NotFound {
                path: root.display().to_string(),
            });
        }
        let manifest = read_version(root, version).map_err(table_err)?;
        let path = root.display().to_string();
        let schema = Arc::new(from_lance_fields(&manifest.fields, &manifest.schema_metadata, &path)?);
        Ok(Self {
            root: root.to_path_buf(),
            manifest,
            schema,
        })
    }

    /// Every version of the dataset at `root`, oldest first.
    pub fn versions(root: &Path) -> Result<Vec<VersionEntry>> {
        list_versions(root).map_err(table_err)
    }

    /// The version this dataset was opened at.
    pub fn version(&self) -> u64 {
        self.manifest.version
    }

    /// The manifest of this version.
    pub fn manifest(&self) -> &pb::Manifest {
        &self.manifest
    }

    /// The table schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows in this version (deleted rows excluded).
    pub fn count_rows(&self) -> u64 {
        self.manifest.fragments.iter().map(live_rows).sum()
    }

    /// The fragments of this version.
    pub fn fragments(&self) -> &[pb::DataFragment] {
        &self.manifest.fragments
    }

    /// The schema of a projection (all columns when `None`).
    pub fn projected_schema(&self, columns: Option<&[String]>) -> Result<SchemaRef> {
        match columns {
            None => Ok(self.schema.clone()),
            Some(names) => {
                let fields = names
                    .iter()
                    .map(|n| {
                        self.schema
                            .field_with_name(n)
                            .cloned()
                            .map_err(|_| Error::InvalidArgument(format!("column {n:?} is not in the dataset's schema")))
                    })
                    .collect::<Result<Vec<_>>>()?;
                Ok(Arc::new(Schema::new_with_metadata(
                    fields,
                    self.schema.metadata().clone(),
                )))
            }
        }
    }

    /// Reads the live rows of fragment number `index` (position in [`Dataset::fragments`]).
    pub async fn read_fragment(&self, index: usize, columns: Option<&[String]>) -> Result<RecordBatch> {
        let frag = self
            .manifest
            .fragments
            .get(index)
            .ok_or_else(|| Error::InvalidArgument(format!("fragment {index} does not exist")))?;
        let schema = self.projected_schema(columns)?;
        let keep = self.live_ranges(frag)?;
        let rows: u64 = keep.iter().map(|r| r.end - r.start).sum();
        // Each column comes from the data file that holds it (schema evolution adds files).
        let mut arrays = Vec::with_capacity(schema.fields().len());
        let mut readers: Vec<FileReader> = Vec::with_capacity(frag.files.len());
        for df in &frag.files {
            let path = self.root.join(DATA_DIR).join(safe_relative(&df.path)?);
            let io = Arc::new(LocalFile::open(&path.display().to_string())?);
            readers.push(FileReader::open(io).await?);
        }
        for field in schema.fields() {
            let r = readers
                .iter()
                .find(|r| r.metadata().schema.field_with_name(field.name()).is_ok())
                .ok_or_else(|| {
                    Error::corrupt(
                        &self.root.display().to_string(),
                        format!("no data file of fragment {} holds {:?}", frag.id, field.name()),
                    )
                })?;
            if r.num_rows() != frag.physical_rows {
                return Err(Error::corrupt(
                    &r.metadata().path,
                    format!(
                        "data file has {} rows but the fragment has {}",
                        r.num_rows(),
                        frag.physical_rows
                    ),
                ));
            }
            let p = r.projection(Some(std::slice::from_ref(field.name())))?;
            let batch = r.read_ranges(&p, &keep, None).await?;
            arrays.push(batch.column(0).clone());
        }
        let opts = RecordBatchOptions::new().with_row_count(Some(rows as usize));
        Ok(RecordBatch::try_new_with_options(schema, arrays, &opts)?)
    }

    /// Row ranges of a fragment that are not deleted.
    #[expect(
        clippy::single_range_in_vec_init,
        reason = "a list of row ranges that may hold just one"
    )]
    fn live_ranges(&self, frag: &pb::DataFragment) -> Result<Vec<Range<u64>>> {
        let n = frag.physical_rows;
        let Some(d) = frag.deletion_file.as_ref() else {
            return Ok(vec![0..n]);
        };
        let path = self.root.join(deletion_file_path(frag.id, d));
        let display = path.display().to_string();
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&display, e))?;
        let deleted = decode_deletions(&bytes, d, &display).map_err(table_err)?;
        let mut out = Vec::new();
        let mut start = 0u64;
        for &row in &deleted {
            let row = u64::from(row);
            if row >= n {
                return Err(Error::corrupt(
                    &display,
                    format!("deleted row {row} is past the fragment's {n} rows"),
                ));
            }
            if row > start {
                out.push(start..row);
            }
            start = row + 1;
        }
        if start < n {
            out.push(start..n);
        }
        Ok(out)
    }
}

/// A data file path from a manifest, refused if it could escape the data directory.
fn safe_relative(p: &str) -> Result<&Path> {
    let path = Path::new(p);
    let ok = !p.is_empty() && path.components().all(|c| matches!(c, std::path::Component::Normal(_)));
    if ok {
        Ok(path)
    } else {
        Err(Error::corrupt(p, "data file path leaves the dataset directory"))
    }
}
