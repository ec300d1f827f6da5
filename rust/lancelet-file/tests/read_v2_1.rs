//! Golden files written by pylance 14.0.2 at Lance file format 2.1 and 2.2
//! (`tests/data/file/v2_1`, `.../v2_2`, written by `tests/data/file/generate_v2.py`), each
//! next to an Arrow IPC file holding the input and what pylance reads from it. Every read
//! path must give the same rows: full scan, ranges with the page cache, `take`. Truncated
//! and bit-flipped copies must give errors, never panics.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::single_range_in_vec_init,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_select::concat::concat_batches;
use futures::executor::block_on;
use lancelet_file::{FileVersion, PageCache};

fn data_dir(v: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/file")
        .join(v)
}

fn expected(path: &Path) -> RecordBatch {
    let f = fs::File::open(path.with_extension("arrow")).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(f, None).unwrap();
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    concat_batches(&schema, &batches).unwrap()
}

fn lance_files(v: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(data_dir(v))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "lance"))
        .collect();
    out.sort();
    assert!(out.len() >= 20, "golden files missing in {v}");
    out
}

fn check_file(path: &Path, version: FileVersion) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let bytes = fs::read(path).unwrap();
    let want = expected(path);
    let r = common::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(r.metadata().version, version, "{name}");
    let n = r.num_rows();
    assert_eq!(n as usize, want.num_rows(), "{name}");
    let got = common::read_all(&r).unwrap_or_else(|e| panic!("{name}: {e}"));
    // Schema metadata may differ in order only; compare columns.
    assert_eq!(got.columns(), want.columns(), "{name}: full read");
    if n == 0 {
        return;
    }
    let p = r.projection(None).unwrap();
    // Sequential batches through the page cache.
    let cache = PageCache::default();
    let step = (n / 3).max(1);
    let mut start = 0;
    while start < n {
        let end = (start + step).min(n);
        let b = block_on(r.read_ranges(&p, &[start..end], Some(&cache))).unwrap();
        let w = want.slice(start as usize, (end - start) as usize);
        assert_eq!(b.columns(), w.columns(), "{name}: rows {start}..{end}");
        start = end;
    }
    // Several ranges in one read, and take with duplicates out of order.
    let ranges = [0..1, n / 2..n, 0..n / 3];
    let b = block_on(r.read_ranges(&p, &ranges, None)).unwrap();
    let parts: Vec<RecordBatch> = ranges
        .iter()
        .map(|rg| want.slice(rg.start as usize, (rg.end - rg.start) as usize))
        .collect();
    let w = concat_batches(&want.schema(), &parts).unwrap();
    assert_eq!(b.columns(), w.columns(), "{name}: multi-range");
    let idx = [n - 1, 0, n / 2, n / 2, n / 3];
    let b = block_on(r.take(&p, &idx)).unwrap();
    let positions = arrow_array::UInt64Array::from(idx.to_vec());
    let w = arrow_select::take::take_record_batch(&want, &positions).unwrap();
    assert_eq!(b.columns(), w.columns(), "{name}: take");
}

#[test]
fn pylance_v2_1_files_read_like_pylance() {
    for p in lance_files("v2_1") {
        check_file(&p, FileVersion::V2_1);
    }
}

#[test]
fn pylance_v2_2_files_read_like_pylance() {
    for p in lance_files("v2_2") {
        check_file(&p, FileVersion::V2_2);
    }
}

#[test]
fn projection_by_name_reads_only_that_field() {
    let path = data_dir("v2_2").join("list_struct_small.lance");
    let bytes = fs::read(&path).unwrap();
    let r = common::open(&bytes).unwrap();
    let want = expected(&path);
    let name = want.schema().field(0).name().clone();
    let p = r.projection(Some(std::slice::from_ref(&name))).unwrap();
    let b = block_on(r.read_ranges(&p, &[0..r.num_rows()], None)).unwrap();
    assert_eq!(b.column(0), want.column(0));
}

/// Damaged copies of every golden file: errors are fine, panics are not.
#[test]
fn damaged_v2_1_files_never_panic() {
    for v in ["v2_1", "v2_2"] {
        for path in lance_files(v) {
            let bytes = fs::read(&path).unwrap();
            let len = bytes.len();
            let mut variants: Vec<Vec<u8>> = Vec::new();
            for cut in [len / 4, len / 2, len - 41] {
                let mut b = bytes[..cut].to_vec();
                b.extend_from_slice(&bytes[len - 40..]);
                variants.push(b);
            }
            // Flip bytes across the data and metadata sections.
            let step = (len / 97).max(1);
            for (k, at) in (0..len - 40).step_by(step).enumerate() {
                let mut b = bytes.clone();
                b[at] ^= [0xff, 0x01, 0x80, 0x10][k % 4];
                variants.push(b);
            }
            for b in variants {
                let Ok(r) = common::open(&b) else { continue };
                let Ok(p) = r.projection(None) else { continue };
                let n = r.num_rows().min(1 << 16);
                let _ = block_on(r.read_ranges(&p, &[0..n], None));
                if n > 0 {
                    let _ = block_on(r.take(&p, &[n - 1, 0]));
                }
            }
        }
    }
}
