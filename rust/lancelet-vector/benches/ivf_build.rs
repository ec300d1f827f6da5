//! End-to-end IVF build time on random 128-dim vectors, for comparison with pylance's
//! `create_index` on the same data (see the brief in the crate's bench notes).
//!
//! `cargo bench -p lancelet-vector --bench ivf_build -- [rows] [IVF_PQ|IVF_SQ|IVF_HNSW_SQ|...]`
//! reads the file named by `LANCELET_VBENCH_DATA` (raw little-endian f32, rows x 128) when set (written by the pylance timing script),
//! else generates seeded vectors.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark that reports on stdout; a failed unwrap is a failed run"
)]

use std::time::Instant;

use lancelet_file::FileVersion;
use lancelet_vector::ivf::{self, VectorBuildParams, VectorIndexType};
use lancelet_vector::Metric;

const DIM: usize = 128;

/// CPU seconds (user + system, all threads) of this process so far; the machine is shared,
/// so CPU time compares builds more fairly than wall time.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let tick = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let rows: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let itype = args
        .get(1)
        .map(|a| VectorIndexType::parse(a).unwrap())
        .unwrap_or(VectorIndexType::IvfPq);
    let data: Vec<f32> = match std::env::var("LANCELET_VBENCH_DATA").map(std::fs::read) {
        Ok(Ok(b)) => b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        _ => {
            let mut s = 0x2545_F491_4F6C_DD1Du64;
            (0..rows * DIM)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
                })
                .collect()
        }
    };
    assert_eq!(data.len(), rows * DIM);
    let addrs: Vec<u64> = (0..rows as u64).collect();
    let mut p = VectorBuildParams::new(itype, Metric::L2);
    p.num_partitions = Some(256);
    if itype.storage() == ivf::Storage::Pq {
        p.num_sub_vectors = Some(16);
    }
    let (t, cpu0) = (Instant::now(), cpu_seconds());
    let model = ivf::train_model(&data, DIM, &p).unwrap();
    let train = t.elapsed().as_secs_f64();
    let cpu1 = cpu_seconds();
    let t2 = Instant::now();
    let files = ivf::build(&model, &data, &addrs, DIM, FileVersion::V2_0).unwrap();
    let build = t2.elapsed().as_secs_f64();
    let cpu2 = cpu_seconds();
    let bytes: usize = files.iter().map(|f| f.1.len()).sum();
    println!(
        "lancelet {itype} n={rows}: wall train {train:.2}s + build {build:.2}s = {:.2}s; cpu train {:.2}s + build {:.2}s = {:.2}s ({bytes} bytes, loss {:.1})",
        train + build,
        cpu1 - cpu0,
        cpu2 - cpu1,
        cpu2 - cpu0,
        model.loss
    );
}
