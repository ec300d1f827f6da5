//! pylance's index files (tests/data/index, made by make_golden.py): our readers answer queries
//! on them like a naive scan, and our writers reproduce their contents from the same data.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray, UInt64Array};
use futures::executor::block_on;
use lancelet_file::{FileReader, FileVersion};
use lancelet_index::scalar::{
    self, IndexStore, MemoryStore, ScalarIndexType, ScalarParams, ScalarQuery, TrainingBatch,
};
use lancelet_io::LocalFile;

use super::check;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/index");

struct Source {
    i: ArrayRef,
    s: ArrayRef,
    l: ArrayRef,
    addrs: Vec<u64>,
}

fn source() -> Source {
    let r = block_on(FileReader::open(Arc::new(
        LocalFile::open(&format!("{DATA}/source.lance")).unwrap(),
    )))
    .unwrap();
    let p = r.projection(None).unwrap();
    let b = block_on(r.read_ranges(&p, std::slice::from_ref(&(0..r.num_rows())), None)).unwrap();
    Source {
        i: b.column_by_name("i").unwrap().clone(),
        s: b.column_by_name("s").unwrap().clone(),
        l: b.column_by_name("l").unwrap().clone(),
        addrs: b
            .column_by_name("_rowaddr")
            .unwrap()
            .as_primitive::<arrow_array::types::UInt64Type>()
            .values()
            .to_vec(),
    }
}

fn golden_store(dir: &str) -> MemoryStore {
    let store = MemoryStore::new();
    for e in std::fs::read_dir(format!("{DATA}/{dir}")).unwrap() {
        let e = e.unwrap();
        store.insert(
            e.file_name().to_string_lossy().to_string(),
            std::fs::read(e.path()).unwrap(),
        );
    }
    store
}

fn stats(kind_dir: &str) -> BTreeMap<String, String> {
    std::fs::read_to_string(format!("{DATA}/stats.txt"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, ' ');
            (parts.next()? == kind_dir).then(|| (parts.next().unwrap().to_string(), parts.next().unwrap().to_string()))
        })
        .collect()
}

fn ints() -> Vec<ScalarQuery> {
    let one = |v: i64| -> ArrayRef { Arc::new(Int64Array::from(vec![v])) };
    let mut qs = vec![
        ScalarQuery::IsNull,
        ScalarQuery::Equals(Arc::new(Int64Array::from(vec![None::<i64>]))),
    ];
    for v in -7..19 {
        qs.push(ScalarQuery::Equals(one(v)));
        qs.push(ScalarQuery::Range {
            lower: Bound::Included(one(v)),
            upper: Bound::Excluded(one(v + 4)),
        });
        qs.push(ScalarQuery::Range {
            lower: Bound::Unbounded,
            upper: Bound::Included(one(v)),
        });
        qs.push(ScalarQuery::Range {
            lower: Bound::Excluded(one(v)),
            upper: Bound::Unbounded,
        });
    }
    qs.push(ScalarQuery::IsIn(Arc::new(Int64Array::from(vec![
        Some(-5),
        None,
        Some(3),
        Some(17),
        Some(99),
    ]))));
    qs
}

/// The naive answer of a value query over `values`.
fn naive_i64(values: &ArrayRef, addrs: &[u64], q: &ScalarQuery) -> BTreeSet<u64> {
    let v = values.as_primitive::<Int64Type>();
    let lit = |a: &ArrayRef| a.as_primitive::<Int64Type>().iter().collect::<Vec<_>>();
    let keep = |x: Option<i64>| -> bool {
        match q {
            ScalarQuery::IsNull => x.is_none(),
            ScalarQuery::Equals(a) => x.is_some() && lit(a)[0] == x,
            ScalarQuery::IsIn(a) => x.is_some() && lit(a).contains(&x),
            ScalarQuery::Range { lower, upper } => {
                let Some(x) = x else { return false };
                let lo = match lower {
                    Bound::Included(a) => lit(a)[0].is_some_and(|l| x >= l),
                    Bound::Excluded(a) => lit(a)[0].is_some_and(|l| x > l),
                    Bound::Unbounded => true,
                };
                let hi = match upper {
                    Bound::Included(a) => lit(a)[0].is_some_and(|h| x <= h),
                    Bound::Excluded(a) => lit(a)[0].is_some_and(|h| x < h),
                    Bound::Unbounded => true,
                };
                lo && hi
            }
            _ => unreachable!(),
        }
    };
    (0..v.len())
        .filter(|&r| keep(v.is_valid(r).then(|| v.value(r))))
        .map(|r| addrs[r])
        .collect()
}

fn run_int_queries(kind: ScalarIndexType, dir: &str) {
    let src = source();
    let live: BTreeSet<u64> = src.addrs.iter().copied().collect();
    let index = block_on(scalar::open(kind, &golden_store(dir))).unwrap();
    for q in ints() {
        if !index.can_answer(&q) {
            assert!(kind == ScalarIndexType::BloomFilter && matches!(q, ScalarQuery::Range { .. }));
            continue;
        }
        let expected = naive_i64(&src.i, &src.addrs, &q);
        let got = block_on(index.search(&q)).unwrap();
        let pos = |a: u64| src.addrs.iter().position(|x| *x == a).unwrap();
        check(kind, &format!("{q:?}"), &got, &expected, &live, |a| {
            naive_i64(&src.i.slice(pos(a), 1), &[a], &q).contains(&a)
        });
    }
    let mut ours = index.statistics();
    let theirs = stats(dir);
    ours.retain(|k, _| theirs.contains_key(k));
    assert_eq!(ours, theirs, "{dir} statistics");
}

#[test]
fn btree_reads_pylance() {
    run_int_queries(ScalarIndexType::BTree, "btree");
}

#[test]
fn zonemap_reads_pylance() {
    run_int_queries(ScalarIndexType::ZoneMap, "zonemap");
}

#[test]
fn bloomfilter_reads_pylance() {
    run_int_queries(ScalarIndexType::BloomFilter, "bloomfilter");
}

fn strings(a: &ArrayRef) -> Vec<Option<String>> {
    a.as_string::<i32>().iter().map(|s| s.map(str::to_string)).collect()
}

#[test]
fn bitmap_and_string_bloom_read_pylance() {
    let src = source();
    let live: BTreeSet<u64> = src.addrs.iter().copied().collect();
    let values = strings(&src.s);
    let mut distinct: BTreeSet<Option<String>> = values.iter().cloned().collect();
    distinct.insert(Some("nope".into()));
    for (kind, dir) in [
        (ScalarIndexType::Bitmap, "bitmap"),
        (ScalarIndexType::BloomFilter, "bloomfilter_s"),
    ] {
        let index = block_on(scalar::open(kind, &golden_store(dir))).unwrap();
        let at = |a: u64| values[src.addrs.iter().position(|x| *x == a).unwrap()].clone();
        for d in &distinct {
            let q = match d {
                None => ScalarQuery::IsNull,
                Some(s) => ScalarQuery::Equals(Arc::new(StringArray::from(vec![s.as_str()]))),
            };
            let expected: BTreeSet<u64> = src
                .addrs
                .iter()
                .zip(&values)
                .filter(|(_, v)| d.is_some() && *v == d || d.is_none() && v.is_none())
                .map(|(a, _)| *a)
                .collect();
            let got = block_on(index.search(&q)).unwrap();
            check(kind, &format!("{d:?}"), &got, &expected, &live, |a| at(a) == *d);
        }
        let lo = Arc::new(StringArray::from(vec!["b"])) as ArrayRef;
        if kind == ScalarIndexType::Bitmap {
            let q = ScalarQuery::Range {
                lower: Bound::Included(lo.clone()),
                upper: Bound::Unbounded,
            };
            let expected: BTreeSet<u64> = src
                .addrs
                .iter()
                .zip(&values)
                .filter(|(_, v)| v.as_deref().is_some_and(|v| v >= "b"))
                .map(|(a, _)| *a)
                .collect();
            check(
                kind,
                "range",
                &block_on(index.search(&q)).unwrap(),
                &expected,
                &live,
                |_| true,
            );
        }
        let mut ours = index.statistics();
        let theirs = stats(dir);
        ours.retain(|k, _| theirs.contains_key(k));
        assert_eq!(ours, theirs, "{dir} statistics");
    }
}

#[test]
fn label_list_reads_pylance() {
    let src = source();
    let live: BTreeSet<u64> = src.addrs.iter().copied().collect();
    let lists: Vec<Option<Vec<String>>> = src
        .l
        .as_list::<i32>()
        .iter()
        .map(|l| l.map(|l| strings(&l).into_iter().flatten().collect()))
        .collect();
    let index = block_on(scalar::open(ScalarIndexType::LabelList, &golden_store("label_list"))).unwrap();
    let sets: [&[&str]; 5] = [&["t0"], &["t1", "t4"], &["t2", "zz"], &["t0", "t3"], &["t3"]];
    for labels in sets {
        let arr: ArrayRef = Arc::new(StringArray::from(labels.to_vec()));
        for all in [false, true] {
            let q = if all {
                ScalarQuery::LabelsAll(arr.clone())
            } else {
                ScalarQuery::LabelsAny(arr.clone())
            };
            let expected: BTreeSet<u64> = src
                .addrs
                .iter()
                .zip(&lists)
                .filter(|(_, l)| {
                    l.as_ref().is_some_and(|l| {
                        let has = |x: &&str| l.iter().any(|e| e == x);
                        if all {
                            labels.iter().all(has)
                        } else {
                            labels.iter().any(has)
                        }
                    })
                })
                .map(|(a, _)| *a)
                .collect();
            check(
                ScalarIndexType::LabelList,
                &format!("{q:?}"),
                &block_on(index.search(&q)).unwrap(),
                &expected,
                &live,
                |_| true,
            );
        }
    }
    let nulls: BTreeSet<u64> = src
        .addrs
        .iter()
        .zip(&lists)
        .filter(|(_, l)| l.is_none())
        .map(|(a, _)| *a)
        .collect();
    check(
        ScalarIndexType::LabelList,
        "is null",
        &block_on(index.search(&ScalarQuery::IsNull)).unwrap(),
        &nulls,
        &live,
        |_| true,
    );
    assert_eq!(index.statistics(), stats("label_list"));
}

#[test]
fn ngram_reads_pylance() {
    let src = source();
    let live: BTreeSet<u64> = src.addrs.iter().copied().collect();
    let values = strings(&src.s);
    let index = block_on(scalar::open(ScalarIndexType::NGram, &golden_store("ngram"))).unwrap();
    let texts = [
        "apple", "pie Ban", "split", "rry-ta", "Dátil", "datil", "fig_jam", "jam 42", "der elde", "xyz", "LDE",
    ];
    for t in texts {
        let q = ScalarQuery::Contains(t.to_string());
        assert!(index.can_answer(&q), "{t}");
        let expected: BTreeSet<u64> = src
            .addrs
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.as_deref().is_some_and(|v| v.contains(t)))
            .map(|(a, _)| *a)
            .collect();
        let at = |a: u64| values[src.addrs.iter().position(|x| *x == a).unwrap()].clone();
        check(
            ScalarIndexType::NGram,
            t,
            &block_on(index.search(&q)).unwrap(),
            &expected,
            &live,
            |a| at(a).is_some_and(|v| v.contains(t)),
        );
    }
    assert!(!index.can_answer(&ScalarQuery::Contains("ab".into())));
    assert_eq!(index.statistics(), stats("ngram"));
}

/// Every column and global buffer of two Lance files.
async fn contents(store: &dyn IndexStore, name: &str) -> (RecordBatch, Vec<Vec<u8>>) {
    let r = FileReader::open(store.open(name).await.unwrap()).await.unwrap();
    let p = r.projection(None).unwrap();
    let batch = r
        .read_ranges(&p, std::slice::from_ref(&(0..r.num_rows())), None)
        .await
        .unwrap();
    let mut gbs = Vec::new();
    // The last global buffer of a file lancelet wrote holds its checksums.
    let own = r.metadata().global_buffers.len() - usize::from(r.metadata().checksums.is_some());
    for i in 1..own {
        gbs.push(r.read_global_buffer(i).await.unwrap().as_slice().to_vec());
    }
    (batch, gbs)
}

/// Our writer, fed the golden data, writes what pylance wrote (except BTREE's order of
/// equal values, which pylance leaves arbitrary).
#[test]
fn writers_reproduce_pylance_files() {
    let src = source();
    let addrs = UInt64Array::from(src.addrs.clone());
    let params = ScalarParams {
        btree_batch_size: 16,
        rows_per_zone: 8,
        bloom_number_of_items: 8,
        bloom_probability: 0.01,
    };
    let big_bloom = ScalarParams {
        bloom_number_of_items: 1000,
        bloom_probability: 0.01,
        ..ScalarParams::default()
    };
    let cases = [
        (ScalarIndexType::BTree, "btree", &src.i, &params),
        (ScalarIndexType::Bitmap, "bitmap", &src.s, &params),
        (ScalarIndexType::LabelList, "label_list", &src.l, &params),
        (ScalarIndexType::ZoneMap, "zonemap", &src.i, &params),
        (ScalarIndexType::NGram, "ngram", &src.s, &params),
        (ScalarIndexType::BloomFilter, "bloomfilter", &src.i, &params),
        (ScalarIndexType::BloomFilter, "bloomfilter_s", &src.s, &big_bloom),
    ];
    for (kind, dir, values, params) in cases {
        let ours = MemoryStore::new();
        let batch = TrainingBatch::try_new(values.clone(), addrs.clone()).unwrap();
        let created = block_on(scalar::train(
            kind,
            params,
            values.data_type(),
            vec![Ok(batch)],
            &ours,
            FileVersion::V2_2,
        ))
        .unwrap();
        let theirs = golden_store(dir);
        let names: Vec<String> = created.files.iter().map(|(n, _)| n.clone()).collect();
        let expected_names: Vec<String> = kind.files().iter().map(|s| s.to_string()).collect();
        assert_eq!(names, expected_names);
        for name in names {
            let (a, ga) = block_on(contents(&ours, &name));
            let (b, gb) = block_on(contents(&theirs, &name));
            assert_eq!(ga, gb, "{dir}/{name} global buffers");
            assert_eq!(a.schema().fields(), b.schema().fields(), "{dir}/{name} fields");
            for f in b.schema().fields() {
                if kind == ScalarIndexType::BTree && f.name() == "ids" {
                    continue;
                }
                let (x, y) = (a.column_by_name(f.name()).unwrap(), b.column_by_name(f.name()).unwrap());
                assert_eq!(x.as_ref(), y.as_ref(), "{dir}/{name} column {}", f.name());
            }
            let mut md_a = a.schema().metadata().clone();
            let md_b = b.schema().metadata().clone();
            md_a.retain(|k, _| !k.starts_with("lancelet"));
            assert_eq!(md_a, md_b, "{dir}/{name} metadata");
        }
        // And our files read back through our reader like pylance's.
        let index = block_on(scalar::open(kind, &ours)).unwrap();
        let mut st = index.statistics();
        let theirs_st = stats(dir);
        st.retain(|k, _| theirs_st.contains_key(k));
        assert_eq!(st, theirs_st, "{dir} statistics of our file");
    }
}

/// The fuzz targets' logic over damaged copies of the golden files (cut short, bytes
/// flipped): opening and querying must fail cleanly or succeed, never panic.
#[test]
fn damaged_golden_files_never_panic() {
    let dirs = [
        (ScalarIndexType::BTree, "btree"),
        (ScalarIndexType::Bitmap, "bitmap"),
        (ScalarIndexType::LabelList, "label_list"),
        (ScalarIndexType::ZoneMap, "zonemap"),
        (ScalarIndexType::NGram, "ngram"),
        (ScalarIndexType::BloomFilter, "bloomfilter"),
    ];
    let int: ArrayRef = Arc::new(Int64Array::from(vec![3]));
    let text: ArrayRef = Arc::new(StringArray::from(vec!["t1"]));
    let mut queries = vec![ScalarQuery::IsNull, ScalarQuery::Contains("apple pie".into())];
    for lit in [int, text] {
        queries.push(ScalarQuery::Equals(lit.clone()));
        queries.push(ScalarQuery::IsIn(lit.clone()));
        queries.push(ScalarQuery::LabelsAny(lit.clone()));
        queries.push(ScalarQuery::LabelsAll(lit.clone()));
        queries.push(ScalarQuery::Range {
            lower: Bound::Included(lit.clone()),
            upper: Bound::Unbounded,
        });
    }
    let mut seed: u64 = 42;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    let mut opened = 0;
    for (kind, dir) in dirs {
        let golden = golden_store(dir);
        for round in 0..300 {
            let store = MemoryStore::new();
            let names = golden.names();
            let victim = &names[next() % names.len()];
            for name in &names {
                let mut bytes = golden.get(name).unwrap().to_vec();
                if name == victim {
                    if round % 3 == 0 {
                        bytes.truncate(next() % bytes.len());
                    } else {
                        for _ in 0..1 + next() % 4 {
                            let at = next() % bytes.len();
                            bytes[at] ^= 1 << (next() % 8);
                        }
                    }
                }
                store.insert(name.clone(), bytes);
            }
            let Ok(index) = block_on(scalar::open(kind, &store)) else {
                continue;
            };
            opened += 1;
            for q in &queries {
                if index.can_answer(q) {
                    let _ = block_on(index.search(q));
                }
            }
            let _ = index.statistics();
        }
    }
    // Most single-bit flips land in data pages, so many damaged files still open.
    assert!(opened > 100, "only {opened} damaged files opened");
}

/// Writes our index files for the golden data into `$LANCELET_INDEX_EXPORT/<dir>/` so a
/// pylance script can query them (`cargo test ... -- --ignored export_for_pylance`).
#[test]
#[ignore]
fn export_for_pylance() {
    let Ok(out) = std::env::var("LANCELET_INDEX_EXPORT") else {
        return;
    };
    let src = source();
    let addrs = UInt64Array::from(src.addrs.clone());
    let params = ScalarParams {
        btree_batch_size: 16,
        rows_per_zone: 8,
        bloom_number_of_items: 8,
        bloom_probability: 0.01,
    };
    let cases = [
        (ScalarIndexType::BTree, "btree", &src.i),
        (ScalarIndexType::Bitmap, "bitmap", &src.s),
        (ScalarIndexType::LabelList, "label_list", &src.l),
        (ScalarIndexType::ZoneMap, "zonemap", &src.i),
        (ScalarIndexType::NGram, "ngram", &src.s),
        (ScalarIndexType::BloomFilter, "bloomfilter", &src.i),
    ];
    for (kind, dir, values) in cases {
        let store = MemoryStore::new();
        let batch = TrainingBatch::try_new(values.clone(), addrs.clone()).unwrap();
        block_on(scalar::train(
            kind,
            &params,
            values.data_type(),
            vec![Ok(batch)],
            &store,
            FileVersion::V2_2,
        ))
        .unwrap();
        std::fs::create_dir_all(format!("{out}/{dir}")).unwrap();
        for name in store.names() {
            std::fs::write(format!("{out}/{dir}/{name}"), store.get(&name).unwrap()).unwrap();
        }
    }
}
