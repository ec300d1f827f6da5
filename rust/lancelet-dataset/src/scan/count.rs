//! Counting live rows: of the whole version, of some fragments, or matching a SQL filter.
//!
//! Without a filter the count comes from fragment metadata (physical rows minus deletions)
//! and reads no data. With a filter, the scan is planned with no output columns and its
//! row-range tasks count their matches concurrently.

use std::sync::Arc;

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
