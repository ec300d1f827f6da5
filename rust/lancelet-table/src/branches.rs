//! Branch references as pylance 14 records them: `_refs/branches/{name}.json` (a `/` in the
//! name percent-encoded as `%2F`), each naming the branch it was created from and the
//! version of that branch, with the branch's own manifests under `tree/{name}/`.
//!
//! lancelet does not open or write branches yet; it reads these references so that nothing
//! it does on the main branch breaks one (cleanup keeps what a branch still needs).

use serde_json::Value;

use crate::store::Store;
use crate::{Error, Result};

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

/// Every branch reference of the dataset, sorted by name. A reference file that cannot be
/// read as one is [`Error::Corrupt`]: guessing would risk deleting what the branch needs.
pub async fn list_branches(store: &dyn Store) -> Result<Vec<BranchRef>> {
    let mut out = Vec::new();
    for file in store.list(BRANCHES_DIR).await? {
        let Some(stem) = file.strip_suffix(".json") else {
            continue;
        };
        let path = format!("{BRANCHES_DIR}/{file}");
        let bytes = store.read(&path).await?;
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| Error::corrupt(&path, format!("branch file is not JSON: {e}")))?;
        let parent_version = v
            .get("parentVersion")
            .and_then(Value::as_u64)
            .ok_or_else(|| Error::corrupt(&path, "branch file has no parentVersion"))?;
        out.push(BranchRef {
            name: decode_name(stem),
            parent_branch: v.get("parentBranch").and_then(Value::as_str).map(str::to_string),
            parent_version,
        });
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
    }
}
