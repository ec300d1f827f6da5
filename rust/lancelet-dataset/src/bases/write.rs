//! Writing a dataset whose new files go to another base path, and registering base paths
//! when creating one (pylance's `initial_bases` / `target_bases`).
//!
//! New data files go to the target base: under `{base}/data/` when it is a dataset root,
//! directly inside `{base}/` otherwise, each with the base's id in `base_id`. The dataset's
//! own root keeps `_versions/` and `_transactions/`. A create (or an overwrite that creates
//! the dataset) records `initial_bases` in its Overwrite transaction; other writes may only
//! target bases that exist.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::RecordBatchReader;
use bytes::Bytes;
use lancelet_file::schema::to_lance_fields;
use lancelet_table::commit::new_transaction;
use lancelet_table::object::Location;
use lancelet_table::pb;
use lancelet_table::pb::transaction::Operation;

use crate::bases::targets::SpreadStore;
use crate::write::{commit_options, open_existing, write_fragments_on, WriteMode, WriteParams};
use crate::{Dataset, Error, Result};

impl Dataset {
    /// Where the new data files of a write go: `targets` (base names or paths; the dataset's
    /// own URI means its root) in turn, or every base (`all = Some(include_root)`); `None`
    /// when they all go to the dataset's root. See [`crate::bases::targets`].
    pub(crate) fn target_stores(&self, targets: &[String], all: Option<bool>) -> Result<Option<SpreadStore>> {
        crate::bases::targets::resolve(
            &self.root().display().to_string(),
            self.store(),
            self.base_paths(),
            targets,
            all,
            &self.caches,
        )
    }
}

/// Writes `reader` as [`crate::write::write_dataset`] does, registering `initial_bases`
/// (create only) and spreading the new data files over `targets` (names or paths; the
/// dataset's own root when empty) or over every base (`all = Some(include_root)`).
pub async fn write_with_bases(
    loc: &Location,
    reader: Box<dyn RecordBatchReader + Send>,
    params: WriteParams,
    initial_bases: Vec<pb::BasePath>,
    targets: Vec<String>,
    all: Option<bool>,
    storage_options: std::collections::HashMap<String, String>,
) -> Result<Dataset> {
    let existing = open_existing(loc).await?;
    let appending = params.mode == WriteMode::Append && existing.is_some();
    if !initial_bases.is_empty() && existing.is_some() {
        return Err(Error::InvalidArgument(format!(
            "cannot register new bases when writing to an existing dataset ({:?} mode): only creating a dataset \
             registers initial_bases; use add_bases",
            params.mode
        )));
    }
    let mut bases: Vec<pb::BasePath> = existing.as_ref().map(|d| d.base_paths().to_vec()).unwrap_or_default();
    lancelet_table::bases::add_bases(&mut bases, &initial_bases)?;
    let caches = crate::Caches::default();
    if let Ok(mut o) = caches.storage_options.lock() {
        *o = storage_options.clone();
    }
    let root_uri = match &loc.local_root {
        Some(p) => p.display().to_string(),
        None => loc.store.root_display(),
    };
    let spread = crate::bases::targets::resolve(&root_uri, &loc.store, &bases, &targets, all, &caches)?.map(Arc::new);
    let write_loc = match &spread {
        None => loc.clone(),
        Some(s) => Location {
            store: s.clone(),
            local_root: None,
        },
    };
    let (existing, mut staged) = write_fragments_on(&write_loc, existing, reader, &params).await?;
    if let Some(s) = &spread {
        s.mark(&mut staged.fragments);
    }
    let result = commit_staged(
        loc,
        existing,
        appending,
        &staged,
        &params,
        initial_bases,
        &storage_options,
    )
    .await;
    if let Err(e) = &result {
        if crate::write::nothing_committed(e) {
            crate::write::remove_fragments(write_loc.store.as_ref(), &staged.fragments).await;
        }
    }
    result
}

async fn commit_staged(
    loc: &Location,
    existing: Option<Dataset>,
    appending: bool,
    staged: &crate::write::StagedWrite,
    params: &WriteParams,
    initial_bases: Vec<pb::BasePath>,
    storage_options: &std::collections::HashMap<String, String>,
) -> Result<Dataset> {
    let fragments = staged.fragments.clone();
    let mut version = params.file_version.name().to_string();
    let op = if appending {
        if let Some(ds) = &existing {
            version = ds.data_storage_version();
        }
        Operation::Append(pb::transaction::Append { fragments })
    } else {
        if let Some(d) = fragments.first().and_then(|f| f.files.first()) {
            version = format!("{}.{}", d.file_major_version, d.file_minor_version);
        }
        Operation::Overwrite(pb::transaction::Overwrite {
            fragments,
            schema: to_lance_fields(&staged.schema)?,
            schema_metadata: staged
                .schema
                .metadata()
                .iter()
                .map(|(k, v)| (k.clone(), Bytes::from(v.clone().into_bytes())))
                .collect(),
            config_upsert_values: if existing.is_none() {
                params.config.clone()
            } else {
                Default::default()
            },
            initial_bases,
        })
    };
    let read_version = existing.as_ref().map(|d| d.version()).unwrap_or(0);
    let mut txn = new_transaction(read_version, op, params.commit_message.as_deref());
    txn.transaction_properties.extend(params.transaction_properties.clone());
    let opts = commit_options(params, version);
    let base = existing.as_ref().map(|d| (d.manifest(), d.naming()));
    let lock = params.commit_lock.as_ref();
    let (m, naming) = crate::commit::commit_with_hooks(loc.store.as_ref(), base, &txn, &opts, lock, || Ok(())).await?;
    let root = loc
        .local_root
        .clone()
        .unwrap_or_else(|| PathBuf::from(loc.store.root_display()));
    let ds = Dataset::from_manifest(loc.store.clone(), root, m, naming, Arc::default(), None)?
        .with_storage_options(storage_options.clone());
    ds.set_commit_lock(params.commit_lock.clone());
    Ok(ds.after_commit().await)
}
