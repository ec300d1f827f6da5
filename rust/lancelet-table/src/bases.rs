//! Base paths: other storage roots a dataset's files may live under.
//!
//! A manifest lists its extra roots in `base_paths` (`BasePath { id, name, is_dataset_root,
//! path }`); a data file, deletion file or index names the root it lives under with
//! `base_id` (absent: the dataset's own root). A root that `is_dataset_root` keeps files as
//! a dataset does (`data/`, `_deletions/`, `_indices/` below it); another keeps them directly
//! inside it. Branches and shallow clones use base paths to refer to the files of the
//! version they started from (pylance 14 gives that root id 0 when no other base exists,
//! else the largest id plus one).
//!
//! Base paths come from manifests, which may be hostile: [`check_base_path`] refuses a path
//! that is relative or climbs with `..`, and [`check_relative`] a file path that would leave
//! its root.

use std::collections::HashMap;

use crate::{pb, Error, Result};

/// The storage options of base `id`: the dataset's own options, overridden by the ones
/// given as `base_{id}.{key}` (pylance's per-base form); other bases' options are dropped.
pub fn base_options(options: &HashMap<String, String>, id: u32) -> HashMap<String, String> {
    let prefix = format!("base_{id}.");
    let mut out: HashMap<String, String> = options
        .iter()
        .filter(|(k, _)| !is_base_option(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in options {
        if let Some(key) = k.strip_prefix(&prefix) {
            out.insert(key.to_string(), v.clone());
        }
    }
    out
}

/// Whether a storage option key is a per-base one (`base_{id}.{key}`).
pub fn is_base_option(key: &str) -> bool {
    key.strip_prefix("base_")
        .and_then(|rest| rest.split_once('.'))
        .is_some_and(|(id, _)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

/// The dataset's own options without the per-base ones.
pub fn own_options(options: &HashMap<String, String>) -> HashMap<String, String> {
    options
        .iter()
        .filter(|(k, _)| !is_base_option(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Refuses a base path a manifest could use to make lancelet read or write elsewhere than
/// a storage root: empty, relative, or with a `.`/`..` segment. URIs with a scheme are
/// checked the same way on their path part.
pub fn check_base_path(path: &str, manifest: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::corrupt(manifest, format!("base path {path:?} {why}")));
    if path.is_empty() {
        return bad("is empty");
    }
    if path.contains('\0') {
        return bad("contains a NUL byte");
    }
    let (scheme, rest) = match path.split_once("://") {
        Some((s, r)) => (Some(s), r),
        None => (None, path),
    };
    if scheme.is_none() && !rest.starts_with('/') {
        return bad("is not an absolute path or URI");
    }
    if rest.split('/').any(|seg| seg == ".." || seg == ".") {
        return bad("climbs out of its directory with '..'");
    }
    if rest.contains('\\') {
        return bad("contains a backslash");
    }
    Ok(())
}

/// Refuses a file path (relative to its root) that could leave the root.
pub fn check_relative(rel: &str, manifest: &str) -> Result<()> {
    let ok = !rel.is_empty()
        && !rel.starts_with('/')
        && !rel.contains('\\')
        && !rel.contains('\0')
        && rel.split('/').all(|s| !s.is_empty() && s != "." && s != "..");
    if ok {
        Ok(())
    } else {
        Err(Error::corrupt(
            manifest,
            format!("file path {rel:?} leaves its directory"),
        ))
    }
}

/// The base path with `id`, refused as corrupt when the manifest has none.
pub fn find_base<'a>(m: &'a pb::Manifest, id: u32, manifest: &str) -> Result<&'a pb::BasePath> {
    m.base_paths.iter().find(|b| b.id == id).ok_or_else(|| {
        Error::corrupt(
            manifest,
            format!("a file names base path {id}, which the manifest lacks"),
        )
    })
}

/// Checks every base path of `m` and that every `base_id` names one of them.
pub fn check_manifest_bases(m: &pb::Manifest, manifest: &str) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for b in &m.base_paths {
        check_base_path(&b.path, manifest)?;
        if !seen.insert(b.id) {
            return Err(Error::corrupt(manifest, format!("base path id {} appears twice", b.id)));
        }
    }
    for f in &m.fragments {
        for id in f
            .files
            .iter()
            .filter_map(|d| d.base_id)
            .chain(f.deletion_file.as_ref().and_then(|d| d.base_id))
        {
            find_base(m, id, manifest)?;
        }
    }
    Ok(())
}

/// The id a new base path gets: 0 when there are none, else the largest plus one (pylance's
/// rule for clone and branch roots; `add_bases` follows it too).
pub fn next_base_id(bases: &[pb::BasePath]) -> u32 {
    bases.iter().map(|b| b.id).max().map_or(0, |m| m.saturating_add(1))
}

/// Points every file of `m` (data, deletion) and every index entry in `indices` that lives
/// in the dataset's own root at base `id` instead: what a branch or a shallow clone does
/// with the files it inherits.
pub fn rebase_own_files(m: &mut pb::Manifest, indices: &mut [pb::IndexMetadata], id: u32) {
    for f in &mut m.fragments {
        for d in &mut f.files {
            d.base_id.get_or_insert(id);
        }
        if let Some(d) = f.deletion_file.as_mut() {
            d.base_id.get_or_insert(id);
        }
    }
    for i in indices {
        i.base_id.get_or_insert(id);
    }
}

/// Removes every base reference (a deep clone's files all live in its own root).
pub fn drop_bases(m: &mut pb::Manifest, indices: &mut [pb::IndexMetadata]) {
    m.base_paths.clear();
    for f in &mut m.fragments {
        for d in &mut f.files {
            d.base_id = None;
        }
        if let Some(d) = f.deletion_file.as_mut() {
            d.base_id = None;
        }
    }
    for i in indices {
        i.base_id = None;
    }
}

/// Where a file lives in its root: `{dir}/{rel}` in a dataset root, `{rel}` otherwise.
pub fn path_in_base(is_dataset_root: bool, dir: &str, rel: &str) -> String {
    if is_dataset_root {
        format!("{dir}/{rel}")
    } else {
        rel.to_string()
    }
}

/// Adds `new` bases to `existing` (an UpdateBases or an Overwrite's initial bases): an id
/// of 0 on an unnamed duplicate is not special; ids, names and paths must stay distinct.
pub fn add_bases(existing: &mut Vec<pb::BasePath>, new: &[pb::BasePath]) -> Result<()> {
    for b in new {
        check_base_path(&b.path, "new base path").map_err(|_| {
            Error::InvalidArgument(format!(
                "base path {:?} must be an absolute path or a URI without '..'",
                b.path
            ))
        })?;
        if existing.iter().any(|e| e.id == b.id) {
            return Err(Error::InvalidArgument(format!("base path id {} is already used", b.id)));
        }
        if let Some(name) = b.name.as_deref() {
            if existing.iter().any(|e| e.name.as_deref() == Some(name)) {
                return Err(Error::InvalidArgument(format!(
                    "a base path named {name:?} exists already"
                )));
            }
        }
        if existing.iter().any(|e| e.path == b.path) {
            return Err(Error::InvalidArgument(format!(
                "base path {:?} is already registered",
                b.path
            )));
        }
        existing.push(b.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_base_paths_are_refused() {
        for bad in [
            "",
            "rel/dir",
            "../x",
            "/a/../b",
            "file:///a/../../etc",
            "/a/./b",
            "s3://b/../x",
        ] {
            assert!(check_base_path(bad, "m").is_err(), "{bad}");
        }
        for good in ["/data/bases/b1", "file:///data/b", "s3://bucket/p", "memory://x"] {
            assert!(check_base_path(good, "m").is_ok(), "{good}");
        }
        for bad in ["", "/x", "../x", "a/../../b", "a//b", "./x"] {
            assert!(check_relative(bad, "m").is_err(), "{bad}");
        }
        assert!(check_relative("a.lance", "m").is_ok());
    }

    #[test]
    fn per_base_options_override_the_datasets() {
        let opts: HashMap<String, String> = [("region", "a"), ("base_1.region", "b"), ("base_2.x", "y")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let o1 = base_options(&opts, 1);
        assert_eq!(o1.get("region").map(String::as_str), Some("b"));
        assert!(!o1.contains_key("x"));
        assert_eq!(base_options(&opts, 3).len(), 1);
        assert_eq!(own_options(&opts).len(), 1);
    }

    #[test]
    fn ids_start_at_zero_then_grow() {
        assert_eq!(next_base_id(&[]), 0);
        let b = pb::BasePath {
            id: 4,
            ..Default::default()
        };
        assert_eq!(next_base_id(&[b]), 5);
    }
}
