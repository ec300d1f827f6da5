//! Reading columns of 2.0 files: one column per leaf, list offsets in a column of their
//! own, pages described by `ArrayEncoding` trees. For fixed-width encodings only the byte
//! ranges of the requested rows are fetched (see [`lancelet_encoding::v2_0::layout`]).

use super::*;

impl FileReader {
    pub(super) async fn read_leaf(
        &self,
        column: usize,
        dt: &DataType,
        ranges: &[Range<u64>],
        cache: Option<&PageCache>,
    ) -> Result<ArrayRef> {
        let col = self.column(column)?;
        let pieces = split_by_pages(&col.row_starts, ranges).map_err(|m| self.corrupt(m))?;
        // Plan: whole pages (sequential scans, or encodings without random access) or
        // fixed-width row slices, or two-step binary slices.
        enum Job {
            Whole {
                page: usize,
                local: Range<u64>,
            },
            Fixed {
                page: usize,
                local: Range<u64>,
                streams: Vec<Stream>,
                whole: Vec<u32>,
                first_io: usize,
            },
            Binary {
                page: usize,
                local: Range<u64>,
                read: Range<u64>,
                streams: Vec<Stream>,
                first_io: usize,
            },
        }
        let mut jobs = Vec::with_capacity(pieces.len());
        let mut io_ranges: Vec<Range<u64>> = Vec::new();
        let mut whole_needed: Vec<usize> = Vec::new();
        let mut decoded: HashMap<usize, ArrayRef> = HashMap::new();
        for (page_idx, local) in pieces {
            let page = &col.pages[page_idx];
            if let Some(c) = cache {
                if let Some(a) = c.get(column, page_idx) {
                    decoded.insert(page_idx, a);
                }
                // A scan decodes a page once and keeps it, unless it only wants a few rows
                // from the middle of a page it has not loaded (a small `read_range`).
                let small = local.start > 0 && (local.end - local.start) * 4 < page.num_rows;
                if decoded.contains_key(&page_idx) || !small {
                    if !decoded.contains_key(&page_idx) && !whole_needed.contains(&page_idx) {
                        whole_needed.push(page_idx);
                    }
                    jobs.push(Job::Whole { page: page_idx, local });
                    continue;
                }
            }
            if let Some(layout) = row_layout(&page.encoding).map_err(self.enc_err())? {
                let first_io = io_ranges.len();
                for s in &layout.streams {
                    io_ranges.push(self.stream_range(page, s, &local)?);
                }
                for w in &layout.whole {
                    let r = page
                        .buffers
                        .get(*w as usize)
                        .ok_or_else(|| self.corrupt(format!("page refers to missing buffer {w}")))?;
                    io_ranges.push(r.clone());
                }
                jobs.push(Job::Fixed {
                    page: page_idx,
                    local,
                    streams: layout.streams,
                    whole: layout.whole,
                    first_io,
                });
                continue;
            }
            if let E::Binary(b) = variant(&page.encoding).map_err(self.enc_err())? {
                let indices = child(&b.indices, "indices").map_err(self.enc_err())?;
                if let Some(streams) = fixed_streams(indices).map_err(self.enc_err())? {
                    let read = local.start.saturating_sub(1)..local.end;
                    let first_io = io_ranges.len();
                    for s in &streams {
                        io_ranges.push(self.stream_range(page, s, &read)?);
                    }
                    jobs.push(Job::Binary {
                        page: page_idx,
                        local,
                        read,
                        streams,
                        first_io,
                    });
                    continue;
                }
            }
            if !whole_needed.contains(&page_idx) {
                whole_needed.push(page_idx);
            }
            jobs.push(Job::Whole { page: page_idx, local });
        }
        // Whole pages are fetched in the same coalesced request.
        let mut whole_io = Vec::with_capacity(whole_needed.len());
        for &p in &whole_needed {
            whole_io.push(io_ranges.len());
            io_ranges.extend(col.pages[p].buffers.iter().cloned());
        }
        let fetched = self.fetch(&io_ranges).await?;
        for (k, &p) in whole_needed.iter().enumerate() {
            let page = &col.pages[p];
            let bufs = &fetched[whole_io[k]..whole_io[k] + page.buffers.len()];
            let array = decode(
                &page.encoding,
                &PageBuffers {
                    page: bufs,
                    column: &[],
                },
                page.num_rows,
                dt,
            )
            .map_err(self.enc_err())?;
            if let Some(c) = cache {
                c.put(column, p, array.clone());
            }
            decoded.insert(p, array);
        }
        // Binary slices need a second round for their bytes.
        let mut binary_parts: Vec<(usize, Vec<u64>, u64, u64)> = Vec::new();
        let mut second_io: Vec<Range<u64>> = Vec::new();
        for (j, job) in jobs.iter().enumerate() {
            if let Job::Binary {
                page,
                local,
                read,
                streams,
                first_io,
            } = job
            {
                let page = &col.pages[*page];
                let E::Binary(b) = variant(&page.encoding).map_err(self.enc_err())? else {
                    continue;
                };
                let indices_enc = child(&b.indices, "indices").map_err(self.enc_err())?;
                let raw = self.stream_u64s(page, indices_enc, streams, read, &fetched[*first_io..])?;
                let adj = b.null_adjustment;
                let unadjust = |v: u64| if adj > 0 && v >= adj { v - adj } else { v };
                let skip = (local.start - read.start) as usize;
                let base = if skip == 1 { unadjust(raw[0]) } else { 0 };
                let values: Vec<u64> = raw[skip..].to_vec();
                let end = values.iter().map(|v| unadjust(*v)).max().unwrap_or(base).max(base);
                let bytes_buf = self.bytes_buffer(page, b)?;
                let (bstart, bend) = (bytes_buf.start.checked_add(base), bytes_buf.start.checked_add(end));
                match (bstart, bend) {
                    (Some(s), Some(e)) if e <= bytes_buf.end => second_io.push(s..e),
                    _ => return Err(self.corrupt(format!("binary offsets {base}..{end} exceed the bytes buffer"))),
                }
                binary_parts.push((j, values, base, adj));
            }
        }
        let second = if second_io.is_empty() {
            Vec::new()
        } else {
            self.fetch(&second_io).await?
        };
        let mut binary_arrays: HashMap<usize, ArrayRef> = HashMap::new();
        for (k, (j, values, base, adj)) in binary_parts.into_iter().enumerate() {
            let data = build_binary(&values, base, &second[k], adj, dt).map_err(self.enc_err())?;
            binary_arrays.insert(j, arrow_array::make_array(data));
        }
        // Assemble in request order.
        let mut parts: Vec<ArrayRef> = Vec::with_capacity(jobs.len());
        for (j, job) in jobs.iter().enumerate() {
            match job {
                Job::Whole { page, local } => {
                    let a = decoded.get(page).ok_or_else(|| self.corrupt("page was not decoded"))?;
                    parts.push(a.slice(local.start as usize, (local.end - local.start) as usize));
                }
                Job::Fixed {
                    page,
                    local,
                    streams,
                    whole,
                    first_io,
                } => {
                    let page = &col.pages[*page];
                    let mut bufs =
                        self.stream_buffers(page, streams, local, &fetched[*first_io..*first_io + streams.len()]);
                    let whole_start = *first_io + streams.len();
                    for (k, w) in whole.iter().enumerate() {
                        if let Some(slot) = bufs.get_mut(*w as usize) {
                            *slot = fetched[whole_start + k].clone();
                        }
                    }
                    let a = decode(
                        &page.encoding,
                        &PageBuffers {
                            page: &bufs,
                            column: &[],
                        },
                        local.end - local.start,
                        dt,
                    )
                    .map_err(self.enc_err())?;
                    parts.push(a);
                }
                Job::Binary { .. } => {
                    parts.push(
                        binary_arrays
                            .remove(&j)
                            .ok_or_else(|| self.corrupt("binary slice missing"))?,
                    );
                }
            }
        }
        concat_parts(parts, dt)
    }

    /// Decodes rows `rows` of an unsigned-integer encoding (offsets, indices) from the
    /// stream slices fetched for them (`fetched` starts at the first stream's slice).
    pub(super) fn stream_u64s(
        &self,
        page: &PageInfo,
        encoding: &pb20::ArrayEncoding,
        streams: &[Stream],
        rows: &Range<u64>,
        fetched: &[Buffer],
    ) -> Result<arrow_buffer::ScalarBuffer<u64>> {
        let fetched = fetched
            .get(..streams.len())
            .ok_or_else(|| self.corrupt("missing stream data"))?;
        let bufs = self.stream_buffers(page, streams, rows, fetched);
        decode_u64s(
            encoding,
            &PageBuffers {
                page: &bufs,
                column: &[],
            },
            rows.end - rows.start,
        )
        .map_err(self.enc_err())
    }

    pub(super) fn stream_range(&self, page: &PageInfo, s: &Stream, rows: &Range<u64>) -> Result<Range<u64>> {
        let buf = page
            .buffers
            .get(s.buffer_index as usize)
            .ok_or_else(|| self.corrupt(format!("page refers to missing buffer {}", s.buffer_index)))?;
        let r = stream_byte_range(s, rows);
        let size = buf.end - buf.start;
        if r.end > size {
            return Err(self.corrupt(format!(
                "page buffer {} holds {size} bytes, but rows {rows:?} need bytes up to {}",
                s.buffer_index, r.end
            )));
        }
        Ok(buf.start + r.start..buf.start + r.end)
    }

    /// Page buffers for a sub-range decode: the fetched stream slices at their indices.
    pub(super) fn stream_buffers(
        &self,
        page: &PageInfo,
        streams: &[Stream],
        rows: &Range<u64>,
        fetched: &[Buffer],
    ) -> Vec<Buffer> {
        let mut bufs = vec![Buffer::from_vec(Vec::<u8>::new()); page.buffers.len()];
        for (s, f) in streams.iter().zip(fetched) {
            if let Some(slot) = bufs.get_mut(s.buffer_index as usize) {
                *slot = stream_rows(s, rows, f);
            }
        }
        bufs
    }

    pub(super) fn bytes_buffer(&self, page: &PageInfo, b: &pb20::Binary) -> Result<Range<u64>> {
        let bytes = child(&b.bytes, "bytes").map_err(self.enc_err())?;
        match variant(bytes).map_err(self.enc_err())? {
            E::Flat(f) if f.bits_per_value == 8 && is_uncompressed(f) => {
                let r = f
                    .buffer
                    .as_ref()
                    .ok_or_else(|| self.corrupt("binary bytes without a buffer"))?;
                if r.buffer_type != pb20::buffer::BufferType::Page as i32 {
                    return Err(Error::Unsupported("binary bytes outside the page".into()));
                }
                page.buffers
                    .get(r.buffer_index as usize)
                    .cloned()
                    .ok_or_else(|| self.corrupt(format!("page refers to missing buffer {}", r.buffer_index)))
            }
            _ => Err(Error::Unsupported("compressed binary bytes".into())),
        }
    }

    pub(super) async fn read_list(
        &self,
        column: usize,
        field: &FieldRef,
        item: &FieldPlan,
        ranges: &[Range<u64>],
        cache: Option<&PageCache>,
    ) -> Result<ArrayRef> {
        let col = self.column(column)?;
        let pieces = split_by_pages(&col.row_starts, ranges).map_err(|m| self.corrupt(m))?;
        let mut io_ranges = Vec::new();
        let mut jobs = Vec::with_capacity(pieces.len());
        for (page_idx, local) in pieces {
            let page = &col.pages[page_idx];
            let list = self.list_encoding(page)?;
            let offsets = child(&list.offsets, "offsets").map_err(self.enc_err())?;
            let streams = fixed_streams(offsets)
                .map_err(self.enc_err())?
                .ok_or_else(|| Error::Unsupported("list offsets that are not fixed width".into()))?;
            let read = local.start.saturating_sub(1)..local.end;
            let first_io = io_ranges.len();
            for s in &streams {
                io_ranges.push(self.stream_range(page, s, &read)?);
            }
            jobs.push((page_idx, local, read, streams, first_io));
        }
        let fetched = self.fetch(&io_ranges).await?;
        let mut positions: Vec<(u64, u64, bool)> = Vec::new();
        for (page_idx, local, read, streams, first_io) in &jobs {
            let page = &col.pages[*page_idx];
            let list = self.list_encoding(page)?;
            let offsets = child(&list.offsets, "offsets").map_err(self.enc_err())?;
            let raw = self.stream_u64s(page, offsets, streams, read, &fetched[*first_io..])?;
            let skip = (local.start - read.start) as usize;
            let prev = if skip == 1 { raw[0] } else { 0 };
            let base = col.item_starts[*page_idx];
            let pos = list_positions(&raw[skip..], prev, list.null_offset_adjustment, list.num_items)
                .map_err(self.enc_err())?;
            positions.extend(pos.into_iter().map(|(s, e, v)| (s + base, e + base, v)));
        }
        let mut item_ranges: Vec<Range<u64>> = Vec::new();
        for (s, e, _) in &positions {
            if s == e {
                continue;
            }
            match item_ranges.last_mut() {
                Some(last) if last.end == *s => last.end = *e,
                _ => item_ranges.push(*s..*e),
            }
        }
        let items = self.read_field(item, &item_ranges, cache).await?;
        let lengths = positions.iter().map(|(s, e, _)| (e - s) as usize);
        let any_null = positions.iter().any(|p| !p.2);
        let nulls = any_null.then(|| NullBuffer::from(positions.iter().map(|p| p.2).collect::<Vec<bool>>()));
        let item_field = match field.data_type() {
            DataType::List(f) | DataType::LargeList(f) => f.clone(),
            _ => return Err(self.corrupt("list plan without list type")),
        };
        let total: usize = positions.iter().map(|(s, e, _)| (e - s) as usize).sum();
        if items.len() != total {
            return Err(self.corrupt(format!("list expected {total} items, read {}", items.len())));
        }
        Ok(match field.data_type() {
            DataType::LargeList(_) => Arc::new(arrow_array::LargeListArray::try_new(
                item_field,
                OffsetBuffer::<i64>::from_lengths(lengths),
                items,
                nulls,
            )?) as ArrayRef,
            _ => {
                if total > i32::MAX as usize {
                    return Err(Error::Unsupported(
                        "more than 2^31 list items in one read; use large_list".into(),
                    ));
                }
                Arc::new(arrow_array::ListArray::try_new(
                    item_field,
                    OffsetBuffer::<i32>::from_lengths(lengths),
                    items,
                    nulls,
                )?) as ArrayRef
            }
        })
    }

    pub(super) fn list_encoding<'p>(&self, page: &'p PageInfo) -> Result<&'p pb20::List> {
        match variant(&page.encoding).map_err(self.enc_err())? {
            E::List(l) => Ok(l),
            _ => Err(self.corrupt("list offsets column has a page that is not a List encoding")),
        }
    }
}
