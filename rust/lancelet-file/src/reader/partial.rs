//! Reading some rows of a 2.1+ page without fetching the whole page.
//!
//! pylance writes a column of a few hundred thousand rows as one page (a 500k-row text
//! column is one 7 MB page, 128-dim embeddings one 256 MB page), so a scan task or a
//! `take` that needs a slice of such a page must not read and decode all of it. Pages
//! without repetition levels are row addressable:
//!
//! * mini-block: the chunk metadata buffer gives each chunk's size and value count, so
//!   only the chunks covering the rows are fetched (plus the dictionary, if any) and
//!   decoded as a smaller page of just those chunks;
//! * full-zip of fixed-width values: row `i` lies at `i * (control + value bytes)`;
//! * full-zip of variable-width values: the page's second buffer indexes every row's
//!   byte offset, so two small reads find any row range;
//! * mini-block with lists: the repetition index gives the rows each chunk ends, so the
//!   chunks from a range's first row to its last are fetched and decoded.
//!
//! Anything else (full-zip pages with lists, constant pages) is read whole by the caller.

use std::ops::Range;

use arrow_array::{Array, ArrayRef};
use arrow_buffer::Buffer;
use lancelet_encoding::v2_1::{self, PathNode};
use lancelet_proto::pb21::{self, full_zip_layout::Details, page_layout::Layout};

use super::{FileReader, PageInfo};
use crate::error::Result;

/// Rows of the chunks read for a take are decoded one by one (rather than the chunks
/// whole) when they are fewer than the chunks' rows divided by this.
const SELECT_BELOW: u64 = 4;

/// One mini-block chunk: its byte range within the chunk data buffer and its rows.
struct Chunk {
    offset: u64,
    bytes: u64,
    first_row: u64,
    rows: u64,
}

fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .enumerate()
        .fold(0u64, |v, (i, b)| v | (u64::from(*b) << (8 * i)))
}

fn len_of(r: &Range<u64>) -> u64 {
    r.end.saturating_sub(r.start)
}

impl FileReader {
    /// Reads the page-local row ranges `locals` of `page` (a leaf at the end of `path`),
    /// one array per range, or `None` when the page has to be read whole.
    pub(super) async fn read_page_rows(
        &self,
        page: &PageInfo,
        path: &[PathNode],
        locals: &[Range<u64>],
    ) -> Result<Option<Vec<ArrayRef>>> {
        let Some(layout) = page.layout.as_ref().and_then(|l| l.layout.as_ref()) else {
            return Ok(None);
        };
        if locals.iter().any(|r| r.start >= r.end || r.end > page.num_rows) {
            return Ok(None);
        }
        match layout {
            Layout::MiniBlockLayout(m)
                if m.rep_compression.is_none() && m.num_items == page.num_rows && page.buffers.len() >= 2 =>
            {
                self.mini_block_rows(page, m, path, locals).await.map(Some)
            }
            Layout::MiniBlockLayout(m)
                if m.rep_compression.is_some() && m.repetition_index_depth == 1 && page.buffers.len() >= 3 =>
            {
                self.mini_block_list_rows(page, m, path, locals).await
            }
            Layout::FullZipLayout(f) if f.bits_rep == 0 && u64::from(f.num_items) == page.num_rows => match f.details {
                Some(Details::BitsPerValue(bits)) if bits % 8 == 0 && !page.buffers.is_empty() => {
                    self.full_zip_fixed_rows(page, f, bits, path, locals).await
                }
                Some(Details::BitsPerOffset(_)) if page.buffers.len() >= 2 => {
                    self.full_zip_var_rows(page, f, path, locals).await
                }
                _ => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// The chunks of a mini-block page holding `values` values (rows, without lists).
    fn chunk_table(&self, page: &PageInfo, meta: &[u8], word: usize, values: u64) -> Result<Vec<Chunk>> {
        if !meta.len().is_multiple_of(word) {
            return Err(self.corrupt(format!("chunk metadata of {} bytes is not whole words", meta.len())));
        }
        let data_len = len_of(&page.buffers[1]);
        let n = meta.len() / word;
        let mut chunks = Vec::with_capacity(n);
        let (mut offset, mut row) = (0u64, 0u64);
        for (i, w) in meta.chunks_exact(word).enumerate() {
            let w = le(w);
            let bytes = ((w >> 4) + 1) * 8;
            let rows = if i + 1 == n {
                values
                    .checked_sub(row)
                    .ok_or_else(|| self.corrupt("mini-block chunks hold more values than their page"))?
            } else {
                1u64 << (w & 0xF)
            };
            if offset + bytes > data_len {
                return Err(self.corrupt(format!("mini-block chunk {i} ends past its {data_len}-byte buffer")));
            }
            chunks.push(Chunk {
                offset,
                bytes,
                first_row: row,
                rows,
            });
            offset += bytes;
            row += rows;
        }
        if row != values || chunks.is_empty() {
            return Err(self.corrupt(format!("mini-block chunks hold {row} values, their page {values}")));
        }
        Ok(chunks)
    }

    /// The smaller page made of the chunks `picked` (ascending) of a mini-block page and
    /// its further buffers `extra` (the dictionary).
    fn chunk_page(
        m: &pb21::MiniBlockLayout,
        meta: &[u8],
        word: usize,
        chunks: &[Chunk],
        picked: &[usize],
        bufs: &[Buffer],
        extra: &[Buffer],
    ) -> (pb21::PageLayout, Vec<Buffer>) {
        let mut meta2 = Vec::with_capacity(picked.len() * word);
        let mut data2 = Vec::with_capacity(bufs.iter().map(|b| b.len()).sum());
        for (&k, b) in picked.iter().zip(bufs) {
            meta2.extend_from_slice(&meta[k * word..(k + 1) * word]);
            data2.extend_from_slice(b.as_slice());
        }
        let mut buffers = vec![Buffer::from_vec(meta2), Buffer::from_vec(data2)];
        buffers.extend(extra.iter().cloned());
        // A chunk that was not the page's last keeps its power-of-two count: as the last
        // chunk of the smaller page it is given exactly the values left, which is that.
        let mut small = m.clone();
        small.num_items = picked.iter().map(|&k| chunks[k].rows).sum();
        let layout = pb21::PageLayout {
            layout: Some(Layout::MiniBlockLayout(small)),
        };
        (layout, buffers)
    }

    async fn mini_block_rows(
        &self,
        page: &PageInfo,
        m: &pb21::MiniBlockLayout,
        path: &[PathNode],
        locals: &[Range<u64>],
    ) -> Result<Vec<ArrayRef>> {
        let word = if m.has_large_chunk { 4 } else { 2 };
        let meta = self.fetch(&page.buffers[..1]).await?;
        let meta = meta
            .first()
            .ok_or_else(|| self.corrupt("short read of chunk metadata"))?;
        let chunks = self.chunk_table(page, meta.as_slice(), word, page.num_rows)?;
        // The chunks covering each range, in order and once each.
        let first_chunk = |row: u64| chunks.partition_point(|c| c.first_row + c.rows <= row);
        let mut picked: Vec<usize> = Vec::new();
        for r in locals {
            let mut k = first_chunk(r.start);
            while k < chunks.len() && chunks[k].first_row < r.end {
                picked.push(k);
                k += 1;
            }
        }
        picked.sort_unstable();
        picked.dedup();
        let base = page.buffers[1].start;
        let mut ranges: Vec<Range<u64>> = picked
            .iter()
            .map(|&k| base + chunks[k].offset..base + chunks[k].offset + chunks[k].bytes)
            .collect();
        // Any further buffers (the dictionary) are needed whole.
        ranges.extend(page.buffers[2..].iter().cloned());
        let fetched = self.fetch(&ranges).await?;
        let (chunk_bufs, rest) = fetched.split_at(picked.len());
        let mut starts = Vec::with_capacity(picked.len());
        let mut n = 0u64;
        for &k in &picked {
            starts.push(n);
            n += chunks[k].rows;
        }
        let (layout, buffers) = Self::chunk_page(m, meta.as_slice(), word, &chunks, &picked, chunk_bufs, rest);
        // Each range's first row in the smaller page.
        let offsets = locals
            .iter()
            .map(|r| {
                let k = first_chunk(r.start);
                let at = picked
                    .binary_search(&k)
                    .map_err(|_| self.corrupt("a row range lost its chunk"))?;
                Ok(starts[at] + (r.start - chunks[k].first_row))
            })
            .collect::<Result<Vec<u64>>>()?;
        if let Some(arrays) = self.decode_selected(&layout, &buffers, path, locals, &offsets, n)? {
            return Ok(arrays);
        }
        let array = v2_1::decode_page(&layout, &buffers, n, path).map_err(self.enc_err())?;
        locals
            .iter()
            .zip(&offsets)
            .map(|(r, &offset)| {
                if offset + len_of(r) > array.len() as u64 {
                    return Err(self.corrupt("mini-block chunks decoded to fewer rows than they declare"));
                }
                Ok(array.slice(offset as usize, len_of(r) as usize))
            })
            .collect()
    }

    /// The ranges of a smaller page of `n` rows (starting at `offsets`), decoded row by
    /// row when they are a small part of it (a take), else `None`.
    fn decode_selected(
        &self,
        layout: &pb21::PageLayout,
        buffers: &[Buffer],
        path: &[PathNode],
        locals: &[Range<u64>],
        offsets: &[u64],
        n: u64,
    ) -> Result<Option<Vec<ArrayRef>>> {
        let wanted: u64 = locals.iter().map(len_of).sum();
        let ascending = offsets.windows(2).zip(locals).all(|(o, r)| o[0] + len_of(r) <= o[1]);
        if wanted.saturating_mul(SELECT_BELOW) >= n || !ascending {
            return Ok(None);
        }
        let rows: Vec<u64> = locals
            .iter()
            .zip(offsets)
            .flat_map(|(r, &o)| o..o + len_of(r))
            .collect();
        let Some(array) = v2_1::decode_mini_block_selected(layout, buffers, path, &rows).map_err(self.enc_err())?
        else {
            return Ok(None);
        };
        let mut at = 0usize;
        Ok(Some(
            locals
                .iter()
                .map(|r| {
                    let len = len_of(r) as usize;
                    at += len;
                    array.slice(at - len, len)
                })
                .collect(),
        ))
    }

    /// Rows of a mini-block page with lists, found through its repetition index: per
    /// chunk, the rows that end in it and the levels at its end that start a row
    /// continuing into the next chunk. A range is read from the chunk where its first
    /// row starts to the chunk where its last row ends; ranges whose chunks touch are
    /// decoded together.
    async fn mini_block_list_rows(
        &self,
        page: &PageInfo,
        m: &pb21::MiniBlockLayout,
        path: &[PathNode],
        locals: &[Range<u64>],
    ) -> Result<Option<Vec<ArrayRef>>> {
        let at_index = 2 + usize::from(m.dictionary.is_some());
        let Some(index_range) = page.buffers.get(at_index) else {
            return Ok(None);
        };
        let word = if m.has_large_chunk { 4 } else { 2 };
        let got = self.fetch(&[page.buffers[0].clone(), index_range.clone()]).await?;
        let (meta, index) = (got[0].as_slice(), got[1].as_slice());
        let chunks = self.chunk_table(page, meta, word, m.num_items)?;
        if index.len() != chunks.len() * 16 {
            return Err(self.corrupt(format!(
                "repetition index of {} bytes for {} chunks",
                index.len(),
                chunks.len()
            )));
        }
        // ended[k]: rows ended by the end of chunk k; open[k]: chunk k ends inside a row.
        let mut ended = Vec::with_capacity(chunks.len());
        let mut open = Vec::with_capacity(chunks.len());
        let mut total = 0u64;
        for e in index.chunks_exact(16) {
            total = total
                .checked_add(le(&e[..8]))
                .ok_or_else(|| self.corrupt("repetition index overflows"))?;
            ended.push(total);
            open.push(le(&e[8..]) > 0);
        }
        if total != page.num_rows || open.last().copied().unwrap_or(false) {
            return Err(self.corrupt(format!(
                "repetition index ends {total} rows, the page has {}",
                page.num_rows
            )));
        }
        let ended_before = |k: usize| if k == 0 { 0 } else { ended[k - 1] };
        // The chunk row `r` ends in.
        let end_chunk = |r: u64| ended.partition_point(|e| *e <= r);
        // (first chunk, last chunk, range) per range.
        let mut spans: Vec<(usize, usize, Range<u64>)> = Vec::with_capacity(locals.len());
        for r in locals {
            let first = if r.start == 0 {
                0
            } else {
                let e = end_chunk(r.start - 1);
                if ended[e] > r.start || open[e] {
                    e
                } else {
                    e + 1
                }
            };
            let last = end_chunk(r.end - 1);
            if first > last || last >= chunks.len() {
                return Err(self.corrupt("repetition index does not cover the rows asked for"));
            }
            spans.push((first, last, r.clone()));
        }
        // Groups of ranges whose chunk spans touch, each decoded once.
        let mut order: Vec<usize> = (0..spans.len()).collect();
        order.sort_by_key(|&i| (spans[i].0, spans[i].1));
        let mut groups: Vec<(usize, usize, Vec<usize>)> = Vec::new();
        for i in order {
            let (f, l, _) = &spans[i];
            match groups.last_mut() {
                Some((_, gl, members)) if *f <= *gl + 1 => {
                    *gl = (*gl).max(*l);
                    members.push(i);
                }
                _ => groups.push((*f, *l, vec![i])),
            }
        }
        let base = page.buffers[1].start;
        let mut ranges: Vec<Range<u64>> = Vec::new();
        for (f, l, _) in &groups {
            ranges.push(base + chunks[*f].offset..base + chunks[*l].offset + chunks[*l].bytes);
        }
        // The dictionary, if any, is needed whole.
        let extra: Vec<Range<u64>> = page.buffers[2..at_index].to_vec();
        ranges.extend(extra.iter().cloned());
        let fetched = self.fetch(&ranges).await?;
        let (group_bufs, rest) = fetched.split_at(groups.len());
        let mut out: Vec<Option<ArrayRef>> = vec![None; locals.len()];
        for ((f, l, members), buf) in groups.iter().zip(group_bufs) {
            let picked: Vec<usize> = (*f..=*l).collect();
            // Chunk byte ranges are adjacent: cut the one read back into chunks.
            let start = chunks[*f].offset;
            let bufs: Vec<Buffer> = picked
                .iter()
                .map(|&k| {
                    let from = (chunks[k].offset - start) as usize;
                    buf.slice_with_length(from, chunks[k].bytes as usize)
                })
                .collect();
            // A chunk may begin inside a row that started earlier: the decoder drops
            // those levels, and the chunks' rows are those that start in them.
            let first_row = ended_before(*f) + u64::from(*f > 0 && open[*f - 1]);
            let rows = (ended[*l] + u64::from(open[*l]))
                .checked_sub(first_row)
                .ok_or_else(|| self.corrupt("repetition index counts fewer rows than it skips"))?;
            let (layout, buffers) = Self::chunk_page(m, meta, word, &chunks, &picked, &bufs, rest);
            let wanted: u64 = members.iter().map(|&i| len_of(&spans[i].2)).sum();
            if wanted.saturating_mul(SELECT_BELOW) < rows {
                // A few rows of these chunks (a take): only theirs are assembled.
                let mut sel = Vec::with_capacity(wanted as usize);
                for &i in members {
                    let r = &spans[i].2;
                    let from = r
                        .start
                        .checked_sub(first_row)
                        .ok_or_else(|| self.corrupt("a row range starts before its chunks"))?;
                    sel.extend(from..from + len_of(r));
                }
                let array = v2_1::decode_mini_block_rows_from_chunk_selected(&layout, &buffers, path, &sel)
                    .map_err(self.enc_err())?;
                let mut at = 0usize;
                for &i in members {
                    let len = len_of(&spans[i].2) as usize;
                    out[i] = Some(array.slice(at, len));
                    at += len;
                }
                continue;
            }
            let array =
                v2_1::decode_mini_block_rows_from_chunk(&layout, &buffers, rows, path).map_err(self.enc_err())?;
            for &i in members {
                let r = &spans[i].2;
                let offset = r.start - first_row;
                if offset + len_of(r) > array.len() as u64 {
                    return Err(self.corrupt("mini-block chunks decoded to fewer rows than they declare"));
                }
                out[i] = Some(array.slice(offset as usize, len_of(r) as usize));
            }
        }
        out.into_iter()
            .map(|a| a.ok_or_else(|| self.corrupt("a row range was not read")))
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// Decodes the zipped bytes of `rows` consecutive rows as a page of their own.
    fn decode_zipped(
        &self,
        f: &pb21::FullZipLayout,
        buffers: Vec<Buffer>,
        rows: u64,
        path: &[PathNode],
    ) -> Result<ArrayRef> {
        let mut small = f.clone();
        small.num_items = u32::try_from(rows).map_err(|_| self.corrupt("full-zip page of over 2^32 rows"))?;
        small.num_visible_items = small.num_items;
        let layout = pb21::PageLayout {
            layout: Some(Layout::FullZipLayout(small)),
        };
        v2_1::decode_page(&layout, &buffers, rows, path).map_err(self.enc_err())
    }

    async fn full_zip_fixed_rows(
        &self,
        page: &PageInfo,
        f: &pb21::FullZipLayout,
        bits: u32,
        path: &[PathNode],
        locals: &[Range<u64>],
    ) -> Result<Option<Vec<ArrayRef>>> {
        let control = match f.bits_def {
            0 => 0,
            1..=8 => 1,
            9..=16 => 2,
            _ => return Ok(None),
        };
        let row_bytes = control + u64::from(bits / 8);
        let data = &page.buffers[0];
        if row_bytes == 0 || row_bytes.checked_mul(page.num_rows) != Some(len_of(data)) {
            return Ok(None);
        }
        let ranges: Vec<Range<u64>> = locals
            .iter()
            .map(|r| data.start + r.start * row_bytes..data.start + r.end * row_bytes)
            .collect();
        let fetched = self.fetch(&ranges).await?;
        locals
            .iter()
            .zip(fetched)
            .map(|(r, b)| self.decode_zipped(f, vec![b], len_of(r), path))
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    async fn full_zip_var_rows(
        &self,
        page: &PageInfo,
        f: &pb21::FullZipLayout,
        path: &[PathNode],
        locals: &[Range<u64>],
    ) -> Result<Option<Vec<ArrayRef>>> {
        let (data, index) = (&page.buffers[0], &page.buffers[1]);
        let entries = page.num_rows + 1;
        let width = len_of(index) / entries;
        if !matches!(width, 1 | 2 | 4 | 8) || width * entries != len_of(index) {
            return Ok(None);
        }
        // Each range's first and one-past-last row offsets.
        let ends: Vec<Range<u64>> = locals
            .iter()
            .flat_map(|r| [r.start, r.end])
            .map(|row| index.start + row * width..index.start + (row + 1) * width)
            .collect();
        let offsets = self.fetch(&ends).await?;
        let mut ranges = Vec::with_capacity(locals.len());
        for pair in offsets.chunks_exact(2) {
            let (a, b) = (le(pair[0].as_slice()), le(pair[1].as_slice()));
            if a > b || b > len_of(data) {
                return Err(self.corrupt(format!(
                    "full-zip row offsets {a}..{b} lie outside the {}-byte page",
                    len_of(data)
                )));
            }
            ranges.push(data.start + a..data.start + b);
        }
        let fetched = self.fetch(&ranges).await?;
        locals
            .iter()
            .zip(fetched)
            .map(|(r, b)| self.decode_zipped(f, vec![b], len_of(r), path))
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }
}
