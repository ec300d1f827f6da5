//! Encodings wrapped around another one: `General` (zstd or LZ4 over each chunk buffer)
//! and `ByteStreamSplit` (byte planes of fixed-width values).

use crate::v2_1::compression::compress;

use super::*;

/// Byte-stream-splits each chunk buffer of `width`-byte values (plane `k` = byte `k` of
/// every value).
pub(super) fn byte_stream_split(mut m: MiniBlockValues, width: usize) -> MiniBlockValues {
    for c in &mut m.chunks {
        for buf in &mut c.buffers {
            let n = buf.len() / width;
            let mut out = vec![0u8; n * width];
            for (i, v) in buf.chunks_exact(width).enumerate() {
                for (k, byte) in v.iter().enumerate() {
                    out[k * n + i] = *byte;
                }
            }
            *buf = out;
        }
    }
    m.encoding = node(C::ByteStreamSplit(Box::new(pb21::ByteStreamSplit {
        values: Some(Box::new(m.encoding)),
    })));
    m
}

/// Wraps every chunk buffer in a general-purpose compression.
pub(super) fn general(
    mut m: MiniBlockValues,
    scheme: CompressionScheme,
    level: Option<i32>,
) -> Result<MiniBlockValues> {
    for c in &mut m.chunks {
        for buf in &mut c.buffers {
            *buf = compress(scheme, level, buf)?;
        }
    }
    m.encoding = general_enc(scheme, level, m.encoding);
    Ok(m)
}
