//! Reading fields of 2.1+ files: each leaf column below a field is read along its path
//! from the top-level field (structural encodings: mini-block, full-zip, constant pages),
//! then the leaves are merged back into the field's nested array.

use super::*;

impl FileReader {
    /// Reads one field of a 2.1+ file: each leaf column below it is read along its path,
    /// then the leaves are merged back into the field's nested array.
    pub(super) async fn read_field_v21(
        &self,
        plan: &FieldPlan,
        ranges: &[Range<u64>],
        cache: Option<&PageCache>,
    ) -> Result<ArrayRef> {
        let mut leaves: Vec<(usize, Vec<PathNode>)> = Vec::new();
        collect_leaves(plan, &mut Vec::new(), &mut leaves);
        let arrays = futures::future::try_join_all(
            leaves
                .iter()
                .map(|(column, path)| self.read_leaf_v21(*column, path, ranges, cache)),
        )
        .await?;
        let n: u64 = ranges.iter().map(|r| r.end - r.start).sum();
        merge_leaves(plan, arrays, n as usize).map_err(|m| self.corrupt(m))
    }

    /// Reads the rows in `ranges` of one 2.1+ leaf column as the single-leaf array of `path`
    /// (whole pages are decoded, then sliced).
    pub(super) async fn read_leaf_v21(
        &self,
        column: usize,
        path: &[PathNode],
        ranges: &[Range<u64>],
        cache: Option<&PageCache>,
    ) -> Result<ArrayRef> {
        let col = self.column(column)?;
        let dt = lancelet_encoding::v2_1::path_type(path).map_err(self.enc_err())?;
        let pieces = split_by_pages(&col.row_starts, ranges).map_err(|m| self.corrupt(m))?;
        let mut decoded: HashMap<usize, ArrayRef> = HashMap::new();
        let mut needed: Vec<usize> = Vec::new();
        // A constant page without buffers has identical rows: decode just the rows asked
        // for (its declared row count alone must not size an allocation).
        let bufferless_constant = |p: usize| {
            let page = &col.pages[p];
            page.buffers.is_empty()
                && matches!(
                    page.layout.as_ref().and_then(|l| l.layout.as_ref()),
                    Some(pb21::page_layout::Layout::ConstantLayout(_))
                )
        };
        // The pieces of each page, by piece index (one pass: a take has a piece per row).
        let mut of_page: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, (p, _)) in pieces.iter().enumerate() {
            if bufferless_constant(*p) {
                continue;
            }
            let members = of_page.entry(*p).or_default();
            if members.is_empty() {
                match cache.and_then(|c| c.get(column, *p)) {
                    Some(a) => {
                        decoded.insert(*p, a);
                    }
                    None => needed.push(*p),
                }
            }
            members.push(i);
        }
        // Pages of which only some rows are asked for are read in part where their layout
        // allows it: those rows' arrays, by piece index.
        let mut partial: Vec<Option<ArrayRef>> = vec![None; pieces.len()];
        let mut whole = Vec::with_capacity(needed.len());
        for p in needed {
            let page = &col.pages[p];
            let members = of_page.get(&p).map(Vec::as_slice).unwrap_or_default();
            let locals: Vec<Range<u64>> = members.iter().map(|&i| pieces[i].1.clone()).collect();
            let asked: u64 = locals.iter().map(|r| r.end - r.start).sum();
            let arrays = if asked < page.num_rows {
                self.read_page_rows(page, path, &locals).await?
            } else {
                None
            };
            match arrays {
                Some(arrays) => {
                    for (&i, a) in members.iter().zip(arrays) {
                        partial[i] = Some(a);
                    }
                }
                None => whole.push(p),
            }
        }
        let needed = whole;
        let mut io_ranges = Vec::new();
        for p in &needed {
            io_ranges.extend(col.pages[*p].buffers.iter().cloned());
        }
        let fetched = self.fetch(&io_ranges).await?;
        let mut at = 0usize;
        for p in needed {
            let page = &col.pages[p];
            let bufs = fetched
                .get(at..at + page.buffers.len())
                .ok_or_else(|| self.corrupt("short read of page buffers"))?;
            at += page.buffers.len();
            let layout = page
                .layout
                .as_ref()
                .ok_or_else(|| self.corrupt(format!("page {p} of column {column} has no layout")))?;
            let array =
                lancelet_encoding::v2_1::decode_page(layout, bufs, page.num_rows, path).map_err(self.enc_err())?;
            if let Some(c) = cache {
                c.put(column, p, array.clone());
            }
            decoded.insert(p, array);
        }
        let mut parts = Vec::with_capacity(pieces.len());
        for (i, (p, local)) in pieces.into_iter().enumerate() {
            if let Some(a) = partial[i].take() {
                parts.push(a);
                continue;
            }
            if bufferless_constant(p) {
                let layout = col.pages[p]
                    .layout
                    .as_ref()
                    .ok_or_else(|| self.corrupt(format!("page {p} of column {column} has no layout")))?;
                let rows = local.end - local.start;
                parts.push(lancelet_encoding::v2_1::decode_page(layout, &[], rows, path).map_err(self.enc_err())?);
                continue;
            }
            let a = decoded.get(&p).ok_or_else(|| self.corrupt("page was not decoded"))?;
            parts.push(a.slice(local.start as usize, (local.end - local.start) as usize));
        }
        concat_parts(parts, &dt)
    }
}

/// Lists the leaf columns below `plan` with their paths from the top-level field.
pub(super) fn collect_leaves(plan: &FieldPlan, path: &mut Vec<PathNode>, out: &mut Vec<(usize, Vec<PathNode>)>) {
    match plan {
        FieldPlan::Leaf { column, field } => {
            path.push(PathNode::Leaf {
                data_type: field.data_type().clone(),
            });
            out.push((*column, path.clone()));
            path.pop();
        }
        FieldPlan::Struct { children, .. } => {
            for c in children {
                path.push(PathNode::Struct {
                    child: c.field().name().clone(),
                });
                collect_leaves(c, path, out);
                path.pop();
            }
        }
        FieldPlan::List { field, item, .. } => {
            path.push(PathNode::List {
                large: matches!(field.data_type(), DataType::LargeList(_)),
            });
            collect_leaves(item, path, out);
            path.pop();
        }
    }
}

pub(super) fn leaf_count(plan: &FieldPlan) -> usize {
    let mut n = 0;
    plan.visit(&mut |p| {
        if matches!(p, FieldPlan::Leaf { .. }) {
            n += 1;
        }
    });
    n
}

/// Merges the single-leaf arrays of the leaves below `plan` (in column order) into the
/// field's array of `len` values.
pub(super) fn merge_leaves(
    plan: &FieldPlan,
    arrays: Vec<ArrayRef>,
    len: usize,
) -> std::result::Result<ArrayRef, String> {
    use arrow_array::cast::AsArray;
    match plan {
        FieldPlan::Leaf { .. } => {
            let mut it = arrays.into_iter();
            match (it.next(), it.next()) {
                (Some(a), None) if a.len() == len => Ok(a),
                (Some(a), None) => Err(format!("leaf holds {} values, expected {len}", a.len())),
                _ => Err("a leaf plan needs exactly one array".into()),
            }
        }
        FieldPlan::Struct { field, children, .. } => {
            let DataType::Struct(fields) = field.data_type() else {
                return Err("struct plan without struct type".into());
            };
            if children.is_empty() || arrays.is_empty() {
                return Ok(Arc::new(StructArray::new_empty_fields(len, None)));
            }
            let nulls = arrays[0]
                .as_struct_opt()
                .ok_or("leaf array is not a struct")?
                .nulls()
                .cloned();
            let mut rest = arrays.into_iter();
            let mut columns = Vec::with_capacity(children.len());
            for c in children {
                let k = leaf_count(c);
                let mut sub = Vec::with_capacity(k);
                for a in rest.by_ref().take(k) {
                    let s = a.as_struct_opt().ok_or("leaf array is not a struct")?;
                    if s.len() != len || s.num_columns() != 1 {
                        return Err(format!("struct leaf of {} rows, expected {len}", s.len()));
                    }
                    sub.push(s.column(0).clone());
                }
                columns.push(merge_leaves(c, sub, len)?);
            }
            StructArray::try_new(fields.clone(), columns, nulls)
                .map(|s| Arc::new(s) as ArrayRef)
                .map_err(|e| e.to_string())
        }
        FieldPlan::List { field, item, .. } => {
            let item_field = match field.data_type() {
                DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => f.clone(),
                _ => return Err("list plan without list type".into()),
            };
            let large = matches!(field.data_type(), DataType::LargeList(_));
            let first = arrays.first().ok_or("a list without leaf columns")?;
            if first.len() != len {
                return Err(format!("list of {} rows, expected {len}", first.len()));
            }
            // Offsets (as i64, rebased to 0) and validity come from the first leaf.
            let (offsets, nulls): (Vec<i64>, _) = if large {
                let l = first.as_list_opt::<i64>().ok_or("leaf array is not a large list")?;
                (l.value_offsets().to_vec(), l.nulls().cloned())
            } else {
                let l = first.as_list_opt::<i32>().ok_or("leaf array is not a list")?;
                (
                    l.value_offsets().iter().map(|o| i64::from(*o)).collect(),
                    l.nulls().cloned(),
                )
            };
            let (start, end) = (
                offsets.first().copied().unwrap_or(0),
                offsets.last().copied().unwrap_or(0),
            );
            let mut children = Vec::with_capacity(arrays.len());
            for a in &arrays {
                let (s, e, values) = if large {
                    let l = a.as_list_opt::<i64>().ok_or("leaf array is not a large list")?;
                    let o = l.value_offsets();
                    (o[0], o[o.len() - 1], l.values().clone())
                } else {
                    let l = a.as_list_opt::<i32>().ok_or("leaf array is not a list")?;
                    let o = l.value_offsets();
                    (i64::from(o[0]), i64::from(o[o.len() - 1]), l.values().clone())
                };
                if e - s != end - start || e < s || e as usize > values.len() {
                    return Err("leaf columns of one list disagree on its items".into());
                }
                children.push(values.slice(s as usize, (e - s) as usize));
            }
            let child = merge_leaves(item, children, (end - start) as usize)?;
            let result: std::result::Result<ArrayRef, arrow_schema::ArrowError> = if large {
                let offs = OffsetBuffer::new(offsets.iter().map(|o| o - start).collect::<Vec<i64>>().into());
                arrow_array::LargeListArray::try_new(item_field, offs, child, nulls).map(|a| Arc::new(a) as ArrayRef)
            } else if let DataType::Map(_, sorted) = field.data_type() {
                let offs = OffsetBuffer::new(offsets.iter().map(|o| (o - start) as i32).collect::<Vec<i32>>().into());
                let entries = child.as_struct_opt().ok_or("map entries are not a struct")?.clone();
                arrow_array::MapArray::try_new(item_field, offs, entries, nulls, *sorted)
                    .map(|a| Arc::new(a) as ArrayRef)
            } else {
                let offs = OffsetBuffer::new(offsets.iter().map(|o| (o - start) as i32).collect::<Vec<i32>>().into());
                arrow_array::ListArray::try_new(item_field, offs, child, nulls).map(|a| Arc::new(a) as ArrayRef)
            };
            result.map_err(|e| e.to_string())
        }
    }
}
