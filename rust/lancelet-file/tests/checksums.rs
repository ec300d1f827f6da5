//! Checksums (see `lancelet_file::checksum`): damaged bytes of a file lancelet wrote are
//! reported, never decoded as data.
//!
//! The corruption campaign damages copies of one file per format version at fixed,
//! seeded places (the same cases on every run) and reads each copy whole and by `take`:
//! every read must give the original rows or an error, and a damaged data page must give
//! an error naming the file, the column and the page.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::single_range_in_vec_init,
    reason = "test code: a failed unwrap or panic is a failed test"
)]

use crate::common;

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, FixedSizeListArray, Float32Array, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field};
use futures::executor::block_on;
use lancelet_file::checksum::BLOCK_BYTES;
use lancelet_file::{Error, FileReader, FileVersion, FileWriter, WriterOptions};
use lancelet_io::InMemory;

const VERSIONS: [FileVersion; 3] = [FileVersion::V2_0, FileVersion::V2_1, FileVersion::V2_2];

fn batch(n: usize) -> RecordBatch {
    let ids: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..n as i64).map(|i| (i % 97 != 0).then_some(i * 31)),
    ));
    let text: ArrayRef = Arc::new(StringArray::from_iter(
        (0..n).map(|i| (i % 13 != 0).then(|| format!("value {i} of {}", i % 211))),
    ));
    let mut lb = ListBuilder::new(StringBuilder::new());
    for i in 0..n {
        for k in 0..i % 4 {
            lb.values().append_value(format!("t{k}-{i}"));
        }
        lb.append(i % 17 != 0);
    }
    let list: ArrayRef = Arc::new(lb.finish());
    let emb: ArrayRef = Arc::new(FixedSizeListArray::new(
        Arc::new(Field::new("item", DataType::Float32, true)),
        8,
        Arc::new(Float32Array::from_iter_values((0..n * 8).map(|v| v as f32 * 0.5))),
        None,
    ));
    let st: ArrayRef = Arc::new(StructArray::from(vec![
        (
            Arc::new(Field::new("a", DataType::Int64, true)),
            Arc::new(Int64Array::from_iter_values((0..n as i64).map(|i| i ^ 0x55))) as ArrayRef,
        ),
        (
            Arc::new(Field::new("b", DataType::Utf8, true)),
            Arc::new(StringArray::from_iter_values((0..n).map(|i| format!("s{}", i % 50)))) as ArrayRef,
        ),
    ]));
    RecordBatch::try_from_iter([("id", ids), ("text", text), ("list", list), ("emb", emb), ("st", st)]).unwrap()
}

fn write(b: &RecordBatch, version: FileVersion, checksums: bool) -> Vec<u8> {
    let opts = WriterOptions {
        version,
        checksums,
        // Small pages: many pages, so damage lands in every kind of buffer.
        max_page_bytes: 16 * 1024,
        cache_bytes_per_column: 16 * 1024,
        ..Default::default()
    };
    let mut w = FileWriter::try_new(Vec::new(), "mem", b.schema(), opts).unwrap();
    for start in (0..b.num_rows()).step_by(1000) {
        w.write_batch(&b.slice(start, 1000.min(b.num_rows() - start))).unwrap();
    }
    w.finish().unwrap().0
}

fn open(bytes: &[u8]) -> lancelet_file::Result<FileReader> {
    block_on(FileReader::open(Arc::new(InMemory::new("damaged.lance", bytes))))
}

/// Every way the campaign reads a file: whole, and three `take`s.
fn read_every_way(bytes: &[u8], expected: &RecordBatch) -> Result<(), Error> {
    let r = open(bytes)?;
    let got = common::read_all(&r)?;
    assert_eq!(&got, expected, "a damaged file read back wrong, silently");
    let p = r.projection(None)?;
    for rows in [vec![0u64, 1, 2], vec![4999, 17, 2500], vec![1234]] {
        let got = block_on(r.take(&p, &rows))?;
        let idx = arrow_array::UInt64Array::from(rows);
        let want = arrow_select::take::take_record_batch(expected, &idx).unwrap();
        assert_eq!(got, want, "a damaged file's take read back wrong, silently");
    }
    Ok(())
}

/// A seeded generator (the same cases on every run).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 17
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The byte ranges of every page buffer of the file.
fn page_bytes(bytes: &[u8]) -> Vec<std::ops::Range<u64>> {
    let r = open(bytes).unwrap();
    r.metadata()
        .columns
        .iter()
        .flat_map(|c| c.pages.iter().flat_map(|p| p.buffers.iter().cloned()))
        .filter(|b| !b.is_empty())
        .collect()
}

#[test]
fn the_original_reads_back_and_records_where_its_checksums_are() {
    let b = batch(5000);
    for v in VERSIONS {
        let bytes = write(&b, v, true);
        let r = open(&bytes).unwrap();
        assert!(r.metadata().checksums.is_some(), "{v:?}");
        // Where the checksums are is the file's business: the schema is the data's.
        assert_eq!(r.metadata().schema.metadata(), b.schema().metadata());
        read_every_way(&bytes, &b).unwrap();
        assert!(block_on(r.verify_all()).unwrap());
        // Without checksums the file is what it was before they existed, and reads the same.
        let plain = write(&b, v, false);
        let r = open(&plain).unwrap();
        assert!(r.metadata().checksums.is_none());
        assert!(!block_on(r.verify_all()).unwrap());
        read_every_way(&plain, &b).unwrap();
        // The checksums cost about 0.1% of the data, plus a header.
        let extra = bytes.len() - plain.len();
        assert!(extra < 256 + plain.len() / 512, "{v:?}: {extra} extra bytes");
    }
}

#[test]
fn single_bit_flips_in_data_pages_are_all_caught() {
    let b = batch(5000);
    for (vi, v) in VERSIONS.into_iter().enumerate() {
        let bytes = write(&b, v, true);
        let pages = page_bytes(&bytes);
        let total: u64 = pages.iter().map(|p| p.end - p.start).sum();
        let mut rng = Lcg(0x5eed + vi as u64);
        for trial in 0..40 {
            // A byte chosen uniformly among all page bytes.
            let mut k = rng.below(total);
            let at = pages
                .iter()
                .find_map(|p| {
                    let len = p.end - p.start;
                    if k < len {
                        Some(p.start + k)
                    } else {
                        k -= len;
                        None
                    }
                })
                .unwrap() as usize;
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << rng.below(8);
            let err = read_every_way(&damaged, &b).expect_err(&format!("{v:?} trial {trial}: flip at {at} not caught"));
            let msg = err.to_string();
            assert!(matches!(err, Error::Corrupt { .. }), "{msg}");
            assert!(
                msg.contains("damaged.lance") && msg.contains("checksum mismatch"),
                "{msg}"
            );
            assert!(msg.contains("column") && msg.contains("page"), "{msg}");
        }
    }
}

#[test]
fn damaged_copies_never_read_back_wrong() {
    // 100 damaged copies per version: bit flips, byte runs and truncations anywhere in the
    // file (metadata included). Each must read back as the original or fail.
    let b = batch(5000);
    for (vi, v) in VERSIONS.into_iter().enumerate() {
        let bytes = write(&b, v, true);
        let mut rng = Lcg(0xda3a6e + vi as u64);
        let (mut caught, mut intact) = (0, 0);
        for trial in 0..100 {
            let mut damaged = bytes.clone();
            match trial % 3 {
                0 => {
                    for _ in 0..1 + rng.below(3) {
                        let at = rng.below(bytes.len() as u64) as usize;
                        damaged[at] ^= 1 << rng.below(8);
                    }
                }
                1 => {
                    let len = 1 + rng.below(64) as usize;
                    let at = rng.below((bytes.len() - len) as u64) as usize;
                    let fill = rng.next() as u8;
                    damaged[at..at + len].iter_mut().for_each(|x| *x = fill);
                }
                _ => damaged.truncate(rng.below(bytes.len() as u64) as usize),
            }
            match read_every_way(&damaged, &b) {
                Ok(()) => intact += 1,
                Err(_) => caught += 1,
            }
        }
        // Damage that changed no byte read (padding, or a run equal to what was there)
        // reads back intact; everything else is an error.
        assert_eq!(caught + intact, 100);
        assert!(caught >= 80, "{v:?}: only {caught} of 100 damaged copies were refused");
    }
}

#[test]
fn damaged_metadata_is_refused_when_the_file_is_opened() {
    let b = batch(2000);
    let bytes = write(&b, FileVersion::V2_2, true);
    let r = open(&bytes).unwrap();
    let meta = r.metadata();
    let gb0 = meta.global_buffers[0].clone();
    let column0 = meta.footer.column_meta_start;
    // A flipped bit in the schema, in the first column's metadata, in the global buffer
    // table, and in the footer's row of positions.
    for at in [
        gb0.start + 3,
        column0 + 2,
        meta.footer.gbo_table_start + 1,
        bytes.len() as u64 - 40,
    ] {
        let mut damaged = bytes.clone();
        damaged[at as usize] ^= 0x10;
        let err = open(&damaged).and_then(|r| common::read_all(&r).map(|_| ()));
        assert!(matches!(err, Err(Error::Corrupt { .. })), "byte {at}: {err:?}");
    }
    // A flipped bit in the footer's version is an unknown version, refused before anything.
    let mut damaged = bytes.clone();
    damaged[bytes.len() - 6] ^= 0x10;
    assert!(open(&damaged).is_err());
}

#[test]
fn reads_can_skip_verification_to_salvage_a_damaged_file() {
    let b = batch(3000);
    let bytes = write(&b, FileVersion::V2_1, true);
    let pages = page_bytes(&bytes);
    let mut damaged = bytes.clone();
    // Damage the last byte of the first column's first page: the other columns stay readable.
    damaged[pages[0].end as usize - 1] ^= 0xff;
    assert!(read_every_way(&damaged, &b).is_err());
    let r = block_on(FileReader::open_with(Arc::new(InMemory::new("mem", &damaged)), false)).unwrap();
    let p = r.projection(Some(&["emb".to_string()])).unwrap();
    let got = block_on(r.read_ranges(&p, &[0..3000], None)).unwrap();
    assert_eq!(got.column(0), b.column_by_name("emb").unwrap());
}

#[test]
fn a_partial_read_is_checked_a_block_at_a_time() {
    let b = batch(5000);
    let bytes = write(&b, FileVersion::V2_2, true);
    let pages = page_bytes(&bytes);
    // Damage one byte of the last page: a take far from it still reads.
    let last = pages.iter().max_by_key(|p| p.start).unwrap().clone();
    let mut damaged = bytes.clone();
    damaged[last.end as usize - 1] ^= 1;
    let r = open(&damaged).unwrap();
    let p = r.projection(Some(&["id".to_string()])).unwrap();
    let got = block_on(r.take(&p, &[0, 1, 2])).unwrap();
    assert_eq!(got.column(0).len(), 3);
    assert!(u64::from(BLOCK_BYTES) < last.start);
    assert!(block_on(r.verify_all()).is_err());
}

/// Another writer's last global buffer may begin with the checksum buffer's magic: a file
/// whose descriptor names no checksum buffer reads as before (it is not ours to check),
/// while the same damage to a file that names one is refused.
#[test]
fn a_foreign_buffer_that_starts_with_the_magic_is_not_held_against_the_file() {
    let b = batch(2000);
    for version in VERSIONS {
        let opts = WriterOptions {
            version,
            checksums: false,
            ..Default::default()
        };
        let mut w = FileWriter::try_new(Vec::new(), "mem", b.schema(), opts).unwrap();
        w.write_batch(&b).unwrap();
        let mut foreign = b"LLCK".to_vec();
        foreign.extend((0u8..200).map(|i| i.wrapping_mul(37)));
        w.add_global_buffer(&foreign).unwrap();
        let bytes = w.finish().unwrap().0;
        let r = open(&bytes).unwrap();
        assert!(r.metadata().checksums.is_none());
        assert_eq!(common::read_all(&r).unwrap(), b);
        // Verified: the descriptor names no checksums, so nothing is checked.
        assert!(!block_on(r.verify_all()).unwrap());

        // A file of ours whose checksum buffer is damaged is refused with the buffer's reason.
        let ours = write(&b, version, true);
        let sums = open(&ours).unwrap();
        let at = sums.metadata().global_buffers.last().unwrap().start as usize + 8;
        let mut damaged = ours.clone();
        damaged[at] ^= 0x10;
        let Err(err) = open(&damaged) else {
            panic!("a damaged checksum buffer is refused")
        };
        assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    }
}
