//! Decoding the structural layouts of Lance 2.1+ pages: mini-block, full-zip and constant.
//!
//! Each decoder turns a page's buffers into repetition levels, definition levels and the
//! visible values; [`decode_page`] then rebuilds the Arrow array of the page's rows.

use arrow_array::{new_null_array, Array, ArrayRef};
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use lancelet_proto::pb21::{self, page_layout::Layout};

use super::path::PathNode;
use super::repdef_decode::{assemble, count_visible, max_visible_def};
use super::values::Values;
use super::values_decode::{
    decode_block, decode_chunk, decode_chunk_picked, decode_levels, fixed_bits, fixed_from_bytes, var_value,
};
use crate::{corrupt, Error, Result};

/// Levels and visible values of one page.
struct Decoded {
    layers: Vec<i32>,
    rep: Option<Vec<u16>>,
    def: Option<Vec<u16>>,
    values: ArrayRef,
}

/// Decodes one page holding `num_rows` top-level rows of the leaf column at the end of
/// `path`, returning the array [`super::path::path_type`] describes.
pub fn decode_page(
    layout: &pb21::PageLayout,
    buffers: &[Buffer],
    num_rows: u64,
    path: &[PathNode],
) -> Result<ArrayRef> {
    let data_type = leaf_type(path)?;
    if let Some(array) = super::fast::zero_copy(layout, buffers, num_rows, path) {
        return array;
    }
    let d = match layout.layout.as_ref() {
        Some(Layout::MiniBlockLayout(m)) => mini_block(m, buffers, data_type)?,
        Some(Layout::FullZipLayout(f)) => full_zip(f, buffers, data_type)?,
        Some(Layout::ConstantLayout(c)) => constant(c, buffers, num_rows, data_type)?,
        Some(Layout::BlobLayout(b)) => return super::blob::decode_blob_page(b, buffers, num_rows, path),
        None => return Err(corrupt!("page layout without a variant")),
    };
    finish(path, d, num_rows)
}

/// Decodes the chunks of a mini-block page with lists when the first chunk may begin
/// inside a row (one that started in an earlier chunk): the levels before the first row
/// start, and the values they carry, are dropped, so the array holds the `num_rows` rows
/// that start in these chunks (the last possibly cut short where the chunks end).
pub fn decode_mini_block_rows_from_chunk(
    layout: &pb21::PageLayout,
    buffers: &[Buffer],
    num_rows: u64,
    path: &[PathNode],
) -> Result<ArrayRef> {
    let data_type = leaf_type(path)?;
    let Some(Layout::MiniBlockLayout(m)) = layout.layout.as_ref() else {
        return Err(Error::InvalidInput("not a mini-block page".into()));
    };
    let mut d = mini_block(m, buffers, data_type)?;
    drop_leading_levels(&mut d, path)?;
    finish(path, d, num_rows)
}

/// [`decode_mini_block_rows_from_chunk`], keeping only the rows at `rows` (positions
/// among the rows that start in these chunks, in any order, repeats allowed): their
/// levels and values are picked before the array is assembled, so a take of a few rows
/// out of chunks of thousands assembles only those.
pub fn decode_mini_block_rows_from_chunk_selected(
    layout: &pb21::PageLayout,
    buffers: &[Buffer],
    path: &[PathNode],
    rows: &[u64],
) -> Result<ArrayRef> {
    let data_type = leaf_type(path)?;
    let Some(Layout::MiniBlockLayout(m)) = layout.layout.as_ref() else {
        return Err(Error::InvalidInput("not a mini-block page".into()));
    };
    let max_rep = path.iter().filter(|n| matches!(n, PathNode::List { .. })).count();
    if let Some(d) = mini_block_of(m, buffers, data_type, None, Some((rows, max_rep)))? {
        return finish(path, d, rows.len() as u64);
    }
    let mut d = mini_block(m, buffers, data_type)?;
    drop_leading_levels(&mut d, path)?;
    select_rows(&mut d, path, rows)?;
    finish(path, d, rows.len() as u64)
}

/// Drops the levels before the first row that starts in the chunks (the end of a row
/// begun in an earlier chunk), and the values they carry.
fn drop_leading_levels(d: &mut Decoded, path: &[PathNode]) -> Result<()> {
    let max_rep = path.iter().filter(|n| matches!(n, PathNode::List { .. })).count();
    if let Some(rep) = d.rep.as_mut() {
        let skip = rep.iter().position(|r| usize::from(*r) == max_rep).unwrap_or(rep.len());
        if skip > 0 {
            let visible = count_visible(&d.layers, d.def.as_ref().map(|v| &v[..skip]), skip)?;
            if visible > d.values.len() {
                return Err(corrupt!(
                    "levels carry {visible} values but the chunks hold {}",
                    d.values.len()
                ));
            }
            rep.drain(..skip);
            if let Some(def) = d.def.as_mut() {
                def.drain(..skip.min(def.len()));
            }
            d.values = d.values.slice(visible, d.values.len() - visible);
        }
    }
    Ok(())
}

/// [`pick_rows`] of ascending `rows`: one pass over the levels up to the last row asked
/// for, remembering only where those rows start.
fn pick_sorted_rows(
    rep: &[u16],
    def: Option<&[u16]>,
    max_visible: u16,
    max_rep: usize,
    rows: &[u64],
    nvalues: usize,
) -> Result<Picked> {
    let mut out = Picked {
        rep: Vec::new(),
        def: def.map(|_| Vec::new()),
        items: Vec::new(),
    };
    let emit = |levels: std::ops::Range<usize>, values: std::ops::Range<usize>, out: &mut Picked| {
        out.rep.extend_from_slice(&rep[levels.clone()]);
        if let (Some(d), Some(od)) = (def, out.def.as_mut()) {
            od.extend_from_slice(&d[levels]);
        }
        out.items.extend(values.start as u64..values.end as u64);
    };
    let max_rep = u16::try_from(max_rep).unwrap_or(u16::MAX);
    let mut next = 0usize;
    // The row being walked (counting from 0 at the first row start), with its first
    // level and value.
    let mut row: Option<(u64, usize, usize)> = None;
    let mut v = 0usize;
    for (i, &r) in rep.iter().enumerate() {
        if r == max_rep {
            if let Some((n, l0, v0)) = row {
                while next < rows.len() && rows[next] == n {
                    emit(l0..i, v0..v, &mut out);
                    next += 1;
                }
            }
            if next == rows.len() {
                break;
            }
            let n = row.map_or(0, |(n, _, _)| n + 1);
            row = Some((n, i, v));
        }
        if def.is_none_or(|d| d.get(i).is_some_and(|d| *d <= max_visible)) {
            v += 1;
        }
    }
    if next < rows.len() {
        if let Some((n, l0, v0)) = row {
            while next < rows.len() && rows[next] == n {
                emit(l0..rep.len(), v0..v, &mut out);
                next += 1;
            }
        }
    }
    if v > nvalues {
        return Err(corrupt!("levels carry {v} values but the chunks hold {nvalues}"));
    }
    if next < rows.len() {
        return Err(corrupt!(
            "row {} asked of chunks whose levels start fewer rows",
            rows[next]
        ));
    }
    Ok(out)
}

/// Keeps the levels and values of the rows at `rows` (in that order) of a page with
/// repetition levels whose levels start with a row.
fn select_rows(d: &mut Decoded, path: &[PathNode], rows: &[u64]) -> Result<()> {
    let Some(rep) = d.rep.as_ref() else {
        return Err(Error::InvalidInput("row selection needs repetition levels".into()));
    };
    let max_rep = path.iter().filter(|n| matches!(n, PathNode::List { .. })).count();
    let picked = pick_rows(rep, d.def.as_deref(), &d.layers, max_rep, rows, d.values.len())?;
    let take: Vec<u32> = picked
        .items
        .iter()
        .map(|&k| u32::try_from(k).map_err(|_| corrupt!("more than 2^32 values in chunks")))
        .collect::<Result<_>>()?;
    d.values = arrow_select::take::take(d.values.as_ref(), &arrow_array::UInt32Array::from(take), None)?;
    d.rep = Some(picked.rep);
    d.def = picked.def;
    Ok(())
}

/// The levels and value positions of some rows of levels with repetition.
struct Picked {
    rep: Vec<u16>,
    def: Option<Vec<u16>>,
    /// Positions of the rows' values among the visible values.
    items: Vec<u64>,
}

/// Picks the rows at `rows` (in that order; a row starts at a repetition level of
/// `max_rep`, so levels before the first such one belong to no row) out of levels `rep`
/// and `def` carrying `nvalues` visible values.
fn pick_rows(
    rep: &[u16],
    def: Option<&[u16]>,
    layers: &[i32],
    max_rep: usize,
    rows: &[u64],
    nvalues: usize,
) -> Result<Picked> {
    let max_visible = max_visible_def(layers)?;
    if def.is_some_and(|d| d.len() != rep.len()) {
        return Err(corrupt!(
            "{} definition levels for {} repetition levels",
            def.map_or(0, <[u16]>::len),
            rep.len()
        ));
    }
    if rows.windows(2).all(|w| w[0] <= w[1]) {
        return pick_sorted_rows(rep, def, max_visible, max_rep, rows, nvalues);
    }
    // Per row: its first level and its first value.
    let mut level_at = Vec::new();
    let mut value_at = Vec::new();
    let mut v = 0usize;
    for (i, r) in rep.iter().enumerate() {
        if usize::from(*r) == max_rep {
            level_at.push(i);
            value_at.push(v);
        }
        if def.is_none_or(|d| d[i] <= max_visible) {
            v += 1;
        }
    }
    if v > nvalues {
        return Err(corrupt!("levels carry {v} values but the chunks hold {nvalues}"));
    }
    level_at.push(rep.len());
    value_at.push(v);
    let nrows = level_at.len() - 1;
    let mut out = Picked {
        rep: Vec::new(),
        def: def.map(|_| Vec::new()),
        items: Vec::new(),
    };
    for &r in rows {
        let r = usize::try_from(r)
            .ok()
            .filter(|r| *r < nrows)
            .ok_or_else(|| corrupt!("row {r} asked of chunks whose levels start {nrows} rows"))?;
        let levels = level_at[r]..level_at[r + 1];
        out.rep.extend_from_slice(&rep[levels.clone()]);
        if let (Some(d), Some(od)) = (def, out.def.as_mut()) {
            od.extend_from_slice(&d[levels]);
        }
        out.items.extend(value_at[r] as u64..value_at[r + 1] as u64);
    }
    Ok(out)
}

/// Decodes only the rows `rows` (ascending, page-local) of a mini-block page without
/// lists, into an array of `rows.len()` rows: chunks holding none of them are not decoded,
/// and of the others only the rows asked for are kept before the values are joined,
/// looked up in a dictionary and assembled (a take of a few rows per chunk then costs the
/// chunks' decoding, not the page's). `None` when the page is not of that kind (lists,
/// values that cannot be picked one by one, rows out of order): decode it whole instead.
pub fn decode_mini_block_selected(
    layout: &pb21::PageLayout,
    buffers: &[Buffer],
    path: &[PathNode],
    rows: &[u64],
) -> Result<Option<ArrayRef>> {
    let data_type = leaf_type(path)?;
    let Some(Layout::MiniBlockLayout(m)) = layout.layout.as_ref() else {
        return Ok(None);
    };
    if m.rep_compression.is_some() || !rows.windows(2).all(|w| w[0] <= w[1]) {
        return Ok(None);
    }
    match mini_block_of(m, buffers, data_type, Some(rows), None)? {
        Some(d) => finish(path, d, rows.len() as u64).map(Some),
        None => Ok(None),
    }
}

fn leaf_type(path: &[PathNode]) -> Result<&DataType> {
    match path.last() {
        Some(PathNode::Leaf { data_type }) => Ok(data_type),
        _ => Err(Error::InvalidInput("a path must end with a leaf".into())),
    }
}

fn finish(path: &[PathNode], d: Decoded, num_rows: u64) -> Result<ArrayRef> {
    let array = assemble(path, &d.layers, d.rep.as_deref(), d.def.as_deref(), d.values)?;
    if array.len() as u64 != num_rows {
        return Err(corrupt!(
            "page declares {num_rows} rows but its levels hold {}",
            array.len()
        ));
    }
    Ok(array)
}

/// Most values one mini-block chunk can hold (the metadata word's 4-bit log2 allows 2^15).
const MAX_CHUNK_VALUES: usize = 1 << 16;

fn to_usize(v: u64, what: &str) -> Result<usize> {
    usize::try_from(v)
        .ok()
        .filter(|v| *v <= super::values::MAX_VALUES)
        .ok_or_else(|| corrupt!("{what} {v} is too large"))
}

fn buffer<'a>(buffers: &'a [Buffer], i: usize, what: &str) -> Result<&'a [u8]> {
    buffers
        .get(i)
        .map(|b| b.as_slice())
        .ok_or_else(|| corrupt!("page has no {what} buffer (index {i})"))
}

fn read_le(buf: &[u8], at: &mut usize, nb: usize) -> Result<usize> {
    let b = buf
        .get(*at..*at + nb)
        .ok_or_else(|| corrupt!("chunk header truncated at byte {at}"))?;
    *at += nb;
    Ok(b.iter()
        .enumerate()
        .fold(0usize, |v, (i, x)| v | (usize::from(*x) << (8 * i))))
}

fn align8(x: usize) -> usize {
    x.div_ceil(8) * 8
}

fn slice<'a>(buf: &'a [u8], at: usize, len: usize, what: &str) -> Result<&'a [u8]> {
    buf.get(at..at.saturating_add(len)).ok_or_else(|| {
        corrupt!(
            "{what} of {len} bytes at {at} lies outside its {}-byte chunk",
            buf.len()
        )
    })
}

fn mini_block(m: &pb21::MiniBlockLayout, buffers: &[Buffer], dt: &DataType) -> Result<Decoded> {
    mini_block_of(m, buffers, dt, None, None)?.ok_or_else(|| corrupt!("mini-block page could not be decoded"))
}

/// The levels and values of a mini-block page, or (`select`) of its rows at those
/// ascending positions only (a page without repetition levels: one item per row), or
/// (`list_rows`: positions, in any order, among the rows that start in the page, and the
/// repetition level that starts a row) of those rows of a page with lists, picked before
/// the values are looked up in a dictionary and made an array; `None` when the values
/// cannot be picked row by row.
fn mini_block_of(
    m: &pb21::MiniBlockLayout,
    buffers: &[Buffer],
    dt: &DataType,
    select: Option<&[u64]>,
    list_rows: Option<(&[u64], usize)>,
) -> Result<Option<Decoded>> {
    let meta = buffer(buffers, 0, "chunk metadata")?;
    let data = buffer(buffers, 1, "chunk data")?;
    let value_enc = m
        .value_compression
        .as_ref()
        .ok_or_else(|| corrupt!("mini-block page without value compression"))?;
    let num_items = to_usize(m.num_items, "mini-block item count")?;
    let num_buffers = to_usize(m.num_buffers, "mini-block buffer count")?;
    if num_buffers > 64 {
        return Err(corrupt!("mini-block chunks with {num_buffers} value buffers"));
    }
    let word = if m.has_large_chunk { 4 } else { 2 };
    let vsize = word;
    if meta.len() % word != 0 {
        return Err(corrupt!("chunk metadata of {} bytes is not whole words", meta.len()));
    }
    let (rep_enc, def_enc) = (m.rep_compression.as_ref(), m.def_compression.as_ref());
    let mut reps: Vec<u16> = Vec::new();
    let mut defs: Vec<u16> = Vec::new();
    let mut parts: Vec<Values> = Vec::new();
    let (mut pos, mut seen) = (0usize, 0usize);
    // The next row of `select` to find.
    let mut next = 0usize;
    let nchunks = meta.len() / word;
    for ci in 0..nchunks {
        let mut at = ci * word;
        let w = read_le(meta, &mut at, word)?;
        let nbytes = ((w >> 4) + 1) * 8;
        let log = w & 0xF;
        let nvals = if ci + 1 == nchunks {
            let rest = num_items
                .checked_sub(seen)
                .ok_or_else(|| corrupt!("chunks hold more than the page's {num_items} values"))?;
            // The last chunk holds what is left after full chunks: never more than one.
            if rest > MAX_CHUNK_VALUES {
                return Err(corrupt!("the last chunk would hold {rest} values"));
            }
            rest
        } else {
            1usize << log
        };
        let chunk = slice(data, pos, nbytes, "chunk")?;
        pos += nbytes;
        let first = seen;
        seen = seen.saturating_add(nvals);
        if seen > num_items {
            return Err(corrupt!("chunks hold more than the page's {num_items} values"));
        }
        // The chunk-local positions of the selected rows in this chunk.
        let picked: Option<Vec<u64>> = select.map(|s| {
            let from = next;
            while next < s.len() && s[next] < seen as u64 {
                next += 1;
            }
            s[from..next].iter().map(|r| r - first as u64).collect()
        });
        if picked.as_ref().is_some_and(Vec::is_empty) {
            continue;
        }
        let mut at = 0usize;
        let nlev = read_le(chunk, &mut at, 2)?;
        let rsz = rep_enc.map(|_| read_le(chunk, &mut at, 2)).transpose()?;
        let dsz = def_enc.map(|_| read_le(chunk, &mut at, 2)).transpose()?;
        let vsz = (0..num_buffers)
            .map(|_| read_le(chunk, &mut at, vsize))
            .collect::<Result<Vec<_>>>()?;
        at = align8(at);
        if let (Some(enc), Some(sz)) = (rep_enc, rsz) {
            reps.extend(decode_levels(enc, slice(chunk, at, sz, "repetition levels")?, nlev)?);
            at = align8(at + sz);
        }
        if let (Some(enc), Some(sz)) = (def_enc, dsz) {
            let levels = decode_levels(enc, slice(chunk, at, sz, "definition levels")?, nlev)?;
            match &picked {
                None => defs.extend(levels),
                Some(p) if levels.len() == nvals => defs.extend(p.iter().map(|&i| levels[i as usize])),
                Some(_) => return Ok(None),
            }
            at = align8(at + sz);
        }
        let mut vbufs = Vec::with_capacity(num_buffers);
        for sz in vsz {
            vbufs.push(slice(chunk, at, sz, "value buffer")?);
            at = align8(at + sz);
        }
        if nvals > 0 || !vbufs.iter().all(|b| b.is_empty()) {
            // A few rows of the chunk (a take): read just those where the encoding allows.
            if let Some(p) = picked.as_ref().filter(|p| p.len() < nvals) {
                if let Some(part) = decode_chunk_picked(value_enc, &vbufs, nvals, p)? {
                    parts.push(part);
                    continue;
                }
            }
            let part = decode_chunk(value_enc, &vbufs, nvals)?;
            parts.push(match &picked {
                None => part,
                Some(p) if part.len() == nvals && matches!(part, Values::Fixed { .. } | Values::Var { .. }) => {
                    // Every row of the chunk, in order (a scan's batch covering it): no copy.
                    if p.len() == nvals && p.iter().enumerate().all(|(i, &r)| r == i as u64) {
                        part
                    } else {
                        part.take(p)?
                    }
                }
                Some(_) => return Ok(None),
            });
        }
    }
    if seen != num_items {
        return Err(corrupt!("chunks hold {seen} values but the page has {num_items}"));
    }
    // What the page decodes to: its items, or the rows selected.
    let num_items = match select {
        Some(s) if next < s.len() => {
            return Err(corrupt!("row {} is past the page's {num_items} rows", s[next]));
        }
        Some(s) => s.len(),
        None => num_items,
    };
    let mut values = Values::concat(parts)?;
    let (mut reps, mut defs) = (reps, defs);
    let mut num_items = num_items;
    if let Some((rows, max_rep)) = list_rows {
        if rep_enc.is_none() || !matches!(values, Values::Fixed { .. } | Values::Var { .. }) {
            return Ok(None);
        }
        let picked = pick_rows(
            &reps,
            def_enc.map(|_| &defs[..]),
            &m.layers,
            max_rep,
            rows,
            values.len(),
        )?;
        values = values.take(&picked.items)?;
        num_items = picked.items.len();
        reps = picked.rep;
        defs = picked.def.unwrap_or_default();
    }
    if let Some(dict_enc) = m.dictionary.as_ref() {
        let n = to_usize(m.num_dictionary_items, "dictionary size")?;
        let dict = decode_block(dict_enc, buffer(buffers, 2, "dictionary")?, n)?;
        // An Arrow dictionary column keeps its dictionary: the indices become its keys.
        if let (DataType::Dictionary(key, value_type), Values::Fixed { bits, data, len }) = (dt, &values) {
            if let Some(array) = super::values::dictionary_from_indices(key, value_type, *bits, data, *len, &dict)? {
                if array.len() != num_items {
                    return Err(corrupt!(
                        "decoded {} values, the page declares {num_items}",
                        array.len()
                    ));
                }
                return Ok(Some(Decoded {
                    layers: m.layers.clone(),
                    rep: rep_enc.map(|_| reps),
                    def: def_enc.map(|_| defs),
                    values: array,
                }));
            }
        }
        let indices = match values {
            Values::Fixed { bits, ref data, len } if bits % 8 == 0 && bits > 0 && bits <= 64 => {
                let nb = (bits / 8) as usize;
                data.chunks_exact(nb)
                    .take(len)
                    .map(|c| {
                        c.iter()
                            .enumerate()
                            .fold(0u64, |v, (i, x)| v | (u64::from(*x) << (8 * i)))
                    })
                    .collect::<Vec<u64>>()
            }
            _ => return Err(corrupt!("dictionary indices are not integers")),
        };
        values = dict.take(&indices)?;
    }
    if values.len() != num_items {
        return Err(corrupt!(
            "decoded {} values, the page declares {num_items}",
            values.len()
        ));
    }
    Ok(Some(Decoded {
        layers: m.layers.clone(),
        rep: rep_enc.map(|_| reps),
        def: def_enc.map(|_| defs),
        values: values.into_array(dt)?,
    }))
}

fn full_zip(f: &pb21::FullZipLayout, buffers: &[Buffer], dt: &DataType) -> Result<Decoded> {
    use pb21::full_zip_layout::Details;
    let data = buffer(buffers, 0, "zipped data")?;
    let enc = f
        .value_compression
        .as_ref()
        .ok_or_else(|| corrupt!("full-zip page without value compression"))?;
    let (bits_rep, bits_def) = (f.bits_rep as usize, f.bits_def as usize);
    if bits_rep > 16 || bits_def > 16 {
        return Err(corrupt!("full-zip control word of {bits_rep}+{bits_def} bits"));
    }
    let ctrl = match bits_rep + bits_def {
        0 => 0,
        1..=8 => 1,
        9..=16 => 2,
        _ => 4,
    };
    let n = to_usize(u64::from(f.num_items), "full-zip item count")?;
    let max_visible = max_visible_def(&f.layers)?;
    let def_mask = (1usize << bits_def) - 1;
    let (mut reps, mut defs) = (Vec::new(), Vec::new());
    let mut at = 0usize;
    let values = match f.details {
        Some(Details::BitsPerValue(bits)) => {
            if bits == 0 || bits % 8 != 0 || u64::from(bits) != fixed_bits(enc)? {
                return Err(corrupt!(
                    "full-zip fixed values of {bits} bits do not match their encoding"
                ));
            }
            let nb = bits as usize / 8;
            let mut bytes = Vec::new();
            let mut count = 0usize;
            for _ in 0..n {
                let (r, d) = control(data, &mut at, ctrl, bits_def, def_mask)?;
                reps.push(r);
                defs.push(d);
                if d <= max_visible {
                    bytes.extend_from_slice(slice(data, at, nb, "full-zip value")?);
                    at += nb;
                    count += 1;
                }
            }
            fixed_from_bytes(enc, bytes, count)?
        }
        Some(Details::BitsPerOffset(bits)) => {
            let nb = match bits {
                8 | 16 | 32 | 64 => bits as usize / 8,
                _ => return Err(corrupt!("full-zip lengths of {bits} bits")),
            };
            if let Some(pb21::compressive_encoding::Compression::VariablePackedStruct(vp)) = enc.compression.as_ref() {
                // Each visible row: present (its packed bytes) or a null slot.
                let mut rows: Vec<Option<&[u8]>> = Vec::new();
                for _ in 0..n {
                    let (r, d) = control(data, &mut at, ctrl, bits_def, def_mask)?;
                    reps.push(r);
                    defs.push(d);
                    if d > max_visible {
                        continue;
                    }
                    rows.push(if d == 0 {
                        let len = read_le(data, &mut at, nb)?;
                        let row = slice(data, at, len, "full-zip value")?;
                        at += len;
                        Some(row)
                    } else {
                        None
                    });
                }
                super::packed_decode::var_packed_rows(vp, &rows)?
            } else {
                let mut offsets = vec![0u64];
                let mut bytes = Vec::new();
                for _ in 0..n {
                    let (r, d) = control(data, &mut at, ctrl, bits_def, def_mask)?;
                    reps.push(r);
                    defs.push(d);
                    if d > max_visible {
                        continue;
                    }
                    if d == 0 {
                        let len = read_le(data, &mut at, nb)?;
                        var_value(enc, slice(data, at, len, "full-zip value")?, &mut bytes)?;
                        at += len;
                    }
                    offsets.push(bytes.len() as u64);
                }
                Values::Var { offsets, data: bytes }
            }
        }
        None => return Err(corrupt!("full-zip page without a value width")),
    };
    Ok(Decoded {
        layers: f.layers.clone(),
        rep: (bits_rep > 0).then_some(reps),
        def: (bits_def > 0).then_some(defs),
        values: values.into_array(dt)?,
    })
}

fn control(data: &[u8], at: &mut usize, ctrl: usize, bits_def: usize, mask: usize) -> Result<(u16, u16)> {
    if ctrl == 0 {
        return Ok((0, 0));
    }
    let c = read_le(data, at, ctrl)?;
    Ok(((c >> bits_def) as u16, (c & mask) as u16))
}

fn is_var(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary
    )
}

/// Bits of one fixed value of `dt`, for constants.
fn value_bits(dt: &DataType) -> Result<u64> {
    match dt {
        DataType::Boolean => Ok(1),
        DataType::FixedSizeBinary(w) => Ok(u64::try_from(*w).map_err(|_| corrupt!("bad width"))? * 8),
        other => other
            .primitive_width()
            .map(|w| w as u64 * 8)
            .ok_or_else(|| Error::Unsupported(format!("constant pages of type {other}"))),
    }
}

fn constant(c: &pb21::ConstantLayout, buffers: &[Buffer], num_rows: u64, dt: &DataType) -> Result<Decoded> {
    let mut bufs: Vec<&[u8]> = buffers.iter().map(|b| b.as_slice()).collect();
    let mut value: Option<Vec<u8>> = c.inline_value.as_ref().map(|v| v.to_vec());
    if value.is_none() && (bufs.len() == 1 || bufs.len() == 3) {
        // u32 buffer count, u32 lengths, then the Arrow buffers of a one-value array.
        let vb = bufs.remove(0);
        let mut at = 0usize;
        let nb = read_le(vb, &mut at, 4)?;
        if nb == 0 || nb > 8 {
            return Err(corrupt!("constant value with {nb} buffers"));
        }
        let lens = (0..nb).map(|_| read_le(vb, &mut at, 4)).collect::<Result<Vec<_>>>()?;
        let mut last = &vb[0..0];
        for len in lens {
            last = slice(vb, at, len, "constant value buffer")?;
            at += len;
        }
        value = Some(last.to_vec());
    }
    let levels = |buf: &[u8], enc: Option<&pb21::CompressiveEncoding>, count: u64| -> Result<Option<Vec<u16>>> {
        if buf.is_empty() {
            return Ok(None);
        }
        let n = if count > 0 {
            to_usize(count, "level count")?
        } else {
            buf.len() / 2
        };
        Ok(Some(match enc {
            Some(e) => decode_levels(e, buf, n)?,
            None => {
                if buf.len() < n * 2 {
                    return Err(corrupt!("{n} levels in {} bytes", buf.len()));
                }
                buf.chunks_exact(2)
                    .take(n)
                    .map(|p| u16::from_le_bytes([p[0], p[1]]))
                    .collect()
            }
        }))
    };
    let (rep, def) = match bufs.as_slice() {
        [] => (None, None),
        [r, d] => (
            levels(r, c.rep_compression.as_ref(), c.num_rep_values)?,
            levels(d, c.def_compression.as_ref(), c.num_def_values)?,
        ),
        other => return Err(corrupt!("constant page with {} level buffers", other.len())),
    };
    let entries = match (&rep, &def) {
        (Some(r), _) => r.len(),
        (None, Some(d)) => d.len(),
        (None, None) => to_usize(num_rows, "row count")?,
    };
    let visible = count_visible(&c.layers, def.as_deref(), entries)?;
    let values = match value {
        Some(v) => {
            let vt = match dt {
                DataType::Dictionary(_, v) => v.as_ref(),
                other => other,
            };
            let var = is_var(vt);
            let bits = if var { 0 } else { value_bits(vt)? };
            Values::repeat(&v, var, bits, visible)?.into_array(dt)?
        }
        None => new_null_array(dt, visible),
    };
    Ok(Decoded {
        layers: c.layers.clone(),
        rep,
        def,
        values,
    })
}
