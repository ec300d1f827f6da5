//! Which rows a training job reads, in which order, on which rank: pure functions of the
//! rows, the shuffle, the seed, the epoch and the rank, so that every process of a job
//! computes the same plan without talking to the others, and a resumed job the same plan
//! it stopped in.
//!
//! An epoch is planned in three steps:
//! 1. *order*: the rows (row addresses in dataset order) are put in the epoch's order by
//!    the [`Shuffle`], drawn from `(seed, epoch)`;
//! 2. *share*: the order is cut into `world_size` contiguous shares ([`shares`]); each
//!    rank gets one, so together the ranks read every row exactly once;
//! 3. *batches*: a rank's share is cut into batches of `batch_size` rows. Within a batch
//!    rows are read (and returned) in storage order, which is what makes a shuffled batch
//!    cost one sorted read per fragment.

use std::ops::Range;

use lancelet_vector::rng::Rng;

use crate::{Error, Result};

/// How an epoch orders the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shuffle {
    /// Dataset order.
    None,
    /// Whole fragments in a random order; rows within a fragment in order.
    Fragment,
    /// Runs of this many consecutive rows in a random order: few large reads, and rows
    /// from all over the dataset in every stretch of the epoch.
    Clump(usize),
    /// Every row anywhere: a uniformly random permutation.
    Row,
}

impl Shuffle {
    /// The shuffle named `mode` (`"none"`, `"fragment"`, `"clump"`, `"row"`; `None` and
    /// `false` spellings are the caller's to map), with `clump_size` rows per clump.
    pub fn parse(mode: &str, clump_size: usize) -> Result<Self> {
        match mode {
            "none" => Ok(Self::None),
            "fragment" => Ok(Self::Fragment),
            "clump" if clump_size == 0 => Err(Error::InvalidArgument("clump_size must be at least 1".into())),
            "clump" => Ok(Self::Clump(clump_size)),
            "row" => Ok(Self::Row),
            other => Err(Error::InvalidArgument(format!(
                "shuffle must be 'none', 'fragment', 'clump' or 'row', got {other:?}"
            ))),
        }
    }
}

/// The generator of epoch `epoch` of a job seeded `seed`: each pair its own stream (the
/// seed's first draw, stepped by an odd constant per epoch).
pub fn epoch_rng(seed: u64, epoch: u64) -> Rng {
    let base = Rng::new(seed).next_u64();
    Rng::new(base.wrapping_add(epoch.wrapping_mul(0xD1B5_4A32_D192_ED03)))
}

/// `rows` (row addresses, dataset order) in the order of epoch `epoch`.
pub(crate) fn epoch_order(rows: &[u64], shuffle: Shuffle, seed: u64, epoch: u64) -> Vec<u64> {
    let mut rng = epoch_rng(seed, epoch);
    match shuffle {
        Shuffle::None => rows.to_vec(),
        Shuffle::Row => {
            let mut out = rows.to_vec();
            rng.shuffle(&mut out);
            out
        }
        Shuffle::Fragment => {
            let mut runs: Vec<&[u64]> = rows.chunk_by(|a, b| a >> 32 == b >> 32).collect();
            rng.shuffle(&mut runs);
            runs.concat()
        }
        Shuffle::Clump(size) => {
            let mut runs: Vec<&[u64]> = rows.chunks(size).collect();
            rng.shuffle(&mut runs);
            runs.concat()
        }
    }
}

/// One rank's share of an epoch: positions `start..start + len` of the epoch order, plus
/// `pad` rows repeated from the start of the order (see [`shares`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Share {
    /// First position of the share in the epoch order.
    pub start: usize,
    /// Positions in the share.
    pub len: usize,
    /// Rows repeated from the start of the order (0 or 1).
    pub pad: usize,
}

/// Rank `rank`'s share when an epoch of `n` rows is cut into `world_size` contiguous
/// shares, rank by rank (computed for the one rank: the world may be large).
///
/// - `drop_last`: every rank gets the same number of full batches, as many as the
///   smallest share allows; the rows past them are skipped this epoch (different rows each
///   epoch when the order is shuffled). No row is read twice.
/// - otherwise every row is read exactly once, and the shares are sized so that every
///   rank has the same number of batches, all full but the last: with `k` batches per
///   rank, each share holds more than `(k - 1) * batch_size` rows. That is possible unless
///   fewer than `world_size` rows are left for the last batches (for example 1,002 rows, 4
///   ranks, batches of 250); then, with `even_batches`, the ranks short of a last batch
///   repeat one row from the start of the epoch order (what distributed data parallel
///   training needs: a rank with one batch fewer than the others hangs the job), and
///   without it they have one batch fewer.
pub(crate) fn share(
    n: usize,
    world_size: usize,
    batch_size: usize,
    drop_last: bool,
    even_batches: bool,
    rank: usize,
) -> Share {
    // u128: world_size * batch_size must not wrap (both may be huge).
    let (n, w, b, r) = (
        n as u128,
        world_size.max(1) as u128,
        batch_size.max(1) as u128,
        rank as u128,
    );
    let out = |start: u128, len: u128, pad: bool| Share {
        start: start.min(n) as usize,
        len: len.min(n) as usize,
        pad: usize::from(pad),
    };
    if drop_last {
        let len = n / w / b * b;
        return out(r * len, len, false);
    }
    let k = n.div_ceil(w * b);
    if k == 0 {
        return out(0, 0, false);
    }
    let base = (k - 1) * b;
    let rest = n - w * base;
    let (each, extra) = (rest / w, rest % w);
    let len = base + each + u128::from(r < extra);
    let start = r * (base + each) + r.min(extra);
    out(start, len, len == base && even_batches)
}

/// What a rank reads in one epoch.
#[derive(Debug, Clone)]
pub struct PlanOptions {
    /// Rows per batch (the last batch of a rank may be shorter).
    pub batch_size: usize,
    /// The epoch's order.
    pub shuffle: Shuffle,
    /// The job's seed; with `epoch` it draws the order.
    pub seed: u64,
    /// The epoch (0-based).
    pub epoch: u64,
    /// This process's rank, below `world_size`.
    pub rank: usize,
    /// How many ranks share the epoch.
    pub world_size: usize,
    /// Full batches only, as many on every rank (see [`shares`]).
    pub drop_last: bool,
    /// Pad a rank short of a last batch with a repeated row (see [`shares`]).
    pub even_batches: bool,
}

impl PlanOptions {
    /// Refuses sizes and ranks that plan nothing sensible.
    pub fn check(&self) -> Result<()> {
        check_batch_size(self.batch_size)?;
        check_rank(self.rank, self.world_size)
    }
}

fn check_batch_size(batch_size: usize) -> Result<()> {
    if batch_size == 0 {
        return Err(Error::InvalidArgument("batch_size must be at least 1".into()));
    }
    Ok(())
}

fn check_rank(rank: usize, world_size: usize) -> Result<()> {
    if world_size == 0 {
        return Err(Error::InvalidArgument("world_size must be at least 1".into()));
    }
    if rank >= world_size {
        return Err(Error::InvalidArgument(format!(
            "rank {rank} is not below world_size {world_size}"
        )));
    }
    Ok(())
}

/// The options of pylance's sharded samplers: this rank's share of batches of
/// `batch_size`, in an order drawn from `(seed, epoch)` when `randomize`.
#[derive(Debug, Clone, Copy)]
pub struct SamplerOptions {
    /// This process's rank, below `world_size`.
    pub rank: usize,
    /// How many ranks share the rows.
    pub world_size: usize,
    /// Rows per batch.
    pub batch_size: usize,
    /// Put the rank's batches in a random order.
    pub randomize: bool,
    /// With `epoch`, draws the order.
    pub seed: u64,
    /// The epoch.
    pub epoch: u64,
}

impl From<(usize, usize, usize, bool, u64, u64)> for SamplerOptions {
    /// `(rank, world_size, batch_size, randomize, seed, epoch)`.
    fn from(a: (usize, usize, usize, bool, u64, u64)) -> Self {
        let (rank, world_size, batch_size, randomize, seed, epoch) = a;
        Self {
            rank,
            world_size,
            batch_size,
            randomize,
            seed,
            epoch,
        }
    }
}

impl SamplerOptions {
    /// `batches`, in the epoch's order when randomized.
    fn order<T>(&self, mut batches: Vec<T>) -> Vec<T> {
        if self.randomize {
            epoch_rng(self.seed, self.epoch).shuffle(&mut batches);
        }
        batches
    }
}

/// One rank's epoch: its rows in read order, cut into batches.
#[derive(Debug, Clone)]
pub struct RankPlan {
    rows: Vec<u64>,
    batch_size: usize,
}

impl RankPlan {
    /// The plan of `opts.rank` over `rows` (row addresses in dataset order).
    pub fn new(rows: &[u64], opts: &PlanOptions) -> Result<Self> {
        opts.check()?;
        let order = epoch_order(rows, opts.shuffle, opts.seed, opts.epoch);
        let share = share(
            order.len(),
            opts.world_size,
            opts.batch_size,
            opts.drop_last,
            opts.even_batches,
            opts.rank,
        );
        let mut mine = order[share.start..share.start + share.len].to_vec();
        // Padding repeats rows from the start of the order.
        mine.extend(order.iter().take(share.pad));
        Ok(Self {
            rows: mine,
            batch_size: opts.batch_size,
        })
    }

    /// How many batches rank `opts.rank` reads in an epoch of `rows` rows, without
    /// ordering them (the count does not depend on the order).
    pub fn count_batches(rows: usize, opts: &PlanOptions) -> Result<usize> {
        opts.check()?;
        let s = share(
            rows,
            opts.world_size,
            opts.batch_size,
            opts.drop_last,
            opts.even_batches,
            opts.rank,
        );
        Ok((s.len + s.pad).div_ceil(opts.batch_size))
    }

    /// How many batches this rank reads.
    pub fn num_batches(&self) -> usize {
        self.rows.len().div_ceil(self.batch_size)
    }

    /// How many rows this rank reads (padding included).
    pub fn num_rows(&self) -> usize {
        self.rows.len()
    }

    /// The rows of batch `i`, in storage order.
    pub fn batch(&self, i: usize) -> Vec<u64> {
        let start = (i * self.batch_size).min(self.rows.len());
        let end = (start + self.batch_size).min(self.rows.len());
        let mut out = self.rows[start..end].to_vec();
        out.sort_unstable();
        out
    }
}

/// pylance's `ShardedFixedBatchSampler`: rank `rank` gets the `rank`-th of `world_size`
/// contiguous index ranges of `0..total` (each `ceil(total / world_size)` long), cut into
/// batches of `batch_size`.
pub fn fixed_batches(o: &SamplerOptions, total: u64) -> Result<Vec<Range<u64>>> {
    check_rank(o.rank, o.world_size)?;
    if total == 0 {
        return Ok(Vec::new());
    }
    check_batch_size(o.batch_size)?;
    let per_rank = total.div_ceil(o.world_size as u64);
    // u128: rank * per_rank and start + batch_size may pass u64::MAX.
    let start = (o.rank as u128 * per_rank as u128).min(total as u128);
    let end = (start + per_rank as u128).min(total as u128);
    let out = (start..end)
        .step_by(o.batch_size)
        .map(|s| s as u64..(s + o.batch_size as u128).min(end) as u64)
        .collect();
    Ok(o.order(out))
}

/// pylance's `ShardedBatchSampler` without a filter: batches of `batch_size` positions of
/// `0..total`, every `world_size`-th one from the `rank`-th.
pub fn interleaved_batches(o: &SamplerOptions, total: u64) -> Result<Vec<Range<u64>>> {
    check_rank(o.rank, o.world_size)?;
    check_batch_size(o.batch_size)?;
    // u128: the strides may pass u64::MAX.
    let (b, w, total) = (o.batch_size as u128, o.world_size as u128, total as u128);
    let stride = usize::try_from(w * b).unwrap_or(usize::MAX);
    let out = (o.rank as u128 * b..total)
        .step_by(stride)
        .map(|s| s as u64..(s + b).min(total) as u64)
        .collect();
    Ok(o.order(out))
}

/// pylance's `ShardedBatchSampler` over a filter's rows: every `world_size`-th row of
/// `rows` from the `rank`-th, in batches of `batch_size`.
pub fn strided_batches(rows: &[u64], o: &SamplerOptions) -> Result<Vec<Vec<u64>>> {
    check_rank(o.rank, o.world_size)?;
    check_batch_size(o.batch_size)?;
    let mine: Vec<u64> = rows.iter().skip(o.rank).step_by(o.world_size).copied().collect();
    Ok(o.order(mine.chunks(o.batch_size).map(<[u64]>::to_vec).collect()))
}

/// `min(n, total)` distinct positions of `0..total`, drawn from `seed`, as ascending runs.
/// At most `max_takes` runs when `n > max_takes` (few random reads): `0..total` is cut
/// into `max_takes` equal stretches, each gives `n / max_takes` consecutive rows from a
/// random place, and `n % max_takes` stretches chosen at random give one row more. With
/// `n <= max_takes` the positions are a uniform sample.
pub fn sample_runs(total: u64, n: u64, max_takes: u64, seed: u64) -> Vec<Range<u64>> {
    if n >= total {
        return merge_runs(std::iter::once(0..total).filter(|r| !r.is_empty()));
    }
    let mut rng = Rng::new(seed);
    if n <= max_takes.max(1) {
        let mut picks: Vec<u64> = if total <= (1 << 24) {
            rng.sample(total as usize, n as usize)
                .into_iter()
                .map(|p| p as u64)
                .collect()
        } else {
            // Rejection is cheap when n is far below total.
            let mut seen = std::collections::BTreeSet::new();
            while (seen.len() as u64) < n {
                seen.insert(rng.next_u64() % total);
            }
            seen.into_iter().collect()
        };
        picks.sort_unstable();
        return merge_runs(picks.into_iter().map(|p| p..p + 1));
    }
    let t = max_takes;
    let stretch = |c: u64| (c * total / t)..((c + 1) * total / t);
    let quota = n / t;
    // Extra rows go to stretches that have room for one more row.
    let roomy: Vec<u64> = (0..t).filter(|&c| stretch(c).end - stretch(c).start > quota).collect();
    let extra: std::collections::BTreeSet<u64> = rng
        .sample(roomy.len(), (n % t) as usize)
        .into_iter()
        .map(|i| roomy[i])
        .collect();
    let mut runs = Vec::with_capacity(t as usize);
    for c in 0..t {
        let s = stretch(c);
        let want = quota + u64::from(extra.contains(&c));
        if want == 0 {
            continue;
        }
        let slack = s.end - s.start - want;
        let at = s.start + if slack == 0 { 0 } else { rng.next_u64() % (slack + 1) };
        runs.push(at..at + want);
    }
    merge_runs(runs.into_iter())
}

/// Joins touching ascending runs.
fn merge_runs(runs: impl Iterator<Item = Range<u64>>) -> Vec<Range<u64>> {
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in runs {
        match out.last_mut() {
            Some(last) if last.end == r.start => last.end = r.end,
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rows(frags: &[u64]) -> Vec<u64> {
        let mut out = Vec::new();
        for (f, &n) in frags.iter().enumerate() {
            out.extend((0..n).map(|r| ((f as u64) << 32) | r));
        }
        out
    }

    fn opts(shuffle: Shuffle, rank: usize, world_size: usize, batch_size: usize) -> PlanOptions {
        PlanOptions {
            batch_size,
            shuffle,
            seed: 7,
            epoch: 0,
            rank,
            world_size,
            drop_last: false,
            even_batches: true,
        }
    }

    fn so(rank: usize, world_size: usize, batch_size: usize, randomize: bool, seed: u64, epoch: u64) -> SamplerOptions {
        (rank, world_size, batch_size, randomize, seed, epoch).into()
    }

    fn shuffles() -> impl Strategy<Value = Shuffle> {
        prop_oneof![
            Just(Shuffle::None),
            Just(Shuffle::Fragment),
            (1usize..50).prop_map(Shuffle::Clump),
            Just(Shuffle::Row),
        ]
    }

    proptest! {
        /// Every row exactly once per epoch across ranks; equal batch counts; only the
        /// last batch of a rank is short; padding only when unavoidable.
        #[test]
        fn ranks_cover_every_row_once(
            frags in proptest::collection::vec(0u64..300, 0..6),
            shuffle in shuffles(),
            world in 1usize..6,
            batch in 1usize..40,
        ) {
            let all = rows(&frags);
            let plans: Vec<RankPlan> = (0..world)
                .map(|r| RankPlan::new(&all, &opts(shuffle, r, world, batch)))
                .collect::<Result<_>>()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let counts: Vec<usize> = plans.iter().map(RankPlan::num_batches).collect();
            for (r, &c) in counts.iter().enumerate() {
                let counted = RankPlan::count_batches(all.len(), &opts(shuffle, r, world, batch));
                prop_assert_eq!(counted.ok(), Some(c));
            }
            let padded: usize = plans.iter().map(|p| p.num_rows()).sum::<usize>() - all.len();
            prop_assert!(padded < world);
            if !all.is_empty() {
                prop_assert!(counts.iter().all(|&c| c == counts[0]), "{counts:?}");
            }
            let mut seen: Vec<u64> = Vec::new();
            for p in &plans {
                for i in 0..p.num_batches() {
                    let b = p.batch(i);
                    prop_assert!(b.windows(2).all(|w| w[0] <= w[1]));
                    if i + 1 < p.num_batches() {
                        prop_assert_eq!(b.len(), batch);
                    }
                    seen.extend(b);
                }
            }
            seen.sort_unstable();
            seen.dedup();
            prop_assert_eq!(seen, all);
        }

        /// drop_last: equal numbers of full batches, no row twice.
        #[test]
        fn drop_last_gives_full_batches(n in 0u64..500, world in 1usize..5, batch in 1usize..30) {
            let all = rows(&[n]);
            let mut seen = Vec::new();
            let mut counts = Vec::new();
            for r in 0..world {
                let o = PlanOptions { drop_last: true, ..opts(Shuffle::Row, r, world, batch) };
                let p = RankPlan::new(&all, &o).map_err(|e| TestCaseError::fail(e.to_string()))?;
                counts.push(p.num_batches());
                for i in 0..p.num_batches() {
                    let b = p.batch(i);
                    prop_assert_eq!(b.len(), batch);
                    seen.extend(b);
                }
            }
            prop_assert!(counts.iter().all(|&c| c == counts[0]));
            prop_assert_eq!(counts[0], n as usize / world / batch);
            let before = seen.len();
            seen.sort_unstable();
            seen.dedup();
            prop_assert_eq!(seen.len(), before);
        }

        /// Sampling returns exactly min(n, total) distinct positions in at most max_takes runs.
        #[test]
        fn sample_is_exact(total in 0u64..5000, n in 0u64..6000, takes in 1u64..100, seed in any::<u64>()) {
            let runs = sample_runs(total, n, takes, seed);
            let picked: Vec<u64> = runs.iter().flat_map(|r| r.clone()).collect();
            prop_assert_eq!(picked.len() as u64, n.min(total));
            prop_assert!(picked.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(picked.last().is_none_or(|&p| p < total));
            if n > takes && n < total {
                prop_assert!(runs.len() as u64 <= takes);
            }
        }
    }

    #[test]
    fn epochs_differ_and_replay() {
        let all = rows(&[100, 100, 100, 100]);
        for shuffle in [Shuffle::Fragment, Shuffle::Clump(10), Shuffle::Row] {
            let e1 = epoch_order(&all, shuffle, 3, 1);
            assert_eq!(e1, epoch_order(&all, shuffle, 3, 1));
            assert_ne!(e1, epoch_order(&all, shuffle, 3, 2), "{shuffle:?}");
            assert_ne!(e1, epoch_order(&all, shuffle, 4, 1), "{shuffle:?}");
        }
        assert_eq!(epoch_order(&all, Shuffle::None, 3, 1), all);
    }

    #[test]
    fn fragment_and_clump_keep_runs_together() {
        let all = rows(&[50, 60, 70]);
        let order = epoch_order(&all, Shuffle::Fragment, 1, 0);
        let frags: Vec<u64> = order.chunk_by(|a, b| a >> 32 == b >> 32).map(|r| r[0] >> 32).collect();
        assert_eq!(frags.len(), 3);
        let order = epoch_order(&all, Shuffle::Clump(10), 1, 0);
        for clump in order.chunks(10) {
            assert!(clump.windows(2).all(|w| w[1] == w[0] + 1), "{clump:?}");
        }
    }

    #[test]
    fn shares_match_the_documented_example() {
        // 1,002 rows, 4 ranks, batches of 250: two ranks must repeat a row.
        let shares = |n| (0..4).map(|r| share(n, 4, 250, false, true, r)).collect::<Vec<_>>();
        let s = shares(1002);
        assert_eq!(s.iter().map(|s| s.len).sum::<usize>(), 1002);
        assert_eq!(s.iter().filter(|s| s.pad == 1).count(), 2);
        assert!(s.windows(2).all(|w| w[0].start + w[0].len == w[1].start));
        let s = shares(1000);
        assert!(s.iter().all(|s| s.len == 250 && s.pad == 0));
    }

    #[test]
    fn huge_sizes_do_not_wrap() {
        // Found by the Python tests: these divided by zero, aborted or wrapped.
        assert_eq!(
            share(960, 2, 1 << 63, false, true, 1),
            Share {
                start: 480,
                len: 480,
                pad: 0
            }
        );
        assert_eq!(
            share(960, 1 << 40, 10, false, true, 5),
            Share {
                start: 5,
                len: 1,
                pad: 0
            }
        );
        assert_eq!(share(960, 1 << 40, 10, false, true, 1 << 39).len, 0);
        let b = interleaved_batches(&so(0, 2, 1 << 63, false, 0, 0), 100).unwrap_or_default();
        assert_eq!((b.len(), b.first()), (1, Some(&(0..100))));
        // Ranks of 2 rows each cover u64::MAX rows before rank 2^63: it has none.
        let b = fixed_batches(&so(1 << 63, (1 << 63) + 1, 1, false, 0, 0), u64::MAX);
        assert!(b.is_ok_and(|b| b.is_empty()));
        let b = fixed_batches(&so((1 << 62) + 5, (1 << 63) + 1, 1, false, 0, 0), u64::MAX).unwrap_or_default();
        assert_eq!(b, vec![(1 << 63) + 10..(1 << 63) + 11, (1 << 63) + 11..(1 << 63) + 12]);
    }

    #[test]
    fn fixed_batches_as_pylance() {
        let b = fixed_batches(&so(1, 4, 100, false, 0, 0), 1000).unwrap_or_default();
        assert_eq!(b, vec![250..350, 350..450, 450..500]);
        assert!(fixed_batches(&so(2, 4, 10, false, 0, 0), 2)
            .unwrap_or_default()
            .is_empty());
        assert!(fixed_batches(&so(0, 1, 0, false, 0, 0), 5).is_err());
        let a = fixed_batches(&so(0, 4, 250, true, 42, 1), 2000).unwrap_or_default();
        assert_ne!(a, fixed_batches(&so(0, 4, 250, true, 42, 2), 2000).unwrap_or_default());
    }

    #[test]
    fn interleaved_batches_as_pylance() {
        let b = interleaved_batches(&so(1, 2, 10, false, 0, 0), 45).unwrap_or_default();
        assert_eq!(b, vec![10..20, 30..40]);
    }

    #[test]
    fn bad_options_are_refused() {
        assert!(RankPlan::new(&[], &opts(Shuffle::None, 2, 2, 1)).is_err());
        assert!(RankPlan::new(&[], &opts(Shuffle::None, 0, 1, 0)).is_err());
        assert!(Shuffle::parse("clump", 0).is_err());
        assert!(Shuffle::parse("global", 4).is_err());
    }
}
