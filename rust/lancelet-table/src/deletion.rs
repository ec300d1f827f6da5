//! Deletion files: which rows of a fragment are deleted.
//!
//! They live at `_deletions/{fragment_id}-{read_version}-{id}.{ext}`. Small sets are an
//! Arrow IPC file (`.arrow`) with one column of 32-bit row offsets; large sets are a
//! portable-format roaring bitmap (`.bin`).
//!
//! lancelet records a CRC32C of each deletion file it writes in the manifest
//! (`DeletionFile.lancelet_crc32c`, a field of its own that pylance skips), as Iceberg and
//! Delta record their deletion vectors' checksums in their metadata: the file's bytes stay
//! exactly what pylance writes and reads.

use std::io::Cursor;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, UInt32Type};
use arrow_array::Array;

use crate::{pb, Error, Result};

/// The directory holding deletion files, relative to the dataset root.
pub const DELETIONS_DIR: &str = "_deletions";

/// The path of a fragment's deletion file, relative to the dataset root.
pub fn deletion_file_path(fragment_id: u64, d: &pb::DeletionFile) -> String {
    let ext = match pb::deletion_file::DeletionFileType::try_from(d.file_type) {
        Ok(pb::deletion_file::DeletionFileType::Bitmap) => "bin",
        _ => "arrow",
    };
    format!("{DELETIONS_DIR}/{fragment_id}-{}-{}.{ext}", d.read_version, d.id)
}

/// Deletion sets larger than this are stored as roaring bitmaps, smaller ones as Arrow
/// IPC (Lance's threshold).
pub const BITMAP_THRESHOLD: usize = 5_000;

/// Encodes sorted, distinct row offsets as a deletion file: its bytes and its type.
pub fn encode_deletions(rows: &[u32]) -> Result<(Vec<u8>, pb::deletion_file::DeletionFileType)> {
    use pb::deletion_file::DeletionFileType;
    if rows.len() > BITMAP_THRESHOLD {
        // Callers pass sorted rows: built in one pass then (inserting one at a time is a
        // search per row); anything else still works, only slower.
        let bitmap = roaring::RoaringBitmap::from_sorted_iter(rows.iter().copied())
            .unwrap_or_else(|_| rows.iter().copied().collect());
        let mut out = Vec::with_capacity(bitmap.serialized_size());
        bitmap
            .serialize_into(&mut out)
            .map_err(|e| Error::InvalidArgument(format!("cannot serialize deletion bitmap: {e}")))?;
        return Ok((out, DeletionFileType::Bitmap));
    }
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new(
        "row_id",
        arrow_schema::DataType::UInt32,
        false,
    )]));
    let array = arrow_array::UInt32Array::from(rows.to_vec());
    let fail = |e: arrow_schema::ArrowError| Error::InvalidArgument(format!("cannot encode deletion file: {e}"));
    let batch = arrow_array::RecordBatch::try_new(schema.clone(), vec![std::sync::Arc::new(array)]).map_err(fail)?;
    let mut out = Vec::new();
    {
        let mut w = arrow_ipc::writer::FileWriter::try_new(&mut out, &schema).map_err(fail)?;
        w.write(&batch).map_err(fail)?;
        w.finish().map_err(fail)?;
    }
    Ok((out, DeletionFileType::ArrowArray))
}

/// The checksum lancelet records for a deletion file's bytes.
pub fn checksum(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// Checks a deletion file's bytes against the checksum its manifest entry records, if any.
pub fn verify_deletions(bytes: &[u8], d: &pb::DeletionFile, path: &str) -> Result<()> {
    match d.lancelet_crc32c {
        Some(want) if checksum(bytes) != want => Err(Error::corrupt(
            path,
            format!(
                "deletion file checksum mismatch ({} bytes; stored {want:08x}, computed {:08x})",
                bytes.len(),
                checksum(bytes)
            ),
        )),
        _ => Ok(()),
    }
}

/// Decodes a deletion file into sorted, distinct row offsets (see [`verify_deletions`] for
/// its checksum).
pub fn decode_deletions(bytes: &[u8], d: &pb::DeletionFile, path: &str) -> Result<Vec<u32>> {
    let mut rows = match pb::deletion_file::DeletionFileType::try_from(d.file_type) {
        Ok(pb::deletion_file::DeletionFileType::ArrowArray) => {
            // arrow-ipc can panic on some damaged inputs instead of returning an error; a
            // damaged deletion file must be a corrupt-file error, never a crash.
            let limit = d.num_deleted_rows.saturating_add(1024).saturating_mul(64);
            std::panic::catch_unwind(|| {
                check_compressed_sizes(bytes, limit, path)?;
                decode_arrow(bytes, path)
            })
            .unwrap_or_else(|_| {
                Err(Error::corrupt(
                    path,
                    "deletion file is damaged (Arrow IPC reader failed)",
                ))
            })?
        }
        Ok(pb::deletion_file::DeletionFileType::Bitmap) => std::panic::catch_unwind(|| {
            roaring::RoaringBitmap::deserialize_from(bytes).map(|b| b.into_iter().collect::<Vec<u32>>())
        })
        .map_err(|_| Error::corrupt(path, "deletion bitmap is damaged"))?
        .map_err(|e| Error::corrupt(path, format!("deletion bitmap does not parse: {e}")))?,
        Err(_) => {
            return Err(Error::corrupt(
                path,
                format!("unknown deletion file type {}", d.file_type),
            ))
        }
    };
    rows.sort_unstable();
    rows.dedup();
    if rows.len() as u64 != d.num_deleted_rows && d.num_deleted_rows != 0 {
        return Err(Error::corrupt(
            path,
            format!(
                "the manifest says {} deleted rows, the file holds {}",
                d.num_deleted_rows,
                rows.len()
            ),
        ));
    }
    Ok(rows)
}

fn decode_arrow(bytes: &[u8], path: &str) -> Result<Vec<u32>> {
    let corrupt = |e: arrow_schema::ArrowError| Error::corrupt(path, format!("deletion file does not parse: {e}"));
    let reader = arrow_ipc::reader::FileReader::try_new(Cursor::new(bytes), None).map_err(corrupt)?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(corrupt)?;
        let col = batch
            .columns()
            .first()
            .ok_or_else(|| Error::corrupt(path, "deletion file has no column"))?;
        if col.null_count() > 0 {
            return Err(Error::corrupt(path, "deletion file has null row offsets"));
        }
        if let Some(a) = col.as_primitive_opt::<UInt32Type>() {
            out.extend(a.values().iter().copied());
        } else if let Some(a) = col.as_primitive_opt::<Int32Type>() {
            for v in a.values().iter() {
                out.push(u32::try_from(*v).map_err(|_| Error::corrupt(path, format!("negative row offset {v}")))?);
            }
        } else {
            return Err(Error::corrupt(
                path,
                format!("deletion offsets of type {}", col.data_type()),
            ));
        }
    }
    Ok(out)
}

/// Refuses an Arrow IPC file whose compressed buffers claim to expand to more than
/// `limit` bytes. arrow-ipc allocates the declared size before decompressing, and a
/// damaged length would otherwise abort the process with a failed allocation.
fn check_compressed_sizes(bytes: &[u8], limit: u64, path: &str) -> Result<()> {
    let bad = |m: String| Error::corrupt(path, format!("deletion file is damaged: {m}"));
    let n = bytes.len();
    if n < 10 || &bytes[n - 6..] != b"ARROW1" {
        return Err(bad("not an Arrow IPC file".into()));
    }
    let mut len = [0u8; 4];
    len.copy_from_slice(&bytes[n - 10..n - 6]);
    let footer_len = usize::try_from(i32::from_le_bytes(len)).map_err(|_| bad("negative footer length".into()))?;
    let footer_start = (n - 10)
        .checked_sub(footer_len)
        .ok_or_else(|| bad("footer longer than the file".into()))?;
    let footer = arrow_ipc::root_as_footer(&bytes[footer_start..n - 10]).map_err(|e| bad(e.to_string()))?;
    // A deletion file is one column of integers: dictionaries mean damage, and arrow-ipc
    // would allocate their declared body size before reading it.
    if footer.dictionaries().is_some_and(|d| !d.is_empty()) {
        return Err(bad("deletion files have no dictionaries".into()));
    }
    for block in footer.recordBatches().into_iter().flatten() {
        let to_usize = |v: i64| usize::try_from(v).map_err(|_| bad(format!("negative size {v}")));
        let off = to_usize(block.offset())?;
        let meta_len = to_usize(i64::from(block.metaDataLength()))?;
        let body_len = to_usize(block.bodyLength())?;
        let end = off
            .checked_add(meta_len)
            .and_then(|e| e.checked_add(body_len))
            .filter(|e| *e <= n)
            .ok_or_else(|| bad("record batch lies outside the file".into()))?;
        let meta = &bytes[off..off + meta_len];
        let meta = match meta {
            [0xFF, 0xFF, 0xFF, 0xFF, _, _, _, _, rest @ ..] => rest,
            [_, _, _, _, rest @ ..] => rest,
            _ => return Err(bad("record batch metadata too short".into())),
        };
        let msg = arrow_ipc::root_as_message(meta).map_err(|e| bad(e.to_string()))?;
        let Some(batch) = msg.header_as_record_batch() else {
            continue;
        };
        // arrow-ipc allocates (zeroed) buffers sized by the declared row counts before it
        // looks at the data: a damaged count must not reach it.
        let max_rows = u64::try_from(bytes.len())
            .unwrap_or(u64::MAX)
            .saturating_mul(64)
            .max(limit / 64);
        let counts = std::iter::once(batch.length()).chain(batch.nodes().into_iter().flatten().map(|n| n.length()));
        for c in counts {
            if u64::try_from(c).map_or(true, |c| c > max_rows) {
                return Err(bad(format!("a record batch claims {c} rows")));
            }
        }
        let body = &bytes[off + meta_len..end];
        // arrow-ipc slices buffers without checking them against the body (it panics).
        for buf in batch.buffers().into_iter().flatten() {
            let (o, l) = (to_usize(buf.offset())?, to_usize(buf.length())?);
            if o.checked_add(l).is_none_or(|e| e > body.len()) {
                return Err(bad("buffer lies outside its record batch".into()));
            }
        }
        if batch.compression().is_none() {
            continue;
        }
        for buf in batch.buffers().into_iter().flatten() {
            let (o, l) = (to_usize(buf.offset())?, to_usize(buf.length())?);
            if l == 0 {
                continue;
            }
            let prefix = o
                .checked_add(8)
                .filter(|e| *e <= body.len() && o.saturating_add(l) <= body.len())
                .ok_or_else(|| bad("buffer lies outside its record batch".into()))?;
            let mut ulen = [0u8; 8];
            ulen.copy_from_slice(&body[o..prefix]);
            let ulen = i64::from_le_bytes(ulen);
            if ulen > 0 && ulen as u64 > limit {
                return Err(bad(format!("a buffer claims {ulen} bytes once decompressed")));
            }
        }
    }
    Ok(())
}
