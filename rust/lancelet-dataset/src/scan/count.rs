//! Counting live rows: of the whole version, of some fragments, or matching a SQL filter.
//!
//! Without a filter the count comes from fragment metadata (physical rows minus deletions)
//! and reads no data. With a filter, the scan is planned with no output columns and its
//! row-range tasks count their matches concurrently.

use std::collections::HashMap;
use std::sync::Arc;

use lancelet_index::rowaddr::FragmentRows;
use lancelet_table::manifest::live_rows;

use crate::scan::{Columns, Scan, ScanOptions};
use crate::{Dataset, Result};

impl Dataset {
    /// Live rows matching `filter` (all live rows when it is `None`; a blank filter is an
    /// error), counted in
    /// `fragments` only when given (an unknown fragment id is an `InvalidArgument` error).
    ///
    /// ```no_run
    /// # async fn f(ds: lancelet_dataset::Dataset) -> lancelet_dataset::Result<()> {
    /// let all = ds.count_rows_where(None, None).await?;
    /// let big = ds.count_rows_where(Some("x > 10"), Some(&[0, 2])).await?;
    /// assert!(big <= all);
    /// # Ok(()) }
    /// ```
    pub async fn count_rows_where(&self, filter: Option<&str>, fragments: Option<&[u64]>) -> Result<u64> {
        if let Some(f) = filter {
            crate::scan::refuse_blank_filter(f)?;
        }
        let Some(filter) = filter else {
            return match fragments {
                None => Ok(self.count_rows()),
                Some(ids) => ids.iter().try_fold(0, |n, &id| Ok(n + live_rows(self.fragment(id)?))),
            };
        };
        if fragments.is_none() {
            if let Some(n) = self.count_from_index(filter).await? {
                return Ok(n);
            }
        }
        let opts = ScanOptions {
            columns: Columns::Names(Vec::new()),
            filter: Some(filter.to_string()),
            fragments: fragments.map(<[u64]>::to_vec),
            ..ScanOptions::default()
        };
        let scan = Arc::new(Scan::plan(self, opts).await?);
        let counts = futures::future::try_join_all((0..scan.num_tasks()).map(|i| {
            let scan = scan.clone();
            async move { scan.count_task(i).await }
        }))
        .await?;
        Ok(counts.into_iter().sum())
    }
}

impl Dataset {
    /// The count of rows matching `filter` when scalar indexes answer it exactly: in each
    /// fragment the answer covers, its rows that are still live; the other fragments are
    /// counted by a scan. `None` when no index answers the whole filter exactly.
    async fn count_from_index(&self, filter: &str) -> Result<Option<u64>> {
        let bound = crate::scan::plan::plan_filter(self.scan_schema(), filter)?;
        let Some((rows, covered)) = crate::scan::index_query::exact_rows(self, &bound.expr).await? else {
            return Ok(None);
        };
        let by_fragment: HashMap<u32, &FragmentRows> = rows.fragments().collect();
        let mut n = 0;
        let mut rest = Vec::new();
        for f in self.fragments() {
            let Some(id) = u32::try_from(f.id).ok().filter(|id| covered.contains(id)) else {
                rest.push(f.id);
                continue;
            };
            n += match by_fragment.get(&id) {
                None => 0,
                Some(FragmentRows::Full) => live_rows(f),
                Some(FragmentRows::Offsets(offsets)) => {
                    let end = u32::try_from(f.physical_rows).unwrap_or(u32::MAX);
                    let deleted = self.deleted_rows(f).await?;
                    let gone = deleted.iter().filter(|&&r| offsets.contains(r)).count() as u64;
                    offsets.range_cardinality(0..end) - gone
                }
            };
        }
        if !rest.is_empty() {
            n += Box::pin(self.count_rows_where(Some(filter), Some(&rest))).await?;
        }
        Ok(Some(n))
    }
}
