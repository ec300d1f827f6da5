//! Golden legacy (file format 0.1) files written by pylance 14.0.2 (`tests/data/file/legacy`,
//! see `generate.py` there), each next to an Arrow IPC file holding what pylance reads
//! from it. Full reads, ranges across batches, several ranges at once, projections and
//! `take` must all give pylance's rows; damaged copies must give errors, never panics.
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
use lancelet_file::{Error, FileVersion};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/file/legacy")
}

fn expected(path: &Path) -> RecordBatch {
    let f = fs::File::open(path.with_extension("arrow")).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(f, None).unwrap();
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    concat_batches(&schema, &batches).unwrap()
}

fn lance_files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "lance"))
        .collect();
    out.sort();
    assert!(out.len() >= 10, "legacy golden files missing");
    out
}

fn check_file(path: &Path) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let bytes = fs::read(path).unwrap();
    let want = expected(path);
    let r = common::open(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(r.metadata().version, FileVersion::Legacy, "{name}");
    assert_eq!(r.metadata().footer.major, 0, "{name}");
    let n = r.num_rows();
    assert_eq!(n as usize, want.num_rows(), "{name}");
    assert_eq!(r.metadata().schema.fields(), want.schema().fields(), "{name}: schema");
    let got = common::read_all(&r).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(got.columns(), want.columns(), "{name}: full read");
    let p = r.projection(None).unwrap();
    // Every window of 4 rows (crossing the 5-row batches) and single rows.
    for start in 0..n {
        for len in [1, 4] {
            let end = (start + len).min(n);
            let b = block_on(r.read_ranges(&p, &[start..end], None)).unwrap();
            let w = want.slice(start as usize, (end - start) as usize);
            assert_eq!(b.columns(), w.columns(), "{name}: rows {start}..{end}");
        }
    }
    let ranges = [0..1, n / 2..n, 0..n / 3, 7..7];
    let b = block_on(r.read_ranges(&p, &ranges, None)).unwrap();
    let parts: Vec<RecordBatch> = ranges
        .iter()
        .map(|rg| want.slice(rg.start as usize, (rg.end - rg.start) as usize))
        .collect();
    let w = concat_batches(&want.schema(), &parts).unwrap();
    assert_eq!(b.columns(), w.columns(), "{name}: multi-range");
    let idx = [n - 1, 0, n / 2, n / 2, n / 3, 6];
    let b = block_on(r.take(&p, &idx)).unwrap();
    let positions = arrow_array::UInt64Array::from(idx.to_vec());
    let w = arrow_select::take::take_record_batch(&want, &positions).unwrap();
    assert_eq!(b.columns(), w.columns(), "{name}: take");
    // Each column alone, by name.
    for (i, f) in want.schema().fields().iter().enumerate() {
        let p = r.projection(Some(std::slice::from_ref(f.name()))).unwrap();
        let b = block_on(r.read_ranges(&p, &[3..n], None)).unwrap();
        assert_eq!(
            b.column(0),
            &want.column(i).slice(3, (n - 3) as usize),
            "{name}: {}",
            f.name()
        );
    }
}

#[test]
fn pylance_legacy_files_read_like_pylance() {
    for p in lance_files() {
        check_file(&p);
    }
}

#[test]
fn legacy_struct_child_projection() {
    let path = data_dir().join("structs.lance");
    let r = common::open(&fs::read(&path).unwrap()).unwrap();
    let want = expected(&path);
    let p = r.projection(Some(&["st.b".to_string()])).unwrap();
    let b = block_on(r.read_ranges(&p, &[0..r.num_rows()], None)).unwrap();
    let st = want
        .column(0)
        .as_any()
        .downcast_ref::<arrow_array::StructArray>()
        .unwrap();
    let got = b.column(0).as_any().downcast_ref::<arrow_array::StructArray>().unwrap();
    assert_eq!(got.num_columns(), 1);
    assert_eq!(got.column(0), st.column_by_name("b").unwrap());
}

#[test]
fn legacy_rows_past_the_end_are_refused() {
    let path = data_dir().join("ints.lance");
    let r = common::open(&fs::read(&path).unwrap()).unwrap();
    let p = r.projection(None).unwrap();
    let n = r.num_rows();
    assert!(matches!(
        block_on(r.read_ranges(&p, &[0..n + 1], None)),
        Err(Error::InvalidArgument(_))
    ));
}

/// Truncated and bit-flipped copies of every golden file: errors are fine, panics are not.
#[test]
fn damaged_legacy_files_never_panic() {
    for path in lance_files() {
        let bytes = fs::read(&path).unwrap();
        let len = bytes.len();
        let mut variants: Vec<Vec<u8>> = Vec::new();
        for cut in [len / 4, len / 2, len - 17, len - 3] {
            let mut b = bytes[..cut].to_vec();
            if cut + 16 < len {
                b.extend_from_slice(&bytes[len - 16..]);
            }
            variants.push(b);
        }
        for (k, at) in (0..len).enumerate() {
            let mut b = bytes.clone();
            b[at] ^= [0xff, 0x01, 0x80, 0x10, 0x7f][k % 5];
            variants.push(b);
        }
        for b in variants {
            let outcome = std::panic::catch_unwind(|| {
                let Ok(r) = common::open(&b) else { return };
                let Ok(p) = r.projection(None) else { return };
                let n = r.num_rows().min(1 << 16);
                let _ = block_on(r.read_ranges(&p, &[0..n], None));
                if n > 0 {
                    let _ = block_on(r.take(&p, &[n - 1, 0, n / 2]));
                }
            });
            assert!(outcome.is_ok(), "{}: panicked", path.display());
        }
    }
}

#[test]
fn legacy_footer_only_is_corrupt() {
    let mut b = vec![0u8; 8];
    b.extend_from_slice(&[0, 0, 2, 0]);
    b.extend_from_slice(b"LANC");
    let mut full = vec![0u8; 40];
    full.extend_from_slice(&b);
    assert!(matches!(common::open(&full), Err(Error::Corrupt { .. })));
}
