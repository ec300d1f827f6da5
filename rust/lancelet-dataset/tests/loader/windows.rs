#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]
//! A loader's window of consecutive batches, read together, gives exactly the batches read
//! one by one: every shuffle, with filters, deletions, padding, row ids and expressions.

use std::path::PathBuf;

use futures::executor::block_on;
use lancelet_dataset::loader::plan::{PlanOptions, RankPlan, Shuffle};
use lancelet_dataset::loader::BatchColumns;
use lancelet_dataset::Dataset;

fn open(name: &str) -> Dataset {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/datasets")
        .join(name);
    block_on(Dataset::open(&path, None)).unwrap()
}

fn check(ds: &Dataset, filter: Option<&str>, batch_size: usize, columns: &BatchColumns) {
    let rows = block_on(ds.loader_rows(filter)).unwrap();
    let reader = block_on(ds.batch_reader(columns.clone())).unwrap();
    for shuffle in [Shuffle::None, Shuffle::Fragment, Shuffle::Clump(3), Shuffle::Row] {
        for (world_size, drop_last) in [(1, false), (3, false), (4, true)] {
            for rank in 0..world_size {
                let opts = PlanOptions {
                    batch_size,
                    shuffle,
                    seed: 5,
                    epoch: 1,
                    rank,
                    world_size,
                    drop_last,
                    even_batches: true,
                };
                let plan = RankPlan::new(&rows, &opts).unwrap();
                let batches: Vec<Vec<u64>> = (0..plan.num_batches()).map(|i| plan.batch(i)).collect();
                let one_by_one: Vec<_> = batches.iter().map(|b| block_on(reader.read(b)).unwrap()).collect();
                let refs: Vec<&[u64]> = batches.iter().map(Vec::as_slice).collect();
                for window in [2, 3, refs.len().max(1)] {
                    let mut got = Vec::new();
                    for w in refs.chunks(window) {
                        got.extend(block_on(reader.read_window(w)).unwrap());
                    }
                    assert_eq!(
                        got, one_by_one,
                        "{shuffle:?} world {world_size} rank {rank} window {window}"
                    );
                }
                // Strided picks (a worker's batches) too.
                let strided: Vec<&[u64]> = refs.iter().step_by(2).copied().collect();
                let expect: Vec<_> = one_by_one.iter().step_by(2).cloned().collect();
                assert_eq!(block_on(reader.read_window(&strided)).unwrap(), expect);
            }
        }
    }
}

#[test]
fn windows_read_the_same_batches_as_one_by_one() {
    let names = BatchColumns {
        with_row_id: true,
        ..BatchColumns::default()
    };
    let exprs = BatchColumns {
        exprs: Some(vec![("b".into(), "a * 2".into())]),
        with_row_id: true,
        ..BatchColumns::default()
    };
    // Two fragments with deleted rows.
    let small = open("pylance_v2_0_small");
    for columns in [&names, &exprs] {
        check(&small, None, 3, columns);
        check(&small, Some("a > 4"), 2, columns);
    }
    // A bitmap of deletions.
    let big = open("pylance_v2_0_bitmap_deletes");
    check(&big, Some("a % 5 <> 1"), 700, &names);
    check(&big, None, 1000, &exprs);
}
