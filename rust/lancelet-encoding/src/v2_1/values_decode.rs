//! Decoding the compressive encodings of Lance 2.1+: from encoded buffers to [`Values`].
//!
//! Three buffer shapes occur: a mini-block *chunk* (a few value buffers holding `n`
//! values, [`decode_chunk`]), a *block* (one self-describing buffer such as a dictionary,
//! [`decode_block`]) and full-zip *per-value* bytes ([`fixed_from_bytes`], [`var_value`]).
//! The inverse of [`super::values_encode`]; [`Values::into_array`] makes Arrow arrays.

use lancelet_proto::pb21::{self, compressive_encoding::Compression as C};

use super::bitpack::{decode_inline, decode_out_of_line, pick_inline};
use super::compression::decompress;
use super::fsst::SymbolTable;
use super::values::{fixed_bytes, Values, MAX_VALUES};
use crate::{corrupt, Error, Result};

/// The variant of an encoding node.
pub fn variant(enc: &pb21::CompressiveEncoding) -> Result<&C> {
    enc.compression
        .as_ref()
        .ok_or_else(|| corrupt!("compressive encoding without a variant"))
}

/// The required child encoding `e` of a node.
pub fn required<'a>(
    e: &'a Option<Box<pb21::CompressiveEncoding>>,
    what: &str,
) -> Result<&'a pb21::CompressiveEncoding> {
    e.as_deref().ok_or_else(|| corrupt!("encoding lacks its {what}"))
}

fn flat_bits(enc: &pb21::CompressiveEncoding) -> Result<u64> {
    match variant(enc)? {
        C::Flat(f) => Ok(f.bits_per_value),
        _ => Err(Error::Unsupported("non-flat inner encoding".into())),
    }
}

fn checked_count(n: usize, dim: usize) -> Result<usize> {
    n.checked_mul(dim)
        .filter(|t| *t <= MAX_VALUES)
        .ok_or_else(|| corrupt!("{n} x {dim} items is too many"))
}

fn first<'a>(bufs: &[&'a [u8]]) -> Result<&'a [u8]> {
    bufs.first()
        .copied()
        .ok_or_else(|| corrupt!("a value buffer is missing"))
}

fn flat(bits: u64, buf: &[u8], n: usize) -> Result<Values> {
    if bits == 0 || bits > 1 << 20 {
        return Err(corrupt!("flat values of {bits} bits"));
    }
    let need = (n as u64)
        .checked_mul(bits)
        .map(|b| b.div_ceil(8))
        .ok_or_else(|| corrupt!("{n} values of {bits} bits overflows"))?;
    let data = buf
        .get(..need as usize)
        .ok_or_else(|| corrupt!("{n} flat {bits}-bit values need {need} bytes, have {}", buf.len()))?;
    if bits != 1 && !bits.is_multiple_of(8) {
        return Err(Error::Unsupported(format!("{bits}-bit flat values")));
    }
    Ok(Values::Fixed {
        bits,
        data: data.to_vec(),
        len: n,
    })
}

fn offset_width(offsets: &pb21::CompressiveEncoding) -> Result<usize> {
    match flat_bits(offsets)? {
        32 => Ok(4),
        64 => Ok(8),
        b => Err(Error::Unsupported(format!("{b}-bit variable-width offsets"))),
    }
}

pub(super) fn read_uint(buf: &[u8], at: usize, nb: usize) -> Result<u64> {
    let b = buf
        .get(at..at + nb)
        .ok_or_else(|| corrupt!("integer at byte {at} lies past the end of a {}-byte buffer", buf.len()))?;
    let mut v = 0u64;
    for (i, x) in b.iter().enumerate() {
        v |= u64::from(*x) << (8 * i);
    }
    Ok(v)
}

/// Turns `n + 1` absolute positions into rebased offsets and the bytes they span.
fn var_from_positions(buf: &[u8], positions: &[u64]) -> Result<Values> {
    let (Some(&start), Some(&end)) = (positions.first(), positions.last()) else {
        return Err(corrupt!("variable-width values without offsets"));
    };
    if positions.windows(2).any(|w| w[0] > w[1]) || end as usize > buf.len() {
        return Err(corrupt!("variable-width offsets are not increasing within the buffer"));
    }
    Ok(Values::Var {
        offsets: positions.iter().map(|p| p - start).collect(),
        data: buf[start as usize..end as usize].to_vec(),
    })
}

/// The values at positions `picked` (ascending, each below `n`) of one mini-block chunk
/// of `n` values -- what `decode_chunk(..)?.take(picked)` gives -- read without decoding
/// the rest of the chunk, or `None` when the encoding is only decoded whole. Handles
/// uncompressed flat byte-wide values, inline bit-packing, variable-width values and FSST
/// over them (a take's few rows of a chunk).
pub fn decode_chunk_picked(
    enc: &pb21::CompressiveEncoding,
    bufs: &[&[u8]],
    n: usize,
    picked: &[u64],
) -> Result<Option<Values>> {
    if n > MAX_VALUES {
        return Err(corrupt!("chunk of {n} values"));
    }
    // Every position is checked (not only the last): the flat path below slices by them.
    if let Some(&p) = picked.iter().find(|&&p| p >= n as u64) {
        return Err(corrupt!("value {p} picked from a chunk of {n}"));
    }
    // The bit-packed path walks the positions in one pass: others decode whole.
    if !picked.is_sorted() {
        return Ok(None);
    }
    let uncompressed = |c: &Option<pb21::BufferCompression>| c.as_ref().is_none_or(|c| c.scheme == 0);
    match variant(enc)? {
        C::Flat(f) if uncompressed(&f.data) && f.bits_per_value > 0 && f.bits_per_value <= 1 << 20 => {
            let bits = f.bits_per_value;
            if !bits.is_multiple_of(8) {
                return Ok(None);
            }
            let nb = fixed_bytes(bits)?;
            let buf = first(bufs)?;
            let need = n * nb;
            let data = buf
                .get(..need)
                .ok_or_else(|| corrupt!("{n} flat {bits}-bit values need {need} bytes, have {}", buf.len()))?;
            let mut out = Vec::with_capacity(picked.len() * nb);
            for &p in picked {
                let s = p as usize * nb;
                out.extend_from_slice(&data[s..s + nb]);
            }
            Ok(Some(Values::Fixed {
                bits,
                data: out,
                len: picked.len(),
            }))
        }
        C::InlineBitpacking(b) if uncompressed(&b.values) => {
            let w = b.uncompressed_bits_per_value;
            let data = pick_inline(first(bufs)?, w, n, picked)?;
            Ok(Some(Values::Fixed {
                bits: w,
                data,
                len: picked.len(),
            }))
        }
        C::Variable(v) => {
            if v.values.as_ref().is_some_and(|c| c.scheme != 0) {
                return Err(Error::Unsupported("compressed variable-width bytes".into()));
            }
            let nb = offset_width(required(&v.offsets, "offsets")?)?;
            let buf = first(bufs)?;
            if (read_uint(buf, 0, nb)? as usize) < (n + 1) * nb {
                return Err(corrupt!("variable-width data overlaps its offsets"));
            }
            let mut offsets = Vec::with_capacity(picked.len() + 1);
            offsets.push(0u64);
            let mut data = Vec::new();
            for &p in picked {
                let at = p as usize * nb;
                let (a, b) = (read_uint(buf, at, nb)?, read_uint(buf, at + nb, nb)?);
                if a > b || b as usize > buf.len() {
                    return Err(corrupt!("variable-width offsets are not increasing within the buffer"));
                }
                data.extend_from_slice(&buf[a as usize..b as usize]);
                offsets.push(data.len() as u64);
            }
            Ok(Some(Values::Var { offsets, data }))
        }
        C::Fsst(f) => match decode_chunk_picked(required(&f.values, "FSST values")?, bufs, n, picked)? {
            Some(inner) => fsst_values(&f.symbol_table, inner).map(Some),
            None => Ok(None),
        },
        _ => Ok(None),
    }
}

/// Decodes the value buffers of one mini-block chunk holding `n` values.
pub fn decode_chunk(enc: &pb21::CompressiveEncoding, bufs: &[&[u8]], n: usize) -> Result<Values> {
    if n > MAX_VALUES {
        return Err(corrupt!("chunk of {n} values"));
    }
    match variant(enc)? {
        C::Flat(f) => {
            let buf = first(bufs)?;
            match f.data.as_ref().filter(|c| c.scheme != 0) {
                Some(c) => flat(f.bits_per_value, &decompress(c.scheme, buf)?, n),
                None => flat(f.bits_per_value, buf, n),
            }
        }
        C::InlineBitpacking(b) => {
            let w = b.uncompressed_bits_per_value;
            let buf = first(bufs)?;
            let data = match b.values.as_ref().filter(|c| c.scheme != 0) {
                Some(c) => decode_inline(&decompress(c.scheme, buf)?, w, n)?,
                None => decode_inline(buf, w, n)?,
            };
            Ok(Values::Fixed { bits: w, data, len: n })
        }
        C::OutOfLineBitpacking(b) => {
            let w = b.uncompressed_bits_per_value;
            let bw = flat_bits(required(&b.values, "packed values")?)?;
            let data = decode_out_of_line(first(bufs)?, w, bw, n)?;
            Ok(Values::Fixed { bits: w, data, len: n })
        }
        C::Variable(v) => {
            if v.values.as_ref().is_some_and(|c| c.scheme != 0) {
                return Err(Error::Unsupported("compressed variable-width bytes".into()));
            }
            let nb = offset_width(required(&v.offsets, "offsets")?)?;
            let buf = first(bufs)?;
            let positions = (0..=n)
                .map(|i| read_uint(buf, i * nb, nb))
                .collect::<Result<Vec<_>>>()?;
            if positions.first().is_some_and(|p| (*p as usize) < (n + 1) * nb) {
                return Err(corrupt!("variable-width data overlaps its offsets"));
            }
            var_from_positions(buf, &positions)
        }
        C::Fsst(f) => {
            let inner = decode_chunk(required(&f.values, "FSST values")?, bufs, n)?;
            fsst_values(&f.symbol_table, inner)
        }
        C::Rle(r) => {
            if bufs.len() < 2 {
                return Err(corrupt!("run-length chunk needs two buffers, has {}", bufs.len()));
            }
            if flat_bits(required(&r.run_lengths, "run lengths")?)? != 8 {
                return Err(Error::Unsupported("run lengths wider than 8 bits".into()));
            }
            let lens = bufs[1];
            let bits = flat_bits(required(&r.values, "run values")?)?;
            let nb = fixed_bytes(bits)?;
            let runs = bufs[0]
                .get(..lens.len() * nb)
                .ok_or_else(|| corrupt!("{} runs need {} bytes of values", lens.len(), lens.len() * nb))?;
            let total: usize = lens.iter().map(|l| *l as usize).sum();
            if total != n {
                return Err(corrupt!("run lengths add up to {total}, expected {n}"));
            }
            let mut data = Vec::with_capacity(n * nb);
            for (v, l) in runs.chunks_exact(nb).zip(lens) {
                for _ in 0..*l {
                    data.extend_from_slice(v);
                }
            }
            Ok(Values::Fixed { bits, data, len: n })
        }
        C::FixedSizeList(f) => {
            let dim = usize::try_from(f.items_per_value).map_err(|_| corrupt!("huge fixed-size list"))?;
            let items = checked_count(n, dim)?;
            let (validity, rest) = if f.has_validity {
                let vb = first(bufs)?;
                let bytes = vb
                    .get(..items.div_ceil(8))
                    .ok_or_else(|| corrupt!("item validity of {items} bits is truncated"))?;
                let v = (0..items).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1).collect();
                (Some(v), &bufs[1..])
            } else {
                (None, bufs)
            };
            let inner = decode_chunk(required(&f.values, "list items")?, rest, items)?;
            Ok(Values::Fsl {
                dim,
                validity,
                items: Box::new(inner),
                len: n,
            })
        }
        C::General(g) => {
            let scheme = g.compression.as_ref().map(|c| c.scheme).unwrap_or(0);
            let raw = bufs.iter().map(|b| decompress(scheme, b)).collect::<Result<Vec<_>>>()?;
            let refs: Vec<&[u8]> = raw.iter().map(|v| v.as_slice()).collect();
            decode_chunk(required(&g.values, "compressed values")?, &refs, n)
        }
        C::ByteStreamSplit(b) => {
            let inner = required(&b.values, "split values")?;
            let nb = fixed_bytes(flat_bits(inner)?)?;
            let buf = first(bufs)?;
            let src = buf
                .get(..n * nb)
                .ok_or_else(|| corrupt!("byte-stream-split of {n} x {nb} bytes is truncated"))?;
            let mut out = vec![0u8; n * nb];
            for k in 0..nb {
                for i in 0..n {
                    out[i * nb + k] = src[k * n + i];
                }
            }
            decode_chunk(inner, &[&out], n)
        }
        C::Constant(c) => {
            let v = c
                .value
                .as_ref()
                .ok_or_else(|| corrupt!("constant encoding without a value"))?;
            Values::repeat(v, false, v.len() as u64 * 8, n)
        }
        C::Dictionary(_) => Err(Error::Unsupported("nested dictionary encoding".into())),
        C::PackedStruct(p) => {
            let inner = required(&p.values, "packed struct rows")?;
            let row = flat_bits(inner)?;
            let sum = p
                .bits_per_value
                .iter()
                .try_fold(0u64, |a, b| a.checked_add(*b).filter(|_| b % 8 == 0 && *b > 0));
            if sum != Some(row) {
                return Err(corrupt!(
                    "packed struct fields of {:?} bits in rows of {row} bits",
                    p.bits_per_value
                ));
            }
            decode_chunk(inner, bufs, n)
        }
        C::VariablePackedStruct(_) => Err(corrupt!("a variable packed struct in a mini-block chunk")),
    }
}

fn fsst_values(table: &[u8], inner: Values) -> Result<Values> {
    let Values::Var { offsets, data } = inner else {
        return Err(corrupt!("FSST over fixed-width values"));
    };
    let (offsets, data) = SymbolTable::with_parsed(table, |t| t.decompress_values(&offsets, &data))?;
    Ok(Values::Var { offsets, data })
}

/// Decodes a self-describing block holding `n` values (dictionaries).
pub fn decode_block(enc: &pb21::CompressiveEncoding, buf: &[u8], n: usize) -> Result<Values> {
    match variant(enc)? {
        C::General(g) => {
            let scheme = g.compression.as_ref().map(|c| c.scheme).unwrap_or(0);
            decode_block(required(&g.values, "compressed values")?, &decompress(scheme, buf)?, n)
        }
        C::Variable(v) => {
            let nb = offset_width(required(&v.offsets, "offsets")?)?;
            let bpo = read_uint(buf, 0, nb)?;
            if bpo != nb as u64 * 8 {
                return Err(corrupt!(
                    "variable block declares {bpo}-bit offsets, expected {}",
                    nb * 8
                ));
            }
            let start = read_uint(buf, nb, nb)?;
            let positions = (0..=n)
                .map(|i| Ok(read_uint(buf, (2 + i) * nb, nb)?.saturating_add(start)))
                .collect::<Result<Vec<_>>>()?;
            var_from_positions(buf, &positions)
        }
        C::Fsst(f) => {
            let inner = decode_block(required(&f.values, "FSST values")?, buf, n)?;
            fsst_values(&f.symbol_table, inner)
        }
        C::Rle(_) => {
            // u64 byte length of the run values, the run values, then the u8 run lengths.
            let vlen = read_uint(buf, 0, 8)?;
            let vlen = usize::try_from(vlen).map_err(|_| corrupt!("run-length block of {vlen} value bytes"))?;
            let values = buf
                .get(8..8usize.saturating_add(vlen))
                .ok_or_else(|| corrupt!("run-length block values of {vlen} bytes are truncated"))?;
            let lens = &buf[8 + vlen..];
            decode_chunk(enc, &[values, lens], n)
        }
        _ => decode_chunk(enc, &[buf], n),
    }
}

/// Decodes `n` repetition or definition levels. Levels are always stored as one
/// self-describing block (this matters for RLE, whose block form carries a size header).
pub fn decode_levels(enc: &pb21::CompressiveEncoding, buf: &[u8], n: usize) -> Result<Vec<u16>> {
    match decode_block(enc, buf, n)? {
        Values::Fixed { bits: 16, data, len } => Ok(data
            .chunks_exact(2)
            .take(len)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect()),
        Values::Fixed { bits: 8, data, len } => Ok(data.iter().take(len).map(|b| u16::from(*b)).collect()),
        _ => Err(Error::Unsupported("levels that are not 8 or 16 bits wide".into())),
    }
}

/// Width in bits of one full-zip fixed value under `enc` (checked against the layout).
pub fn fixed_from_bytes(enc: &pb21::CompressiveEncoding, data: Vec<u8>, n: usize) -> Result<Values> {
    match variant(enc)? {
        C::Flat(f) => {
            let bits = f.bits_per_value;
            let nb = fixed_bytes(bits)?;
            if data.len() != n * nb {
                return Err(corrupt!("{n} values of {bits} bits in {} bytes", data.len()));
            }
            Ok(Values::Fixed { bits, data, len: n })
        }
        C::FixedSizeList(_) => {
            // A value of (nested) fixed-size lists: the validity bitmap of each level that
            // has one (whole bytes over all of that level's items, outer level first),
            // then the innermost values.
            let (levels, leaf) = fsl_levels(enc)?;
            let leaf_bytes = fixed_bytes(fixed_bits(leaf)?)?;
            let mut items = 1usize;
            let mut vbytes = Vec::with_capacity(levels.len());
            for (d, has_validity) in &levels {
                items = checked_count(items, *d)?;
                vbytes.push(if *has_validity { items.div_ceil(8) } else { 0 });
            }
            let values_bytes = items
                .checked_mul(leaf_bytes)
                .ok_or_else(|| corrupt!("fixed-size list width overflows"))?;
            let stride = vbytes.iter().sum::<usize>() + values_bytes;
            if data.len() != n.saturating_mul(stride) {
                return Err(corrupt!(
                    "{n} fixed-size lists of {stride} bytes in {} bytes",
                    data.len()
                ));
            }
            let mut validity: Vec<Option<Vec<bool>>> = vbytes.iter().map(|b| (*b > 0).then(Vec::new)).collect();
            let mut leaf_data = Vec::with_capacity(n.saturating_mul(values_bytes));
            for v in data.chunks_exact(stride.max(1)) {
                let (mut at, mut count) = (0usize, 1usize);
                for ((d, _), (bits, valid)) in levels.iter().zip(vbytes.iter().zip(validity.iter_mut())) {
                    count *= d;
                    if let Some(valid) = valid {
                        valid.extend((0..count).map(|i| v[at + i / 8] >> (i % 8) & 1 == 1));
                    }
                    at += bits;
                }
                leaf_data.extend_from_slice(&v[at..]);
            }
            let mut values = fixed_from_bytes(leaf, leaf_data, checked_count(n, items)?)?;
            // Wrap from the innermost level out: level j holds n * d0 * .. * d(j-1) lists.
            let mut lists: Vec<usize> = Vec::with_capacity(levels.len());
            let mut count = n;
            for (d, _) in &levels {
                lists.push(count);
                count = checked_count(count, *d)?;
            }
            for (((d, _), valid), len) in levels.iter().zip(validity).zip(lists).rev() {
                values = Values::Fsl {
                    dim: *d,
                    validity: valid,
                    items: Box::new(values),
                    len,
                };
            }
            Ok(values)
        }
        _ => Err(Error::Unsupported("this fixed-width full-zip value encoding".into())),
    }
}

/// The chain of (nested) fixed-size list levels of `enc` (size, has validity), outer
/// first, and the innermost values' encoding.
fn fsl_levels(enc: &pb21::CompressiveEncoding) -> Result<(Vec<(usize, bool)>, &pb21::CompressiveEncoding)> {
    let mut levels = Vec::new();
    let mut e = enc;
    while let C::FixedSizeList(f) = variant(e)? {
        if levels.len() > 64 {
            return Err(corrupt!("fixed-size lists nested deeper than 64 levels"));
        }
        let d = usize::try_from(f.items_per_value).map_err(|_| corrupt!("huge fixed-size list"))?;
        levels.push((d, f.has_validity));
        e = required(&f.values, "list items")?;
    }
    Ok((levels, e))
}

/// Bits of one fixed value under `enc` (to check a full-zip layout's `bits_per_value`).
pub fn fixed_bits(enc: &pb21::CompressiveEncoding) -> Result<u64> {
    match variant(enc)? {
        C::Flat(f) => Ok(f.bits_per_value),
        C::FixedSizeList(_) => {
            // Each level's validity bitmap (whole bytes over that level's items), then the
            // innermost values.
            let (levels, leaf) = fsl_levels(enc)?;
            let mut items = 1u64;
            let mut validity = 0u64;
            for (d, has_validity) in levels {
                items = items
                    .checked_mul(d as u64)
                    .ok_or_else(|| corrupt!("fixed-size list width overflows"))?;
                if has_validity {
                    validity += items.div_ceil(8) * 8;
                }
            }
            fixed_bits(leaf)?
                .checked_mul(items)
                .and_then(|b| b.checked_add(validity))
                .ok_or_else(|| corrupt!("fixed-size list width overflows"))
        }
        _ => Err(Error::Unsupported("this fixed-width full-zip value encoding".into())),
    }
}

/// Decodes the bytes of one full-zip variable-width value, appending them to `out`.
pub fn var_value(enc: &pb21::CompressiveEncoding, raw: &[u8], out: &mut Vec<u8>) -> Result<()> {
    match variant(enc)? {
        C::Variable(_) => {
            out.extend_from_slice(raw);
            Ok(())
        }
        C::Fsst(f) => {
            let mut inner = Vec::new();
            var_value(required(&f.values, "FSST values")?, raw, &mut inner)?;
            SymbolTable::with_parsed(&f.symbol_table, |t| t.decompress_into(&inner, out))
        }
        C::General(g) => {
            let scheme = g.compression.as_ref().map(|c| c.scheme).unwrap_or(0);
            var_value(
                required(&g.values, "compressed values")?,
                &decompress(scheme, raw)?,
                out,
            )
        }
        _ => Err(Error::Unsupported("this variable-width full-zip value encoding".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, BooleanArray, StringArray};
    use arrow_schema::DataType;
    use lancelet_proto::pb21::{Flat, Variable};

    fn flat_enc(bits: u64) -> pb21::CompressiveEncoding {
        pb21::CompressiveEncoding {
            compression: Some(C::Flat(Flat {
                bits_per_value: bits,
                data: None,
            })),
        }
    }

    fn var_enc(bits: u64) -> pb21::CompressiveEncoding {
        pb21::CompressiveEncoding {
            compression: Some(C::Variable(Box::new(Variable {
                offsets: Some(Box::new(flat_enc(bits))),
                values: None,
            }))),
        }
    }

    #[test]
    fn variable_chunk_and_block() {
        // chunk: absolute positions, first = (n+1)*4
        let mut buf = Vec::new();
        for p in [16u32, 17, 17, 22] {
            buf.extend(p.to_le_bytes());
        }
        buf.extend(b"aeeeee");
        let v = decode_chunk(&var_enc(32), &[&buf], 3).unwrap();
        let a = v.into_array(&DataType::Utf8).unwrap();
        let s = a.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(s.value(0), "a");
        assert_eq!(s.value(1), "");
        assert_eq!(s.value(2), "eeeee");
        // block: bits, data start, relative offsets
        let mut blk = Vec::new();
        for p in [32u32, 24, 0, 3, 8, 12] {
            blk.extend(p.to_le_bytes());
        }
        blk.extend(b"redgreenblue");
        let v = decode_block(&var_enc(32), &blk, 3).unwrap();
        let d = v.take(&[2, 0, 0, 1]).unwrap().into_array(&DataType::Utf8).unwrap();
        let s = d.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(
            s.iter().flatten().collect::<Vec<_>>(),
            vec!["blue", "red", "red", "green"]
        );
        assert!(v.take(&[3]).is_err());
        // corrupt offsets
        assert!(decode_chunk(&var_enc(32), &[&buf[..10]], 3).is_err());
        assert!(decode_block(&var_enc(32), &blk[..20], 3).is_err());
    }

    #[test]
    fn flat_bool_and_append() {
        let mut v = decode_chunk(&flat_enc(1), &[&[0b101]], 3).unwrap();
        v.append(decode_chunk(&flat_enc(1), &[&[0b10]], 2).unwrap()).unwrap();
        let a = v.into_array(&DataType::Boolean).unwrap();
        let b = a.as_any().downcast_ref::<BooleanArray>().unwrap();
        assert_eq!(
            b.iter().flatten().collect::<Vec<_>>(),
            vec![true, false, true, false, true]
        );
        assert!(decode_chunk(&flat_enc(32), &[&[1, 2, 3]], 1).is_err());
    }

    #[test]
    fn a_run_of_indices_takes_what_one_by_one_takes() {
        let strs = Values::Var {
            offsets: vec![0, 1, 1, 4, 6, 10],
            data: b"abbbccdddd".to_vec(),
        };
        let ints = Values::Fixed {
            bits: 16,
            data: (0u16..5).flat_map(|i| (i * 300).to_le_bytes()).collect(),
            len: 5,
        };
        let texts = |v: Values| {
            let a = v.into_array(&DataType::Utf8).unwrap();
            let s = a.as_any().downcast_ref::<StringArray>().unwrap();
            s.iter().flatten().map(str::to_owned).collect::<Vec<_>>()
        };
        let words = |v: Values| match v {
            Values::Fixed { bits: 16, data, len } => {
                assert_eq!(data.len(), 2 * len);
                data.chunks(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect::<Vec<_>>()
            }
            other => panic!("{other:?}"),
        };
        // A run (the fast path), the same rows not as a run, and runs at either end.
        assert_eq!(texts(strs.take(&[1, 2, 3]).unwrap()), ["", "bbb", "cc"]);
        assert_eq!(texts(strs.take(&[3, 2, 1]).unwrap()), ["cc", "bbb", ""]);
        assert_eq!(texts(strs.take(&[0]).unwrap()), ["a"]);
        assert_eq!(texts(strs.take(&[3, 4]).unwrap()), ["cc", "dddd"]);
        assert_eq!(words(ints.take(&[2, 3, 4]).unwrap()), [600, 900, 1200]);
        assert_eq!(words(ints.take(&[0, 1]).unwrap()), [0, 300]);
        assert_eq!(words(ints.take(&[1, 1, 2]).unwrap()), [300, 300, 600]);
        assert_eq!(ints.take(&[]).unwrap().len(), 0);
        assert!(ints.take(&[4, 5]).is_err());
        assert!(strs.take(&[4, 5]).is_err());
        // Offsets going backwards inside a run are corrupt, as they are value by value.
        let bad = Values::Var {
            offsets: vec![0, 3, 2, 4],
            data: b"abcd".to_vec(),
        };
        assert!(bad.take(&[0, 1, 2]).is_err());
    }
}
