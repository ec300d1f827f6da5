//! Finding the versions of a dataset on local disk.

use std::path::Path;

use crate::naming::{ManifestNaming, VERSIONS_DIR};
use crate::{manifest, pb, Error, Result};

/// One version of a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionEntry {
    /// The version number (from 1).
    pub version: u64,
    /// How its manifest file is named.
    pub naming: ManifestNaming,
    /// The manifest's path.
    pub path: String,
}

/// Every version of the dataset at `root`, oldest first.
pub fn list_versions(root: &Path) -> Result<Vec<VersionEntry>> {
    let dir = root.join(VERSIONS_DIR);
    let display = dir.display().to_string();
    let entries = std::fs::read_dir(&dir).map_err(|source| Error::Io {
        path: display.clone(),
        source,
    })?;
    let mut out = Vec::new();
    for e in entries {
        let e = e.map_err(|source| Error::Io {
            path: display.clone(),
            source,
        })?;
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some((version, naming)) = ManifestNaming::parse(name) {
            out.push(VersionEntry {
                version,
                naming,
                path: e.path().display().to_string(),
            });
        }
    }
    out.sort_by_key(|v| v.version);
    Ok(out)
}

/// Reads the manifest of `version` (the latest when `None`).
pub fn read_version(root: &Path, version: Option<u64>) -> Result<pb::Manifest> {
    let versions = list_versions(root)?;
    let entry = match version {
        None => versions.last(),
        Some(v) => versions.iter().find(|e| e.version == v),
    }
    .ok_or_else(|| Error::VersionNotFound {
        path: root.display().to_string(),
        version: version.unwrap_or(0),
    })?;
    let bytes = std::fs::read(&entry.path).map_err(|source| Error::Io {
        path: entry.path.clone(),
        source,
    })?;
    let m = manifest::decode_manifest(&bytes, &entry.path)?;
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
