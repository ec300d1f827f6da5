//! Finding the versions of a dataset.

use crate::naming::{ManifestNaming, LATEST_VERSION_HINT, VERSIONS_DIR};
use crate::{manifest, pb, Error, Result};
use lancelet_io::Storage;

/// One version of a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionEntry {
    /// The version number (from 1).
    pub version: u64,
    /// How its manifest file is named.
    pub naming: ManifestNaming,
    /// The manifest's path relative to the dataset root.
    pub path: String,
}

/// Every version of a dataset, oldest first.
pub async fn list_versions(store: &dyn Storage) -> Result<Vec<VersionEntry>> {
    let mut out: Vec<VersionEntry> = store
        .list(VERSIONS_DIR)
        .await?
        .into_iter()
        .filter_map(|name| {
            let (version, naming) = ManifestNaming::parse(&name)?;
            Some(VersionEntry {
                version,
                naming,
                path: format!("{VERSIONS_DIR}/{name}"),
            })
        })
        .collect();
    out.sort_by_key(|v| v.version);
    // A dataset switched from V1 to V2 names may list a version twice; keep one.
    out.dedup_by_key(|v| v.version);
    Ok(out)
}

/// The newest version, or `None` for a directory without manifests.
pub async fn latest_version(store: &dyn Storage) -> Result<Option<VersionEntry>> {
    if let Some(entry) = latest_from_hint(store).await {
        return Ok(Some(entry));
    }
    Ok(list_versions(store).await?.pop())
}

/// The manifest of `version` if it exists, under either naming scheme.
async fn probe(store: &dyn Storage, version: u64) -> Option<VersionEntry> {
    probe_named(store, version, &[ManifestNaming::V2, ManifestNaming::V1]).await
}

/// The manifest of `version` if it exists under one of `namings` (tried in order).
async fn probe_named(store: &dyn Storage, version: u64, namings: &[ManifestNaming]) -> Option<VersionEntry> {
    for &naming in namings {
        let path = format!("{VERSIONS_DIR}/{}", naming.file_name(version));
        if store.exists(&path).await.ok()? {
            return Some(VersionEntry { version, naming, path });
        }
    }
    None
}

/// How manifests newer than one named `naming` may be named (a dataset's naming only ever
/// changes from V1 to V2).
fn newer_namings(naming: ManifestNaming) -> &'static [ManifestNaming] {
    match naming {
        ManifestNaming::V1 => &[ManifestNaming::V1, ManifestNaming::V2],
        ManifestNaming::V2 => &[ManifestNaming::V2],
    }
}

/// Offsets above a candidate latest version checked for manifests past a gap.
const GAP_PROBES: u32 = 13;

/// The newest version found from the latest-version hint without listing `_versions/`
/// (a directory of thousands of manifests costs a millisecond or more to list), on stores
/// where a check is cheap (local disk; an object store lists in one request). Versions are committed one after
/// another, so the versions above any existing one are contiguous up to the latest: from
/// the hinted version, an exponential then binary search over existence finds it. A gap
/// (versions removed by cleanup between a kept old version and newer ones, possible only
/// when the hint is stale: our cleanup rewrites it first) is looked for at power-of-two
/// offsets past the result; `None` (list instead) when the hint is missing,
/// unreadable or names no manifest, or a gap shows.
async fn latest_from_hint(store: &dyn Storage) -> Option<VersionEntry> {
    if !store.probes_versions() {
        return None;
    }
    let hinted = read_hint(store).await?;
    let mut found = probe(store, hinted).await?;
    // Exponential search for a missing version above, then binary search below it.
    let mut step = 1u64;
    let missing = loop {
        let v = found.version.checked_add(step)?;
        match probe_named(store, v, newer_namings(found.naming)).await {
            Some(e) => {
                found = e;
                step = step.checked_mul(2)?;
            }
            None => break v,
        }
    };
    let (mut lo, mut hi) = (found.version, missing);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match probe_named(store, mid, newer_namings(found.naming)).await {
            Some(e) => {
                lo = mid;
                found = e;
            }
            None => hi = mid,
        }
    }
    // (Newer manifests are named as the newest found one: a dataset's naming only ever
    // changes from V1 to V2.)
    for k in 1..GAP_PROBES {
        if probe_named(store, found.version.checked_add(1u64 << k)?, &[found.naming])
            .await
            .is_some()
        {
            return None;
        }
    }
    Some(found)
}

/// The version the latest-version hint names, if it is readable.
async fn read_hint(store: &dyn Storage) -> Option<u64> {
    let hint = store
        .read(&format!("{VERSIONS_DIR}/{LATEST_VERSION_HINT}"))
        .await
        .ok()?;
    serde_json::from_slice::<serde_json::Value>(&hint)
        .ok()?
        .get("version")?
        .as_u64()
}

/// Newer versions followed one by one before a commit lists `_versions/` instead.
const MAX_PROBED_NEWER: usize = 64;

/// The versions committed after `after` (a version that exists, named `naming`; 0 for a
/// dataset without versions), oldest first: what a commit read at `after` must check
/// itself against. On stores where a check is cheap this costs a few existence checks
/// instead of listing `_versions/` (thousands of manifests in a long-lived table): versions
/// are committed one after another, so the newer ones are `after + 1, after + 2, ...` up
/// to the first missing one. A gap (versions right above `after` removed by a cleanup
/// while newer ones stay) shows as a hint above the versions found or as a manifest at a
/// power-of-two offset past them; either, or more than a few dozen newer versions, falls
/// back to listing.
pub async fn versions_after(store: &dyn Storage, after: u64, naming: ManifestNaming) -> Result<Vec<VersionEntry>> {
    if store.probes_versions() && after > 0 {
        if let Some(found) = probe_newer(store, after, naming).await {
            return Ok(found);
        }
    }
    let mut all = list_versions(store).await?;
    all.retain(|e| e.version > after);
    Ok(all)
}

async fn probe_newer(store: &dyn Storage, after: u64, naming: ManifestNaming) -> Option<Vec<VersionEntry>> {
    let mut found: Vec<VersionEntry> = Vec::new();
    loop {
        let last = found.last().map_or(naming, |e| e.naming);
        let v = after.checked_add(found.len() as u64 + 1)?;
        match probe_named(store, v, newer_namings(last)).await {
            Some(e) => found.push(e),
            None => break,
        }
        if found.len() > MAX_PROBED_NEWER {
            return None;
        }
    }
    let (top, top_naming) = found.last().map_or((after, naming), |e| (e.version, e.naming));
    if read_hint(store).await.is_some_and(|h| h > top) {
        return None;
    }
    for k in 1..GAP_PROBES {
        if probe_named(store, top.checked_add(1u64 << k)?, newer_namings(top_naming))
            .await
            .is_some()
        {
            return None;
        }
    }
    Some(found)
}

/// Reads and checks the manifest at `entry`.
pub async fn read_entry(store: &dyn Storage, entry: &VersionEntry) -> Result<pb::Manifest> {
    let bytes = store.read(&entry.path).await?;
    decode_entry(&bytes, entry)
}

/// Decodes the manifest file `bytes` of `entry`, checking it is the version its name says.
pub fn decode_entry(bytes: &[u8], entry: &VersionEntry) -> Result<pb::Manifest> {
    let m = manifest::decode_manifest(bytes, &entry.path)?;
    if m.version != entry.version {
        return Err(Error::corrupt(
            &entry.path,
            format!(
                "file name says version {} but the manifest says {}",
                entry.version, m.version
            ),
        ));
    }
    Ok(m)
}

/// Reads the manifest of `version` (the latest when `None`).
pub async fn read_version(store: &dyn Storage, version: Option<u64>) -> Result<(pb::Manifest, ManifestNaming)> {
    let direct = match version {
        None => latest_from_hint(store).await,
        Some(v) if store.probes_versions() => probe(store, v).await,
        Some(_) => None,
    };
    if let Some(entry) = direct {
        return Ok((read_entry(store, &entry).await?, entry.naming));
    }
    let versions = list_versions(store).await?;
    let entry = match version {
        None => versions.last(),
        Some(v) => versions.iter().find(|e| e.version == v),
    }
    .ok_or_else(|| match version {
        None => Error::not_found(store.root_display()),
        Some(v) => Error::VersionNotFound {
            path: store.root_display(),
            version: v,
        },
    })?;
    Ok((read_entry(store, entry).await?, entry.naming))
}

/// Records `version` as the latest in the hint file pylance 14 keeps (best effort: the
/// listing, not the hint, is the source of truth).
///
/// On local disk the file is replaced (a new file renamed over it) without waiting for
/// the disk, as pylance does: after a power loss the hint may be old, newer than the last
/// manifest that survived, or unreadable, and readers handle each (they follow it up to
/// the newest manifest, and list `_versions/` when it names none or does not parse).
pub async fn write_latest_hint(store: &dyn Storage, version: u64) {
    let rel = format!("{VERSIONS_DIR}/{LATEST_VERSION_HINT}");
    let body = format!("{{\"version\":{version}}}");
    if let Some(path) = store.local_path(&rel) {
        if replace_unsynced(&path, body.as_bytes()).is_ok() {
            return;
        }
    }
    let _ = store.put(&rel, body.into_bytes().into()).await;
}

/// Replaces the file at `path` with `data` atomically (readers see the old or the new
/// content), without syncing.
fn replace_unsynced(path: &std::path::Path, data: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", uuid::Uuid::new_v4().simple()));
    let res = std::fs::write(&tmp, data).and_then(|_| std::fs::rename(&tmp, path));
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests: a failed unwrap is a failed test")]
    use super::*;
    use lancelet_io::LocalStore;

    /// A store whose `_versions/` holds empty manifests of `v1` (V1 names) and `v2` (V2
    /// names), and a hint naming `hint`.
    fn store_with(v1: &[u64], v2: &[u64], hint: Option<&str>) -> (tempfile::TempDir, LocalStore) {
        let dir = tempfile::tempdir().unwrap();
        let versions = dir.path().join(VERSIONS_DIR);
        std::fs::create_dir_all(&versions).unwrap();
        for (naming, list) in [(ManifestNaming::V1, v1), (ManifestNaming::V2, v2)] {
            for v in list {
                std::fs::write(versions.join(naming.file_name(*v)), b"").unwrap();
            }
        }
        if let Some(h) = hint {
            std::fs::write(versions.join(LATEST_VERSION_HINT), h).unwrap();
        }
        let store = LocalStore::new(dir.path());
        (dir, store)
    }

    async fn latest(store: &LocalStore) -> u64 {
        let entry = latest_version(store).await.unwrap().unwrap();
        assert_eq!(
            entry.path,
            format!("{VERSIONS_DIR}/{}", entry.naming.file_name(entry.version))
        );
        entry.version
    }

    #[tokio::test]
    async fn the_hint_is_followed_up_to_the_newest_version() {
        let all: Vec<u64> = (1..=1000).collect();
        for hint in [1, 3, 500, 999, 1000] {
            let (_d, s) = store_with(&[], &all, Some(&format!("{{\"version\":{hint}}}")));
            assert_eq!(latest_from_hint(&s).await.map(|e| e.version), Some(1000), "hint {hint}");
            assert_eq!(latest(&s).await, 1000);
        }
        // Versions cleaned up below the hint do not matter.
        let (_d, s) = store_with(&[], &(40..=77).collect::<Vec<_>>(), Some("{\"version\":41}"));
        assert_eq!(latest_from_hint(&s).await.map(|e| e.version), Some(77));
    }

    #[tokio::test]
    async fn without_a_usable_hint_the_directory_is_listed() {
        let all: Vec<u64> = (1..=20).collect();
        for hint in [
            None,
            Some("not json"),
            Some("{\"version\":\"7\"}"),
            Some("{\"version\":25}"),
        ] {
            let (_d, s) = store_with(&[], &all, hint);
            assert!(latest_from_hint(&s).await.is_none(), "{hint:?}");
            assert_eq!(latest(&s).await, 20);
        }
    }

    #[tokio::test]
    async fn a_gap_above_the_hinted_version_falls_back_to_listing() {
        // Version 3 kept (tagged), 4..=6 cleaned up, 7..=9 newer: the hint is stale at 3.
        let (_d, s) = store_with(&[], &[1, 3, 7, 8, 9], Some("{\"version\":3}"));
        assert!(latest_from_hint(&s).await.is_none());
        assert_eq!(latest(&s).await, 9);
    }

    #[tokio::test]
    async fn the_versions_after_one_are_found_with_or_without_a_gap() {
        let after = |s: &LocalStore, v: u64| {
            let s = s.clone();
            async move {
                versions_after(&s, v, ManifestNaming::V2)
                    .await
                    .unwrap()
                    .iter()
                    .map(|e| e.version)
                    .collect::<Vec<_>>()
            }
        };
        let (_d, s) = store_with(&[], &(1..=30).collect::<Vec<_>>(), Some("{\"version\":30}"));
        assert_eq!(after(&s, 30).await, Vec::<u64>::new());
        assert_eq!(after(&s, 27).await, vec![28, 29, 30]);
        assert_eq!(after(&s, 0).await, (1..=30).collect::<Vec<_>>());
        // Versions 4..=6 cleaned up while 3 (tagged) stays: 7.. are still found.
        for hint in ["{\"version\":9}", "{\"version\":3}", "not json"] {
            let (_d, s) = store_with(&[], &[1, 3, 7, 8, 9], Some(hint));
            assert_eq!(after(&s, 3).await, vec![7, 8, 9], "hint {hint}");
        }
        // A stale hint below newer versions that follow without a gap.
        let (_d, s) = store_with(&[], &(1..=12).collect::<Vec<_>>(), Some("{\"version\":2}"));
        assert_eq!(after(&s, 10).await, vec![11, 12]);
        // A switch from V1 to V2 names.
        let (_d, s) = store_with(&[1, 2, 3], &[4, 5], None);
        assert_eq!(
            versions_after(&s, 2, ManifestNaming::V1)
                .await
                .unwrap()
                .iter()
                .map(|e| (e.version, e.naming))
                .collect::<Vec<_>>(),
            vec![
                (3, ManifestNaming::V1),
                (4, ManifestNaming::V2),
                (5, ManifestNaming::V2)
            ]
        );
    }

    #[tokio::test]
    async fn the_hint_is_replaced_in_place() {
        let (d, s) = store_with(&[], &[1, 2], None);
        write_latest_hint(&s, 2).await;
        write_latest_hint(&s, 7).await;
        let dir = d.path().join(VERSIONS_DIR);
        assert_eq!(
            std::fs::read_to_string(dir.join(LATEST_VERSION_HINT)).unwrap(),
            "{\"version\":7}"
        );
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[tokio::test]
    async fn both_naming_schemes_are_probed() {
        let (_d, s) = store_with(&[1, 2, 3], &[4, 5, 6], Some("{\"version\":2}"));
        assert_eq!(latest(&s).await, 6);
        let (_d, s) = store_with(&[1, 2, 3], &[], Some("{\"version\":1}"));
        assert_eq!(latest(&s).await, 3);
    }
}
