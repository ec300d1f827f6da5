//! The table config and metadata (`key -> value` maps in the manifest) and their
//! UpdateConfig commits.

use lancelet_table::pb::transaction as t;

use crate::{Dataset, Error, Result};

/// Which key/value map of the manifest an [`Dataset::update_metadata`] commit changes (the
/// metadata of fields: [`Dataset::update_field_metadata`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataTarget {
    /// The table config (`Dataset::manifest().config`, `lance.auto_cleanup.*` and the like).
    Config,
    /// The table metadata (`Dataset::manifest().table_metadata`): pylance's `ds.metadata`.
    Table,
    /// The schema's metadata (the Arrow schema's metadata).
    Schema,
}

/// Changes to one key/value map: `(key, Some(value))` sets a key, `(key, None)` removes it.
pub type MapChanges = Vec<(String, Option<String>)>;

fn update_map(entries: MapChanges, replace: bool) -> t::UpdateMap {
    t::UpdateMap {
        update_entries: entries
            .into_iter()
            .map(|(key, value)| t::UpdateMapEntry { key, value })
            .collect(),
        replace,
    }
}

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
        self.update_metadata(MetadataTarget::Config, entries, replace).await
    }

    /// Commits an UpdateConfig transaction that changes one key/value map of the manifest
    /// (`target`): each `(key, Some(value))` sets a key, each `(key, None)` removes it, and
    /// `replace` drops every other key of that map first. Returns the new version.
    ///
    /// ```no_run
    /// # async fn f(ds: lancelet_dataset::Dataset) -> lancelet_dataset::Result<()> {
    /// use lancelet_dataset::maintain::MetadataTarget;
    /// let ds = ds
    ///     .update_metadata(MetadataTarget::Table, vec![("owner".into(), Some("me".into()))], false)
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn update_metadata(
        &self,
        target: MetadataTarget,
        entries: Vec<(String, Option<String>)>,
        replace: bool,
    ) -> Result<Self> {
        let map = update_map(entries, replace);
        let mut u = t::UpdateConfig::default();
        match target {
            MetadataTarget::Config => u.config_updates = Some(map),
            MetadataTarget::Table => u.table_metadata_updates = Some(map),
            MetadataTarget::Schema => u.schema_metadata_updates = Some(map),
        }
        self.commit_operation(t::Operation::UpdateConfig(u), None).await
    }

    /// Changes the metadata of fields named by dotted path (`"a"`, `"s.x"`) in one commit,
    /// all or nothing, as [`Dataset::update_metadata`] changes one map; a path that names no
    /// field is an [`Error::InvalidArgument`].
    pub async fn update_field_metadata(&self, updates: Vec<(String, MapChanges)>, replace: bool) -> Result<Self> {
        let mut u = t::UpdateConfig::default();
        for (path, entries) in updates {
            u.field_metadata_updates
                .insert(self.field_id(&path)?, update_map(entries, replace));
        }
        self.commit_operation(t::Operation::UpdateConfig(u), None).await
    }

    /// The id of the field at dotted path `path` in this version's schema.
    fn field_id(&self, path: &str) -> Result<i32> {
        let fields = &self.manifest().fields;
        let mut parent = -1;
        for name in path.split('.') {
            let f = fields
                .iter()
                .find(|f| f.parent_id == parent && f.name == name)
                .ok_or_else(|| Error::InvalidArgument(format!("field {path:?} is not in the dataset's schema")))?;
            parent = f.id;
        }
        Ok(parent)
    }
}
