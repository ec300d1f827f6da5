//! Blob columns of a dataset: where each row's payload lives, and reading byte ranges of it.
//!
//! A scan returns blob descriptors (see [`lancelet_file::blob`]); [`Dataset::blob_locations`]
//! turns the descriptors of chosen rows into [`BlobLocation`]s (a file and a byte range),
//! checking every range against the size of the file it points into, so a hostile
//! descriptor gives a corrupt-file error instead of a wild read. [`Dataset::read_blob`]
//! then fetches just the bytes asked for.
//!
//! Payload places, by descriptor:
//! * v1 `(position, size)`: bytes of the row's data file; `(1, 0)` is null.
//! * v2 kind 0 (inline): bytes of the data file.
//! * v2 kind 1 (packed) / 2 (dedicated): a sidecar `data/<stem>/<id>.blob`, where `<stem>`
//!   is the data file's name without `.lance` and `<id>` the 32-bit `blob_id` with its
//!   bits reversed, written as 32 `0`/`1` characters ([`sidecar_name`]).
//! * v2 kind 3 (external): `blob_uri`, absolute when `blob_id` is 0, else relative to the
//!   manifest's base path with that id; `size` 0 means the whole object.

pub(crate) mod rewrite;
pub mod write;

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{Array, StructArray};
use arrow_buffer::Buffer;
use lancelet_file::blob::kind;
use lancelet_io::ReadAt;

use crate::fields::find_field;
use crate::scan::file_layouts;
use crate::{Dataset, Error, Result};

pub use lancelet_file::blob::{sidecar_dir, sidecar_name, Descriptor};

/// Where one blob's bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobLocation {
    /// A path relative to the dataset root, or (for external blobs) an absolute URI.
    pub path: String,
    /// Whether `path` is an external URI.
    pub external: bool,
    /// Offset of the first byte in the file.
    pub position: u64,
    /// Length in bytes.
    pub size: u64,
}

fn descriptors(col: &StructArray, path: &str) -> Result<Vec<Option<Descriptor>>> {
    let n = col.len();
    let names: Vec<&str> = col.fields().iter().map(|f| f.name().as_str()).collect();
    let get_u64 = |name: &str| {
        col.column_by_name(name)
            .and_then(|c| c.as_primitive_opt::<UInt64Type>())
            .ok_or_else(|| Error::corrupt(path, format!("blob descriptor without a u64 {name:?}")))
    };
    let pos = get_u64("position")?;
    let size = get_u64("size")?;
    if names.len() == 2 {
        // v1: (1, 0) is the null sentinel.
        return Ok((0..n)
            .map(|i| {
                let null = col.is_null(i) || pos.is_null(i) || (pos.value(i) != 0 && size.value(i) == 0);
                (!null).then(|| Descriptor {
                    kind: kind::INLINE,
                    position: pos.value(i),
                    size: size.value(i),
                    blob_id: 0,
                    uri: String::new(),
                })
            })
            .collect());
    }
    let kinds = col
        .column_by_name("kind")
        .and_then(|c| c.as_primitive_opt::<UInt8Type>())
        .ok_or_else(|| Error::corrupt(path, "blob descriptor without a kind"))?;
    let ids = col
        .column_by_name("blob_id")
        .and_then(|c| c.as_primitive_opt::<UInt32Type>())
        .ok_or_else(|| Error::corrupt(path, "blob descriptor without a blob_id"))?;
    let uris = col
        .column_by_name("blob_uri")
        .and_then(|c| c.as_string_opt::<i32>())
        .ok_or_else(|| Error::corrupt(path, "blob descriptor without a blob_uri"))?;
    Ok((0..n)
        .map(|i| {
            (!col.is_null(i)).then(|| Descriptor {
                kind: kinds.value(i),
                position: pos.value(i),
                size: size.value(i),
                blob_id: ids.value(i),
                uri: uris.value(i).to_string(),
            })
        })
        .collect())
}

/// An external blob's URI in a comparable form: a local path (RFC 8089 decoded) or the
/// URI itself, without a trailing `/`.
pub(crate) fn comparable(uri: &str) -> String {
    match lancelet_io::uri::local_path(uri) {
        Some(p) => p.display().to_string().trim_end_matches('/').to_string(),
        None => uri.trim_end_matches('/').to_string(),
    }
}

/// The registered base path `uri` lies under and its path relative to that base (`None`:
/// outside every base; a relative path with an empty, `.` or `..` segment is outside too).
pub(crate) fn in_base(uri: &str, bases: &[(u32, String)]) -> Option<(u32, String)> {
    let target = comparable(uri);
    bases.iter().find_map(|(id, base)| {
        let rest = target.strip_prefix(&comparable(base))?.strip_prefix('/')?;
        let inside = !rest.is_empty() && rest.split('/').all(|c| !c.is_empty() && c != "." && c != "..");
        inside.then(|| (*id, rest.to_string()))
    })
}

/// Whether explicit credentials are among `options` (keys as pylance spells them).
fn has_credentials(options: &HashMap<String, String>) -> bool {
    options.keys().any(|k| {
        let k = k.to_ascii_lowercase();
        k.contains("access_key_id")
            || k.contains("secret_access_key")
            || k.contains("session_token")
            || k.contains("skip_signature")
    })
}

/// Opens an external object: `uri` is a `file://` URI, an absolute path or any URI
/// [`crate::open_uri`] accepts, opened with `options`.
async fn open_external(uri: &str, options: &HashMap<String, String>) -> Result<Arc<dyn ReadAt>> {
    let local = lancelet_io::uri::local_path(uri);
    let (dir, name) = match &local {
        Some(p) => {
            let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
                return Err(Error::InvalidArgument(format!(
                    "external blob URI {uri:?} names no file"
                )));
            };
            let store = lancelet_io::LocalStore::new(dir);
            return Ok(store.open_file(&name.to_string_lossy()).await?);
        }
        None => match uri.rsplit_once('/') {
            Some((d, n)) if !n.is_empty() => (d, n),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "external blob URI {uri:?} names no file"
                )))
            }
        },
    };
    let loc = crate::open_uri(dir, options)?;
    Ok(loc.store.open_file(name).await?)
}

use lancelet_io::Storage as _;

/// The descriptors of blob column `column` in `batch` (a take of just that column): the
/// column itself, or, for a dotted path into structs, the child reached through the
/// nested structs the take returns, null wherever a parent struct is null.
fn descriptor_column(batch: &arrow_array::RecordBatch, column: &str) -> Option<StructArray> {
    let mut col = batch.column(0).as_struct_opt()?.clone();
    if batch.schema().field(0).name() == column {
        return Some(col);
    }
    for part in column.split('.').skip(1) {
        let child = col.column_by_name(part)?.as_struct_opt()?.clone();
        let nulls = arrow_buffer::NullBuffer::union(col.nulls(), child.nulls());
        let (fields, columns, _) = child.into_parts();
        col = StructArray::try_new(fields, columns, nulls).ok()?;
    }
    Some(col)
}

impl Dataset {
    /// The locations of the blobs of column `column` (a blob column, dotted paths into
    /// structs allowed) at row `addresses`, one per address; `None` for a null blob.
    /// Every range is checked against its file's size.
    pub async fn blob_locations(&self, column: &str, addresses: &[u64]) -> Result<Vec<Option<BlobLocation>>> {
        if !find_field(self.scan_schema(), column).is_some_and(|f| lancelet_file::blob::is_descriptor(&f)) {
            return Err(Error::InvalidArgument(format!("{column} is not a blob column")));
        }
        let batch = self.take_addresses(addresses, Some(&[column.to_string()])).await?;
        let root = self.root().display().to_string();
        let col = descriptor_column(&batch, column)
            .ok_or_else(|| Error::corrupt(&root, format!("blob column {column} did not read as descriptors")))?;
        self.locate_blobs(column, addresses, &col, false).await
    }

    /// The locations of blob descriptors `col` of column `column` (dotted paths allowed),
    /// read from the rows at `addresses` (one per descriptor; a null descriptor, e.g. under
    /// a null parent, has none). Every range is checked against its file's size.
    /// `rewriting`: the rows are being rewritten (compaction, update), which keeps external
    /// blobs as references without handing their bytes to anyone, so the reader's
    /// outside-the-bases policy does not apply.
    pub(crate) async fn locate_blobs(
        &self,
        column: &str,
        addresses: &[u64],
        col: &StructArray,
        rewriting: bool,
    ) -> Result<Vec<Option<BlobLocation>>> {
        let root = self.root().display().to_string();
        if col.len() != addresses.len() {
            return Err(Error::InvalidArgument(format!(
                "{} blob descriptors for {} row addresses",
                col.len(),
                addresses.len()
            )));
        }
        let descs = descriptors(col, &root)?;
        let path: Vec<&str> = column.split('.').collect();
        // Data file (relative to data/) holding the column, per fragment.
        let mut files: HashMap<u64, String> = HashMap::new();
        let mut sizes: HashMap<(bool, String), u64> = HashMap::new();
        let bases = self.base_list();
        let mut out = Vec::with_capacity(addresses.len());
        for (addr, d) in addresses.iter().zip(descs) {
            let Some(d) = d else {
                out.push(None);
                continue;
            };
            let frag_id = addr >> 32;
            let file = match files.get(&frag_id) {
                Some(f) => f.clone(),
                None => {
                    let frag = self
                        .fragments()
                        .iter()
                        .find(|f| f.id == frag_id)
                        .ok_or_else(|| Error::OutOfRange(format!("row address {addr}: no fragment {frag_id}")))?;
                    let readers = self.fragment_readers(frag).await?;
                    let layouts = file_layouts(frag, &readers);
                    let (i, _) = self
                        .column_source(frag, &readers, &layouts, &path)
                        .ok_or_else(|| Error::corrupt(&root, format!("fragment {frag_id} has no data for {column}")))?;
                    let p = frag.files[i].path.clone();
                    files.insert(frag_id, p.clone());
                    p
                }
            };
            let t = lancelet_file::blob::target(&d, &file, &bases, &root)?;
            if t.external && d.blob_id == 0 && !rewriting {
                self.check_external(column, &t.path, &bases)?;
            }
            if d.size == 0 && d.kind != kind::EXTERNAL {
                // Empty: nothing to read (and the position may be anything).
                out.push(Some(BlobLocation {
                    path: t.path,
                    external: t.external,
                    position: 0,
                    size: 0,
                }));
                continue;
            }
            let key = (t.external, t.path.clone());
            let file_size = match sizes.get(&key) {
                Some(s) => *s,
                None => {
                    let s = self.open_blob_file(&t.path, t.external).await?.size().await?;
                    sizes.insert(key, s);
                    s
                }
            };
            let (position, size) = lancelet_file::blob::bounded(&d, &t.path, file_size)?;
            out.push(Some(BlobLocation {
                path: t.path,
                external: t.external,
                position,
                size,
            }));
        }
        Ok(out)
    }

    /// Lets this dataset (and every version opened from it) read external blobs whose URIs
    /// lie outside its registered base paths. Off by default: a dataset from elsewhere could
    /// otherwise make its reader fetch any local file (`file:///etc/passwd`) or any object
    /// its credentials reach. pylance reads them unasked.
    pub fn allow_external_blobs_outside_bases(self, allow: bool) -> Self {
        self.caches
            .external_outside_bases
            .store(allow, std::sync::atomic::Ordering::Relaxed);
        self
    }

    /// Whether [`Dataset::allow_external_blobs_outside_bases`] is on.
    pub fn external_blobs_outside_bases_allowed(&self) -> bool {
        self.caches
            .external_outside_bases
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn base_list(&self) -> Vec<(u32, String)> {
        self.manifest()
            .base_paths
            .iter()
            .map(|b| (b.id, b.path.clone()))
            .collect()
    }

    /// Refuses an external blob at `uri` (a descriptor with no base) that lies outside every
    /// one of `bases`, unless the reader allowed it.
    fn check_external(&self, column: &str, uri: &str, bases: &[(u32, String)]) -> Result<()> {
        if self.external_blobs_outside_bases_allowed() || in_base(uri, bases).is_some() {
            return Ok(());
        }
        Err(Error::InvalidArgument(format!(
            "blob column {column} points at {uri:?}, outside the dataset's registered base paths; \
             a dataset can name any file or object this way, so such blobs are read only when \
             the reader allows it (lancelet.dataset(..., allow_external_blob_outside_bases=True), \
             or Dataset::allow_external_blobs_outside_bases in Rust)"
        )))
    }

    /// The storage options for an external object: the base path's own when `uri` lies in
    /// one; else the dataset's, never signed with credentials found in the environment or
    /// an instance-metadata endpoint (the user passed none for that store).
    fn external_options(&self, uri: &str) -> HashMap<String, String> {
        if lancelet_io::uri::local_path(uri).is_some() {
            return HashMap::new();
        }
        let options = self.storage_options();
        if let Some((id, _)) = in_base(uri, &self.base_list()) {
            return lancelet_table::bases::base_options(&options, id);
        }
        let mut own = lancelet_table::bases::own_options(&options);
        if !has_credentials(&own)
            && uri
                .split_once("://")
                .is_some_and(|(s, _)| s.eq_ignore_ascii_case("s3") || s.eq_ignore_ascii_case("s3a"))
        {
            own.insert("aws_skip_signature".into(), "true".into());
        }
        own
    }

    async fn open_blob_file(&self, path: &str, external: bool) -> Result<Arc<dyn ReadAt>> {
        if external {
            open_external(path, &self.external_options(path)).await
        } else {
            Ok(self.store().open_file(path).await?)
        }
    }

    /// The reader of the data file holding the blob at `loc`, when that file has checksums
    /// to check it against (blobs stored inline or as v1 payloads, in a file lancelet wrote,
    /// when this dataset verifies checksums). Sidecars and external objects have none.
    async fn checked_blob_file(&self, loc: &BlobLocation) -> Result<Option<Arc<lancelet_file::FileReader>>> {
        let in_data_file = (!loc.external && self.verifies_checksums())
            .then(|| loc.path.strip_prefix(crate::DATA_DIR)?.strip_prefix('/'))
            .flatten()
            .filter(|f| f.ends_with(".lance") && !f.contains('/'));
        let Some(file) = in_data_file else {
            return Ok(None);
        };
        let reader = self.data_file_reader(None, file).await?;
        Ok(reader.metadata().checksums.is_some().then_some(reader))
    }

    /// Reads bytes `range` (relative to the blob) of the blob at `loc`; bytes in a data file
    /// that has checksums are checked against them.
    pub async fn read_blob(&self, loc: &BlobLocation, range: Range<u64>) -> Result<Buffer> {
        if range.start > range.end || range.end > loc.size {
            return Err(Error::InvalidArgument(format!(
                "range {}..{} is outside the {}-byte blob",
                range.start, range.end, loc.size
            )));
        }
        if range.is_empty() {
            return Ok(Buffer::from_vec(Vec::<u8>::new()));
        }
        let bytes = loc.position + range.start..loc.position + range.end;
        let buf = match self.checked_blob_file(loc).await? {
            // In a data file with checksums: read a block at a time, checked.
            Some(reader) => reader.fetch(std::slice::from_ref(&bytes)).await?.swap_remove(0),
            None => {
                self.open_blob_file(&loc.path, loc.external)
                    .await?
                    .read_range(bytes)
                    .await?
            }
        };
        if let Some(stats) = self.io_stats.as_ref() {
            stats
                .bytes_read
                .fetch_add(buf.len() as u64, std::sync::atomic::Ordering::Relaxed);
            stats.read_requests.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(buf)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
mod tests {
    use super::*;

    #[test]
    fn sidecar_names_reverse_the_id_bits() {
        assert_eq!(sidecar_name(1), "10000000000000000000000000000000.blob");
        assert_eq!(sidecar_name(2), "01000000000000000000000000000000.blob");
        assert_eq!(sidecar_name(3), "11000000000000000000000000000000.blob");
        assert_eq!(sidecar_dir("abc.lance"), "abc");
    }

    #[test]
    fn external_paths_stay_in_their_base() {
        let d = |uri: &str| Descriptor {
            kind: kind::EXTERNAL,
            position: 0,
            size: 0,
            blob_id: 1,
            uri: uri.into(),
        };
        let bases = [(1, "/x/ext/".to_string())];
        let t = lancelet_file::blob::target(&d("a.bin"), "f.lance", &bases, "ds").unwrap();
        assert_eq!(t.path, "/x/ext/a.bin");
        for bad in ["../a", "a/../../b", "/etc/passwd", "s3://b/k", ""] {
            assert!(
                lancelet_file::blob::target(&d(bad), "f.lance", &bases, "ds").is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn ranges_past_the_file_are_corrupt() {
        let d = |position, size| Descriptor {
            kind: kind::INLINE,
            position,
            size,
            blob_id: 0,
            uri: String::new(),
        };
        assert!(lancelet_file::blob::bounded(&d(10, 5), "f", 15).is_ok());
        assert!(lancelet_file::blob::bounded(&d(10, 6), "f", 15).is_err());
        assert!(lancelet_file::blob::bounded(&d(u64::MAX, 2), "f", 15).is_err());
    }
}
