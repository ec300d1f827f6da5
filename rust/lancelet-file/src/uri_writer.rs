//! Writing one Lance file to a URI (a local path, `file://`, `memory://` or `s3://` with
//! pylance-style storage options) so that it appears only once complete.
//!
//! The file is written to a temporary local file first: next to the target on local disk
//! (then renamed into place), in the temporary directory for object stores (then uploaded,
//! in parts when large). A writer that is aborted, dropped or fails leaves nothing at the
//! target and removes its temporary file.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use lancelet_io::{FileTarget, ObjectStoreStore, Storage};

use crate::{Error, FileWriter, Result, WriterOptions};

/// Where a finished file goes.
enum Destination {
    /// Renamed into place on local disk.
    Local(PathBuf),
    /// Uploaded to an object store.
    Object { store: ObjectStoreStore, key: String },
}

/// A [`FileWriter`] whose file appears at its URI only when [`UriFileWriter::finish`]
/// succeeds.
///
/// ```no_run
/// # async fn f(schema: arrow_schema::SchemaRef, batch: arrow_array::RecordBatch) -> lancelet_file::Result<()> {
/// use lancelet_file::uri_writer::UriFileWriter;
/// let mut w = UriFileWriter::create("memory://bucket/a.lance", &Default::default(), schema, Default::default())?;
/// w.write_batch(&batch)?;
/// let (rows, bytes) = w.finish().await?.expect("not closed yet");
/// # let _ = (rows, bytes); Ok(()) }
/// ```
pub struct UriFileWriter {
    inner: Option<FileWriter<BufWriter<File>>>,
    tmp: PathBuf,
    target: Destination,
    display: String,
}

impl UriFileWriter {
    /// Starts a file at `uri` (storage options as for datasets; local paths take none).
    pub fn create(
        uri: &str,
        storage_options: &HashMap<String, String>,
        schema: SchemaRef,
        opts: WriterOptions,
    ) -> Result<Self> {
        let (target, tmp, display) = match lancelet_io::file_target(uri, storage_options)? {
            FileTarget::Local(p) => {
                let tmp = temp_path(&p);
                let display = p.display().to_string();
                (Destination::Local(p), tmp, display)
            }
            FileTarget::Object { store, key } => {
                let name = Path::new(&key).file_name().map(PathBuf::from).unwrap_or_default();
                let tmp = temp_path(&std::env::temp_dir().join(name));
                (Destination::Object { store, key }, tmp, uri.to_string())
            }
        };
        let file = File::create(&tmp).map_err(|e| Error::io(&display, e))?;
        let writer = match FileWriter::try_new(BufWriter::with_capacity(1 << 20, file), &display, schema, opts) {
            Ok(w) => w,
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                return Err(e);
            }
        };
        Ok(Self {
            inner: Some(writer),
            tmp,
            target,
            display,
        })
    }

    fn open(&mut self) -> Result<&mut FileWriter<BufWriter<File>>> {
        self.inner
            .as_mut()
            .ok_or_else(|| Error::InvalidArgument("the writer is closed".into()))
    }

    /// Writes one record batch.
    pub fn write_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.open()?.write_batch(batch)
    }

    /// Writes a global buffer now; returns its index (1, 2, ...).
    pub fn add_global_buffer(&mut self, data: &[u8]) -> Result<u32> {
        self.open()?.add_global_buffer(data)
    }

    /// Adds a key/value pair to the schema metadata.
    pub fn add_schema_metadata(&mut self, key: String, value: String) -> Result<()> {
        self.open()?.add_schema_metadata(key, value);
        Ok(())
    }

    /// Finishes the file and puts it at its URI; returns the number of rows and the file
    /// size, or `None` if already closed. On failure nothing is left behind.
    pub async fn finish(&mut self) -> Result<Option<(u64, u64)>> {
        let Some(writer) = self.inner.take() else {
            return Ok(None);
        };
        let res = self.complete(writer).await;
        if res.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        res.map(Some)
    }

    async fn complete(&self, writer: FileWriter<BufWriter<File>>) -> Result<(u64, u64)> {
        let display = &self.display;
        let (out, rows) = writer.finish()?;
        let file = out.into_inner().map_err(|e| Error::io(display, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(display, e))?;
        let size = file.metadata().map_err(|e| Error::io(display, e))?.len();
        drop(file);
        match &self.target {
            Destination::Local(path) => {
                std::fs::rename(&self.tmp, path).map_err(|e| Error::io(display, e))?;
            }
            Destination::Object { store, key } => {
                store.upload(key, &self.tmp).await?;
                let _ = std::fs::remove_file(&self.tmp);
            }
        }
        Ok((rows, size))
    }

    /// Abandons the file: nothing is left at the target.
    pub fn abort(&mut self) {
        if self.inner.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }

    /// True once `finish` or `abort` ran.
    pub fn is_closed(&self) -> bool {
        self.inner.is_none()
    }
}

impl Drop for UriFileWriter {
    fn drop(&mut self) {
        self.abort();
    }
}

/// A hidden, unique temporary name next to `target`.
fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    target.with_file_name(format!(".{name}.{}-{nanos}.partial", std::process::id()))
}
