//! Row lineage: move-stable row ids and per-row dataset versions.
//!
//! A fragment of a dataset with stable row ids stores, for each physical row in order, its
//! row id as a `RowIdSequence`: a list of segments, each one of five shapes (a contiguous
//! range, a range minus a few holes, a range filtered by a bitmap, a sorted array, an
//! arbitrary array). Arrays are stored as a base plus 16- or 32-bit deltas when the values
//! are close together. [`encode_row_ids`] picks, for each ascending run, the shape that
//! takes the fewest bytes.
//!
//! The version each row was created at and last updated at are `RowDatasetVersionSequence`s:
//! runs of rows sharing a version. Only the number of rows a run's span covers matters to
//! readers (pylance keeps the old spans when it compacts), so [`decode_versions`] reads
//! spans as counts and [`encode_versions`] writes each run as the range of offsets it covers.
//!
//! [`RowIdIndex`] maps row ids to row addresses for `take` by id. It keeps runs of ids
//! that are contiguous in both id and address, so a dataset of large appended fragments
//! indexes 100M ids in a few hundred entries.

use prost::Message;

use crate::{pb, Error, Result};
use lancelet_io::Storage;

use pb::encoded_u64_array::{Array as Packed, U16Array, U32Array, U64Array};
use pb::u64_segment::{Range, RangeWithBitmap, RangeWithHoles, Segment};

/// Runs shorter than this are merged into an unsorted array segment rather than each
/// paying a segment's header.
const MIN_RUN: usize = 8;

/// One decoded segment of a row id sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdSegment {
    /// `start..end`.
    Range(u64, u64),
    /// Values in order.
    Values(Vec<u64>),
}

impl IdSegment {
    /// Number of ids.
    pub fn len(&self) -> u64 {
        match self {
            Self::Range(s, e) => e - s,
            Self::Values(v) => v.len() as u64,
        }
    }

    /// Whether the segment holds no id.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn corrupt(what: &str, message: impl Into<String>) -> Error {
    Error::corrupt(what, message)
}

fn width_of(span: u64) -> u64 {
    if span <= u64::from(u16::MAX) {
        2
    } else if span <= u64::from(u32::MAX) {
        4
    } else {
        8
    }
}

/// Packs `values` as a base plus the narrowest deltas that fit.
fn pack(values: &[u64]) -> pb::EncodedU64Array {
    let base = values.iter().copied().min().unwrap_or(0);
    let max = values.iter().copied().max().unwrap_or(0);
    let array = match width_of(max - base) {
        2 => Packed::U16Array(U16Array {
            base,
            offsets: values.iter().flat_map(|v| ((v - base) as u16).to_le_bytes()).collect(),
        }),
        4 => Packed::U32Array(U32Array {
            base,
            offsets: values.iter().flat_map(|v| ((v - base) as u32).to_le_bytes()).collect(),
        }),
        _ => Packed::U64Array(U64Array {
            values: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }),
    };
    pb::EncodedU64Array { array: Some(array) }
}

/// The values of a packed array; at most `limit` of them (a corrupt length is refused
/// before anything is allocated).
fn unpack(a: &pb::EncodedU64Array, limit: u64, what: &str) -> Result<Vec<u64>> {
    let (width, base, bytes) = match &a.array {
        Some(Packed::U16Array(x)) => (2, x.base, &x.offsets),
        Some(Packed::U32Array(x)) => (4, x.base, &x.offsets),
        Some(Packed::U64Array(x)) => (8, 0, &x.values),
        None => return Err(corrupt(what, "an encoded array has no values")),
    };
    if bytes.len() % width != 0 {
        return Err(corrupt(
            what,
            format!("{} bytes is not a whole number of {width}-byte values", bytes.len()),
        ));
    }
    let n = (bytes.len() / width) as u64;
    if n > limit {
        return Err(corrupt(
            what,
            format!("an array of {n} ids exceeds the fragment's {limit} rows"),
        ));
    }
    bytes
        .chunks_exact(width)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..width].copy_from_slice(c);
            base.checked_add(u64::from_le_bytes(b))
                .ok_or_else(|| corrupt(what, "a packed id overflows u64"))
        })
        .collect()
}

fn packed_size(values_span: u64, n: u64) -> u64 {
    width_of(values_span).saturating_mul(n).saturating_add(4)
}

/// The cheapest segment for a strictly ascending run of ids.
fn sorted_segment(run: &[u64]) -> Segment {
    let (first, last) = (run[0], run[run.len() - 1]);
    let n = run.len() as u64;
    if last == u64::MAX {
        // A range's `end` could not hold it: only an array can.
        return Segment::SortedArray(pack(run));
    }
    let span = last - first + 1;
    if span == n {
        return Segment::Range(Range {
            start: first,
            end: last + 1,
        });
    }
    let holes = span - n;
    // Saturating: a run spanning most of u64 must not wrap into looking cheap.
    let bitmap_cost = span.div_ceil(8).saturating_add(4);
    let holes_cost = packed_size(span, holes).saturating_add(4);
    let array_cost = packed_size(span, n);
    if bitmap_cost <= holes_cost && bitmap_cost <= array_cost {
        let mut bitmap = vec![0u8; span.div_ceil(8) as usize];
        for v in run {
            let i = (v - first) as usize;
            bitmap[i / 8] |= 1 << (i % 8);
        }
        Segment::RangeWithBitmap(RangeWithBitmap {
            start: first,
            end: last + 1,
            bitmap: bitmap.into(),
        })
    } else if holes_cost <= array_cost {
        let mut missing = Vec::with_capacity(holes as usize);
        let mut expect = first;
        for &v in run {
            missing.extend(expect..v);
            expect = v + 1;
        }
        Segment::RangeWithHoles(RangeWithHoles {
            start: first,
            end: last + 1,
            holes: Some(pack(&missing)),
        })
    } else {
        Segment::SortedArray(pack(run))
    }
}

/// Serializes the row ids of a fragment's physical rows, in order, as a `RowIdSequence`.
pub fn encode_row_ids(ids: &[u64]) -> Vec<u8> {
    let mut segments = Vec::new();
    // Maximal strictly ascending runs; short ones are gathered into unsorted arrays.
    let mut runs: Vec<&[u64]> = Vec::new();
    let mut start = 0;
    for i in 1..=ids.len() {
        if i == ids.len() || ids[i] <= ids[i - 1] {
            runs.push(&ids[start..i]);
            start = i;
        }
    }
    let mut loose: Vec<u64> = Vec::new();
    let flush = |loose: &mut Vec<u64>, segments: &mut Vec<pb::U64Segment>| {
        if !loose.is_empty() {
            segments.push(pb::U64Segment {
                segment: Some(Segment::Array(pack(loose))),
            });
            loose.clear();
        }
    };
    for run in runs {
        if run.len() < MIN_RUN {
            loose.extend_from_slice(run);
            continue;
        }
        flush(&mut loose, &mut segments);
        segments.push(pb::U64Segment {
            segment: Some(sorted_segment(run)),
        });
    }
    flush(&mut loose, &mut segments);
    pb::RowIdSequence { segments }.encode_to_vec()
}

/// Decodes a `RowIdSequence` that must hold exactly `rows` ids (the fragment's physical
/// rows). `what` names the fragment in errors.
pub fn decode_row_id_segments(bytes: &[u8], rows: u64, what: &str) -> Result<Vec<IdSegment>> {
    let seq = pb::RowIdSequence::decode(bytes)
        .map_err(|e| corrupt(what, format!("row id sequence cannot be decoded: {e}")))?;
    let mut out = Vec::with_capacity(seq.segments.len());
    let mut total = 0u64;
    for s in &seq.segments {
        let left = rows.saturating_sub(total);
        let seg = decode_segment(s, left, what)?;
        total = total.saturating_add(seg.len());
        if total > rows {
            return Err(corrupt(
                what,
                format!("row id sequence holds more ids than the fragment's {rows} rows"),
            ));
        }
        out.push(seg);
    }
    if total != rows {
        return Err(corrupt(
            what,
            format!("row id sequence holds {total} ids for {rows} rows"),
        ));
    }
    Ok(out)
}

fn check_range(start: u64, end: u64, what: &str) -> Result<()> {
    if end < start {
        return Err(corrupt(what, format!("row id range {start}..{end} is reversed")));
    }
    Ok(())
}

fn decode_segment(s: &pb::U64Segment, limit: u64, what: &str) -> Result<IdSegment> {
    let seg = s
        .segment
        .as_ref()
        .ok_or_else(|| corrupt(what, "a row id segment is empty"))?;
    match seg {
        Segment::Range(r) => {
            check_range(r.start, r.end, what)?;
            if r.end - r.start > limit {
                return Err(corrupt(what, "a row id range exceeds the fragment's rows"));
            }
            Ok(IdSegment::Range(r.start, r.end))
        }
        Segment::RangeWithHoles(r) => {
            check_range(r.start, r.end, what)?;
            let span = r.end - r.start;
            let holes = match &r.holes {
                Some(h) => unpack(h, span, what)?,
                None => Vec::new(),
            };
            if holes.windows(2).any(|w| w[0] >= w[1]) || holes.iter().any(|h| *h < r.start || *h >= r.end) {
                return Err(corrupt(
                    what,
                    "row id holes are not ascending values inside their range",
                ));
            }
            if span - holes.len() as u64 > limit {
                return Err(corrupt(what, "a row id range exceeds the fragment's rows"));
            }
            let mut v = Vec::with_capacity((span - holes.len() as u64) as usize);
            let mut next = r.start;
            for h in holes {
                v.extend(next..h);
                next = h + 1;
            }
            v.extend(next..r.end);
            Ok(IdSegment::Values(v))
        }
        Segment::RangeWithBitmap(r) => {
            check_range(r.start, r.end, what)?;
            let span = r.end - r.start;
            if (r.bitmap.len() as u64).saturating_mul(8) < span {
                return Err(corrupt(
                    what,
                    format!("a bitmap of {} bytes cannot cover {span} ids", r.bitmap.len()),
                ));
            }
            let count: u64 = (0..span)
                .filter(|i| r.bitmap[(i / 8) as usize] >> (i % 8) & 1 == 1)
                .count() as u64;
            if count > limit {
                return Err(corrupt(what, "a row id bitmap exceeds the fragment's rows"));
            }
            Ok(IdSegment::Values(
                (0..span)
                    .filter(|i| r.bitmap[(i / 8) as usize] >> (i % 8) & 1 == 1)
                    .map(|i| r.start + i)
                    .collect(),
            ))
        }
        Segment::SortedArray(a) => {
            let v = unpack(a, limit, what)?;
            if v.windows(2).any(|w| w[0] >= w[1]) {
                return Err(corrupt(what, "a sorted row id array is not ascending"));
            }
            Ok(IdSegment::Values(v))
        }
        Segment::Array(a) => Ok(IdSegment::Values(unpack(a, limit, what)?)),
    }
}

/// The number of ids a `RowIdSequence` holds (without decoding them), for a sequence from
/// outside whose fragment is not known: at most `u32::MAX`, the rows a fragment can have.
pub fn row_id_count(bytes: &[u8], what: &str) -> Result<u64> {
    let seq = pb::RowIdSequence::decode(bytes)
        .map_err(|e| corrupt(what, format!("row id sequence cannot be decoded: {e}")))?;
    let limit = u64::from(u32::MAX);
    let mut total = 0u64;
    for s in &seq.segments {
        let n = match s.segment.as_ref() {
            None => return Err(corrupt(what, "a row id segment is empty")),
            Some(Segment::Range(r)) => {
                check_range(r.start, r.end, what)?;
                r.end - r.start
            }
            Some(Segment::RangeWithHoles(r)) => {
                check_range(r.start, r.end, what)?;
                let span = r.end - r.start;
                let holes = match &r.holes {
                    Some(h) => unpack(h, span, what)?.len() as u64,
                    None => 0,
                };
                span.saturating_sub(holes)
            }
            Some(Segment::RangeWithBitmap(r)) => {
                check_range(r.start, r.end, what)?;
                let bits = (r.end - r.start).min((r.bitmap.len() as u64).saturating_mul(8));
                (0..bits)
                    .filter(|i| r.bitmap[(i / 8) as usize] >> (i % 8) & 1 == 1)
                    .count() as u64
            }
            Some(Segment::SortedArray(a) | Segment::Array(a)) => unpack(a, limit, what)?.len() as u64,
        };
        total = total.saturating_add(n);
        if total > limit {
            return Err(corrupt(what, format!("a row id sequence of more than {limit} ids")));
        }
    }
    Ok(total)
}

/// The ids of a `RowIdSequence`, one per physical row.
pub fn decode_row_ids(bytes: &[u8], rows: u64, what: &str) -> Result<Vec<u64>> {
    let segs = decode_row_id_segments(bytes, rows, what)?;
    let mut out = Vec::with_capacity(rows as usize);
    for s in segs {
        match s {
            IdSegment::Range(a, b) => out.extend(a..b),
            IdSegment::Values(v) => out.extend(v),
        }
    }
    Ok(out)
}

/// Serializes per-row versions as a `RowDatasetVersionSequence` of runs.
pub fn encode_versions(versions: &[u64]) -> Vec<u8> {
    let mut runs = Vec::new();
    let mut start = 0usize;
    for i in 1..=versions.len() {
        if i == versions.len() || versions[i] != versions[start] {
            runs.push(pb::RowDatasetVersionRun {
                span: Some(pb::U64Segment {
                    segment: Some(Segment::Range(Range {
                        start: start as u64,
                        end: i as u64,
                    })),
                }),
                version: versions[start],
            });
            start = i;
        }
    }
    pb::RowDatasetVersionSequence { runs }.encode_to_vec()
}

/// The same version for `rows` rows.
pub fn encode_constant_version(rows: u64, version: u64) -> Vec<u8> {
    let runs = if rows == 0 {
        Vec::new()
    } else {
        vec![pb::RowDatasetVersionRun {
            span: Some(pb::U64Segment {
                segment: Some(Segment::Range(Range { start: 0, end: rows })),
            }),
            version,
        }]
    };
    pb::RowDatasetVersionSequence { runs }.encode_to_vec()
}

/// Per-row versions of a `RowDatasetVersionSequence` that must cover exactly `rows` rows.
pub fn decode_versions(bytes: &[u8], rows: u64, what: &str) -> Result<Vec<u64>> {
    let seq = pb::RowDatasetVersionSequence::decode(bytes)
        .map_err(|e| corrupt(what, format!("row version sequence cannot be decoded: {e}")))?;
    let mut out: Vec<u64> = Vec::with_capacity(rows.min(1 << 24) as usize);
    for run in &seq.runs {
        let span = run
            .span
            .as_ref()
            .ok_or_else(|| corrupt(what, "a row version run has no span"))?;
        let left = rows - out.len() as u64;
        let n = decode_segment(span, left, what)?.len();
        out.extend(std::iter::repeat_n(run.version, n as usize));
    }
    if out.len() as u64 != rows {
        return Err(corrupt(
            what,
            format!("row version sequence covers {} of {rows} rows", out.len()),
        ));
    }
    Ok(out)
}

/// Reads the bytes of an inline or external sequence (`None` when the fragment has none).
async fn sequence_bytes(
    store: &dyn Storage,
    inline: Option<&bytes::Bytes>,
    external: Option<&pb::ExternalFile>,
) -> Result<Option<bytes::Bytes>> {
    if let Some(b) = inline {
        return Ok(Some(b.clone()));
    }
    let Some(ext) = external else { return Ok(None) };
    let all = store.read(&ext.path).await?;
    let (start, size) = (ext.offset as usize, ext.size as usize);
    match start.checked_add(size) {
        Some(end) if end <= all.len() => Ok(Some(all.slice(start..end))),
        _ => Err(corrupt(
            &ext.path,
            format!("bytes {start}+{size} lie past the end of the file"),
        )),
    }
}

fn what(f: &pb::DataFragment) -> String {
    format!("fragment {}", f.id)
}

/// The row id segments of a fragment, if it has a row id sequence.
pub async fn fragment_row_id_segments(store: &dyn Storage, f: &pb::DataFragment) -> Result<Option<Vec<IdSegment>>> {
    use pb::data_fragment::RowIdSequence as S;
    let (inline, external) = match &f.row_id_sequence {
        Some(S::InlineRowIds(b)) => (Some(b), None),
        Some(S::ExternalRowIds(e)) => (None, Some(e)),
        None => (None, None),
    };
    match sequence_bytes(store, inline, external).await? {
        None => Ok(None),
        Some(b) => Ok(Some(decode_row_id_segments(&b, f.physical_rows, &what(f))?)),
    }
}

/// The row ids of a fragment's physical rows, if it has a row id sequence.
pub async fn fragment_row_ids(store: &dyn Storage, f: &pb::DataFragment) -> Result<Option<Vec<u64>>> {
    Ok(fragment_row_id_segments(store, f).await?.map(|segs| {
        let mut out = Vec::with_capacity(f.physical_rows as usize);
        for s in segs {
            match s {
                IdSegment::Range(a, b) => out.extend(a..b),
                IdSegment::Values(v) => out.extend(v),
            }
        }
        out
    }))
}

/// The versions rows of `f` were created at (`created`) or last updated at, if recorded.
pub async fn fragment_versions(store: &dyn Storage, f: &pb::DataFragment, created: bool) -> Result<Option<Vec<u64>>> {
    use pb::data_fragment::{CreatedAtVersionSequence as C, LastUpdatedAtVersionSequence as U};
    let (inline, external) = if created {
        match &f.created_at_version_sequence {
            Some(C::InlineCreatedAtVersions(b)) => (Some(b), None),
            Some(C::ExternalCreatedAtVersions(e)) => (None, Some(e)),
            None => (None, None),
        }
    } else {
        match &f.last_updated_at_version_sequence {
            Some(U::InlineLastUpdatedAtVersions(b)) => (Some(b), None),
            Some(U::ExternalLastUpdatedAtVersions(e)) => (None, Some(e)),
            None => (None, None),
        }
    };
    match sequence_bytes(store, inline, external).await? {
        None => Ok(None),
        Some(b) => Ok(Some(decode_versions(&b, f.physical_rows, &what(f))?)),
    }
}

fn set_created(f: &mut pb::DataFragment, bytes: Vec<u8>) {
    f.created_at_version_sequence = Some(pb::data_fragment::CreatedAtVersionSequence::InlineCreatedAtVersions(
        bytes.into(),
    ));
}

fn set_updated(f: &mut pb::DataFragment, bytes: Vec<u8>) {
    f.last_updated_at_version_sequence =
        Some(pb::data_fragment::LastUpdatedAtVersionSequence::InlineLastUpdatedAtVersions(bytes.into()));
}

/// Sets fragment `f`'s row ids.
pub fn set_row_ids(f: &mut pb::DataFragment, ids: &[u64]) {
    f.row_id_sequence = Some(pb::data_fragment::RowIdSequence::InlineRowIds(
        encode_row_ids(ids).into(),
    ));
}

/// Sets fragment `f`'s per-row created-at and last-updated-at versions.
pub fn set_versions(f: &mut pb::DataFragment, created: &[u64], updated: &[u64]) {
    set_created(f, encode_versions(created));
    set_updated(f, encode_versions(updated));
}

/// Completes the row lineage of manifest `m` (version `version`, built on `base`) at
/// commit time: rows without ids get the next ones (so a retried commit re-assigns them
/// over the newest `next_row_id`); rows without versions were written by this commit,
/// and rows that kept their id (an update moves a row) keep the version they were
/// created at. With `all_updated`, every row counts as updated (new columns were added).
pub async fn assign_lineage(
    store: &dyn Storage,
    m: &mut pb::Manifest,
    base: Option<&pb::Manifest>,
    version: u64,
    all_updated: bool,
) -> Result<()> {
    // Ids whose creation version must be looked up in the base version.
    let mut wanted: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let mut known: Vec<Option<Vec<u64>>> = Vec::with_capacity(m.fragments.len());
    for f in &m.fragments {
        let ids = if f.created_at_version_sequence.is_none() {
            fragment_row_ids(store, f).await?
        } else {
            None
        };
        if let Some(ids) = &ids {
            wanted.extend(ids.iter().copied());
        }
        known.push(ids);
    }
    let mut created_at: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    if !wanted.is_empty() {
        for f in base.map(|b| b.fragments.as_slice()).unwrap_or_default() {
            let (Some(ids), Some(created)) = (
                fragment_row_ids(store, f).await?,
                fragment_versions(store, f, true).await?,
            ) else {
                continue;
            };
            for (id, v) in ids.into_iter().zip(created) {
                if wanted.contains(&id) {
                    created_at.insert(id, v);
                }
            }
        }
    }
    for (f, ids) in m.fragments.iter_mut().zip(known) {
        let rows = f.physical_rows;
        if f.row_id_sequence.is_none() {
            let start = m.next_row_id;
            m.next_row_id = start
                .checked_add(rows)
                .ok_or_else(|| Error::InvalidArgument("row ids would overflow u64".into()))?;
            set_row_ids(f, &(start..start + rows).collect::<Vec<_>>());
            set_created(f, encode_constant_version(rows, version));
            set_updated(f, encode_constant_version(rows, version));
            continue;
        }
        if let Some(ids) = ids {
            let created: Vec<u64> = ids
                .iter()
                .map(|id| created_at.get(id).copied().unwrap_or(version))
                .collect();
            set_created(f, encode_versions(&created));
            set_updated(f, encode_constant_version(rows, version));
        } else if f.last_updated_at_version_sequence.is_none() || all_updated {
            set_updated(f, encode_constant_version(rows, version));
        }
    }
    Ok(())
}

/// One run of the index: ids `start..start + len` live at addresses `addr..addr + len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IdRun {
    start: u64,
    len: u64,
    addr: u64,
}

/// Maps stable row ids to the row addresses (`fragment << 32 | offset`) of live rows.
#[derive(Debug, Clone, Default)]
pub struct RowIdIndex {
    runs: Vec<IdRun>,
}

/// Builds a [`RowIdIndex`] fragment by fragment.
#[derive(Debug, Default)]
pub struct RowIdIndexBuilder {
    runs: Vec<IdRun>,
}

impl RowIdIndexBuilder {
    /// A new, empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    fn push_run(&mut self, start: u64, addr: u64, len: u64) {
        if len == 0 {
            return;
        }
        if let Some(last) = self.runs.last_mut() {
            if last.start + last.len == start && last.addr + last.len == addr {
                last.len += len;
                return;
            }
        }
        self.runs.push(IdRun { start, len, addr });
    }

    /// Adds fragment `fragment`'s rows: its id segments in physical order and its deleted
    /// offsets (ascending), which are left out.
    pub fn add_fragment(&mut self, fragment: u64, segments: &[IdSegment], deleted: &[u32]) {
        let base = fragment << 32;
        let mut offset = 0u64;
        let mut d = 0usize;
        for seg in segments {
            match seg {
                IdSegment::Range(s, e) => {
                    let n = e - s;
                    let mut at = 0u64; // position within the segment
                    while at < n {
                        while d < deleted.len() && u64::from(deleted[d]) < offset + at {
                            d += 1;
                        }
                        let stop = match deleted.get(d) {
                            Some(&x) if u64::from(x) < offset + n => u64::from(x) - offset,
                            _ => n,
                        };
                        self.push_run(s + at, base | (offset + at), stop - at);
                        at = stop + 1;
                    }
                }
                IdSegment::Values(v) => {
                    for (i, id) in v.iter().enumerate() {
                        let off = offset + i as u64;
                        while d < deleted.len() && u64::from(deleted[d]) < off {
                            d += 1;
                        }
                        if deleted.get(d).is_some_and(|&x| u64::from(x) == off) {
                            continue;
                        }
                        self.push_run(*id, base | off, 1);
                    }
                }
            }
            offset += seg.len();
        }
    }

    /// The index; an error names an id that two live rows share.
    pub fn finish(mut self) -> Result<RowIdIndex> {
        self.runs.sort_unstable_by_key(|r| r.start);
        let mut merged: Vec<IdRun> = Vec::with_capacity(self.runs.len());
        for r in self.runs {
            if let Some(last) = merged.last_mut() {
                if r.start < last.start + last.len {
                    return Err(corrupt(
                        "row id index",
                        format!("row id {} belongs to two live rows", r.start),
                    ));
                }
                if last.start + last.len == r.start && last.addr + last.len == r.addr {
                    last.len += r.len;
                    continue;
                }
            }
            merged.push(r);
        }
        Ok(RowIdIndex { runs: merged })
    }
}

impl RowIdIndex {
    /// The address of the live row with id `id`.
    pub fn get(&self, id: u64) -> Option<u64> {
        let i = self.runs.partition_point(|r| r.start <= id);
        let r = self.runs.get(i.checked_sub(1)?)?;
        (id < r.start + r.len).then(|| r.addr + (id - r.start))
    }

    /// Number of runs the index keeps (a measure of its size).
    pub fn num_runs(&self) -> usize {
        self.runs.len()
    }

    /// Number of ids indexed.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|r| r.len).sum()
    }

    /// Whether no id is indexed.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(ids: &[u64]) {
        let bytes = encode_row_ids(ids);
        assert_eq!(row_id_count(&bytes, "t").unwrap(), ids.len() as u64);
        let back = decode_row_ids(&bytes, ids.len() as u64, "t").unwrap();
        assert_eq!(back, ids);
    }

    fn shape(ids: &[u64]) -> Vec<&'static str> {
        let seq = pb::RowIdSequence::decode(encode_row_ids(ids).as_slice()).unwrap();
        seq.segments
            .iter()
            .map(|s| match s.segment.as_ref().unwrap() {
                Segment::Range(_) => "range",
                Segment::RangeWithHoles(_) => "holes",
                Segment::RangeWithBitmap(_) => "bitmap",
                Segment::SortedArray(_) => "sorted",
                Segment::Array(_) => "array",
            })
            .collect()
    }

    #[test]
    fn each_shape_is_chosen_where_it_is_smallest() {
        assert_eq!(shape(&(10..1000).collect::<Vec<_>>()), ["range"]);
        let few_holes: Vec<u64> = (0..1000).filter(|v| v % 100 != 7).collect();
        assert_eq!(shape(&few_holes), ["holes"]);
        let half: Vec<u64> = (0..1000).filter(|v| v % 2 == 0).collect();
        assert_eq!(shape(&half), ["bitmap"]);
        let sparse: Vec<u64> = (0..100).map(|v| v * 1000).collect();
        assert_eq!(shape(&sparse), ["sorted"]);
        let shuffled: Vec<u64> = (0..100).map(|v| (v * 37) % 101).collect();
        assert_eq!(shape(&shuffled), ["array"]);
        for ids in [few_holes, half, sparse, shuffled] {
            roundtrip(&ids);
        }
    }

    #[test]
    fn pylance_bytes_decode() {
        // Written by pylance 14: range 0..4; range-with-bitmap {5, 10}.
        assert_eq!(decode_row_ids(&[10, 4, 10, 2, 16, 4], 4, "t").unwrap(), [0, 1, 2, 3]);
        assert_eq!(
            decode_row_ids(&[10, 9, 26, 7, 8, 5, 16, 11, 26, 1, 33], 2, "t").unwrap(),
            [5, 10]
        );
        // Versions: rows 0..1 at version 1, 1..2 at version 2.
        let v = [
            10, 8, 10, 4, 10, 2, 16, 1, 16, 1, 10, 10, 10, 6, 10, 4, 8, 1, 16, 2, 16, 2,
        ];
        assert_eq!(decode_versions(&v, 2, "t").unwrap(), [1, 2]);
        assert_eq!(encode_versions(&[1, 2]), v);
        assert_eq!(encode_constant_version(4, 1), [10, 8, 10, 4, 10, 2, 16, 4, 16, 1]);
    }

    #[test]
    fn ids_at_the_ends_of_u64_round_trip() {
        roundtrip(&[
            u64::MAX - 9,
            u64::MAX - 8,
            u64::MAX - 7,
            u64::MAX - 6,
            u64::MAX - 5,
            u64::MAX - 4,
            u64::MAX - 3,
            u64::MAX - 2,
            u64::MAX - 1,
            u64::MAX,
        ]);
        roundtrip(&[0, 1, 2, 3, 4, 5, 6, 7, u64::MAX / 2, u64::MAX]);
        roundtrip(&[0, 2, 4, 6, 8, 10, 12, 14, 16, 18, u64::MAX - 1]);
    }

    #[test]
    fn lengths_are_checked_before_allocating() {
        let huge = pb::RowIdSequence {
            segments: vec![pb::U64Segment {
                segment: Some(Segment::Range(Range {
                    start: 0,
                    end: u64::MAX,
                })),
            }],
        }
        .encode_to_vec();
        assert!(decode_row_ids(&huge, 10, "t").is_err());
        let bitmap = pb::RowIdSequence {
            segments: vec![pb::U64Segment {
                segment: Some(Segment::RangeWithBitmap(RangeWithBitmap {
                    start: 0,
                    end: u64::MAX,
                    bitmap: vec![255].into(),
                })),
            }],
        }
        .encode_to_vec();
        assert!(decode_row_ids(&bitmap, 8, "t").is_err());
        assert!(decode_row_ids(&encode_row_ids(&[1, 2, 3]), 4, "t").is_err());
        assert!(decode_versions(&encode_versions(&[1, 1, 2]), 2, "t").is_err());
    }

    #[test]
    fn index_skips_deleted_rows_and_finds_moved_ones() {
        let mut b = RowIdIndexBuilder::new();
        b.add_fragment(0, &[IdSegment::Range(0, 10)], &[3, 4, 9]);
        b.add_fragment(1, &[IdSegment::Values(vec![3, 20, 4])], &[]);
        let idx = b.finish().unwrap();
        assert_eq!(idx.get(0), Some(0));
        assert_eq!(idx.get(2), Some(2));
        assert_eq!(idx.get(3), Some(1 << 32));
        assert_eq!(idx.get(4), Some((1 << 32) | 2));
        assert_eq!(idx.get(5), Some(5));
        assert_eq!(idx.get(9), None);
        assert_eq!(idx.get(20), Some((1 << 32) | 1));
        assert_eq!(idx.get(21), None);
        assert_eq!(idx.len(), 10);
        let mut dup = RowIdIndexBuilder::new();
        dup.add_fragment(0, &[IdSegment::Range(0, 10)], &[]);
        dup.add_fragment(1, &[IdSegment::Values(vec![5])], &[]);
        assert!(dup.finish().is_err());
    }

    proptest! {
        #[test]
        fn any_ids_round_trip(ids in proptest::collection::vec(0u64..5000, 0..400)) {
            roundtrip(&ids);
        }

        #[test]
        fn ascending_ids_round_trip(start in 0u64..(1u64 << 40), gaps in proptest::collection::vec(1u64..70_000, 1..400)) {
            let mut v = start;
            let ids: Vec<u64> = gaps.iter().map(|g| { v += g; v }).collect();
            roundtrip(&ids);
        }

        #[test]
        fn wide_ids_round_trip(ids in proptest::collection::vec(any::<u64>(), 0..100), sort in any::<bool>()) {
            let mut ids = ids;
            if sort {
                // Long ascending runs across all of u64 (bitmaps or holes must not be chosen).
                ids.sort_unstable();
                ids.dedup();
            }
            roundtrip(&ids);
        }

        #[test]
        fn damaged_sequences_are_errors_not_panics(
            ids in proptest::collection::vec(0u64..100_000, 1..200),
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
            rows in 0u64..300,
            noise in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut bytes = encode_row_ids(&ids);
            for (at, x) in flips {
                let i = at.index(bytes.len());
                bytes[i] ^= x;
            }
            // Whatever decodes covers exactly the rows asked for, and a count that reads
            // is the number of ids that decode.
            for input in [&bytes[..], &bytes[..bytes.len() / 2], &noise[..]] {
                if let Ok(n) = row_id_count(input, "t") {
                    if n <= 1 << 20 {
                        prop_assert_eq!(decode_row_ids(input, n, "t").map(|v| v.len() as u64).unwrap_or(n), n);
                    }
                }
                if let Ok(segs) = decode_row_id_segments(input, rows, "t") {
                    prop_assert_eq!(segs.iter().map(IdSegment::len).sum::<u64>(), rows);
                    let mut b = RowIdIndexBuilder::new();
                    b.add_fragment(0, &segs, &[]);
                    let _ = b.finish();
                }
                if let Ok(v) = decode_versions(input, rows, "t") {
                    prop_assert_eq!(v.len() as u64, rows);
                }
            }
        }

        #[test]
        fn versions_round_trip(v in proptest::collection::vec(1u64..5, 0..300)) {
            let back = decode_versions(&encode_versions(&v), v.len() as u64, "t").unwrap();
            prop_assert_eq!(back, v);
        }

        #[test]
        fn index_matches_a_map(ids in proptest::collection::hash_set(0u64..3000, 0..300), del in proptest::collection::vec(any::<bool>(), 300)) {
            let ids: Vec<u64> = ids.into_iter().collect();
            let (a, b) = ids.split_at(ids.len() / 2);
            let mut builder = RowIdIndexBuilder::new();
            let mut expect = std::collections::HashMap::new();
            for (f, part) in [(0u64, a), (1, b)] {
                let deleted: Vec<u32> = (0..part.len() as u32).filter(|i| del[*i as usize]).collect();
                let segs = decode_row_id_segments(&encode_row_ids(part), part.len() as u64, "t").unwrap();
                builder.add_fragment(f, &segs, &deleted);
                for (i, id) in part.iter().enumerate() {
                    if !del[i] {
                        expect.insert(*id, (f << 32) | i as u64);
                    }
                }
            }
            let idx = builder.finish().unwrap();
            for id in 0..3000u64 {
                prop_assert_eq!(idx.get(id), expect.get(&id).copied());
            }
        }
    }
}
