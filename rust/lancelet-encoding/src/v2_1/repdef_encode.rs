//! Encoding repetition / definition levels: shredding nested Arrow arrays into leaf
//! columns (Lance 2.1+).
//!
//! The inverse of [`super::repdef_decode::assemble`]: every leaf of a field (depth-first, which
//! is the 2.1+ column order) becomes one [`Shredded`] column holding its levels and its
//! visible values. Structs and (large) lists are structural and fold into the levels;
//! every other type is a leaf, including fixed-size lists and structs marked packed.
//!
//! The walk keeps one *entry* per leaf slot or per null/empty list (or per row under a
//! null struct above a list). Going down the path, a struct layer marks entries whose
//! struct is null, a list layer expands each live entry into its elements (a null or empty
//! list, and every entry stopped further up, stays one entry). Entries remember the
//! outer-most layer that stopped them; once the whole path is walked, the layer kinds are
//! chosen from what actually occurred and the stops are numbered into definition levels.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    make_array, Array, ArrayRef, GenericListArray, LargeListArray, OffsetSizeTrait, StructArray, UInt64Array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields};
use lancelet_proto::pb21::RepDefLayer;

use super::path::is_packed;
use crate::{Error, Result};

/// One leaf column of a field, shredded into Lance 2.1+ repetition/definition levels.
#[derive(Debug, Clone)]
pub struct Shredded {
    /// Structural layers, inner-most first (pb21::RepDefLayer values as i32), chosen from the data:
    /// an item/struct layer is NULLABLE_ITEM (3) only if some reachable entry is null there, else ALL_VALID_ITEM (1);
    /// a list layer is ALL_VALID_LIST (2), NULLABLE_LIST (4), EMPTYABLE_LIST (5) or NULL_AND_EMPTY_LIST (6)
    /// from whether nulls / empty lists actually occur among reachable entries.
    pub layers: Vec<i32>,
    /// Repetition level per entry; None when there is no list layer.
    pub rep: Option<Vec<u16>>,
    /// Definition level per entry; None when every layer is all-valid.
    pub def: Option<Vec<u16>>,
    /// The visible values (entries that own a value slot: def <= max_visible_def), in order, of the leaf's Arrow type.
    /// Keeps the leaf array's own validity; slots under a null struct hold whatever the leaf child held there.
    pub values: ArrayRef,
    /// Number of top-level rows.
    pub num_rows: usize,
}

/// The levels of one top-level row of a [`Shredded`] leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowLevels {
    /// Entries (repetition / definition level pairs) of the row.
    pub entries: usize,
    /// Whether one of them owns no value slot: a null or empty list, or a null struct
    /// above a list.
    pub invisible: bool,
}

impl Shredded {
    /// Largest repetition level: the number of list layers.
    pub fn max_rep(&self) -> u16 {
        self.layers
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
            .count() as u16
    }

    /// Largest definition level: one per nullable item or list layer and per emptyable
    /// list layer.
    pub fn max_def(&self) -> u16 {
        self.layers
            .iter()
            .map(|l| match RepDefLayer::try_from(*l) {
                Ok(
                    RepDefLayer::RepdefNullableItem
                    | RepDefLayer::RepdefNullableList
                    | RepDefLayer::RepdefEmptyableList,
                ) => 1,
                Ok(RepDefLayer::RepdefNullAndEmptyList) => 2,
                _ => 0,
            })
            .sum()
    }

    /// Number of entries (one per level pair; one per value when there are no levels).
    fn entries(&self) -> usize {
        self.rep
            .as_ref()
            .or(self.def.as_ref())
            .map_or(self.values.len(), Vec::len)
    }

    /// Index of each row's first entry, and the number of entries at the end.
    fn row_bounds(&self) -> Result<Vec<usize>> {
        let n = self.entries();
        let mut bounds = Vec::with_capacity(self.num_rows + 1);
        match &self.rep {
            Some(rep) => {
                let top = self.max_rep();
                bounds.extend(rep.iter().enumerate().filter(|(_, r)| **r == top).map(|(e, _)| e));
            }
            None => bounds.extend(0..n),
        }
        if bounds.len() != self.num_rows || (n > 0 && bounds.first() != Some(&0)) {
            return Err(Error::InvalidInput(format!(
                "{} rows start in {n} entries of a leaf of {} rows",
                bounds.len(),
                self.num_rows
            )));
        }
        bounds.push(n);
        Ok(bounds)
    }

    /// Whether entry `e` owns a value slot.
    fn visible(&self, max_visible: u16) -> impl Fn(usize) -> bool + '_ {
        move |e| self.def.as_ref().is_none_or(|d| d[e] <= max_visible)
    }

    /// The levels of every row, in order.
    pub fn row_levels(&self) -> Result<Vec<RowLevels>> {
        let bounds = self.row_bounds()?;
        let visible = self.visible(super::repdef_decode::max_visible_def(&self.layers)?);
        Ok(bounds
            .windows(2)
            .map(|w| RowLevels {
                entries: w[1] - w[0],
                invisible: (w[0]..w[1]).any(|e| !visible(e)),
            })
            .collect())
    }

    /// Cuts the leaf into consecutive pieces of whole rows, piece `i` ending at row
    /// `ends[i]` (increasing, the last one `num_rows`). Every piece keeps the layers.
    pub fn split_rows(&self, ends: &[usize]) -> Result<Vec<Shredded>> {
        let empty_first = ends.first() == Some(&0) && self.num_rows > 0;
        if empty_first || ends.last() != Some(&self.num_rows) || ends.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::InvalidInput(format!(
                "row cuts {ends:?} do not split {} rows",
                self.num_rows
            )));
        }
        let bounds = self.row_bounds()?;
        let visible = self.visible(super::repdef_decode::max_visible_def(&self.layers)?);
        let mut out = Vec::with_capacity(ends.len());
        let (mut row, mut entry, mut value) = (0usize, 0usize, 0usize);
        for &end in ends {
            let entry_end = bounds[end];
            let values = (entry..entry_end).filter(|e| visible(*e)).count();
            let cut = |v: &Option<Vec<u16>>| v.as_ref().map(|v| v[entry..entry_end].to_vec());
            out.push(Shredded {
                layers: self.layers.clone(),
                rep: cut(&self.rep),
                def: cut(&self.def),
                values: self.values.slice(value, values),
                num_rows: end - row,
            });
            (row, entry, value) = (end, entry_end, value + values);
        }
        Ok(out)
    }
}

/// Shreds `array` (of `field`'s type) into one `Shredded` per leaf, depth-first order (same
/// order as [`super::path::leaf_paths`]).
pub fn shred(field: &Field, array: &dyn Array) -> Result<Vec<Shredded>> {
    let (field, root) = maps_as_lists(field, make_array(array.to_data()))?;
    let field = &field;
    let state = State {
        n: root.len(),
        rep: None,
        stop: None,
        idx: None,
        hidden: Vec::new(),
    };
    let mut walk = Walk {
        num_rows: root.len(),
        is_list: Vec::new(),
        out: Vec::new(),
    };
    walk.node(field, &root, 0, 0, state)?;
    Ok(walk.out)
}

/// Index marking an entry that owns no value slot.
const INVISIBLE: usize = usize::MAX;

/// Stop code of a null at path node `j` (0 means "not stopped").
fn null_code(j: usize) -> Result<u32> {
    u32::try_from(2 * j + 1).map_err(|_| Error::InvalidInput("field nested too deeply".into()))
}

/// Stop code of an empty list at path node `j`.
fn empty_code(j: usize) -> Result<u32> {
    u32::try_from(2 * j + 2).map_err(|_| Error::InvalidInput("field nested too deeply".into()))
}

/// The entries of a leaf column while walking down its path.
#[derive(Clone)]
struct State {
    /// Number of entries.
    n: usize,
    /// Per entry, how many list layers (from the top) are already open where it starts:
    /// 0 = new row, t = next element of the t-th list from the top. `None` = all 0.
    rep: Option<Vec<u16>>,
    /// Per entry, the stop code of the outer-most null/empty layer (0 = none). `None` = all 0.
    stop: Option<Vec<u32>>,
    /// Per entry, its index into the current array ([`INVISIBLE`] when it owns no slot).
    /// `None` = identity (no list layer yet).
    idx: Option<Vec<usize>>,
    /// Stop codes seen only on slots already hidden by an outer null struct. pylance picks
    /// layer kinds from every slot it visits, hidden ones included, and its reader expects
    /// those kinds, so they count when choosing layers (never for the levels themselves).
    hidden: Vec<u32>,
}

impl State {
    fn index(&self, k: usize) -> usize {
        self.idx.as_ref().map_or(k, |v| v[k])
    }

    fn stopped(&self, k: usize) -> bool {
        self.stop.as_ref().is_some_and(|s| s[k] != 0)
    }

    /// Marks every live entry whose slot is null in `nulls` with `code`.
    fn mark_nulls(&mut self, nulls: &NullBuffer, code: u32) -> Result<()> {
        if nulls.null_count() == 0 {
            return Ok(());
        }
        let n = self.n;
        let stop = self.stop.get_or_insert_with(|| vec![0; n]);
        let mut hidden = false;
        for (k, s) in stop.iter_mut().enumerate() {
            let i = self.idx.as_ref().map_or(k, |v| v[k]);
            if i == INVISIBLE {
                continue;
            }
            if i >= nulls.len() {
                return Err(Error::InvalidInput(format!(
                    "entry index {i} beyond an array of {}",
                    nulls.len()
                )));
            }
            if nulls.is_null(i) {
                if *s == 0 {
                    *s = code;
                } else {
                    hidden = true;
                }
            }
        }
        if hidden && !self.hidden.contains(&code) {
            self.hidden.push(code);
        }
        Ok(())
    }
}

struct Walk {
    num_rows: usize,
    /// Per path node above the current one (outer-most first): whether it is a list.
    is_list: Vec<bool>,
    out: Vec<Shredded>,
}

impl Walk {
    /// Walks list layer `j` of `field` (items `item`) and continues into its items.
    fn list<O: OffsetSizeTrait>(
        &mut self,
        field: &Field,
        item: &Field,
        array: &ArrayRef,
        j: usize,
        lists: u16,
        state: &State,
    ) -> Result<()> {
        let l = array.as_any().downcast_ref::<GenericListArray<O>>().ok_or_else(|| {
            Error::InvalidInput(format!(
                "field {} is a list but the array is {}",
                field.name(),
                array.data_type()
            ))
        })?;
        let next = expand(l, j, lists, state)?;
        self.is_list.push(true);
        let r = self.node(item, l.values(), j + 1, lists + 1, next);
        self.is_list.pop();
        r
    }

    /// Walks `array` (of `field`) at path node `j` with `lists` list layers above it.
    fn node(&mut self, field: &Field, array: &ArrayRef, j: usize, lists: u16, mut state: State) -> Result<()> {
        match field.data_type() {
            DataType::Struct(children) if !is_packed(field) => {
                let s = array.as_any().downcast_ref::<StructArray>().ok_or_else(|| {
                    Error::InvalidInput(format!(
                        "field {} is a struct but the array is {}",
                        field.name(),
                        array.data_type()
                    ))
                })?;
                if s.num_columns() != children.len() {
                    return Err(Error::InvalidInput(format!(
                        "struct field {} has {} children but the array {}",
                        field.name(),
                        children.len(),
                        s.num_columns()
                    )));
                }
                if let Some(nulls) = s.nulls() {
                    state.mark_nulls(nulls, null_code(j)?)?;
                }
                let last = children.len().saturating_sub(1);
                for (c, child) in children.iter().enumerate() {
                    let st = if c == last {
                        std::mem::replace(
                            &mut state,
                            State {
                                n: 0,
                                rep: None,
                                stop: None,
                                idx: None,
                                hidden: Vec::new(),
                            },
                        )
                    } else {
                        state.clone()
                    };
                    self.is_list.push(false);
                    let r = self.node(child, s.column(c), j + 1, lists, st);
                    self.is_list.pop();
                    r?;
                }
                Ok(())
            }
            DataType::List(item) => self.list::<i32>(field, item, array, j, lists, &state),
            DataType::LargeList(item) => self.list::<i64>(field, item, array, j, lists, &state),
            dt => {
                if !dt.equals_datatype(array.data_type()) {
                    return Err(Error::InvalidInput(format!(
                        "field {} is {dt} but the array is {}",
                        field.name(),
                        array.data_type()
                    )));
                }
                if let Some(nulls) = array.logical_nulls() {
                    state.mark_nulls(&nulls, null_code(j)?)?;
                }
                self.is_list.push(false);
                let leaf = finish(state, array, &self.is_list, lists, self.num_rows);
                self.is_list.pop();
                self.out.push(leaf?);
                Ok(())
            }
        }
    }
}

/// Whether `dt`, or a type nested in it (through lists, fixed-size lists, maps and
/// structs), satisfies `pred`.
pub fn has_nested(dt: &DataType, pred: &dyn Fn(&DataType) -> bool) -> bool {
    pred(dt)
        || match dt {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
                has_nested(f.data_type(), pred)
            }
            DataType::Struct(fields) => fields.iter().any(|f| has_nested(f.data_type(), pred)),
            _ => false,
        }
}

/// `field` and `array` with every map turned into the list of its entries structs it is
/// stored as (buffers shared, nothing copied).
fn maps_as_lists(field: &Field, array: ArrayRef) -> Result<(Field, ArrayRef)> {
    if !has_nested(field.data_type(), &|dt| matches!(dt, DataType::Map(..))) {
        return Ok((field.clone(), array));
    }
    let bad = || Error::InvalidInput(format!("field {} does not match its array", field.name()));
    let (dt, array): (DataType, ArrayRef) = match field.data_type() {
        DataType::Map(entries, _) => {
            let m = array.as_map_opt().ok_or_else(bad)?;
            let (ef, values) = maps_as_lists(entries, Arc::new(m.entries().clone()))?;
            let ef = Arc::new(ef);
            let list = arrow_array::ListArray::try_new(ef.clone(), m.offsets().clone(), values, m.nulls().cloned())?;
            (DataType::List(ef), Arc::new(list))
        }
        DataType::List(item) => {
            let l = array.as_list_opt::<i32>().ok_or_else(bad)?;
            let (item, values) = maps_as_lists(item, l.values().clone())?;
            let item = Arc::new(item);
            let list = arrow_array::ListArray::try_new(item.clone(), l.offsets().clone(), values, l.nulls().cloned())?;
            (DataType::List(item), Arc::new(list))
        }
        DataType::LargeList(item) => {
            let l = array.as_list_opt::<i64>().ok_or_else(bad)?;
            let (item, values) = maps_as_lists(item, l.values().clone())?;
            let item = Arc::new(item);
            let list = LargeListArray::try_new(item.clone(), l.offsets().clone(), values, l.nulls().cloned())?;
            (DataType::LargeList(item), Arc::new(list))
        }
        DataType::Struct(_) => {
            let s = array.as_struct_opt().ok_or_else(bad)?;
            let mut fields = Vec::with_capacity(s.num_columns());
            let mut columns = Vec::with_capacity(s.num_columns());
            for (f, c) in s.fields().iter().zip(s.columns()) {
                let (f, c) = maps_as_lists(f, c.clone())?;
                fields.push(Arc::new(f));
                columns.push(c);
            }
            let fields = Fields::from(fields);
            let st = StructArray::try_new_with_length(fields.clone(), columns, s.nulls().cloned(), s.len())?;
            (DataType::Struct(fields), Arc::new(st))
        }
        other => {
            return Err(Error::Unsupported(format!(
                "maps inside {other} (field {})",
                field.name()
            )))
        }
    };
    Ok((field.clone().with_data_type(dt), array))
}

/// Applies list layer `j` (the `lists + 1`-th list from the top): each live entry becomes
/// its elements, or one stopped entry when the list is null or empty.
fn expand<O: OffsetSizeTrait>(list: &GenericListArray<O>, j: usize, lists: u16, state: &State) -> Result<State> {
    let depth = lists
        .checked_add(1)
        .ok_or_else(|| Error::InvalidInput("too many nested lists".into()))?;
    let offsets = list.value_offsets();
    let child_len = list.values().len();
    let nulls = list.nulls();
    let (null_c, empty_c) = (null_code(j)?, empty_code(j)?);
    let mut rep = Vec::with_capacity(state.n);
    let mut stop = Vec::with_capacity(state.n);
    let mut idx = Vec::with_capacity(state.n);
    let mut hidden = state.hidden.clone();
    for k in 0..state.n {
        let r = state.rep.as_ref().map_or(0, |v| v[k]);
        if state.stopped(k) {
            let i = state.index(k);
            if i != INVISIBLE && i < list.len() {
                let code = if nulls.is_some_and(|n| n.is_null(i)) {
                    null_c
                } else if offsets[i] == offsets[i + 1] {
                    empty_c
                } else {
                    0
                };
                if code != 0 && !hidden.contains(&code) {
                    hidden.push(code);
                }
            }
            rep.push(r);
            stop.push(state.stop.as_ref().map_or(0, |s| s[k]));
            idx.push(INVISIBLE);
            continue;
        }
        let i = state.index(k);
        if i >= list.len() {
            return Err(Error::InvalidInput(format!(
                "entry index {i} beyond a list array of {}",
                list.len()
            )));
        }
        if nulls.is_some_and(|n| n.is_null(i)) {
            rep.push(r);
            stop.push(null_c);
            idx.push(INVISIBLE);
            continue;
        }
        let (s, e) = (offsets[i].as_usize(), offsets[i + 1].as_usize());
        if e < s || e > child_len {
            return Err(Error::InvalidInput(format!("list {i} has bad offsets {s}..{e}")));
        }
        if s == e {
            rep.push(r);
            stop.push(empty_c);
            idx.push(INVISIBLE);
            continue;
        }
        rep.push(r);
        stop.push(0);
        idx.push(s);
        for c in s + 1..e {
            rep.push(depth);
            stop.push(0);
            idx.push(c);
        }
    }
    let any_stop = stop.iter().any(|s| *s != 0);
    Ok(State {
        n: rep.len(),
        rep: Some(rep),
        stop: any_stop.then_some(stop),
        idx: Some(idx),
        hidden,
    })
}

/// Turns the walked entries of one leaf (path nodes `is_list`, outer-most first, with
/// `r_max` lists) into its column.
fn finish(state: State, leaf: &ArrayRef, is_list: &[bool], r_max: u16, num_rows: usize) -> Result<Shredded> {
    let m = is_list.len();
    if 2 * m >= usize::from(u16::MAX) {
        return Err(Error::InvalidInput(format!("field nested {m} levels deep")));
    }
    // Which nulls / empties occur, per path node.
    let mut has_null = vec![false; m];
    let mut has_empty = vec![false; m];
    if let Some(stop) = &state.stop {
        for s in stop.iter().chain(&state.hidden).filter(|s| **s != 0) {
            let j = ((*s - 1) / 2) as usize;
            if j >= m {
                return Err(Error::InvalidInput("internal: stop beyond the path".into()));
            }
            if *s % 2 == 1 {
                has_null[j] = true;
            } else {
                has_empty[j] = true;
            }
        }
    }
    let mut layers = Vec::with_capacity(m);
    // code -> level
    let mut level = vec![0u16; 2 * m + 1];
    let mut next = 0u16;
    for j in (0..m).rev() {
        let kind = if is_list[j] {
            match (has_null[j], has_empty[j]) {
                (true, true) => RepDefLayer::RepdefNullAndEmptyList,
                (true, false) => RepDefLayer::RepdefNullableList,
                (false, true) => RepDefLayer::RepdefEmptyableList,
                (false, false) => RepDefLayer::RepdefAllValidList,
            }
        } else if has_null[j] {
            RepDefLayer::RepdefNullableItem
        } else {
            RepDefLayer::RepdefAllValidItem
        };
        if has_null[j] {
            next += 1;
            level[2 * j + 1] = next;
        }
        if has_empty[j] {
            next += 1;
            level[2 * j + 2] = next;
        }
        layers.push(kind as i32);
    }
    let def = (next > 0)
        .then(|| {
            state
                .stop
                .as_ref()
                .map(|stop| stop.iter().map(|s| level[*s as usize]).collect::<Vec<u16>>())
        })
        .flatten();
    let rep = if r_max == 0 {
        None
    } else {
        let n = state.n;
        Some(match &state.rep {
            Some(r) => r.iter().map(|t| r_max - *t).collect(),
            None => vec![r_max; n],
        })
    };
    let values = match &state.idx {
        None => {
            if leaf.len() != state.n {
                return Err(Error::InvalidInput("internal: leaf length differs from entries".into()));
            }
            leaf.clone()
        }
        Some(idx) => gather(leaf, idx)?,
    };
    Ok(Shredded {
        layers,
        rep,
        def,
        values,
        num_rows,
    })
}

/// The values at the visible indices of `idx` (skipping [`INVISIBLE`]), as slices of
/// contiguous runs when there are few, else one `take`.
fn gather(leaf: &ArrayRef, idx: &[usize]) -> Result<ArrayRef> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut total = 0usize;
    for &i in idx.iter().filter(|i| **i != INVISIBLE) {
        if i >= leaf.len() {
            return Err(Error::InvalidInput(format!(
                "value index {i} beyond a leaf of {}",
                leaf.len()
            )));
        }
        total += 1;
        match runs.last_mut() {
            Some((s, l)) if *s + *l == i => *l += 1,
            _ => runs.push((i, 1)),
        }
    }
    match runs.as_slice() {
        [] => return Ok(leaf.slice(0, 0)),
        [(s, l)] => {
            return Ok(if *s == 0 && *l == leaf.len() {
                leaf.clone()
            } else {
                leaf.slice(*s, *l)
            })
        }
        _ => {}
    }
    if runs.len() <= 64 || runs.len() * 16 <= total {
        let slices: Vec<ArrayRef> = runs.iter().map(|(s, l)| leaf.slice(*s, *l)).collect();
        let refs: Vec<&dyn Array> = slices.iter().map(|a| a.as_ref()).collect();
        Ok(arrow_select::concat::concat(&refs)?)
    } else {
        let indices = UInt64Array::from_iter_values(idx.iter().filter(|i| **i != INVISIBLE).map(|i| *i as u64));
        Ok(arrow_select::take::take(leaf.as_ref(), &indices, None)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v2_1::path::{leaf_paths, PathNode};
    use crate::v2_1::repdef_decode::{assemble, count_visible, max_visible_def};
    use arrow_array::builder::{Int32Builder, ListBuilder};
    use arrow_array::{FixedSizeListArray, Int32Array, Int64Array, LargeListArray, ListArray, StringArray};
    use arrow_buffer::{OffsetBuffer, ScalarBuffer};
    use arrow_schema::Fields;
    use proptest::prelude::*;
    use std::collections::HashMap;
    use std::sync::Arc;

    fn ints(a: &ArrayRef) -> Vec<Option<i32>> {
        a.as_any()
            .downcast_ref::<Int32Array>()
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    }

    #[test]
    fn list_with_nulls_and_empties() {
        // [[1,2],None,[],None,[7]]
        let mut b = ListBuilder::new(Int32Builder::new());
        b.append_value([Some(1), Some(2)]);
        b.append_null();
        b.append_value(Vec::<Option<i32>>::new());
        b.append_null();
        b.append_value([Some(7)]);
        let a = b.finish();
        let field = Field::new("l", a.data_type().clone(), true);
        let out = shred(&field, &a).unwrap();
        assert_eq!(out.len(), 1);
        let s = &out[0];
        assert_eq!(s.layers, vec![1, 6]);
        assert_eq!(s.rep.as_deref(), Some(&[1u16, 0, 1, 1, 1, 1][..]));
        assert_eq!(s.def.as_deref(), Some(&[0u16, 0, 1, 2, 1, 0][..]));
        assert_eq!(ints(&s.values), vec![Some(1), Some(2), Some(7)]);
        assert_eq!(s.num_rows, 5);
    }

    #[test]
    fn list_of_lists() {
        // [[[1,2],[3]], None, [], [None, []], [[4,None]]]
        let mut b = ListBuilder::new(ListBuilder::new(Int32Builder::new()));
        b.values().append_value([Some(1), Some(2)]);
        b.values().append_value([Some(3)]);
        b.append(true);
        b.append_null();
        b.append(true);
        b.values().append_null();
        b.values().append_value(Vec::<Option<i32>>::new());
        b.append(true);
        b.values().append_value([Some(4), None]);
        b.append(true);
        let a = b.finish();
        let field = Field::new("l", a.data_type().clone(), true);
        let out = shred(&field, &a).unwrap();
        let s = &out[0];
        assert_eq!(s.layers, vec![3, 6, 6]);
        assert_eq!(s.rep.as_deref(), Some(&[2u16, 0, 1, 2, 2, 2, 1, 2, 0][..]));
        assert_eq!(s.def.as_deref(), Some(&[0u16, 0, 0, 4, 5, 2, 3, 0, 1][..]));
        assert_eq!(ints(&s.values), vec![Some(1), Some(2), Some(3), Some(4), None]);
    }

    #[test]
    fn nested_nullable_structs() {
        // [{s:{x:1}}, None, {s:None}, {s:{x:None}}]
        let x: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(0), Some(0), None]));
        let xf = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
        let s = StructArray::new(
            xf.clone(),
            vec![x],
            Some(NullBuffer::from(vec![true, true, false, true])),
        );
        let sf = Fields::from(vec![Field::new("s", DataType::Struct(xf), true)]);
        let outer = StructArray::new(
            sf.clone(),
            vec![Arc::new(s)],
            Some(NullBuffer::from(vec![true, false, true, true])),
        );
        let field = Field::new("o", DataType::Struct(sf), true);
        let out = shred(&field, &outer).unwrap();
        assert_eq!(out.len(), 1);
        let s = &out[0];
        assert_eq!(s.layers, vec![3, 3, 3]);
        assert_eq!(s.rep, None);
        assert_eq!(s.def.as_deref(), Some(&[0u16, 3, 2, 1][..]));
        assert_eq!(ints(&s.values), vec![Some(1), Some(0), Some(0), None]);
    }

    #[test]
    fn struct_of_two_leaves_and_paths() {
        // c: struct<a:int32, b:list<int32>>, struct null at 1 and 4, a null at 2.
        let a: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(9), None, Some(4), Some(5)]));
        let mut lb = ListBuilder::new(Int32Builder::new());
        lb.append_value([Some(1)]);
        lb.append_value([Some(2), Some(3)]); // hidden under the null struct
        lb.append_value([Some(4)]);
        lb.append_value(Vec::<Option<i32>>::new());
        lb.append_value([Some(5)]);
        let b: ArrayRef = Arc::new(lb.finish());
        let fields = Fields::from(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", b.data_type().clone(), true),
        ]);
        let c = StructArray::new(
            fields.clone(),
            vec![a, b],
            Some(NullBuffer::from(vec![true, false, true, true, false])),
        );
        let field = Field::new("c", DataType::Struct(fields), true);
        let paths = leaf_paths(&field);
        assert_eq!(paths.len(), 2);
        assert_eq!(paths[0][0], PathNode::Struct { child: "a".into() });
        assert_eq!(paths[1][1], PathNode::List { large: false });
        let out = shred(&field, &c).unwrap();
        assert_eq!(out[0].def.as_deref(), Some(&[0u16, 2, 1, 0, 2][..]));
        assert_eq!(out[0].layers, vec![3, 3]);
        let b = &out[1];
        // layers inner-most first: item, list, struct
        assert_eq!(b.layers, vec![1, 5, 3]);
        assert_eq!(b.rep.as_deref(), Some(&[1u16, 1, 1, 1, 1][..]));
        assert_eq!(b.def.as_deref(), Some(&[0u16, 2, 0, 1, 2][..]));
        assert_eq!(ints(&b.values), vec![Some(1), Some(4)]);
    }

    #[test]
    fn flat_column_is_free() {
        let a = Int64Array::from_iter_values(0..1_000_000);
        let field = Field::new("x", DataType::Int64, true);
        let out = shred(&field, &a).unwrap();
        assert_eq!(out[0].layers, vec![1]);
        assert!(out[0].rep.is_none() && out[0].def.is_none());
        assert_eq!(out[0].values.len(), 1_000_000);
        assert!(out[0].values.to_data().buffers()[0].as_ptr() == a.values().inner().as_ptr());
    }

    #[test]
    fn big_list_column_keeps_its_child() {
        // 1M lists of 0..=3 items, every 7th null (with an empty range)
        let n = 1_000_000usize;
        let mut offsets = vec![0i32];
        let mut valid = Vec::with_capacity(n);
        for i in 0..n {
            let null = i % 7 == 3;
            valid.push(!null);
            let len = if null { 0 } else { (i % 4) as i32 };
            offsets.push(offsets[i] + len);
        }
        let child = Arc::new(Int32Array::from_iter_values(0..offsets[n]));
        let item = Arc::new(Field::new("item", DataType::Int32, true));
        let a = ListArray::new(
            item,
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            child.clone(),
            Some(NullBuffer::from(valid)),
        );
        let field = Field::new("l", a.data_type().clone(), true);
        let start = std::time::Instant::now();
        let out = shred(&field, &a).unwrap();
        assert!(start.elapsed().as_secs() < 5);
        assert_eq!(out[0].layers, vec![1, 6]);
        assert_eq!(out[0].values.len(), child.len());
        assert_eq!(
            out[0].values.to_data().buffers()[0].as_ptr(),
            child.values().inner().as_ptr()
        );
    }

    #[test]
    fn packed_struct_and_fsl_are_leaves() {
        let md: HashMap<String, String> = [("packed".to_string(), "true".to_string())].into();
        let fields = Fields::from(vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", DataType::Int32, true),
        ]);
        let f = Field::new("p", DataType::Struct(fields.clone()), true).with_metadata(md);
        assert_eq!(leaf_paths(&f).len(), 1);
        let s = StructArray::new(
            fields,
            vec![
                Arc::new(Int32Array::from(vec![1, 2])),
                Arc::new(Int32Array::from(vec![3, 4])),
            ],
            Some(NullBuffer::from(vec![true, false])),
        );
        let out = shred(&f, &s).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].layers, vec![3]);
        assert_eq!(out[0].def.as_deref(), Some(&[0u16, 1][..]));
        let fsl = FixedSizeListArray::new(
            Arc::new(Field::new("item", DataType::Int32, true)),
            2,
            Arc::new(Int32Array::from(vec![1, 2, 3, 4])),
            None,
        );
        let f = Field::new("v", fsl.data_type().clone(), true);
        let out = shred(&f, &fsl).unwrap();
        assert_eq!(out[0].layers, vec![1]);
        assert_eq!(out[0].values.len(), 2);
    }

    #[test]
    fn mismatched_types_are_errors() {
        let a = Int32Array::from(vec![1]);
        assert!(shred(&Field::new("x", DataType::Utf8, true), &a).is_err());
        let f = Field::new(
            "l",
            DataType::List(Arc::new(Field::new("item", DataType::Int32, true))),
            true,
        );
        assert!(shred(&f, &a).is_err());
        let f = Field::new("s", DataType::Struct(Fields::empty()), true);
        assert!(shred(&f, &a).is_err());
    }

    // ---- random round trips ----

    /// A small deterministic generator (xorshift).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
        fn chance(&mut self, pct: u64) -> bool {
            self.below(100) < pct
        }
    }

    fn gen_field(rng: &mut Rng, name: &str, depth: u32) -> Field {
        let pick = if depth == 0 { rng.below(4) } else { rng.below(8) };
        let dt = match pick {
            0 => DataType::Int32,
            1 => DataType::Utf8,
            2 => DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Int32, true)), 2),
            3 => {
                // packed struct leaf
                let fields = Fields::from(vec![
                    Field::new("p", DataType::Int32, true),
                    Field::new("q", DataType::Int32, true),
                ]);
                let md: HashMap<String, String> = [("lance-encoding:packed".to_string(), "true".to_string())].into();
                return Field::new(name, DataType::Struct(fields), true).with_metadata(md);
            }
            4 | 5 => {
                let n = 1 + rng.below(3);
                let fields: Vec<Field> = (0..n).map(|i| gen_field(rng, &format!("f{i}"), depth - 1)).collect();
                DataType::Struct(Fields::from(fields))
            }
            6 => DataType::List(Arc::new(gen_field(rng, "item", depth - 1))),
            _ => DataType::LargeList(Arc::new(gen_field(rng, "item", depth - 1))),
        };
        Field::new(name, dt, true)
    }

    fn gen_nulls(rng: &mut Rng, n: usize) -> Option<NullBuffer> {
        let pct = [0, 0, 20, 50][rng.below(4) as usize];
        if pct == 0 {
            return None;
        }
        Some(NullBuffer::from(
            (0..n).map(|_| !rng.chance(pct)).collect::<Vec<bool>>(),
        ))
    }

    /// An array of `n` rows of `dt`, often a slice of a larger one.
    fn gen_array(rng: &mut Rng, dt: &DataType, n: usize) -> ArrayRef {
        let (head, tail) = if rng.chance(30) {
            (rng.below(4) as usize, rng.below(3) as usize)
        } else {
            (0, 0)
        };
        let total = head + n + tail;
        let a = gen_exact(rng, dt, total);
        a.slice(head, n)
    }

    fn gen_exact(rng: &mut Rng, dt: &DataType, n: usize) -> ArrayRef {
        match dt {
            DataType::Int32 => {
                let nulls = gen_nulls(rng, n);
                let vals: Vec<i32> = (0..n).map(|_| rng.below(100) as i32).collect();
                Arc::new(Int32Array::new(ScalarBuffer::from(vals), nulls))
            }
            DataType::Utf8 => {
                let nulls = gen_nulls(rng, n);
                let vals: Vec<Option<String>> = (0..n)
                    .map(|i| {
                        let s = "x".repeat(rng.below(4) as usize) + &rng.below(10).to_string();
                        nulls.as_ref().is_none_or(|b| b.is_valid(i)).then_some(s)
                    })
                    .collect();
                Arc::new(StringArray::from(vals))
            }
            DataType::FixedSizeList(item, size) => {
                let child = gen_array(rng, item.data_type(), n * *size as usize);
                let nulls = gen_nulls(rng, n);
                Arc::new(FixedSizeListArray::new(item.clone(), *size, child, nulls))
            }
            DataType::Struct(fields) => {
                let children: Vec<ArrayRef> = fields.iter().map(|f| gen_array(rng, f.data_type(), n)).collect();
                let nulls = gen_nulls(rng, n);
                Arc::new(StructArray::new(fields.clone(), children, nulls))
            }
            DataType::List(item) | DataType::LargeList(item) => {
                let nulls = gen_nulls(rng, n);
                let start = rng.below(3) as usize;
                let mut offsets = vec![start as i64];
                for i in 0..n {
                    let null = nulls.as_ref().is_some_and(|b| b.is_null(i));
                    // null lists sometimes own a non-empty range
                    let len = if null && rng.chance(50) {
                        0
                    } else {
                        rng.below(4) as usize
                    };
                    offsets.push(offsets[i] + len as i64);
                }
                let child_len = offsets[n] as usize + rng.below(2) as usize;
                let child = gen_array(rng, item.data_type(), child_len);
                if matches!(dt, DataType::List(_)) {
                    let o: Vec<i32> = offsets.iter().map(|o| *o as i32).collect();
                    Arc::new(ListArray::new(
                        item.clone(),
                        OffsetBuffer::new(ScalarBuffer::from(o)),
                        child,
                        nulls,
                    ))
                } else {
                    Arc::new(LargeListArray::new(
                        item.clone(),
                        OffsetBuffer::new(ScalarBuffer::from(offsets)),
                        child,
                        nulls,
                    ))
                }
            }
            other => unreachable!("generator does not make {other}"),
        }
    }

    /// Renders row `i` of `a` along `path`: nulls by validity only.
    fn render(a: &dyn Array, i: usize, path: &[PathNode], out: &mut String) {
        match path.first() {
            Some(PathNode::Struct { child }) => {
                if a.is_null(i) {
                    out.push_str("null");
                    return;
                }
                let s = a.as_any().downcast_ref::<StructArray>().unwrap();
                out.push('{');
                render(s.column_by_name(child).unwrap().as_ref(), i, &path[1..], out);
                out.push('}');
            }
            Some(PathNode::List { large }) => {
                if a.is_null(i) {
                    out.push_str("null");
                    return;
                }
                let (child, s, e) = if *large {
                    let l = a.as_any().downcast_ref::<LargeListArray>().unwrap();
                    let o = l.value_offsets();
                    (l.values().clone(), o[i] as usize, o[i + 1] as usize)
                } else {
                    let l = a.as_any().downcast_ref::<ListArray>().unwrap();
                    let o = l.value_offsets();
                    (l.values().clone(), o[i] as usize, o[i + 1] as usize)
                };
                out.push('[');
                for c in s..e {
                    render(child.as_ref(), c, &path[1..], out);
                    out.push(',');
                }
                out.push(']');
            }
            _ => {
                if a.logical_nulls().is_some_and(|n| n.is_null(i)) {
                    out.push_str("null");
                } else {
                    out.push_str(&format!("{:?}", a.slice(i, 1)));
                }
            }
        }
    }

    fn rows(a: &dyn Array, path: &[PathNode]) -> Vec<String> {
        (0..a.len())
            .map(|i| {
                let mut s = String::new();
                render(a, i, path, &mut s);
                s
            })
            .collect()
    }

    /// Follows `path` into the original field / array: the struct children by name.
    fn check_round_trip(field: &Field, array: &ArrayRef) {
        let paths = leaf_paths(field);
        let out = shred(field, array.as_ref()).unwrap();
        assert_eq!(paths.len(), out.len());
        for (path, s) in paths.iter().zip(&out) {
            assert_eq!(s.num_rows, array.len());
            assert_eq!(s.layers.len(), path.len());
            let has_list = path.iter().any(|p| matches!(p, PathNode::List { .. }));
            assert_eq!(s.rep.is_some(), has_list);
            if !has_list {
                if let Some(d) = &s.def {
                    assert_eq!(d.len(), array.len());
                }
                assert_eq!(s.values.len(), array.len());
            }
            if let (Some(r), Some(d)) = (&s.rep, &s.def) {
                assert_eq!(r.len(), d.len());
            }
            if s.def.is_none() {
                assert!(s.layers.iter().all(|l| *l == 1 || *l == 2));
            }
            let n_entries = s.rep.as_ref().or(s.def.as_ref()).map_or(s.values.len(), Vec::len);
            assert_eq!(
                count_visible(&s.layers, s.def.as_deref(), n_entries).unwrap(),
                s.values.len()
            );
            if let Some(d) = &s.def {
                // stored only when something is null or empty, and never beyond the layers
                assert!(d.iter().any(|d| *d > 0));
                let max_def: usize = s.layers.iter().map(|l| [0, 0, 0, 1, 1, 1, 2][*l as usize]).sum();
                assert!(d.iter().all(|d| (*d as usize) <= max_def));
                // visible entries come first in the numbering
                let vis = max_visible_def(&s.layers).unwrap();
                assert!(vis as usize <= max_def);
            }
            let back = assemble(path, &s.layers, s.rep.as_deref(), s.def.as_deref(), s.values.clone()).unwrap();
            assert_eq!(rows(back.as_ref(), path), rows(array.as_ref(), path), "path {path:?}");
        }
    }

    /// Splits the leaves of `array` at `cuts` (row boundaries) and checks that the pieces
    /// hold the rows of the whole, in order, each piece's levels matching its rows.
    fn check_split(field: &Field, array: &ArrayRef, cuts: &[usize]) {
        let paths = leaf_paths(field);
        for (path, s) in paths.iter().zip(shred(field, array.as_ref()).unwrap()) {
            let levels = s.row_levels().unwrap();
            assert_eq!(levels.len(), array.len());
            let mut ends: Vec<usize> = cuts.iter().copied().filter(|c| *c > 0 && *c < array.len()).collect();
            ends.sort_unstable();
            ends.dedup();
            ends.push(array.len());
            let pieces = s.split_rows(&ends).unwrap();
            let mut got = Vec::new();
            let mut start = 0;
            for (piece, end) in pieces.iter().zip(&ends) {
                assert_eq!(piece.num_rows, end - start);
                let entries: usize = levels[start..*end].iter().map(|l| l.entries).sum();
                assert_eq!(piece.entries(), entries);
                assert_eq!(piece.row_levels().unwrap(), levels[start..*end].to_vec());
                let back = assemble(
                    path,
                    &piece.layers,
                    piece.rep.as_deref(),
                    piece.def.as_deref(),
                    piece.values.clone(),
                )
                .unwrap();
                got.extend(rows(back.as_ref(), path));
                start = *end;
            }
            assert_eq!(got, rows(array.as_ref(), path), "path {path:?}");
        }
    }

    #[test]
    fn row_levels_count_entries_and_invisible_slots() {
        // [[1,2],None,[],None,[7]]
        let mut b = ListBuilder::new(Int32Builder::new());
        b.append_value([Some(1), Some(2)]);
        b.append_null();
        b.append_value(Vec::<Option<i32>>::new());
        b.append_value([None]);
        b.append_value([Some(7)]);
        let a: ArrayRef = Arc::new(b.finish());
        let field = Field::new("l", a.data_type().clone(), true);
        let s = shred(&field, a.as_ref()).unwrap().remove(0);
        let rl = |entries, invisible| RowLevels { entries, invisible };
        assert_eq!(
            s.row_levels().unwrap(),
            vec![rl(2, false), rl(1, true), rl(1, true), rl(1, false), rl(1, false)]
        );
        assert_eq!((s.max_rep(), s.max_def()), (1, 3));
        check_split(&field, &a, &[1, 3]);
        assert!(s.split_rows(&[0, 5]).is_err());
        assert!(s.split_rows(&[3, 2, 5]).is_err());
        assert!(s.split_rows(&[4]).is_err());
    }

    #[test]
    fn zero_rows() {
        let mut rng = Rng(7);
        for _ in 0..50 {
            let f = gen_field(&mut rng, "r", 3);
            let a = gen_array(&mut rng, f.data_type(), 0);
            check_round_trip(&f, &a);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        #[test]
        fn round_trip(seed in 1u64.., n in 0usize..24) {
            let mut rng = Rng(seed);
            let f = gen_field(&mut rng, "r", 3);
            let a = gen_array(&mut rng, f.data_type(), n);
            check_round_trip(&f, &a);
        }

        #[test]
        fn split_rows_keeps_every_row(seed in 1u64.., n in 0usize..24, cuts in proptest::collection::vec(0usize..24, 0..4)) {
            let mut rng = Rng(seed);
            let f = gen_field(&mut rng, "r", 3);
            let a = gen_array(&mut rng, f.data_type(), n);
            check_split(&f, &a, &cuts);
        }
    }
}
