//! Manifest file names.
//!
//! Two schemes exist. V1 names version `v` `_versions/{v}.manifest`. V2 (the default for
//! new datasets since pylance 0.2x, and what pylance 14 writes) names it
//! `_versions/{u64::MAX - v:020}.manifest`, so a plain lexicographic listing returns the
//! newest version first. A dataset keeps the scheme it was created with.

/// How manifest files of a dataset are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManifestNaming {
    /// `{version}.manifest`
    V1,
    /// `{u64::MAX - version:020}.manifest`
    V2,
}

/// The directory holding manifests, relative to the dataset root.
pub const VERSIONS_DIR: &str = "_versions";
/// Extension of manifest files.
pub const MANIFEST_EXTENSION: &str = "manifest";
/// The hint file pylance 14 keeps next to the manifests (`{"version": N}`).
pub const LATEST_VERSION_HINT: &str = "latest_version_hint.json";

impl ManifestNaming {
    /// The file name (without directory) of `version`'s manifest.
    pub fn file_name(self, version: u64) -> String {
        match self {
            Self::V1 => format!("{version}.{MANIFEST_EXTENSION}"),
            Self::V2 => format!("{:020}.{MANIFEST_EXTENSION}", u64::MAX - version),
        }
    }

    /// The path of `version`'s manifest relative to the dataset root.
    pub fn relative_path(self, version: u64) -> String {
        format!("{VERSIONS_DIR}/{}", self.file_name(version))
    }

    /// Parses a manifest file name into its version and naming scheme; `None` for files
    /// that are not manifests (hint files, staged `*.manifest-{uuid}` files, ...).
    pub fn parse(file_name: &str) -> Option<(u64, ManifestNaming)> {
        let stem = file_name.strip_suffix(".manifest")?;
        if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let n: u64 = stem.parse().ok()?;
        if stem.len() == 20 {
            // V2 names are always 20 digits; version 0 is never written, so u64::MAX is invalid.
            let version = u64::MAX - n;
            (version > 0).then_some((version, ManifestNaming::V2))
        } else {
            Some((n, ManifestNaming::V1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_names_match_pylance() {
        assert_eq!(ManifestNaming::V2.file_name(1), "18446744073709551614.manifest");
        assert_eq!(ManifestNaming::V2.file_name(3), "18446744073709551612.manifest");
        assert_eq!(ManifestNaming::V1.file_name(12), "12.manifest");
    }

    proptest::proptest! {
        #[test]
        fn names_parse_back(v in 1u64..u64::MAX) {
            for scheme in [ManifestNaming::V1, ManifestNaming::V2] {
                let name = scheme.file_name(v);
                // A V1 name of 20 digits is indistinguishable from V2; Lance never gets there.
                if scheme == ManifestNaming::V1 && name.len() == 29 { continue; }
                proptest::prop_assert_eq!(ManifestNaming::parse(&name), Some((v, scheme)));
            }
        }
    }

    #[test]
    fn other_files_are_not_manifests() {
        for name in [
            "latest_version_hint.json",
            "3.manifest-1234",
            ".manifest",
            "x.manifest",
            "18446744073709551615.manifest",
        ] {
            assert_eq!(ManifestNaming::parse(name), None, "{name}");
        }
    }
}
