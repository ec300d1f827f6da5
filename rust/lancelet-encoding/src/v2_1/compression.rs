//! General-purpose buffer compression (`General` / `BufferCompression`), both directions.
//!
//! * LZ4: a little-endian `u32` uncompressed size, then one raw LZ4 block (no frame).
//! * ZSTD: a little-endian `u64` uncompressed size, then one zstd frame.
//!
//! [`compress`] writes these framings, [`decompress`] reads them back, refusing declared
//! sizes past [`MAX_DECOMPRESSED`].

use std::io::Read;

use lancelet_proto::pb21::CompressionScheme;

use crate::{corrupt, Error, Result};

/// The largest expansion an LZ4 block can achieve, used to reject absurd declared sizes.
const LZ4_MAX_RATIO: usize = 256;

/// Largest decompressed buffer accepted (one mini-block chunk buffer or one full-zip value).
pub const MAX_DECOMPRESSED: u64 = 256 << 20;

/// Decompresses one buffer compressed with `scheme` (a `CompressionScheme` value).
pub fn decompress(scheme: i32, buf: &[u8]) -> Result<Vec<u8>> {
    match CompressionScheme::try_from(scheme) {
        Ok(CompressionScheme::CompressionAlgorithmLz4) => lz4(buf),
        Ok(CompressionScheme::CompressionAlgorithmZstd) => zstd(buf),
        Ok(CompressionScheme::CompressionAlgorithmUnspecified) => Ok(buf.to_vec()),
        Err(_) => Err(Error::Unsupported(format!("buffer compression scheme {scheme}"))),
    }
}

/// Default zstd level.
const ZSTD_DEFAULT_LEVEL: i32 = 3;

/// Compresses one buffer with `scheme`: LZ4 = `u32` size + raw block, zstd = `u64` size +
/// frame.
pub fn compress(scheme: CompressionScheme, level: Option<i32>, buf: &[u8]) -> Result<Vec<u8>> {
    match scheme {
        CompressionScheme::CompressionAlgorithmLz4 => {
            if u32::try_from(buf.len()).is_err() {
                return Err(Error::InvalidInput("an LZ4 buffer over 4 GiB".into()));
            }
            Ok(lz4_flex::block::compress_prepend_size(buf))
        }
        CompressionScheme::CompressionAlgorithmZstd => {
            let mut out = (buf.len() as u64).to_le_bytes().to_vec();
            let frame = zstd::bulk::compress(buf, level.unwrap_or(ZSTD_DEFAULT_LEVEL))
                .map_err(|e| Error::InvalidInput(format!("zstd compression failed: {e}")))?;
            out.extend(frame);
            Ok(out)
        }
        CompressionScheme::CompressionAlgorithmUnspecified => Ok(buf.to_vec()),
    }
}

fn lz4(buf: &[u8]) -> Result<Vec<u8>> {
    let (size, body) = match buf.split_first_chunk::<4>() {
        Some((s, b)) => (u32::from_le_bytes(*s) as usize, b),
        None => return Err(corrupt!("LZ4 buffer of {} bytes has no size prefix", buf.len())),
    };
    if size > body.len().saturating_mul(LZ4_MAX_RATIO).saturating_add(64) || size as u64 > MAX_DECOMPRESSED {
        return Err(corrupt!(
            "LZ4 buffer of {} bytes claims {size} uncompressed bytes",
            body.len()
        ));
    }
    let out = lz4_flex::block::decompress(body, size).map_err(|e| corrupt!("LZ4 block does not decode: {e}"))?;
    if out.len() != size {
        return Err(corrupt!("LZ4 block decoded to {} bytes, expected {size}", out.len()));
    }
    Ok(out)
}

fn zstd(buf: &[u8]) -> Result<Vec<u8>> {
    let (size, body) = match buf.split_first_chunk::<8>() {
        Some((s, b)) => (u64::from_le_bytes(*s), b),
        None => return Err(corrupt!("zstd buffer of {} bytes has no size prefix", buf.len())),
    };
    if size > MAX_DECOMPRESSED {
        return Err(corrupt!("zstd buffer claims {size} uncompressed bytes"));
    }
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(1 << 20));
    let decoder = zstd::stream::read::Decoder::with_buffer(body)
        .map_err(|e| corrupt!("zstd frame does not open: {e}"))?
        .single_frame();
    decoder
        .take(size.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| corrupt!("zstd frame does not decode: {e}"))?;
    if out.len() as u64 != size {
        return Err(corrupt!("zstd frame decoded to {} bytes, expected {size}", out.len()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lz4_round_trip() {
        let data: Vec<u8> = (0..5000u32).flat_map(|i| (i % 17).to_le_bytes()).collect();
        let buf = lz4_flex::block::compress_prepend_size(&data);
        assert_eq!(decompress(1, &buf).unwrap(), data);
        assert!(decompress(1, &buf[..buf.len() / 2]).is_err());
        assert!(decompress(1, &[0xff, 0xff, 0xff, 0x7f, 0]).is_err());
        assert!(decompress(1, &[1]).is_err());
    }

    #[test]
    fn zstd_round_trip() {
        let data: Vec<u8> = (0..5000u32).flat_map(|i| (i % 17).to_le_bytes()).collect();
        let mut buf = (data.len() as u64).to_le_bytes().to_vec();
        buf.extend(zstd::bulk::compress(&data, 3).unwrap());
        assert_eq!(decompress(2, &buf).unwrap(), data);
        assert!(decompress(2, &buf[..buf.len() - 3]).is_err());
        let mut lie = buf.clone();
        lie[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decompress(2, &lie).is_err());
        assert!(decompress(7, &buf).is_err());
    }

    #[test]
    fn compress_writes_what_decompress_reads() {
        let data: Vec<u8> = (0..5000u32).flat_map(|i| (i % 17).to_le_bytes()).collect();
        for scheme in [
            CompressionScheme::CompressionAlgorithmLz4,
            CompressionScheme::CompressionAlgorithmZstd,
            CompressionScheme::CompressionAlgorithmUnspecified,
        ] {
            let buf = compress(scheme, None, &data).unwrap();
            assert_eq!(decompress(scheme as i32, &buf).unwrap(), data, "{scheme:?}");
        }
        let zstd = compress(CompressionScheme::CompressionAlgorithmZstd, Some(9), &data).unwrap();
        assert_eq!(&zstd[..8], &(data.len() as u64).to_le_bytes());
    }
}
