//! FSST decompression with Lance's serialized symbol table.
//!
//! Table layout: a little-endian `u64` header (byte 0 = number of symbols, byte 3 bit 0 =
//! compression enabled, high 32 bits = `"FSST"` as `0x46535354`), then one 8-byte slot
//! per symbol (zero padded), then one length byte per symbol. Compressed bytes are codes:
//! code 255 escapes the following literal byte, any other code `c` stands for symbol `c`.

use crate::{corrupt, Result};

const MAGIC: u64 = 0x4653_5354;
const ESCAPE: u8 = 255;

/// A parsed symbol table.
#[derive(Debug, Clone)]
pub struct SymbolTable {
    symbols: Vec<[u8; 8]>,
    lens: Vec<u8>,
    enabled: bool,
}

impl SymbolTable {
    /// Parses a serialized table.
    pub fn parse(table: &[u8]) -> Result<Self> {
        let header: [u8; 8] = table
            .get(..8)
            .and_then(|h| h.try_into().ok())
            .ok_or_else(|| corrupt!("FSST symbol table of {} bytes has no header", table.len()))?;
        let header = u64::from_le_bytes(header);
        if header >> 32 != MAGIC {
            return Err(corrupt!("FSST symbol table header {header:#x} lacks the FSST magic"));
        }
        let n = (header & 0xFF) as usize;
        let enabled = (header >> 24) & 1 == 1;
        let syms = table
            .get(8..8 + 8 * n)
            .ok_or_else(|| corrupt!("FSST symbol table truncated ({n} symbols)"))?;
        let lens = table
            .get(8 + 8 * n..8 + 9 * n)
            .ok_or_else(|| corrupt!("FSST symbol lengths truncated ({n} symbols)"))?
            .to_vec();
        if let Some(bad) = lens.iter().find(|l| **l > 8) {
            return Err(corrupt!("FSST symbol length {bad} exceeds 8"));
        }
        let symbols = syms
            .chunks_exact(8)
            .map(|c| {
                let mut s = [0u8; 8];
                s.copy_from_slice(c);
                s
            })
            .collect();
        Ok(Self { symbols, lens, enabled })
    }

    /// Appends the decompression of `input` to `out`.
    pub fn decompress_into(&self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        if !self.enabled {
            out.extend_from_slice(input);
            return Ok(());
        }
        let mut i = 0;
        while i < input.len() {
            let c = input[i];
            i += 1;
            if c == ESCAPE {
                let lit = *input
                    .get(i)
                    .ok_or_else(|| corrupt!("FSST escape at the end of a value"))?;
                out.push(lit);
                i += 1;
            } else {
                let c = c as usize;
                let (sym, len) = match (self.symbols.get(c), self.lens.get(c)) {
                    (Some(s), Some(l)) => (s, *l as usize),
                    _ => {
                        return Err(corrupt!(
                            "FSST code {c} but the table has {} symbols",
                            self.symbols.len()
                        ))
                    }
                };
                out.extend_from_slice(&sym[..len]);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(symbols: &[&[u8]]) -> Vec<u8> {
        let mut t = Vec::new();
        let header = (MAGIC << 32) | (1 << 24) | symbols.len() as u64;
        t.extend_from_slice(&header.to_le_bytes());
        for s in symbols {
            let mut slot = [0u8; 8];
            slot[..s.len()].copy_from_slice(s);
            t.extend_from_slice(&slot);
        }
        t.extend(symbols.iter().map(|s| s.len() as u8));
        t.resize(2312, 0);
        t
    }

    #[test]
    fn decodes_codes_and_escapes() {
        let t = SymbolTable::parse(&table(&[b"row ", b"0 alp", b"ha"])).unwrap();
        let mut out = Vec::new();
        t.decompress_into(&[0, 1, 2, 255, b'!'], &mut out).unwrap();
        assert_eq!(out, b"row 0 alpha!");
        assert!(t.decompress_into(&[3], &mut out).is_err());
        assert!(t.decompress_into(&[255], &mut out).is_err());
    }

    #[test]
    fn bad_tables_are_errors() {
        assert!(SymbolTable::parse(&[1, 2, 3]).is_err());
        assert!(SymbolTable::parse(&[0u8; 16]).is_err());
        let mut t = table(&[b"abc"]);
        t.truncate(12);
        assert!(SymbolTable::parse(&t).is_err());
        let mut t = table(&[b"abc"]);
        t[16] = 9;
        assert!(SymbolTable::parse(&t).is_err());
    }
}
