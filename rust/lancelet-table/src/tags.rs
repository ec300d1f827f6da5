//! Tags: names for versions, stored as `_refs/tags/{name}.json` the way pylance 14 writes
//! them (`branch`, `version`, `createdAt`, `updatedAt`, `manifestSize`, `metadata`).

use serde_json::{json, Value};

use crate::versions::list_versions;
use crate::{Error, Result};
use lancelet_io::Storage;

/// The directory holding tag files, relative to the dataset root.
pub const TAGS_DIR: &str = "_refs/tags";

/// One tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    /// The tag's name.
    pub name: String,
    /// The version it points to.
    pub version: u64,
    /// Size of that version's manifest file in bytes (as pylance records it).
    pub manifest_size: u64,
    /// The branch, when the tag points into one.
    pub branch: Option<String>,
    /// Creation time (RFC 3339), as recorded.
    pub created_at: Option<String>,
    /// Last update time (RFC 3339), as recorded.
    pub updated_at: Option<String>,
    /// The tag's metadata (string values; see [`replace_tag_metadata`]).
    pub metadata: std::collections::BTreeMap<String, String>,
}

impl Tag {
    /// Whether the tag points at a version of the main branch (a tag on another branch
    /// names that branch's version, whose number means nothing on main).
    pub fn on_main(&self) -> bool {
        crate::branches::is_main(self.branch.as_deref())
    }
}

/// Refuses names that are not usable as tag names (Lance's rules: ASCII letters, digits,
/// `.`, `-`, `_`; no leading `.`, no `..`, no `.lock` suffix).
pub fn check_tag_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 255
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        && !name.starts_with('.')
        && !name.contains("..")
        && !name.ends_with(".lock");
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "invalid tag name {name:?}: use letters, digits, '.', '-' and '_' (not starting with '.', no '..')"
        )))
    }
}

fn tag_path(name: &str) -> String {
    format!("{TAGS_DIR}/{name}.json")
}

/// RFC 3339 UTC time with nanoseconds, as pylance writes it.
fn rfc3339_now() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_nanos()
    )
}

async fn manifest_size(store: &dyn Storage, branch: Option<&str>, version: u64) -> Result<u64> {
    let Some(b) = branch.filter(|b| !crate::branches::is_main(Some(b))) else {
        let entry = list_versions(store)
            .await?
            .into_iter()
            .find(|e| e.version == version)
            .ok_or_else(|| Error::VersionNotFound {
                path: store.root_display(),
                version,
            })?;
        return Ok(store.read(&entry.path).await?.len() as u64);
    };
    crate::branches::check_branch_name(b)?;
    let dir = format!("{}/{b}/{}", crate::branches::TREE_DIR, crate::naming::VERSIONS_DIR);
    for name in store.list(&dir).await? {
        if crate::naming::ManifestNaming::parse(&name).is_some_and(|(v, _)| v == version) {
            return Ok(store.read(&format!("{dir}/{name}")).await?.len() as u64);
        }
    }
    Err(Error::VersionNotFound {
        path: format!("{}/{}/{b}", store.root_display(), crate::branches::TREE_DIR),
        version,
    })
}

fn parse_tag(name: &str, bytes: &[u8], path: &str) -> Result<Tag> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| Error::corrupt(path, format!("tag file is not JSON: {e}")))?;
    let version = v
        .get("version")
        .and_then(Value::as_u64)
        .ok_or_else(|| Error::corrupt(path, "tag file has no version"))?;
    Ok(Tag {
        name: name.to_string(),
        version,
        manifest_size: v.get("manifestSize").and_then(Value::as_u64).unwrap_or(0),
        branch: v.get("branch").and_then(Value::as_str).map(str::to_string),
        created_at: v.get("createdAt").and_then(Value::as_str).map(str::to_string),
        updated_at: v.get("updatedAt").and_then(Value::as_str).map(str::to_string),
        metadata: v
            .get("metadata")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default(),
    })
}

async fn write_tag(
    store: &dyn Storage,
    name: &str,
    branch: Option<&str>,
    version: u64,
    created_at: Option<String>,
    metadata: Value,
    create: bool,
) -> Result<()> {
    check_tag_name(name)?;
    let size = manifest_size(store, branch, version).await?;
    let now = rfc3339_now();
    let branch = branch.filter(|b| !crate::branches::is_main(Some(b)));
    let body = json!({
        "branch": branch,
        "version": version,
        "createdAt": created_at.unwrap_or_else(|| now.clone()),
        "updatedAt": now,
        "manifestSize": size,
        "metadata": metadata,
    });
    let bytes = serde_json::to_vec_pretty(&body).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    let path = tag_path(name);
    if create {
        if !store.put_if_absent(&path, bytes.into()).await? {
            return Err(Error::AlreadyExists(format!("tag {name:?}")));
        }
        Ok(())
    } else {
        Ok(store.put(&path, bytes.into()).await?)
    }
}

/// Creates tag `name` pointing at `version`; fails if the tag exists or the version does not.
pub async fn create_tag(store: &dyn Storage, name: &str, version: u64) -> Result<()> {
    create_tag_on(store, name, None, version).await
}

/// Creates tag `name` pointing at `version` of `branch` (main when `None`); `store` is the
/// dataset root, where every tag lives.
pub async fn create_tag_on(store: &dyn Storage, name: &str, branch: Option<&str>, version: u64) -> Result<()> {
    write_tag(store, name, branch, version, None, json!({}), true).await
}

/// Moves existing tag `name` to `version` of `branch` (main when `None`).
pub async fn update_tag_on(store: &dyn Storage, name: &str, branch: Option<&str>, version: u64) -> Result<()> {
    check_tag_name(name)?;
    let path = tag_path(name);
    let old = store.read(&path).await.map_err(|e| match e {
        lancelet_io::Error::NotFound { .. } => Error::InvalidArgument(format!("tag {name:?} does not exist")),
        e => e.into(),
    })?;
    let old = serde_json::from_slice::<Value>(&old).ok();
    let created = old
        .as_ref()
        .and_then(|v| v.get("createdAt").and_then(Value::as_str).map(str::to_string));
    // Moving a tag keeps its metadata, as in pylance.
    let metadata = old
        .as_ref()
        .and_then(|v| v.get("metadata").cloned())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    write_tag(store, name, branch, version, created, metadata, false).await
}

/// Moves existing tag `name` to `version`.
pub async fn update_tag(store: &dyn Storage, name: &str, version: u64) -> Result<()> {
    update_tag_on(store, name, None, version).await
}

/// Replaces the metadata of existing tag `name` (the whole map); the tag's version and
/// times are left as they are, as pylance's `tags.replace_metadata` does.
pub async fn replace_tag_metadata(
    store: &dyn Storage,
    name: &str,
    metadata: &std::collections::BTreeMap<String, String>,
) -> Result<()> {
    check_tag_name(name)?;
    let path = tag_path(name);
    let old = store.read(&path).await.map_err(|e| match e {
        lancelet_io::Error::NotFound { .. } => Error::InvalidArgument(format!("tag {name:?} does not exist")),
        e => e.into(),
    })?;
    let mut body: Value =
        serde_json::from_slice(&old).map_err(|e| Error::corrupt(&path, format!("tag file is not JSON: {e}")))?;
    let Some(obj) = body.as_object_mut() else {
        return Err(Error::corrupt(&path, "tag file is not a JSON object"));
    };
    obj.insert("metadata".into(), json!(metadata));
    let bytes = serde_json::to_vec_pretty(&body).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    Ok(store.put(&path, bytes.into()).await?)
}

/// Deletes tag `name`; fails if it does not exist.
pub async fn delete_tag(store: &dyn Storage, name: &str) -> Result<()> {
    check_tag_name(name)?;
    let path = tag_path(name);
    if !store.exists(&path).await? {
        return Err(Error::InvalidArgument(format!("tag {name:?} does not exist")));
    }
    Ok(store.delete(&path).await?)
}

/// Reads tag `name`.
pub async fn get_tag(store: &dyn Storage, name: &str) -> Result<Tag> {
    check_tag_name(name)?;
    let path = tag_path(name);
    let bytes = store.read(&path).await.map_err(|e| match e {
        lancelet_io::Error::NotFound { .. } => Error::InvalidArgument(format!("tag {name:?} does not exist")),
        e => e.into(),
    })?;
    parse_tag(name, &bytes, &path)
}

/// Every tag, sorted by name.
pub async fn list_tags(store: &dyn Storage) -> Result<Vec<Tag>> {
    let mut out = Vec::new();
    for file in store.list(TAGS_DIR).await? {
        let Some(name) = file.strip_suffix(".json") else {
            continue;
        };
        if check_tag_name(name).is_err() {
            continue;
        }
        let path = tag_path(name);
        let bytes = store.read(&path).await?;
        out.push(parse_tag(name, &bytes, &path)?);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}
