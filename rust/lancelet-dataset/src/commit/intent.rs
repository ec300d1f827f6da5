//! Commits of fragments written earlier (by distributed jobs) with an explicit intent.
//!
//! A job that plans a write, writes its fragments on many machines and commits them at the
//! end must say what its commit means, or the commit can do what nobody asked: an
//! "overwrite that creates" planned when the dataset was absent would, once another job
//! created the dataset meanwhile, replace that job's rows. [`CommitIntent`] names the three
//! meanings a job can have, and [`commit_with_intent`] never does more than its intent:
//!
//! - [`CommitIntent::CreateOrAppend`]: create the dataset when absent; when another writer
//!   created it first (before or during this commit), append to it instead.
//! - [`CommitIntent::Append`]: append, planned against version `V` (concurrent commits are
//!   checked against `V` as for any write).
//! - [`CommitIntent::Overwrite`]: replace the rows of version `V`; with no `V` the dataset
//!   must still be absent (it is then created), and a dataset created meanwhile makes the
//!   commit fail with a conflict instead of being replaced.
//!
//! An I/O error is never followed by another attempt: the manifest may have landed (see
//! `lancelet_table::commit`), and appending the same fragments again would duplicate rows.
//!
//! ```no_run
//! # async fn demo(loc: lancelet_dataset::Location, frags: Vec<lancelet_table::pb::DataFragment>,
//! #               schema: arrow_schema::SchemaRef) -> lancelet_dataset::Result<()> {
//! use lancelet_dataset::commit::intent::{commit_with_intent, CommitIntent};
//! let params = lancelet_dataset::write::WriteParams::default();
//! let ds = commit_with_intent(&loc, CommitIntent::CreateOrAppend(schema), frags, &params).await?;
//! # Ok(()) }
//! ```

use std::collections::HashSet;

use arrow_schema::SchemaRef;
use lancelet_file::schema::to_lance_fields;
use lancelet_table::commit::ConflictKind;
use lancelet_table::pb;

use crate::write::{commit_fragments, commit_fragments_on, open_existing, CommitKind, WriteParams};
use crate::{Dataset, Error, Location, Result};

/// What a commit of fragments written earlier means to do (see the module docs).
#[derive(Debug, Clone)]
pub enum CommitIntent {
    /// Create the dataset with this schema when absent, else append to it (its schema must
    /// hold the fragments' fields).
    CreateOrAppend(SchemaRef),
    /// Append to the dataset as it was at `read_version`.
    Append {
        /// The version the write was planned against.
        read_version: u64,
    },
    /// Replace the rows (and schema) of `read_version`; `None`: create the dataset, which
    /// must be absent.
    Overwrite {
        /// The new schema.
        schema: SchemaRef,
        /// The version the write was planned against (`None`: the dataset was absent).
        read_version: Option<u64>,
    },
}

/// How many times a create-or-append goes back to look for a dataset that a concurrent
/// create made appear (each pass either commits or sees the dataset).
const CREATE_OR_APPEND_PASSES: usize = 3;

/// Commits `fragments` (written by [`crate::write::write_fragments`] or a distributed job)
/// as one new version at `loc`, doing exactly what `intent` says and never replacing rows
/// the job did not see.
pub async fn commit_with_intent(
    loc: &Location,
    intent: CommitIntent,
    fragments: Vec<pb::DataFragment>,
    params: &WriteParams,
) -> Result<Dataset> {
    match intent {
        CommitIntent::Append { read_version } => {
            commit_fragments(loc, CommitKind::Append, fragments, Some(read_version), params).await
        }
        CommitIntent::Overwrite {
            schema,
            read_version: Some(v),
        } => commit_fragments(loc, CommitKind::Overwrite(schema), fragments, Some(v), params).await,
        CommitIntent::Overwrite {
            schema,
            read_version: None,
        } => {
            if let Some(ds) = open_existing(loc).await? {
                return Err(created_meanwhile(loc, ds.version()));
            }
            commit_fragments_on(loc, None, CommitKind::Overwrite(schema), fragments, params).await
        }
        CommitIntent::CreateOrAppend(schema) => create_or_append(loc, schema, fragments, params).await,
    }
}

async fn create_or_append(
    loc: &Location,
    schema: SchemaRef,
    fragments: Vec<pb::DataFragment>,
    params: &WriteParams,
) -> Result<Dataset> {
    let mut last_err = None;
    for _ in 0..CREATE_OR_APPEND_PASSES {
        match open_existing(loc).await? {
            Some(ds) => {
                check_same_fields(&schema, &ds)?;
                return commit_fragments_on(loc, Some(ds), CommitKind::Append, fragments, params).await;
            }
            None => {
                let created = commit_fragments_on(
                    loc,
                    None,
                    CommitKind::Overwrite(schema.clone()),
                    fragments.clone(),
                    params,
                )
                .await;
                match created {
                    // Another writer created the dataset first: look again, and append.
                    Err(e @ Error::Table(lancelet_table::Error::CommitConflict { .. })) => last_err = Some(e),
                    other => return other,
                }
            }
        }
    }
    Err(last_err.unwrap_or_else(|| Error::InvalidArgument("create-or-append made no attempt".into())))
}

/// The fragments were written with `schema`'s field ids: appending them to a dataset that
/// another writer created needs the same fields (ids, names and types).
fn check_same_fields(schema: &SchemaRef, ds: &Dataset) -> Result<()> {
    let ours = to_lance_fields(schema)?;
    let theirs: HashSet<(i32, i32, &str, &str)> = ds
        .manifest()
        .fields
        .iter()
        .map(|f| (f.id, f.parent_id, f.name.as_str(), f.logical_type.as_str()))
        .collect();
    let differ: Vec<&str> = ours
        .iter()
        .filter(|f| !theirs.contains(&(f.id, f.parent_id, f.name.as_str(), f.logical_type.as_str())))
        .map(|f| f.name.as_str())
        .collect();
    if differ.is_empty() {
        return Ok(());
    }
    Err(Error::SchemaMismatch(format!(
        "{} was created by another writer with a different schema (columns {differ:?} differ); \
         the rows written for it were not committed",
        ds.root().display()
    )))
}

fn created_meanwhile(loc: &Location, version: u64) -> Error {
    Error::Table(lancelet_table::Error::CommitConflict {
        path: loc.store.root_display(),
        message: format!(
            "Commit conflict for version {version}: another writer created the dataset after this overwrite was planned \
             on an absent dataset; it is not replaced"
        ),
        kind: ConflictKind::TableReplaced,
    })
}
