//! Finding the versions of a dataset.

use crate::naming::{ManifestNaming, LATEST_VERSION_HINT, VERSIONS_DIR};
use crate::store::Store;
use crate::{manifest, pb, Error, Result};

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
pub async fn list_versions(store: &dyn Store) -> Result<Vec<VersionEntry>> {
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
pub async fn latest_version(store: &dyn Store) -> Result<Option<VersionEntry>> {
    Ok(list_versions(store).await?.pop())
}

/// Reads and checks the manifest at `entry`.
pub async fn read_entry(store: &dyn Store, entry: &VersionEntry) -> Result<pb::Manifest> {
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
pub async fn read_version(store: &dyn Store, version: Option<u64>) -> Result<(pb::Manifest, ManifestNaming)> {
    let versions = list_versions(store).await?;
    let entry = match version {
        None => versions.last(),
        Some(v) => versions.iter().find(|e| e.version == v),
    }
    .ok_or_else(|| match version {
        None => Error::NotFound {
            path: store.root_display(),
        },
        Some(v) => Error::VersionNotFound {
            path: store.root_display(),
            version: v,
        },
    })?;
    Ok((read_entry(store, entry).await?, entry.naming))
}

/// Records `version` as the latest in the hint file pylance 14 keeps (best effort: the
/// listing, not the hint, is the source of truth).
pub async fn write_latest_hint(store: &dyn Store, version: u64) {
    let body = format!("{{\"version\":{version}}}");
    let _ = store
        .put(
            &format!("{VERSIONS_DIR}/{LATEST_VERSION_HINT}"),
            body.into_bytes().into(),
        )
        .await;
}
