//! Encoding Lance 2.1 / 2.2 pages: the structural layouts around compressed values (the
//! inverse of [`super::page_decode`]).
//!
//! [`encode_page`] takes one leaf column's shredded page ([`Shredded`]: levels plus
//! visible values) and picks its layout:
//!
//! * **constant** when every visible value is null (both versions) or, at 2.2, when every
//!   valid value is the same (the value is stored once, inline when it is small);
//! * **full-zip** when a value is wide (256 bytes or more), so that one row is one
//!   contiguous byte range: each entry's control word (repetition and definition level)
//!   is zipped with its value, and a repetition index gives each row's byte offset;
//! * **mini-block** otherwise: values compressed into chunks of a power-of-two number of
//!   values ([`super::values_encode`]), each chunk carrying its slice of the levels, with a
//!   repetition index of rows per chunk when the column has lists.
//!
//! Field metadata `lance-encoding:structural-encoding` (`miniblock` / `fullzip`) forces a
//! layout. A mini-block page whose levels overflow a chunk header (many empty lists in a
//! chunk) is written full-zip instead.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, UInt64Array};
use arrow_buffer::Buffer;
use arrow_schema::DataType;
use lancelet_proto::pb21::{self, compressive_encoding::Compression as C, page_layout::Layout, RepDefLayer};

use super::fsst::Compressor;
use super::repdef_decode::max_visible_def;
use super::repdef_encode::Shredded;
use super::values_encode::{compress_levels, compress_mini_block, EncodeOptions, MiniBlockValues};
use crate::{Error, Result};

/// Values at least this wide go to full-zip pages.
pub const FULL_ZIP_MIN_BYTES: usize = 256;

/// Padding after the header and each buffer inside a mini-block chunk.
const CHUNK_PAD: u8 = 0xFE;

/// Variable-width full-zip pages at least this large (bytes) are tried with FSST.
const FSST_MIN_PAGE_BYTES: usize = 32 * 1024;

/// Layout requested through field metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structural {
    /// Mini-block chunks.
    MiniBlock,
    /// Full-zip rows.
    FullZip,
}

/// Options of one page.
#[derive(Debug, Clone, Default)]
pub struct PageOptions {
    /// Writing file format 2.2 (else 2.1).
    pub v2_2: bool,
    /// Value compression choices.
    pub encode: EncodeOptions,
    /// Forced layout, if any.
    pub structural: Option<Structural>,
}

impl PageOptions {
    /// Options for a field with this Lance field metadata (`lance-encoding:*` keys).
    pub fn for_field<'a>(v2_2: bool, metadata: impl IntoIterator<Item = (&'a String, &'a String)>) -> Self {
        let mut o = PageOptions {
            v2_2,
            encode: EncodeOptions {
                v2_2,
                ..Default::default()
            },
            structural: None,
        };
        for (k, v) in metadata {
            match k.as_str() {
                "lance-encoding:compression" => o.encode.compression = Some(v.to_ascii_lowercase()),
                "lance-encoding:compression-level" => o.encode.compression_level = v.trim().parse().ok(),
                "lance-encoding:dict-size-ratio" => {
                    o.encode.no_dictionary = v.trim().parse::<f64>().map(|r| r <= 0.0).unwrap_or(false)
                }
                "lance-encoding:structural-encoding" => {
                    o.structural = match v.to_ascii_lowercase().as_str() {
                        "miniblock" | "mini-block" | "mini_block" => Some(Structural::MiniBlock),
                        "fullzip" | "full-zip" | "full_zip" => Some(Structural::FullZip),
                        _ => None,
                    }
                }
                _ => {}
            }
        }
        o
    }
}

/// One encoded 2.1+ page.
#[derive(Debug, Clone)]
pub struct EncodedPage21 {
    /// The page's layout message.
    pub layout: pb21::PageLayout,
    /// The page buffers, in the order the layout refers to them.
    pub buffers: Vec<Buffer>,
    /// Top-level rows in the page.
    pub num_rows: u64,
}

/// Encodes one page of one leaf column.
pub fn encode_page(leaf: &Shredded, opts: &PageOptions) -> Result<EncodedPage21> {
    // An Arrow dictionary column's indices take its key width, which pylance checks.
    let keyed;
    let opts = match leaf.values.data_type() {
        DataType::Dictionary(key, _) => {
            let mut o = opts.clone();
            o.encode.dictionary_index_bytes = key.primitive_width();
            // Mini-block is the only layout with a dictionary.
            o.structural = Some(Structural::MiniBlock);
            keyed = o;
            &keyed
        }
        _ => opts,
    };
    let values = plain(&leaf.values)?;
    let n = values.len();
    if let Some(entries) = leaf.rep.as_ref().or(leaf.def.as_ref()).map(Vec::len) {
        if entries < n {
            return Err(Error::InvalidInput(format!("{entries} levels for {n} values")));
        }
    }
    let layout = if values.logical_null_count() == n {
        constant(leaf, values.data_type(), None, opts)?
    } else if let Some(v) = (opts.v2_2 && opts.encode.dictionary_index_bytes.is_none())
        .then(|| constant_value(values.as_ref()))
        .flatten()
    {
        constant(leaf, values.data_type(), Some(v), opts)?
    } else if let Some(rows) = values.as_struct_opt() {
        packed_struct(leaf, rows, opts)?
    } else {
        let wide = max_value_bytes(values.as_ref()) >= FULL_ZIP_MIN_BYTES && !fsl_item_nulls(values.as_ref());
        match (opts.structural, wide) {
            (Some(Structural::FullZip), _) | (None, true) => full_zip(leaf, values.as_ref(), opts)?,
            // A dictionary column's mini-blocks keep its own dictionary.
            _ => match mini_block(leaf, dictionary_or(&leaf.values, &values), opts) {
                Err(Error::InvalidInput(why)) if why.starts_with(LEVEL_OVERFLOW) => {
                    full_zip(leaf, values.as_ref(), opts)?
                }
                other => other?,
            },
        }
    };
    Ok(EncodedPage21 {
        layout: layout.0,
        buffers: layout.1,
        num_rows: leaf.num_rows as u64,
    })
}

type Built = (pb21::PageLayout, Vec<Buffer>);

/// A page of a packed struct leaf: rows of fixed-width fields narrower than
/// [`FULL_ZIP_MIN_BYTES`] go row-major into mini-block chunks (`PackedStruct`); other
/// rows (variable-width or fixed-size-list fields, or wide rows) are zipped whole
/// (`VariablePackedStruct`, file format 2.2 only), as pylance 14 does.
fn packed_struct(leaf: &Shredded, rows: &arrow_array::StructArray, opts: &PageOptions) -> Result<Built> {
    super::packed_encode::check_fields(rows)?;
    let fixed = super::packed_encode::fixed_widths(rows.fields());
    let row: usize = fixed.iter().flatten().sum();
    let narrow = row < FULL_ZIP_MIN_BYTES || opts.structural == Some(Structural::MiniBlock);
    match fixed {
        Some(widths) if narrow && opts.structural != Some(Structural::FullZip) => {
            let compressed = super::packed_encode::mini_block_rows(rows, &widths)?;
            mini_block_of(leaf, compressed, rows.len(), opts)
        }
        _ if opts.v2_2 => {
            let (offsets, data, encoding) = super::packed_encode::zipped_rows(rows)?;
            let bits = if data.len() > u32::MAX as usize { 64 } else { 32 };
            let zv = ZipValues::Var {
                offsets,
                data: std::borrow::Cow::Owned(data),
            };
            zip_page(leaf, rows.len(), zv, encoding, pb21::full_zip_layout::Details::BitsPerOffset(bits))
        }
        _ => Err(Error::Unsupported(format!(
            "packed struct fields {:?} need file format 2.2 (2.1 packs only fixed-width fields of rows under {FULL_ZIP_MIN_BYTES} bytes)",
            rows.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>()
        ))),
    }
}

/// `original` when it is an Arrow dictionary array, else its `plain` values.
fn dictionary_or<'a>(original: &'a ArrayRef, plain: &'a ArrayRef) -> &'a dyn Array {
    match original.data_type() {
        DataType::Dictionary(..) => original.as_ref(),
        _ => plain.as_ref(),
    }
}

/// Dictionary arrays are written as their values (the reader rebuilds the dictionary type).
fn plain(values: &ArrayRef) -> Result<ArrayRef> {
    match values.data_type() {
        DataType::Dictionary(_, vt) => {
            let d = values.as_any_dictionary();
            if d.values().is_empty() {
                return Ok(arrow_array::new_null_array(vt, values.len()));
            }
            let keys: UInt64Array = d.normalized_keys().into_iter().map(|k| k as u64).collect();
            let keys = match d.keys().nulls() {
                Some(n) => UInt64Array::new(keys.values().clone(), Some(n.clone())),
                None => keys,
            };
            Ok(arrow_select::take::take(d.values().as_ref(), &keys, None)?)
        }
        _ => Ok(values.clone()),
    }
}

fn fsl_item_nulls(values: &dyn Array) -> bool {
    match values.data_type() {
        DataType::FixedSizeList(..) => values.as_fixed_size_list().values().logical_null_count() > 0,
        _ => false,
    }
}

/// Width of the widest value in bytes (fixed-width types: their width).
fn max_value_bytes(values: &dyn Array) -> usize {
    match var_parts(values) {
        Some((offsets, _)) => offsets.windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0),
        None => fixed_bits(values.data_type()).map(|b| (b / 8) as usize).unwrap_or(0),
    }
}

/// Bits of one fixed-width value of `dt` (fixed-size lists of fixed-width items included).
fn fixed_bits(dt: &DataType) -> Option<u64> {
    match dt {
        DataType::Boolean => Some(1),
        DataType::FixedSizeBinary(w) => u64::try_from(*w).ok().map(|w| w * 8),
        DataType::FixedSizeList(f, d) => {
            let item = fixed_bits(f.data_type())?;
            (item % 8 == 0).then(|| item * u64::try_from(*d).unwrap_or(0))
        }
        other => other.primitive_width().map(|w| w as u64 * 8),
    }
}

// ------------------------------------------------------------------------------------------
// Constant pages

/// The constant's bytes when every valid value of `values` is equal (types stored by value).
fn constant_value(values: &dyn Array) -> Option<Vec<u8>> {
    if values.is_empty() {
        return None;
    }
    let valid = |i: usize| values.is_valid(i);
    let first = (0..values.len()).find(|i| valid(*i))?;
    let dt = values.data_type();
    match dt {
        DataType::Boolean => {
            let b = values.as_boolean();
            let v = b.value(first);
            (0..b.len())
                .all(|i| !valid(i) || b.value(i) == v)
                .then(|| vec![u8::from(v)])
        }
        DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary => {
            let get = |i: usize| -> &[u8] {
                match dt {
                    DataType::Utf8 => values.as_string::<i32>().value(i).as_bytes(),
                    DataType::LargeUtf8 => values.as_string::<i64>().value(i).as_bytes(),
                    DataType::Binary => values.as_binary::<i32>().value(i),
                    _ => values.as_binary::<i64>().value(i),
                }
            };
            let v = get(first);
            (0..values.len()).all(|i| !valid(i) || get(i) == v).then(|| v.to_vec())
        }
        DataType::FixedSizeList(..) => None,
        dt => {
            let nb = (fixed_bits(dt)? / 8) as usize;
            if nb == 0 {
                return None;
            }
            let data = values.to_data();
            let buf = data.buffers().first()?.as_slice().get(data.offset() * nb..)?;
            let v = buf.get(first * nb..(first + 1) * nb)?;
            (0..values.len())
                .all(|i| !valid(i) || buf.get(i * nb..(i + 1) * nb) == Some(v))
                .then(|| v.to_vec())
        }
    }
}

fn u16_bytes(levels: &[u16]) -> Vec<u8> {
    levels.iter().flat_map(|l| l.to_le_bytes()).collect()
}

fn flat(bits: u64) -> pb21::CompressiveEncoding {
    pb21::CompressiveEncoding {
        compression: Some(C::Flat(pb21::Flat {
            bits_per_value: bits,
            data: None,
        })),
    }
}

fn constant(leaf: &Shredded, dt: &DataType, value: Option<Vec<u8>>, opts: &PageOptions) -> Result<Built> {
    let mut buffers = Vec::new();
    let mut inline_value = None;
    if let Some(v) = value {
        let fixed = !matches!(
            dt,
            DataType::Utf8 | DataType::Binary | DataType::LargeUtf8 | DataType::LargeBinary
        );
        if fixed && v.len() <= 32 {
            inline_value = Some(bytes::Bytes::from(v));
        } else {
            // u32 buffer count, u32 lengths, then the Arrow buffers of a one-value array.
            let arrow_bufs: Vec<Vec<u8>> = match dt {
                DataType::Utf8 | DataType::Binary => {
                    vec![[0i32, v.len() as i32].iter().flat_map(|x| x.to_le_bytes()).collect(), v]
                }
                DataType::LargeUtf8 | DataType::LargeBinary => {
                    vec![[0i64, v.len() as i64].iter().flat_map(|x| x.to_le_bytes()).collect(), v]
                }
                _ => vec![v],
            };
            let mut b = Vec::new();
            b.extend((arrow_bufs.len() as u32).to_le_bytes());
            for a in &arrow_bufs {
                b.extend((a.len() as u32).to_le_bytes());
            }
            for a in arrow_bufs {
                b.extend(a);
            }
            buffers.push(Buffer::from_vec(b));
        }
    }
    let mut c = pb21::ConstantLayout {
        layers: leaf.layers.clone(),
        inline_value,
        ..Default::default()
    };
    if leaf.rep.is_some() || leaf.def.is_some() {
        let rep = leaf.rep.as_deref().unwrap_or(&[]);
        let def = leaf.def.as_deref().unwrap_or(&[]);
        buffers.push(Buffer::from_vec(u16_bytes(rep)));
        buffers.push(Buffer::from_vec(u16_bytes(def)));
        if opts.v2_2 && leaf.rep.is_some() {
            c.rep_compression = Some(flat(16));
            c.def_compression = leaf.def.is_some().then(|| flat(16));
            c.num_rep_values = rep.len() as u64;
            c.num_def_values = def.len() as u64;
        }
    }
    Ok((
        pb21::PageLayout {
            layout: Some(Layout::ConstantLayout(c)),
        },
        buffers,
    ))
}

// ------------------------------------------------------------------------------------------
// Mini-block pages

const LEVEL_OVERFLOW: &str = "mini-block chunk levels overflow";

/// Entries (levels) per chunk: a chunk ends right after the entry of its last value; the
/// last chunk takes every remaining entry.
fn chunk_entries(leaf: &Shredded, counts: &[usize]) -> Result<Vec<usize>> {
    let entries = leaf.rep.as_ref().or(leaf.def.as_ref()).map(Vec::len);
    let Some(total) = entries else {
        return Ok(counts.to_vec());
    };
    let max_visible = max_visible_def(&leaf.layers)?;
    let visible = |e: usize| leaf.def.as_ref().is_none_or(|d| d[e] <= max_visible);
    let mut out = Vec::with_capacity(counts.len());
    let mut e = 0usize;
    for (ci, &want) in counts.iter().enumerate() {
        let start = e;
        if ci + 1 == counts.len() {
            out.push(total - start);
            break;
        }
        let mut got = 0usize;
        while got < want {
            if e >= total {
                return Err(Error::InvalidInput("fewer levels than values".into()));
            }
            if visible(e) {
                got += 1;
            }
            e += 1;
        }
        out.push(e - start);
    }
    Ok(out)
}

fn put_uint(out: &mut Vec<u8>, v: usize, nb: usize) -> Result<()> {
    if nb < 8 && v >> (8 * nb) != 0 {
        return Err(Error::InvalidInput(format!(
            "{LEVEL_OVERFLOW}: {v} does not fit {nb} bytes"
        )));
    }
    out.extend_from_slice(&(v as u64).to_le_bytes()[..nb]);
    Ok(())
}

fn pad8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(CHUNK_PAD);
    }
}

fn num_list_layers(layers: &[i32]) -> usize {
    layers
        .iter()
        .filter(|l| {
            matches!(
                RepDefLayer::try_from(**l),
                Ok(RepDefLayer::RepdefAllValidList
                    | RepDefLayer::RepdefNullableList
                    | RepDefLayer::RepdefEmptyableList
                    | RepDefLayer::RepdefNullAndEmptyList)
            )
        })
        .count()
}

fn mini_block(leaf: &Shredded, values: &dyn Array, opts: &PageOptions) -> Result<Built> {
    mini_block_of(leaf, compress_mini_block(values, &opts.encode)?, values.len(), opts)
}

/// A mini-block page of `num_items` values already compressed into chunks.
fn mini_block_of(leaf: &Shredded, compressed: MiniBlockValues, num_items: usize, opts: &PageOptions) -> Result<Built> {
    let MiniBlockValues {
        encoding,
        chunks,
        dictionary,
    } = compressed;
    let counts: Vec<usize> = chunks.iter().map(|c| c.num_values).collect();
    let per_chunk = chunk_entries(leaf, &counts)?;
    let rep = leaf.rep.as_ref().map(|r| compress_levels(r, &per_chunk)).transpose()?;
    let def = leaf.def.as_ref().map(|d| compress_levels(d, &per_chunk)).transpose()?;
    let has_levels = rep.is_some() || def.is_some();
    let num_buffers = chunks.first().map(|c| c.buffers.len()).unwrap_or(1);
    let word = if opts.v2_2 { 4 } else { 2 };
    let mut meta = Vec::with_capacity(chunks.len() * word);
    // Room for every chunk (header, padding and buffers) up front: growing an 8 MiB page
    // by doubling would copy it and fault in fresh memory several times.
    let level_bytes = |l: &Option<(pb21::CompressiveEncoding, Vec<Vec<u8>>)>| {
        l.as_ref()
            .map(|(_, b)| b.iter().map(|x| x.len() + 8).sum::<usize>())
            .unwrap_or(0)
    };
    let room = chunks
        .iter()
        .map(|c| 16 + 12 * c.buffers.len() + c.buffers.iter().map(Vec::len).sum::<usize>())
        .sum::<usize>()
        + level_bytes(&rep)
        + level_bytes(&def);
    let mut data = Vec::with_capacity(room);
    for (ci, chunk) in chunks.iter().enumerate() {
        let start = data.len();
        put_uint(&mut data, if has_levels { per_chunk[ci] } else { 0 }, 2)?;
        if let Some((_, bufs)) = &rep {
            put_uint(&mut data, bufs[ci].len(), 2)?;
        }
        if let Some((_, bufs)) = &def {
            put_uint(&mut data, bufs[ci].len(), 2)?;
        }
        if chunk.buffers.len() != num_buffers {
            return Err(Error::InvalidInput("chunks with different buffer counts".into()));
        }
        for b in &chunk.buffers {
            put_uint(&mut data, b.len(), word)?;
        }
        pad8(&mut data);
        for b in rep.iter().chain(def.iter()).map(|(_, bufs)| &bufs[ci]) {
            data.extend_from_slice(b);
            pad8(&mut data);
        }
        for b in &chunk.buffers {
            data.extend_from_slice(b);
            pad8(&mut data);
        }
        let bytes = data.len() - start;
        let log = if ci + 1 == chunks.len() {
            0
        } else {
            let n = chunk.num_values;
            if !n.is_power_of_two() || n > 1 << 15 {
                return Err(Error::InvalidInput(format!("a non-last chunk of {n} values")));
            }
            n.trailing_zeros() as usize
        };
        put_uint(&mut meta, ((bytes / 8 - 1) << 4) | log, word)?;
    }
    let mut buffers = vec![Buffer::from_vec(meta), Buffer::from_vec(data)];
    let (dict_enc, num_dict) = match dictionary {
        Some((enc, buf, n)) => {
            buffers.push(Buffer::from_vec(buf));
            (Some(enc), n)
        }
        None => (None, 0),
    };
    if let Some(r) = leaf.rep.as_deref() {
        buffers.push(Buffer::from_vec(repetition_index(
            r,
            num_list_layers(&leaf.layers),
            &per_chunk,
        )));
    }
    let m = pb21::MiniBlockLayout {
        rep_compression: rep.map(|(e, _)| e),
        def_compression: def.map(|(e, _)| e),
        value_compression: Some(encoding),
        dictionary: dict_enc,
        num_dictionary_items: num_dict,
        layers: leaf.layers.clone(),
        num_buffers: num_buffers as u64,
        repetition_index_depth: u32::from(leaf.rep.is_some()),
        num_items: num_items as u64,
        has_large_chunk: opts.v2_2,
    };
    Ok((
        pb21::PageLayout {
            layout: Some(Layout::MiniBlockLayout(m)),
        },
        buffers,
    ))
}

/// Per chunk: rows whose last level lies in it, and the levels at its end that belong to a
/// row continuing into the next chunk (two u64 each).
fn repetition_index(rep: &[u16], max_rep: usize, per_chunk: &[usize]) -> Vec<u8> {
    let starts_row = |e: usize| e < rep.len() && usize::from(rep[e]) == max_rep;
    let mut out = Vec::with_capacity(per_chunk.len() * 16);
    let mut a = 0usize;
    for &len in per_chunk {
        let b = a + len;
        // A row ends at entry e when e + 1 starts a row or e is the last entry.
        let ending = (a + 1..=b).filter(|&s| s == rep.len() || starts_row(s)).count();
        let trailing = if b >= rep.len() || starts_row(b) {
            0
        } else {
            let last_start = (a..b).rev().find(|&e| starts_row(e)).unwrap_or(a);
            b - last_start
        };
        out.extend((ending as u64).to_le_bytes());
        out.extend((trailing as u64).to_le_bytes());
        a = b;
    }
    out
}

// ------------------------------------------------------------------------------------------
// Full-zip pages

fn bit_len(v: u64) -> u32 {
    64 - v.leading_zeros()
}

fn max_def(layers: &[i32]) -> u64 {
    layers
        .iter()
        .map(|l| match RepDefLayer::try_from(*l) {
            Ok(
                RepDefLayer::RepdefNullableItem | RepDefLayer::RepdefNullableList | RepDefLayer::RepdefEmptyableList,
            ) => 1,
            Ok(RepDefLayer::RepdefNullAndEmptyList) => 2,
            _ => 0,
        })
        .sum()
}

/// Per-value bytes of a full-zip page.
enum ZipValues<'a> {
    Fixed {
        data: Buffer,
        width: usize,
    },
    Var {
        offsets: Vec<u64>,
        data: std::borrow::Cow<'a, [u8]>,
    },
}

impl ZipValues<'_> {
    fn value(&self, i: usize) -> &[u8] {
        match self {
            Self::Fixed { data, width } => &data.as_slice()[i * width..(i + 1) * width],
            Self::Var { offsets, data } => &data[offsets[i] as usize..offsets[i + 1] as usize],
        }
    }
}

fn var_parts(values: &dyn Array) -> Option<(Vec<u64>, &[u8])> {
    fn go<O: arrow_array::OffsetSizeTrait>(o: &[O], d: &[u8]) -> (Vec<u64>, usize, usize) {
        let first = o.first().map(|x| x.as_usize()).unwrap_or(0);
        let last = o.last().map(|x| x.as_usize()).unwrap_or(0);
        (
            o.iter().map(|x| (x.as_usize() - first) as u64).collect(),
            first,
            last.max(first).min(d.len()),
        )
    }
    let (offsets, first, last, data) = match values.data_type() {
        DataType::Utf8 => {
            let a = values.as_string::<i32>();
            let (o, f, l) = go(a.value_offsets(), a.value_data());
            (o, f, l, a.value_data())
        }
        DataType::LargeUtf8 => {
            let a = values.as_string::<i64>();
            let (o, f, l) = go(a.value_offsets(), a.value_data());
            (o, f, l, a.value_data())
        }
        DataType::Binary => {
            let a = values.as_binary::<i32>();
            let (o, f, l) = go(a.value_offsets(), a.value_data());
            (o, f, l, a.value_data())
        }
        DataType::LargeBinary => {
            let a = values.as_binary::<i64>();
            let (o, f, l) = go(a.value_offsets(), a.value_data());
            (o, f, l, a.value_data())
        }
        _ => return None,
    };
    Some((offsets, &data[first..last]))
}

/// The fixed-width bytes of `values` (one `width`-byte slot per value) and their encoding.
fn fixed_parts(values: &dyn Array) -> Result<(Buffer, usize, pb21::CompressiveEncoding)> {
    let dt = values.data_type();
    let bits = fixed_bits(dt)
        .filter(|b| b % 8 == 0)
        .ok_or_else(|| Error::Unsupported(format!("full-zip pages of type {dt}")))?;
    let width = (bits / 8) as usize;
    let (leaf, encoding, per_value_items) = match dt {
        DataType::FixedSizeList(..) => {
            // Down to the innermost values (nested lists flatten: FixedSizeList(d0,
            // FixedSizeList(d1, ... Flat))); nulls inside the lists cannot be stored here.
            let mut dims: Vec<usize> = Vec::new();
            let outer = values.logical_nulls();
            let mut array: ArrayRef = arrow_array::make_array(values.to_data());
            while let DataType::FixedSizeList(_, d) = array.data_type().clone() {
                let l = array.as_fixed_size_list();
                let child = l.values().clone();
                // A null below a null outer list is hidden by it (its definition level).
                let per_outer: usize = dims.iter().product();
                if let (false, Some(inner)) = (dims.is_empty(), l.logical_nulls()) {
                    let real = (0..l.len())
                        .any(|j| inner.is_null(j) && outer.as_ref().is_none_or(|o| o.is_valid(j / per_outer)));
                    if real {
                        return Err(Error::Unsupported("nulls inside nested fixed-size lists".into()));
                    }
                }
                dims.push(usize::try_from(d).map_err(|_| Error::InvalidInput("negative list size".into()))?);
                array = child;
            }
            if let (true, Some(inner)) = (dims.len() > 1, array.logical_nulls()) {
                let per_outer: usize = dims.iter().product();
                if (0..array.len())
                    .any(|j| inner.is_null(j) && outer.as_ref().is_none_or(|o| o.is_valid(j / per_outer)))
                {
                    return Err(Error::Unsupported("nulls inside nested fixed-size lists".into()));
                }
            }
            let item_bits = fixed_bits(array.data_type()).unwrap_or(0);
            let mut enc = flat(item_bits);
            for d in dims.iter().rev() {
                enc = pb21::CompressiveEncoding {
                    compression: Some(C::FixedSizeList(Box::new(pb21::FixedSizeList {
                        items_per_value: *d as u64,
                        has_validity: false,
                        values: Some(Box::new(enc)),
                    }))),
                };
            }
            (array.to_data(), enc, dims.iter().product::<usize>())
        }
        _ => (values.to_data(), flat(bits), 1),
    };
    let item_width = width / per_value_items.max(1);
    let buf = leaf
        .buffers()
        .first()
        .ok_or_else(|| Error::InvalidInput("fixed-width array without a data buffer".into()))?;
    let start = leaf.offset() * item_width;
    let len = values.len() * width;
    if start + len > buf.len() {
        return Err(Error::InvalidInput("fixed-width array shorter than its length".into()));
    }
    Ok((buf.slice_with_length(start, len), width, encoding))
}

fn variable(offset_bits: u64) -> pb21::CompressiveEncoding {
    pb21::CompressiveEncoding {
        compression: Some(C::Variable(Box::new(pb21::Variable {
            offsets: Some(Box::new(flat(offset_bits))),
            values: None,
        }))),
    }
}

fn full_zip(leaf: &Shredded, values: &dyn Array, opts: &PageOptions) -> Result<Built> {
    let n = values.len();
    let large = matches!(values.data_type(), DataType::LargeUtf8 | DataType::LargeBinary);
    let offset_bits: u32 = if large { 64 } else { 32 };
    let (zv, value_compression, details) = if let Some((offsets, data)) = var_parts(values) {
        let want_fsst = match opts.encode.compression.as_deref() {
            Some("fsst") => true,
            Some(_) => false,
            None => data.len() >= FSST_MIN_PAGE_BYTES,
        };
        let mut chosen = None;
        if want_fsst {
            let vals = (0..n)
                .filter(|i| values.is_valid(*i))
                .map(|i| &data[offsets[i] as usize..offsets[i + 1] as usize]);
            let comp = Compressor::train(vals);
            let (co, cd) = comp.compress_values((0..n).map(|i| &data[offsets[i] as usize..offsets[i + 1] as usize]));
            if cd.len() < data.len() || opts.encode.compression.as_deref() == Some("fsst") {
                let enc = pb21::CompressiveEncoding {
                    compression: Some(C::Fsst(Box::new(pb21::Fsst {
                        symbol_table: bytes::Bytes::from(comp.symbol_table()),
                        values: Some(Box::new(variable(u64::from(offset_bits)))),
                    }))),
                };
                chosen = Some((
                    ZipValues::Var {
                        offsets: co,
                        data: std::borrow::Cow::Owned(cd),
                    },
                    enc,
                ));
            }
        }
        let (zv, enc) = chosen.unwrap_or((
            ZipValues::Var {
                offsets,
                data: std::borrow::Cow::Borrowed(data),
            },
            variable(u64::from(offset_bits)),
        ));
        (zv, enc, pb21::full_zip_layout::Details::BitsPerOffset(offset_bits))
    } else {
        let (data, width, enc) = fixed_parts(values)?;
        (
            ZipValues::Fixed { data, width },
            enc,
            pb21::full_zip_layout::Details::BitsPerValue(width as u32 * 8),
        )
    };
    zip_page(leaf, n, zv, value_compression, details)
}

/// A full-zip page of `n` visible values whose bytes and encoding are chosen: each level
/// entry's control word, then (for visible entries) the value, variable-width values
/// behind a length of `bits_per_offset` bits.
fn zip_page(
    leaf: &Shredded,
    n: usize,
    zv: ZipValues<'_>,
    value_compression: pb21::CompressiveEncoding,
    details: pb21::full_zip_layout::Details,
) -> Result<Built> {
    let max_rep = num_list_layers(&leaf.layers);
    let max_visible = max_visible_def(&leaf.layers)?;
    let bits_rep = if leaf.rep.is_some() { bit_len(max_rep as u64) } else { 0 };
    let bits_def = if leaf.def.is_some() {
        bit_len(max_def(&leaf.layers))
    } else {
        0
    };
    let ctrl = match bits_rep + bits_def {
        0 => 0,
        1..=8 => 1,
        9..=16 => 2,
        _ => 4,
    };
    let large = details == pb21::full_zip_layout::Details::BitsPerOffset(64);
    let var = matches!(zv, ZipValues::Var { .. });
    let entries = leaf.rep.as_ref().or(leaf.def.as_ref()).map(Vec::len).unwrap_or(n);
    let mut out = Vec::new();
    let mut row_starts: Vec<usize> = Vec::with_capacity(leaf.num_rows + 1);
    let mut vi = 0usize;
    for e in 0..entries {
        let r = leaf.rep.as_ref().map(|r| r[e]).unwrap_or(0);
        let d = leaf.def.as_ref().map(|d| d[e]).unwrap_or(0);
        if leaf.rep.is_none() || usize::from(r) == max_rep {
            row_starts.push(out.len());
        }
        if ctrl > 0 {
            let c = (usize::from(r) << bits_def) | usize::from(d);
            out.extend_from_slice(&(c as u32).to_le_bytes()[..ctrl]);
        }
        if d > max_visible {
            continue;
        }
        if vi >= n {
            return Err(Error::InvalidInput("more visible levels than values".into()));
        }
        if !var {
            out.extend_from_slice(zv.value(vi));
        } else if d == 0 {
            let v = zv.value(vi);
            if large {
                out.extend_from_slice(&(v.len() as u64).to_le_bytes());
            } else {
                let len = u32::try_from(v.len())
                    .map_err(|_| Error::Unsupported("a variable-width value of 4 GiB or more".into()))?;
                out.extend_from_slice(&len.to_le_bytes());
            }
            out.extend_from_slice(v);
        }
        vi += 1;
    }
    if vi != n {
        return Err(Error::InvalidInput(format!("{vi} visible levels for {n} values")));
    }
    row_starts.push(out.len());
    let mut buffers = vec![Buffer::from_vec(out)];
    if var || leaf.rep.is_some() {
        let end = *row_starts.last().unwrap_or(&0) as u64;
        let nb = if end <= 0xFF {
            1
        } else if end <= 0xFFFF {
            2
        } else if end <= 0xFFFF_FFFF {
            4
        } else {
            8
        };
        let mut idx = Vec::with_capacity(row_starts.len() * nb);
        for s in row_starts {
            idx.extend_from_slice(&(s as u64).to_le_bytes()[..nb]);
        }
        buffers.push(Buffer::from_vec(idx));
    }
    let f = pb21::FullZipLayout {
        bits_rep,
        bits_def,
        details: Some(details),
        num_items: u32::try_from(entries).map_err(|_| Error::Unsupported("pages of 2^32 levels".into()))?,
        num_visible_items: n as u32,
        value_compression: Some(value_compression),
        layers: leaf.layers.clone(),
    };
    Ok((
        pb21::PageLayout {
            layout: Some(Layout::FullZipLayout(f)),
        },
        buffers,
    ))
}
