//! Branch references as pylance 14 records them: `_refs/branches/{name}.json` (a `/` in the
//! name percent-encoded as `%2F`), each naming the branch it was created from and the
//! version of that branch, with the branch's own manifests under `tree/{name}/`.
//!
//! A reference file is written pretty-printed with camelCase keys: `parentBranch` (null for
//! main), `identifier.version_mapping` (the lineage, `[[version, 32-hex id], ...]`),
//! `parentVersion`, `createAt` (unix seconds), `manifestSize` (of the parent manifest) and
//! `metadata`.

use serde_json::{json, Value};

use crate::{Error, Result};
use lancelet_io::Storage;

/// The directory holding branch reference files, relative to the dataset root.
pub const BRANCHES_DIR: &str = "_refs/branches";

/// The directory under which each branch keeps its own versions and files.
pub const TREE_DIR: &str = "tree";

/// One branch reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchRef {
    /// The branch name (`/` decoded).
    pub name: String,
    /// The branch it was created from; `None` for the main branch.
    pub parent_branch: Option<String>,
    /// The version of the parent branch it was created from.
    pub parent_version: u64,
    /// The whole reference file as read (lineage, times, sizes, metadata).
    pub raw: Value,
}

impl BranchRef {
    /// The branch's own directory relative to the dataset root (`tree/{name}`).
    pub fn root(&self) -> String {
        format!("{TREE_DIR}/{}", self.name)
    }

    /// Whether the branch was created from the main branch.
    pub fn forks_main(&self) -> bool {
        is_main(self.parent_branch.as_deref())
    }
}

/// Whether `branch` (as a tag or a reference records it) means the main branch.
pub fn is_main(branch: Option<&str>) -> bool {
    matches!(branch, None | Some("main") | Some(""))
}

fn decode_name(file_stem: &str) -> String {
    file_stem.replace("%2F", "/").replace("%2f", "/")
}

/// The reference file of branch `name` (a `/` percent-encoded), relative to the root.
pub fn ref_path(name: &str) -> String {
    format!("{BRANCHES_DIR}/{}.json", name.replace('/', "%2F"))
}

/// Refuses names pylance 14 refuses: `main` (the default branch), empty or `/`-edged names,
/// `..` or `\\`, a `.lock` suffix, and segments with other characters than letters, digits,
/// `.`, `-` and `_`.
pub fn check_branch_name(name: &str) -> Result<()> {
    let bad = |why: String| Err(Error::InvalidArgument(format!("invalid branch name {name:?}: {why}")));
    if name == "main" {
        return bad("\"main\" is reserved for the default branch".into());
    }
    if name.is_empty() {
        return bad("it is empty".into());
    }
    if name.starts_with('/') || name.ends_with('/') {
        return bad("it cannot start or end with '/'".into());
    }
    if name.contains("..") || name.contains('\\') {
        return bad("it cannot contain '..' or '\\'".into());
    }
    if name.ends_with(".lock") {
        return bad("it cannot end with '.lock'".into());
    }
    for seg in name.split('/') {
        if seg.is_empty() || !seg.chars().all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_')) {
            return bad(format!(
                "segment {seg:?} may only hold letters, digits, '.', '-' and '_'"
            ));
        }
    }
    Ok(())
}

fn parse_ref(name: String, bytes: &[u8], path: &str) -> Result<BranchRef> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| Error::corrupt(path, format!("branch file is not JSON: {e}")))?;
    let parent_version = v
        .get("parentVersion")
        .and_then(Value::as_u64)
        .ok_or_else(|| Error::corrupt(path, "branch file has no parentVersion"))?;
    let parent_branch = v.get("parentBranch").and_then(Value::as_str).map(str::to_string);
    if let Some(p) = parent_branch.as_deref().filter(|p| !is_main(Some(p))) {
        check_branch_name(p).map_err(|_| Error::corrupt(path, format!("bad parent branch name {p:?}")))?;
    }
    Ok(BranchRef {
        name,
        parent_branch,
        parent_version,
        raw: v,
    })
}

/// Reads the reference of branch `name`; a missing one is [`Error::is_not_found`].
pub async fn get_branch(store: &dyn Storage, name: &str) -> Result<BranchRef> {
    check_branch_name(name)?;
    let path = ref_path(name);
    let bytes = store.read(&path).await.map_err(|e| match e {
        lancelet_io::Error::NotFound { .. } => Error::not_found(format!("branch {name:?}")),
        e => e.into(),
    })?;
    parse_ref(name.to_string(), &bytes, &path)
}

/// The body of a new reference file: `parent` (None for main) at `parent_version`, the
/// parent's lineage (`parent_mapping`) extended with a fresh identifier.
pub fn new_ref_body(parent: Option<&str>, parent_version: u64, parent_mapping: &[Value], manifest_size: u64) -> Value {
    let mut mapping: Vec<Value> = parent_mapping.to_vec();
    mapping.push(json!([parent_version, uuid::Uuid::new_v4().simple().to_string()]));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    json!({
        "parentBranch": parent,
        "identifier": {"version_mapping": mapping},
        "parentVersion": parent_version,
        "createAt": now,
        "manifestSize": manifest_size,
        "metadata": {},
    })
}

/// The lineage recorded in a reference (`identifier.version_mapping`), empty when absent.
pub fn version_mapping(raw: &Value) -> Vec<Value> {
    raw.get("identifier")
        .and_then(|i| i.get("version_mapping"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Writes the reference of a new branch; [`Error::AlreadyExists`] when there is one.
pub async fn create_ref(store: &dyn Storage, name: &str, body: &Value) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(body).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    if !store.put_if_absent(&ref_path(name), bytes.into()).await? {
        return Err(Error::AlreadyExists(format!("branch {name:?}")));
    }
    Ok(())
}

/// Replaces the `metadata` object of branch `name`'s reference.
pub async fn replace_metadata(store: &dyn Storage, name: &str, metadata: Value) -> Result<()> {
    let mut r = get_branch(store, name).await?;
    if let Some(o) = r.raw.as_object_mut() {
        o.insert("metadata".into(), metadata);
    }
    let bytes = serde_json::to_vec_pretty(&r.raw).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    Ok(store.put(&ref_path(name), bytes.into()).await?)
}

/// Deletes every file under `dir` (recursively).
pub async fn remove_tree(store: &dyn Storage, dir: &str) -> Result<()> {
    let files: Vec<String> = store.list_meta(dir).await?.into_iter().map(|f| f.name).collect();
    for f in &files {
        store.delete(&format!("{dir}/{f}")).await?;
    }
    for entry in store.list(dir).await? {
        if !files.contains(&entry) {
            Box::pin(remove_tree(store, &format!("{dir}/{entry}"))).await?;
        }
    }
    if let Some(p) = store.local_path(dir) {
        let _ = std::fs::remove_dir(p);
    }
    Ok(())
}

/// Deletes branch `name`: its reference, then its directory with every file the branch
/// wrote. Refused while another branch was created from it (its files would be lost).
pub async fn delete_branch(store: &dyn Storage, name: &str) -> Result<()> {
    let me = get_branch(store, name).await?;
    let children: Vec<String> = list_branches(store)
        .await?
        .into_iter()
        .filter(|b| b.parent_branch.as_deref() == Some(name))
        .map(|b| format!("{} (created from its version {})", b.name, b.parent_version))
        .collect();
    if !children.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "branch {name:?} cannot be deleted: branch(es) {} were created from it",
            children.join(", ")
        )));
    }
    store.delete(&ref_path(&me.name)).await?;
    remove_tree(store, &me.root()).await?;
    // Parent directories of a nested name (`tree/a` for `a/b`) go when they are empty.
    let mut parts: Vec<&str> = name.split('/').collect();
    while parts.len() > 1 {
        parts.pop();
        let dir = format!("{TREE_DIR}/{}", parts.join("/"));
        if let Some(p) = store.local_path(&dir) {
            if std::fs::remove_dir(p).is_err() {
                break;
            }
        }
    }
    Ok(())
}

/// Every branch reference of the dataset, sorted by name. A reference file that cannot be
/// read as one is [`Error::Corrupt`]: guessing would risk deleting what the branch needs.
pub async fn list_branches(store: &dyn Storage) -> Result<Vec<BranchRef>> {
    let mut out = Vec::new();
    for file in store.list(BRANCHES_DIR).await? {
        let Some(stem) = file.strip_suffix(".json") else {
            continue;
        };
        let path = format!("{BRANCHES_DIR}/{file}");
        let name = decode_name(stem);
        if check_branch_name(&name).is_err() {
            return Err(Error::corrupt(&path, format!("bad branch name {name:?}")));
        }
        let bytes = store.read(&path).await?;
        out.push(parse_ref(name, &bytes, &path)?);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decode_slashes_and_main_is_recognised() {
        assert_eq!(decode_name("feat%2Fx"), "feat/x");
        assert!(is_main(None) && is_main(Some("main")) && !is_main(Some("dev")));
        assert_eq!(ref_path("feat/x"), "_refs/branches/feat%2Fx.json");
    }

    #[test]
    fn branch_names_follow_pylances_rules() {
        for ok in ["dev", "feat/x", "_refs", "-x", "é", "v1.2"] {
            assert!(check_branch_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "main", "", "a b", "x.lock", "a..b", "..", "a/", "/a", "a//b", "a\\b", "a%2Fb",
        ] {
            assert!(check_branch_name(bad).is_err(), "{bad}");
        }
    }
}
