//! The table config (`key -> value` pairs in the manifest) and its UpdateConfig commits.

use lancelet_table::pb::transaction as t;

use crate::{Dataset, Result};

impl Dataset {
    /// Commits an UpdateConfig transaction: each `(key, Some(value))` sets a key and each
    /// `(key, None)` removes it; `replace` drops every other key first. Returns the new
    /// version.
    ///
    /// ```no_run
    /// # async fn f(ds: lancelet_dataset::Dataset) -> lancelet_dataset::Result<()> {
    /// let ds = ds
    ///     .update_config(vec![("owner".into(), Some("me".into())), ("old".into(), None)], false)
    ///     .await?;
    /// assert_eq!(ds.manifest().config.get("owner").map(String::as_str), Some("me"));
    /// # Ok(()) }
    /// ```
    pub async fn update_config(&self, entries: Vec<(String, Option<String>)>, replace: bool) -> Result<Self> {
        let op = t::Operation::UpdateConfig(t::UpdateConfig {
            config_updates: Some(t::UpdateMap {
                update_entries: entries
                    .into_iter()
                    .map(|(key, value)| t::UpdateMapEntry { key, value })
                    .collect(),
                replace,
            }),
            ..Default::default()
        });
        self.commit_operation(op, None).await
    }
}
