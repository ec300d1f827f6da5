//! Changing rows in place: [`delete`] by predicate, [`update`] by SQL, [`merge_insert`]
//! (upserts keyed on columns), and the SQL [`condition`]s they evaluate over batches.

pub mod condition;
pub mod delete;
pub mod merge_insert;
pub mod update;
