//! FSST string compression with Lance's serialized symbol table: [`SymbolTable`] parses
//! a table and decompresses, [`Compressor`] trains a table on sample values and
//! compresses.
//!
//! Table layout: a little-endian `u64` header (byte 0 = number of symbols, byte 3 bit 0 =
//! compression enabled, high 32 bits = `"FSST"` as `0x46535354`), then one 8-byte slot
//! per symbol (zero padded), then one length byte per symbol. Compressed bytes are codes:
//! code 255 escapes the following literal byte, any other code `c` stands for symbol `c`.

use std::cell::RefCell;

use super::hashing::{fast_map, FastMap};
use crate::{corrupt, Result};

const MAGIC: u64 = 0x4653_5354;
const ESCAPE: u8 = 255;

/// Size of a serialized table as Lance writes it (header, 256 slots, 256 lengths).
pub const TABLE_BYTES: usize = 8 + 256 * 8 + 256;

/// Most symbols one table holds (code 255 is the escape).
pub const MAX_SYMBOLS: usize = 255;

/// A parsed symbol table.
#[derive(Debug, Clone)]
pub struct SymbolTable {
    /// Symbol `c` as a little-endian word (zero padded), for all 256 codes.
    symbols: Box<[u64; 256]>,
    /// Length of symbol `c`; 0 for the escape and for codes past the table.
    lens: Box<[u8; 256]>,
    /// 1 for codes that are neither a symbol nor the escape.
    invalid: Box<[u8; 256]>,
    /// Number of symbols.
    n: usize,
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
        let lens_in = table
            .get(8 + 8 * n..8 + 9 * n)
            .ok_or_else(|| corrupt!("FSST symbol lengths truncated ({n} symbols)"))?;
        if let Some(bad) = lens_in.iter().find(|l| **l > 8) {
            return Err(corrupt!("FSST symbol length {bad} exceeds 8"));
        }
        let mut symbols = Box::new([0u64; 256]);
        let mut lens = Box::new([0u8; 256]);
        for (c, (sym, len)) in syms.chunks_exact(8).zip(lens_in).enumerate() {
            let mut word = [0u8; 8];
            word[..*len as usize].copy_from_slice(&sym[..*len as usize]);
            symbols[c] = u64::from_le_bytes(word);
            lens[c] = *len;
        }
        lens[ESCAPE as usize] = 0;
        let mut invalid = Box::new([0u8; 256]);
        for (c, bad) in invalid.iter_mut().enumerate().skip(n) {
            *bad = u8::from(c != usize::from(ESCAPE));
        }
        Ok(Self {
            symbols,
            lens,
            invalid,
            n,
            enabled,
        })
    }

    /// Runs `f` on the parsed form of `table`. The last table parsed on this thread is
    /// kept, so the chunks of one page (and the values of a full-zip page), which share
    /// one table, parse it once: a hit costs one comparison of the serialized bytes.
    pub fn with_parsed<R>(table: &[u8], f: impl FnOnce(&SymbolTable) -> Result<R>) -> Result<R> {
        thread_local! {
            static LAST: RefCell<Option<(Vec<u8>, SymbolTable)>> = const { RefCell::new(None) };
        }
        LAST.with(|last| {
            // A nested call (none today) must not find the cell borrowed: it parses afresh.
            let Ok(mut last) = last.try_borrow_mut() else {
                return f(&Self::parse(table)?);
            };
            if let Some((bytes, parsed)) = last.as_ref() {
                if bytes.as_slice() == table {
                    return f(parsed);
                }
            }
            let parsed = Self::parse(table)?;
            let (_, kept) = last.insert((table.to_vec(), parsed));
            f(kept)
        })
    }

    /// Appends the decompression of `input` to `out`.
    pub fn decompress_into(&self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        if !self.enabled {
            out.extend_from_slice(input);
            return Ok(());
        }
        self.decode_append(input, out)
    }

    /// Decompresses the values `offsets` delimit in `data` (`offsets.len() - 1` values),
    /// returning the new offsets (starting at 0) and bytes.
    pub fn decompress_values(&self, offsets: &[u64], data: &[u8]) -> Result<(Vec<u64>, Vec<u8>)> {
        let mut out_off = Vec::with_capacity(offsets.len());
        out_off.push(0u64);
        // English-like text expands about 3x; `decode_append` grows the rest.
        let span = match (offsets.first(), offsets.last()) {
            (Some(a), Some(b)) => usize::try_from(b.saturating_sub(*a)).unwrap_or(0).min(data.len()),
            _ => 0,
        };
        let mut out = Vec::with_capacity(span.saturating_mul(3).saturating_add(WINDOW));
        for w in offsets.windows(2) {
            let value = match (usize::try_from(w[0]), usize::try_from(w[1])) {
                (Ok(s), Ok(e)) if s <= e && e <= data.len() => &data[s..e],
                _ => {
                    return Err(corrupt!(
                        "FSST value offsets {}..{} are out of order or range",
                        w[0],
                        w[1]
                    ))
                }
            };
            if self.enabled {
                self.decode_append(value, &mut out)?;
            } else {
                out.extend_from_slice(value);
            }
            out_off.push(out.len() as u64);
        }
        Ok((out_off, out))
    }

    /// Appends the decoding of `input` to `out`.
    ///
    /// Every symbol is stored as a whole 8-byte word into `out`'s spare capacity and the
    /// cursor then advances by the symbol's length, so the hot loop has neither per-length
    /// branches nor bounds checks: eight codes are loaded as one word, and only a word
    /// holding an escape leaves the fast path. Codes past the table are collected in a
    /// flag and reported once per value.
    fn decode_append(&self, input: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let (syms, lens, invalid) = (&*self.symbols, &*self.lens, &*self.invalid);
        out.reserve(max_output(input.len()));
        let base = out.len();
        let dst = out.spare_capacity_mut().as_mut_ptr().cast::<u8>();
        let mut at = 0usize;
        let mut bad = 0u8;
        // Safety of every write below: each input byte emits at most one 8-byte store at
        // `at`, and `at` grows by at most 8 per input byte, so all stores stay inside the
        // `max_output(input.len())` bytes reserved above.
        let put = |at: usize, word: u64| unsafe { dst.add(at).cast::<u64>().write_unaligned(word) };
        let mut i = 0usize;
        while let Some(chunk) = input.get(i..i + 8) {
            let mut w = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            // Bytes equal to 0xFF (the escape) are zero bytes of !w.
            let x = !w;
            let esc = x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080;
            let take = if esc == 0 {
                8
            } else {
                (esc.trailing_zeros() / 8) as usize
            };
            for _ in 0..take {
                let c = usize::from(w as u8);
                put(at, syms[c]);
                at += usize::from(lens[c]);
                bad |= invalid[c];
                w >>= 8;
            }
            i += take;
            if take < 8 {
                // `input[i]` is an escape; its literal may lie past this word.
                let lit = *input
                    .get(i + 1)
                    .ok_or_else(|| corrupt!("FSST escape at the end of a value"))?;
                put(at, u64::from(lit));
                at += 1;
                i += 2;
            }
        }
        while let Some(&c) = input.get(i) {
            if c == ESCAPE {
                let lit = *input
                    .get(i + 1)
                    .ok_or_else(|| corrupt!("FSST escape at the end of a value"))?;
                put(at, u64::from(lit));
                at += 1;
                i += 2;
            } else {
                let c = usize::from(c);
                put(at, syms[c]);
                at += usize::from(lens[c]);
                bad |= invalid[c];
                i += 1;
            }
        }
        if bad != 0 {
            let c = input
                .iter()
                .find(|c| self.invalid[usize::from(**c)] != 0)
                .copied()
                .unwrap_or(0);
            return Err(corrupt!("FSST code {c} but the table has {} symbols", self.n));
        }
        // Safety: every byte of `base..base + at` was written by a store above (each
        // store covers the bytes its symbol advances over), and `at` is within the
        // reserved capacity.
        unsafe { out.set_len(base + at) };
        Ok(())
    }
}

/// Slack past the last byte [`SymbolTable::decode_append`] keeps for its whole-word stores.
const WINDOW: usize = 64;

/// Output room decoding `n` input bytes needs: 8 per code, plus the slack of the
/// whole-word stores.
fn max_output(n: usize) -> usize {
    n.saturating_mul(8).saturating_add(WINDOW)
}

/// An FSST compressor: a symbol table trained on a sample plus the lookup structures
/// that find, at each input position, the longest symbol the greedy parse takes.
///
/// Symbols of three or more bytes are found through a hash of their first three bytes
/// (one symbol per slot; a colliding symbol is left out of the table), two-byte symbols
/// through a table indexed by the next two bytes, single bytes by a byte table. Bytes
/// no symbol covers are escaped.
#[derive(Debug, Clone)]
pub struct Compressor {
    syms: Vec<Sym>,
    /// By hash of the first three bytes: the symbol there (see [`Long`]).
    long: Box<[Long; LONG_SLOTS]>,
    /// By the next two bytes (little endian): the step of the best 1- or 2-byte symbol,
    /// or of escaping the first byte (see [`step_info`]).
    short: Box<[u32; 1 << 16]>,
    /// By byte: code and length (1) of its single-byte symbol, length 0 if none.
    byte: [(u8, u8); 256],
}

/// A slot of the long-symbol table: input words `w` with `w & mask == word` start with
/// the symbol; `info` is its step (see [`step_info`]). An empty slot has mask 0 and a
/// word no masked input equals.
#[derive(Debug, Clone, Copy)]
struct Long {
    word: u64,
    mask: u64,
    info: u32,
}

const EMPTY_LONG: Long = Long {
    word: u64::MAX,
    mask: 0,
    info: 0,
};

/// One greedy step packed in a word: the (up to) two output bytes in bits 0..16, input
/// bytes consumed in bits 16..20, output bytes produced in bits 20..22.
#[inline(always)]
const fn step_info(out: u16, used: u32, produced: u32) -> u32 {
    out as u32 | (used << 16) | (produced << 20)
}

/// A symbol: up to 8 bytes held in a little-endian word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Sym {
    word: u64,
    len: u8,
}

impl Sym {
    fn byte(b: u8) -> Self {
        Self {
            word: u64::from(b),
            len: 1,
        }
    }

    /// `self` followed by `other`, if the result fits in 8 bytes.
    fn concat(self, other: Sym) -> Option<Sym> {
        let len = self.len + other.len;
        (len <= 8).then(|| Sym {
            word: self.word | (other.word << (8 * u32::from(self.len))),
            len,
        })
    }
}

const LONG_SLOTS: usize = 1 << 11;
/// Training rounds over the sample.
const ROUNDS: usize = 5;
/// Bytes of input the table is trained on.
const SAMPLE_BYTES: usize = 1 << 14;

#[inline(always)]
fn long_slot(word: u64) -> usize {
    let k = (word & 0xFF_FFFF).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (k >> (64 - 11)) as usize
}

/// Up to 8 bytes of `s` from `i` as a little-endian word (zero beyond the end).
#[inline(always)]
fn word_at(s: &[u8], i: usize) -> u64 {
    match s.get(i..i + 8) {
        Some(w) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            u64::from_le_bytes(a)
        }
        None => {
            let mut a = [0u8; 8];
            let rest = &s[i.min(s.len())..];
            a[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(a)
        }
    }
}

#[inline(always)]
fn mask(len: u8) -> u64 {
    if len >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * u32::from(len))) - 1
    }
}

/// What the greedy parse takes at one position.
enum Step {
    /// Symbol `code` of `len` bytes.
    Code(u8, usize),
    /// The byte is escaped.
    Escape,
}

impl Compressor {
    /// Builds the lookup structures from candidates in order of preference, keeping up to
    /// [`MAX_SYMBOLS`] of them: a long symbol whose hash slot is taken is skipped and the
    /// next candidate gets its code, so the table still fills up.
    fn build(syms: Vec<Sym>) -> Self {
        let mut long = Box::new([EMPTY_LONG; LONG_SLOTS]);
        let mut kept = Vec::with_capacity(MAX_SYMBOLS);
        for s in syms {
            if kept.len() == MAX_SYMBOLS {
                break;
            }
            if s.len >= 3 {
                let slot = &mut long[long_slot(s.word)];
                if slot.mask != 0 {
                    continue;
                }
                *slot = Long {
                    word: s.word,
                    mask: mask(s.len),
                    info: step_info(kept.len() as u16, u32::from(s.len), 1),
                };
            }
            kept.push(s);
        }
        let mut byte = [(0u8, 0u8); 256];
        for (c, s) in kept.iter().enumerate() {
            if s.len == 1 {
                byte[(s.word & 0xFF) as usize] = (c as u8, 1);
            }
        }
        // Every two-byte key starts as its first byte's step (its symbol, or its escape);
        // two-byte symbols then take their own keys.
        let first: Vec<u32> = byte
            .iter()
            .enumerate()
            .map(|(b, &(c, len))| match len {
                0 => step_info(u16::from(ESCAPE) | ((b as u16) << 8), 1, 2),
                _ => step_info(u16::from(c), 1, 1),
            })
            .collect();
        let mut short = Box::new([0u32; 1 << 16]);
        for row in short.chunks_exact_mut(256) {
            row.copy_from_slice(&first);
        }
        for (c, s) in kept.iter().enumerate() {
            if s.len == 2 {
                short[(s.word & 0xFFFF) as usize] = step_info(c as u16, 2, 1);
            }
        }
        Self {
            syms: kept,
            long,
            short,
            byte,
        }
    }

    /// The greedy step at `i` (`i < s.len()`).
    #[inline(always)]
    fn step(&self, s: &[u8], i: usize) -> Step {
        self.step_word(word_at(s, i), s.len() - i)
    }

    /// The greedy step on `w`, the next `rest` (≥ 1) input bytes zero padded to a word.
    #[inline(always)]
    fn step_word(&self, w: u64, rest: usize) -> Step {
        let l = self.long[long_slot(w)];
        let len = ((l.info >> 16) & 15) as usize;
        if l.mask != 0 && len <= rest && w & l.mask == l.word {
            return Step::Code(l.info as u8, len);
        }
        let info = self.short[(w & 0xFFFF) as usize];
        match ((info >> 16) & 15, info >> 20) {
            (_, 2) => Step::Escape,
            (2, _) if rest >= 2 => Step::Code(info as u8, 2),
            // A two-byte hit at the last byte: fall back to that byte's own symbol.
            (2, _) => match self.byte[(w & 0xFF) as usize] {
                (c, 1) => Step::Code(c, 1),
                _ => Step::Escape,
            },
            _ => Step::Code(info as u8, 1),
        }
    }

    /// Trains a table on (a sample of) `values`.
    pub fn train<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Self {
        let sample = sample(values);
        let mut table = Self::build(Vec::new());
        // Counts over 512 pseudo-codes: 0..256 = single bytes, 256 + c = symbol c.
        let mut single = vec![0u32; 512];
        let mut pair = vec![0u32; 512 * 512];
        for round in 0..ROUNDS {
            single.fill(0);
            pair.fill(0);
            for s in &sample {
                let mut prev: Option<usize> = None;
                let mut i = 0;
                while i < s.len() {
                    let (code, len) = match table.step(s, i) {
                        Step::Code(c, l) => (256 + usize::from(c), l),
                        Step::Escape => (usize::from(s[i]), 1),
                    };
                    single[code] += 1;
                    if code >= 256 && len > 1 {
                        // The first byte alone is a candidate too.
                        single[usize::from(s[i])] += 1;
                    }
                    if let Some(p) = prev {
                        pair[p * 512 + code] += 1;
                        if code >= 256 && len > 1 {
                            // The previous symbol extended by this one's first byte: the
                            // only way odd-length symbols arise from even-length ones.
                            pair[p * 512 + usize::from(s[i])] += 1;
                        }
                    }
                    prev = Some(code);
                    i += len;
                }
            }
            let sym_of = |code: usize| -> Sym {
                if code < 256 {
                    Sym::byte(code as u8)
                } else {
                    table.syms[code - 256]
                }
            };
            let mut gains: FastMap<Sym, u64> = fast_map(4096);
            let live: Vec<usize> = (0..256 + table.syms.len()).filter(|c| single[*c] > 0).collect();
            for &a in &live {
                let sa = sym_of(a);
                // Single bytes only save the escape byte: weigh them low once longer
                // symbols exist, so they fill the table last.
                let weight = if sa.len == 1 && round + 1 < ROUNDS {
                    1
                } else {
                    u64::from(sa.len)
                };
                *gains.entry(sa).or_default() += u64::from(single[a]) * weight;
                if round + 1 == ROUNDS {
                    continue;
                }
                for &b in &live {
                    let n = pair[a * 512 + b];
                    if n == 0 {
                        continue;
                    }
                    if let Some(ab) = sa.concat(sym_of(b)) {
                        *gains.entry(ab).or_default() += u64::from(n) * u64::from(ab.len);
                    }
                }
            }
            let mut ranked: Vec<(Sym, u64)> = gains.into_iter().collect();
            let order = |x: &(Sym, u64), y: &(Sym, u64)| {
                y.1.cmp(&x.1).then(x.0.word.cmp(&y.0.word)).then(x.0.len.cmp(&y.0.len))
            };
            // Candidates past the table size stand in for long symbols whose hash slot
            // an earlier one takes. (The order is total, so selecting the best before
            // sorting them keeps the same list.)
            let keep = 8 * MAX_SYMBOLS;
            if ranked.len() > keep {
                ranked.select_nth_unstable_by(keep, order);
                ranked.truncate(keep);
            }
            ranked.sort_unstable_by(order);
            table = Self::build(ranked.into_iter().map(|(s, _)| s).collect());
        }
        table
    }

    /// Number of symbols in the table.
    pub fn num_symbols(&self) -> usize {
        self.syms.len()
    }

    /// The table serialized as Lance stores it ([`TABLE_BYTES`] bytes, compression on).
    pub fn symbol_table(&self) -> Vec<u8> {
        let n = self.syms.len() as u64;
        let header = (MAGIC << 32) | (1 << 24) | n;
        let mut t = Vec::with_capacity(TABLE_BYTES);
        t.extend_from_slice(&header.to_le_bytes());
        t.extend(self.syms.iter().flat_map(|s| s.word.to_le_bytes()));
        t.extend(self.syms.iter().map(|s| s.len));
        t.resize(TABLE_BYTES, 0);
        t
    }

    /// Appends the compression of `input` to `out` (at most `2 * input.len()` bytes).
    ///
    /// While eight input bytes remain, a step loads them as one word, tries the long
    /// symbol hashed from its first three bytes, then the two-byte table (which also knows
    /// the single bytes and the escapes), and stores its output as one two-byte word into
    /// `out`'s spare capacity; the last bytes go through the checked `step`.
    pub fn compress_into(&self, input: &[u8], out: &mut Vec<u8>) {
        out.reserve(input.len().saturating_mul(2).saturating_add(2));
        let base = out.len();
        let dst = out.spare_capacity_mut().as_mut_ptr().cast::<u8>();
        let mut at = 0usize;
        let mut i = 0usize;
        let src = input.as_ptr();
        while i + 8 <= input.len() {
            // Safety: `i + 8 <= input.len()`, so the eight bytes read are inside `input`.
            let w = u64::from_le(unsafe { src.add(i).cast::<u64>().read_unaligned() });
            let l = self.long[long_slot(w)];
            // The long symbol when it matches, else the two-byte table's step (which
            // knows the single bytes and the escapes).
            let info = if w & l.mask == l.word {
                l.info
            } else {
                self.short[(w & 0xFFFF) as usize]
            };
            // Safety: each input byte yields at most two output bytes and a store writes
            // two bytes at `at`, so with `2 * len + 2` reserved every store is in bounds.
            unsafe { dst.add(at).cast::<u16>().write_unaligned((info as u16).to_le()) };
            at += (info >> 20) as usize;
            i += ((info >> 16) & 15) as usize;
        }
        // Safety: `at` bytes from `base` were written by the stores above.
        unsafe { out.set_len(base + at) };
        // The last (< 8) bytes.
        self.tail(input, i, out);
    }

    /// Compresses values into Lance's variable-width shape: offsets (`n + 1`, from 0)
    /// into the concatenated compressed bytes.
    ///
    /// Four quarters of the values are compressed by four interleaved parses: each greedy
    /// step waits on the previous one (its table lookups need the position it leaves, and
    /// the two-byte table lives in L2), so independent chains keep the processor busy
    /// while the others wait. The output is the same as compressing the values one by one.
    pub fn compress_values<'a>(&self, values: impl IntoIterator<Item = &'a [u8]>) -> (Vec<u64>, Vec<u8>) {
        const LANES: usize = 4;
        let values: Vec<&[u8]> = values.into_iter().collect();
        let per = values.len().div_ceil(LANES).max(1);
        let mut parts = values.chunks(per);
        let mut lanes: [Lane<'_>; LANES] = std::array::from_fn(|_| Lane::new(parts.next().unwrap_or(&[])));
        let mut ok: [bool; LANES] = std::array::from_fn(|k| self.advance(&mut lanes[k]));
        while ok.iter().all(|&o| o) {
            while lanes.iter().all(|l| l.i + 8 <= l.cur.len()) {
                for lane in lanes.iter_mut() {
                    self.fast_step(lane);
                }
            }
            for (lane, o) in lanes.iter_mut().zip(ok.iter_mut()) {
                if lane.i + 8 > lane.cur.len() {
                    *o = self.advance(lane);
                }
            }
        }
        for (lane, mut o) in lanes.iter_mut().zip(ok) {
            while o {
                while lane.i + 8 <= lane.cur.len() {
                    self.fast_step(lane);
                }
                o = self.advance(lane);
            }
        }
        let total: usize = lanes.iter().map(|l| l.out.len()).sum();
        let mut offsets = Vec::with_capacity(values.len() + 1);
        let mut out = Vec::with_capacity(total);
        offsets.push(0);
        for lane in &lanes {
            let base = out.len() as u64;
            offsets.extend(lane.offsets.iter().skip(1).map(|o| o + base));
            out.extend_from_slice(&lane.out);
        }
        (offsets, out)
    }

    /// One greedy step of `lane` while eight bytes of its value remain (see
    /// [`Self::compress_into`]).
    #[inline(always)]
    fn fast_step(&self, lane: &mut Lane<'_>) {
        // Safety: the caller checked `lane.i + 8 <= lane.cur.len()`.
        let w = u64::from_le(unsafe { lane.cur.as_ptr().add(lane.i).cast::<u64>().read_unaligned() });
        let l = self.long[long_slot(w)];
        let info = if w & l.mask == l.word {
            l.info
        } else {
            self.short[(w & 0xFFFF) as usize]
        };
        let at = lane.out.len();
        // Safety: `advance` reserved two output bytes per input byte of the value plus two,
        // and every step consumes at least one byte, so the two-byte store is in bounds;
        // the bytes up to the new length are written.
        unsafe {
            lane.out
                .as_mut_ptr()
                .add(at)
                .cast::<u16>()
                .write_unaligned((info as u16).to_le());
            lane.out.set_len(at + (info >> 20) as usize);
        }
        lane.i += ((info >> 16) & 15) as usize;
    }

    /// Finishes `lane`'s current value (its last bytes, step by step) and moves to the
    /// next value with at least eight bytes, compressing shorter ones on the way; false
    /// when the lane has no values left.
    fn advance(&self, lane: &mut Lane<'_>) -> bool {
        if lane.loaded {
            self.tail(lane.cur, lane.i, &mut lane.out);
            lane.offsets.push(lane.out.len() as u64);
            lane.loaded = false;
        }
        while let Some(v) = lane.values.get(lane.next) {
            lane.next += 1;
            lane.out.reserve(v.len().saturating_mul(2).saturating_add(2));
            if v.len() >= 8 {
                lane.cur = v;
                lane.i = 0;
                lane.loaded = true;
                return true;
            }
            self.tail(v, 0, &mut lane.out);
            lane.offsets.push(lane.out.len() as u64);
        }
        false
    }

    /// Appends the compression of `input[i..]` (the checked steps of the last bytes).
    fn tail(&self, input: &[u8], mut i: usize, out: &mut Vec<u8>) {
        let last = input.len().checked_sub(8).and_then(|s| input.get(s..)).map(|w| {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            u64::from_le_bytes(a)
        });
        while i < input.len() {
            let rest = input.len() - i;
            let w = match last {
                Some(last) => last >> (8 * (8 - rest.min(8))),
                None => word_at(input, i),
            };
            match self.step_word(w, rest) {
                Step::Code(c, len) => {
                    out.push(c);
                    i += len;
                }
                Step::Escape => {
                    out.extend_from_slice(&[ESCAPE, input[i]]);
                    i += 1;
                }
            }
        }
    }
}

/// One of the interleaved parses of [`Compressor::compress_values`].
struct Lane<'a> {
    values: &'a [&'a [u8]],
    /// Index of the next value to load.
    next: usize,
    /// The value being compressed (when `loaded`) and the position in it.
    cur: &'a [u8],
    i: usize,
    loaded: bool,
    out: Vec<u8>,
    offsets: Vec<u64>,
}

impl<'a> Lane<'a> {
    fn new(values: &'a [&'a [u8]]) -> Self {
        let total: usize = values.iter().map(|v| v.len()).sum();
        let mut offsets = Vec::with_capacity(values.len() + 1);
        offsets.push(0);
        Self {
            values,
            next: 0,
            cur: &[],
            i: 0,
            loaded: false,
            // Compressed text is usually smaller than its input: one allocation up front.
            out: Vec::with_capacity(total + 16),
            offsets,
        }
    }
}

/// Picks about [`SAMPLE_BYTES`] of whole values spread over `values` (all of them when
/// they are small), cutting long values to their first bytes.
fn sample<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Vec<&'a [u8]> {
    let all: Vec<&[u8]> = values.into_iter().collect();
    let total: usize = all.iter().map(|v| v.len()).sum();
    let stride = (total / SAMPLE_BYTES).max(1);
    let mut out = Vec::new();
    let mut taken = 0usize;
    for (k, v) in all.iter().enumerate() {
        if taken >= SAMPLE_BYTES {
            break;
        }
        if stride > 1 && k % stride != 0 {
            continue;
        }
        let v = &v[..v.len().min(SAMPLE_BYTES - taken)];
        taken += v.len();
        out.push(v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn english(n: usize, seed: u64) -> Vec<Vec<u8>> {
        const WORDS: &[&str] = &[
            "the",
            "of",
            "and",
            "to",
            "in",
            "is",
            "that",
            "for",
            "it",
            "as",
            "was",
            "with",
            "be",
            "by",
            "on",
            "not",
            "he",
            "this",
            "are",
            "or",
            "his",
            "from",
            "at",
            "which",
            "but",
            "have",
            "an",
            "had",
            "they",
            "you",
            "were",
            "their",
            "one",
            "all",
            "we",
            "can",
            "her",
            "has",
            "there",
            "been",
            "if",
            "more",
            "when",
            "will",
            "would",
            "who",
            "so",
            "no",
            "river",
            "mountain",
            "language",
            "compression",
            "symbol",
            "table",
            "between",
            "through",
            "important",
        ];
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|_| {
                let k = 3 + next() % 12;
                let mut s = String::new();
                for i in 0..k {
                    if i > 0 {
                        s.push(' ');
                    }
                    s.push_str(WORDS[(next() % WORDS.len() as u64) as usize]);
                }
                s.push('.');
                s.into_bytes()
            })
            .collect()
    }

    fn check_round_trip(values: &[Vec<u8>]) {
        let c = Compressor::train(values.iter().map(|v| v.as_slice()));
        let table_bytes = c.symbol_table();
        assert_eq!(table_bytes.len(), TABLE_BYTES);
        let table = SymbolTable::parse(&table_bytes).unwrap();
        let (offsets, data) = c.compress_values(values.iter().map(|v| v.as_slice()));
        let (o2, d2) = table.decompress_values(&offsets, &data).unwrap();
        assert_eq!(o2.len(), values.len() + 1);
        for (i, v) in values.iter().enumerate() {
            assert_eq!(&d2[o2[i] as usize..o2[i + 1] as usize], v.as_slice(), "value {i}");
            let mut one = vec![7u8];
            table
                .decompress_into(&data[offsets[i] as usize..offsets[i + 1] as usize], &mut one)
                .unwrap();
            assert_eq!(&one[1..], v.as_slice());
        }
    }

    proptest! {
        #[test]
        fn compressor_round_trips(
            words in prop::collection::vec("[a-z ]{0,12}|row [0-9]{1,4}|\\PC{0,6}", 0..200),
            raw in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..8),
        ) {
            let mut values: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
            values.extend(raw);
            check_round_trip(&values);
        }
    }

    proptest! {
        #[test]
        fn interleaved_values_match_one_by_one(
            words in prop::collection::vec("[a-z ]{0,30}|\\PC{0,12}", 0..120),
        ) {
            let values: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
            let c = Compressor::train(values.iter().copied());
            let (offsets, data) = c.compress_values(values.iter().copied());
            let mut want = Vec::new();
            let mut want_offsets = vec![0u64];
            for v in &values {
                c.compress_into(v, &mut want);
                want_offsets.push(want.len() as u64);
            }
            prop_assert_eq!(offsets, want_offsets);
            prop_assert_eq!(data, want);
        }
    }

    #[test]
    fn compresses_english_text() {
        let values = english(20_000, 3);
        check_round_trip(&values);
        let c = Compressor::train(values.iter().map(|v| v.as_slice()));
        let (_, data) = c.compress_values(values.iter().map(|v| v.as_slice()));
        let raw: usize = values.iter().map(|v| v.len()).sum();
        assert!(c.num_symbols() > 100, "{} symbols", c.num_symbols());
        assert!(data.len() * 2 < raw, "compressed {raw} bytes only to {}", data.len());
        // zero bytes and every byte value survive
        check_round_trip(&[(0..=255u8).collect(), vec![0; 50], vec![255; 9], Vec::new()]);
    }

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

    /// The plain reading of the format, one code at a time, as the oracle for the fast path.
    fn reference_decode(symbols: &[&[u8]], input: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < input.len() {
            match input[i] {
                ESCAPE => {
                    out.push(*input.get(i + 1)?);
                    i += 2;
                }
                c => {
                    out.extend_from_slice(symbols.get(usize::from(c))?);
                    i += 1;
                }
            }
        }
        Some(out)
    }

    proptest! {
        /// Random code streams (escapes at every offset, codes past the table, escapes
        /// cut off at the end) decode exactly as the one-code-at-a-time reading does.
        #[test]
        fn fast_decoder_matches_the_plain_reading(
            syms in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..=8), 0..255),
            input in prop::collection::vec(prop_oneof![any::<u8>(), Just(ESCAPE), 0u8..4], 0..80),
        ) {
            let symbols: Vec<&[u8]> = syms.iter().map(|s| s.as_slice()).collect();
            let t = SymbolTable::parse(&table(&symbols)).unwrap();
            let mut out = vec![1u8, 2];
            match (reference_decode(&symbols, &input), t.decompress_into(&input, &mut out)) {
                (Some(want), Ok(())) => prop_assert_eq!(&out[2..], want.as_slice()),
                (None, Err(_)) => {}
                (want, got) => prop_assert!(false, "reference {:?} but fast path {:?}", want, got),
            }
        }
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

    #[test]
    fn the_kept_table_is_used_only_for_the_same_bytes() {
        let decode = |t: &[u8], codes: &[u8]| {
            SymbolTable::with_parsed(t, |p| {
                let mut out = Vec::new();
                p.decompress_into(codes, &mut out)?;
                Ok(out)
            })
        };
        let (a, b) = (table(&[b"ab", b"cd"]), table(&[b"xyz", b"w"]));
        assert_eq!(decode(&a, &[0, 1]).unwrap(), b"abcd");
        assert_eq!(decode(&a, &[1, 0]).unwrap(), b"cdab");
        assert_eq!(decode(&b, &[0, 1]).unwrap(), b"xyzw");
        assert_eq!(decode(&a, &[1]).unwrap(), b"cd");
        // A bad table is an error every time, and does not displace nor poison the kept one.
        assert!(decode(&[0u8; 16], &[0]).is_err());
        assert!(decode(&[0u8; 16], &[0]).is_err());
        assert_eq!(decode(&b, &[1, 1]).unwrap(), b"ww");
        // Codes past the kept table are still rejected.
        assert!(decode(&b, &[7]).is_err());
    }
}
