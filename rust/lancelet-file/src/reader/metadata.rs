//! Opening a file: one read of its tail (footer, offset tables, column metadata and usually
//! the schema), validating every position and row count in it so later reads can trust
//! the page table.

use super::*;

pub(super) async fn read_metadata(
    io: &dyn ReadAt,
    stats: &IoStats,
    verify: bool,
) -> Result<(FileMetadata, Option<LegacyFile>)> {
    let path = io.path().to_string();
    let file_size = io.size().await?;
    if file_size < FOOTER_LEN {
        return Err(Error::corrupt(
            &path,
            format!("file is {file_size} bytes, too small to be a Lance file"),
        ));
    }
    let tail_len = file_size.min(TAIL_READ);
    let tail_range = file_size - tail_len..file_size;
    let tail_bytes = read_ranges(io, std::slice::from_ref(&tail_range), stats)
        .await?
        .pop()
        .unwrap_or_default();
    if crate::legacy::is_legacy_tail(tail_bytes.as_slice()) {
        let (meta, legacy) = crate::legacy::open(io, stats, file_size, tail_range.start, tail_bytes).await?;
        return Ok((meta, Some(legacy)));
    }
    let tail = Tail {
        start: tail_range.start,
        bytes: tail_bytes,
    };
    let footer_bytes = &tail.bytes.as_slice()[(tail_len - FOOTER_LEN) as usize..];
    let footer = Footer::parse(footer_bytes, file_size, &path)?;
    let version = footer.version(&path)?;
    let meta_end = file_size - FOOTER_LEN;
    let fetch = |range: Range<u64>| {
        let tail = &tail;
        async move {
            if range.start >= tail.start && range.end <= tail.start + tail.bytes.len() as u64 {
                Ok(tail
                    .bytes
                    .slice_with_length((range.start - tail.start) as usize, (range.end - range.start) as usize))
            } else {
                read_ranges(io, std::slice::from_ref(&range), stats)
                    .await?
                    .pop()
                    .ok_or_else(|| Error::corrupt(io.path(), "short read"))
            }
        }
    };
    let table = |bytes: &Buffer, n: u32, what: &str| -> Result<Vec<Range<u64>>> {
        let mut out = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            let at = |k: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&bytes.as_slice()[k..k + 8]);
                u64::from_le_bytes(b)
            };
            let (pos, size) = (at(i * 16), at(i * 16 + 8));
            match pos.checked_add(size) {
                Some(end) if end <= meta_end => out.push(pos..end),
                _ => {
                    return Err(Error::corrupt(
                        &path,
                        format!("{what} {i} at {pos} with size {size} lies outside the file"),
                    ))
                }
            }
        }
        Ok(out)
    };
    let cmo_bytes = fetch(footer.cmo_table_start..footer.cmo_table_start + u64::from(footer.num_columns) * 16).await?;
    let column_ranges = table(&cmo_bytes, footer.num_columns, "column metadata")?;
    let gbo_bytes =
        fetch(footer.gbo_table_start..footer.gbo_table_start + u64::from(footer.num_global_buffers) * 16).await?;
    let global_buffers = table(&gbo_bytes, footer.num_global_buffers, "global buffer")?;
    // The checksum buffer, if any, is the last global buffer; it is found and checked
    // before anything else in the tail is trusted. A buffer that starts with the magic but
    // does not check is held against the file only if its descriptor names a checksum
    // buffer: another writer's last buffer may start with the same four bytes.
    let mut checksums = None;
    let mut failed_probe = None;
    if let (true, Some(last)) = (verify && global_buffers.len() > 1, global_buffers.last()) {
        let fixed = crate::checksum::FIXED_HEADER as u64;
        if last.end - last.start >= fixed {
            let prefix = fetch(last.start..last.start + fixed).await?;
            if crate::checksum::is_checksum_buffer(prefix.as_slice()) {
                let probed = match crate::checksum::header_len(prefix.as_slice()) {
                    Err(m) => Err(Error::corrupt(&path, m)),
                    Ok(len) if len > last.end - last.start => {
                        Err(Error::corrupt(&path, "the checksum buffer is shorter than its header"))
                    }
                    Ok(len) => {
                        let header = fetch(last.start..last.start + len).await?;
                        Checksums::parse(&path, header.as_slice(), last).and_then(|sums| {
                            sums.check_tail(footer_bytes, gbo_bytes.as_slice(), cmo_bytes.as_slice())?;
                            Ok(sums)
                        })
                    }
                };
                match probed {
                    Ok(sums) => {
                        sums.prefill(tail.start, tail.bytes.as_slice());
                        checksums = Some(Arc::new(sums));
                    }
                    Err(e) => failed_probe = Some(e),
                }
            }
        }
    }
    let gb0 = global_buffers
        .first()
        .cloned()
        .ok_or_else(|| Error::corrupt(&path, "the file has no global buffers (no schema)"))?;
    let gb0_bytes = fetch(gb0).await?;
    if let Some(sums) = &checksums {
        sums.check_descriptor(gb0_bytes.as_slice())?;
    }
    let descriptor = pbfile::FileDescriptor::decode(gb0_bytes.as_slice())
        .map_err(|e| Error::corrupt(&path, format!("the file descriptor does not parse: {e}")))?;
    if descriptor.lancelet_checksums > 0 {
        // The descriptor says the file has checksums: they must have been found where it says.
        let index = descriptor.lancelet_checksums as usize;
        let found = checksums.is_some() && index == global_buffers.len() - 1;
        if verify && !found {
            return Err(failed_probe.unwrap_or_else(|| {
                Error::corrupt(
                    &path,
                    format!("the file records its checksums in global buffer {index}, which is missing or damaged"),
                )
            }));
        }
    }
    let pschema = descriptor
        .schema
        .ok_or_else(|| Error::corrupt(&path, "the file descriptor has no schema"))?;
    let schema = from_lance_fields(&pschema.fields, &pschema.metadata, &path)?;
    // Blob v1 columns hold (position, size) descriptors.
    let schema = Arc::new(crate::blob::file_read_schema(&schema).unwrap_or(schema));
    let num_rows = descriptor.length;
    let (plans, ncols) = if version == FileVersion::V2_0 {
        plan_schema(&schema)?
    } else {
        plan_schema_v21(&schema)?
    };
    if ncols != footer.num_columns as usize {
        return Err(Error::corrupt(
            &path,
            format!(
                "the schema needs {ncols} columns but the footer lists {}",
                footer.num_columns
            ),
        ));
    }
    let mut columns = Vec::with_capacity(column_ranges.len());
    for (i, r) in column_ranges.iter().enumerate() {
        let bytes = fetch(r.clone()).await?;
        if let Some(sums) = &checksums {
            sums.check_column(i, bytes.as_slice())?;
        }
        let cm = pbfile2::ColumnMetadata::decode(bytes.as_slice())
            .map_err(|e| Error::corrupt(&path, format!("metadata of column {i} does not parse: {e}")))?;
        columns.push(column_info(cm, i, meta_end, &path, version)?);
    }
    let meta = FileMetadata {
        path,
        file_size,
        footer,
        version,
        schema,
        num_rows,
        columns,
        global_buffers,
        plans,
        checksums,
    };
    if version == FileVersion::V2_0 {
        for p in &meta.plans {
            check_rows(&meta, p, num_rows)?;
        }
    } else {
        // 2.1+: every column is a leaf whose pages count top-level rows.
        for (i, c) in meta.columns.iter().enumerate() {
            let have = c.row_starts.last().copied().unwrap_or(0);
            if have != num_rows {
                return Err(Error::corrupt(
                    &meta.path,
                    format!("column {i} holds {have} rows but the file has {num_rows}"),
                ));
            }
        }
    }
    Ok((meta, None))
}

pub(super) fn column_info(
    cm: pbfile2::ColumnMetadata,
    i: usize,
    meta_end: u64,
    path: &str,
    version: FileVersion,
) -> Result<ColumnInfo> {
    let ranges = |offsets: &[u64], sizes: &[u64], what: &str| -> Result<Vec<Range<u64>>> {
        if offsets.len() != sizes.len() {
            return Err(Error::corrupt(
                path,
                format!(
                    "{what} of column {i}: {} offsets but {} sizes",
                    offsets.len(),
                    sizes.len()
                ),
            ));
        }
        offsets
            .iter()
            .zip(sizes)
            .map(|(o, s)| match o.checked_add(*s) {
                Some(e) if e <= meta_end => Ok(*o..e),
                _ => Err(Error::corrupt(
                    path,
                    format!("{what} of column {i} at {o} (+{s}) lies outside the data section"),
                )),
            })
            .collect()
    };
    let mut pages = Vec::with_capacity(cm.pages.len());
    let mut row_starts = Vec::with_capacity(cm.pages.len() + 1);
    let mut item_starts = Vec::with_capacity(cm.pages.len() + 1);
    let (mut rows, mut items) = (0u64, 0u64);
    for (p, page) in cm.pages.into_iter().enumerate() {
        let buffers = ranges(&page.buffer_offsets, &page.buffer_sizes, "page buffer")?;
        let (encoding, layout) = if version == FileVersion::V2_0 {
            (decode_page_encoding(page.encoding.as_ref(), path, i, p)?, None)
        } else {
            (
                pb20::ArrayEncoding::default(),
                Some(decode_page_layout(page.encoding.as_ref(), path, i, p)?),
            )
        };
        row_starts.push(rows);
        item_starts.push(items);
        rows = rows
            .checked_add(page.length)
            .ok_or_else(|| Error::corrupt(path, format!("row count of column {i} overflows")))?;
        if let Some(E::List(l)) = encoding.array_encoding.as_ref() {
            items = items
                .checked_add(l.num_items)
                .ok_or_else(|| Error::corrupt(path, format!("item count of column {i} overflows")))?;
        }
        pages.push(PageInfo {
            num_rows: page.length,
            buffers,
            encoding,
            priority: page.priority,
            layout,
        });
    }
    row_starts.push(rows);
    item_starts.push(items);
    let buffers = ranges(&cm.buffer_offsets, &cm.buffer_sizes, "column buffer")?;
    Ok(ColumnInfo {
        pages,
        row_starts,
        item_starts,
        buffers,
    })
}

pub(super) fn decode_page_encoding(
    enc: Option<&pbfile2::Encoding>,
    path: &str,
    col: usize,
    page: usize,
) -> Result<pb20::ArrayEncoding> {
    use pbfile2::encoding::Location;
    let where_ = || format!("page {page} of column {col}");
    match enc.and_then(|e| e.location.as_ref()) {
        Some(Location::Direct(d)) => {
            let any = prost_types::Any::decode(d.encoding.as_ref())
                .map_err(|e| Error::corrupt(path, format!("encoding of {} does not parse: {e}", where_())))?;
            if any.type_url != ARRAY_ENCODING_TYPE_URL {
                return Err(Error::Unsupported(format!(
                    "page encoding {:?} in {path}",
                    any.type_url
                )));
            }
            pb20::ArrayEncoding::decode(any.value.as_slice())
                .map_err(|e| Error::corrupt(path, format!("encoding of {} does not parse: {e}", where_())))
        }
        Some(Location::Indirect(_)) => Err(Error::Unsupported(format!(
            "indirect page encodings ({} of {path})",
            where_()
        ))),
        Some(Location::None(_)) | None => Err(Error::corrupt(path, format!("{} has no encoding", where_()))),
    }
}

pub(super) fn decode_page_layout(
    enc: Option<&pbfile2::Encoding>,
    path: &str,
    col: usize,
    page: usize,
) -> Result<pb21::PageLayout> {
    use pbfile2::encoding::Location;
    let where_ = || format!("page {page} of column {col}");
    match enc.and_then(|e| e.location.as_ref()) {
        Some(Location::Direct(d)) => {
            let any = prost_types::Any::decode(d.encoding.as_ref())
                .map_err(|e| Error::corrupt(path, format!("encoding of {} does not parse: {e}", where_())))?;
            if any.type_url != PAGE_LAYOUT_TYPE_URL {
                return Err(Error::Unsupported(format!(
                    "page encoding {:?} in {path}",
                    any.type_url
                )));
            }
            lancelet_encoding::v2_1::parse_layout(any.value.as_slice()).map_err(|e| Error::from_encoding(path, e))
        }
        Some(Location::Indirect(_)) => Err(Error::Unsupported(format!(
            "indirect page encodings ({} of {path})",
            where_()
        ))),
        Some(Location::None(_)) | None => Err(Error::corrupt(path, format!("{} has no encoding", where_()))),
    }
}

/// Checks that every column holds exactly as many values as its parent needs.
pub(super) fn check_rows(meta: &FileMetadata, plan: &FieldPlan, expected: u64) -> Result<()> {
    let col = meta
        .columns
        .get(plan.column())
        .ok_or_else(|| Error::corrupt(&meta.path, format!("column {} is missing", plan.column())))?;
    let have = col.row_starts.last().copied().unwrap_or(0);
    let header_ok = matches!(plan, FieldPlan::Struct { .. }) && col.pages.is_empty();
    if have != expected && !header_ok {
        return Err(Error::corrupt(
            &meta.path,
            format!(
                "column {} ({:?}) holds {have} values but {expected} are expected",
                plan.column(),
                plan.field().name()
            ),
        ));
    }
    match plan {
        FieldPlan::Leaf { .. } => Ok(()),
        FieldPlan::Struct { children, .. } => children.iter().try_for_each(|c| check_rows(meta, c, expected)),
        FieldPlan::List { item, .. } => check_rows(meta, item, col.item_starts.last().copied().unwrap_or(0)),
    }
}
