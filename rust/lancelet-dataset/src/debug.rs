//! Readable dumps of a dataset's metadata, in the shapes pylance's `lance.debug` and
//! `LanceDataset.lance_schema` print (Rust's `Debug` form of its schema and fields), for
//! people and for programs that grep them.

use std::collections::BTreeMap;
use std::fmt;

use lancelet_proto::pbfile;

use crate::Dataset;

/// A schema field and its children, printed as pylance prints a `Field`.
struct FieldView<'a> {
    field: &'a pbfile::Field,
    children: Vec<FieldView<'a>>,
    primary_key_position: Option<u32>,
}

/// `LogicalType("int64")`.
struct LogicalType<'a>(&'a str);

impl fmt::Debug for LogicalType<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LogicalType").field(&self.0).finish()
    }
}

/// The name of a field's encoding, or nothing for a parent field.
struct EncodingName(&'static str);

impl fmt::Debug for EncodingName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

fn encoding(field: &pbfile::Field) -> Option<EncodingName> {
    match field.encoding {
        1 => Some(EncodingName("Plain")),
        2 => Some(EncodingName("VarBinary")),
        3 => Some(EncodingName("Dictionary")),
        4 => Some(EncodingName("RLE")),
        _ => None,
    }
}

fn metadata(m: &std::collections::HashMap<String, bytes::Bytes>) -> BTreeMap<&str, String> {
    m.iter()
        .map(|(k, v)| (k.as_str(), String::from_utf8_lossy(v).into_owned()))
        .collect()
}

impl fmt::Debug for FieldView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.field;
        f.debug_struct("Field")
            .field("name", &x.name)
            .field("id", &x.id)
            .field("parent_id", &x.parent_id)
            .field("logical_type", &LogicalType(&x.logical_type))
            .field("metadata", &metadata(&x.metadata))
            .field("encoding", &encoding(x))
            .field("nullable", &x.nullable)
            .field("children", &self.children)
            .field("dictionary", &None::<()>)
            .field("unenforced_primary_key_position", &self.primary_key_position)
            .field("unenforced_clustering_key_position", &None::<u32>)
            .finish()
    }
}

/// The schema: its top-level fields (children nested) and its metadata.
struct SchemaView<'a> {
    fields: Vec<FieldView<'a>>,
    metadata: BTreeMap<&'a str, String>,
}

impl fmt::Debug for SchemaView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schema")
            .field("fields", &self.fields)
            .field("metadata", &self.metadata)
            .finish()
    }
}

fn schema_view(ds: &Dataset) -> SchemaView<'_> {
    let m = ds.manifest();
    let mut next_pk = 0u32;
    SchemaView {
        fields: build_fields(&m.fields, -1, &mut next_pk, None),
        metadata: metadata(&m.schema_metadata),
    }
}

impl Dataset {
    /// The schema as pylance prints `LanceDataset.lance_schema` (`pretty = false`, one line)
    /// and `lance.debug.format_schema` (`pretty = true`): every field with its id, parent,
    /// logical type, metadata, encoding and children.
    pub fn schema_debug(&self, pretty: bool) -> String {
        let view = schema_view(self);
        if pretty {
            format!("{view:#?}")
        } else {
            format!("{view:?}")
        }
    }
}

/// `CachedFileSize(342)`.
struct CachedFileSize(u64);

impl fmt::Debug for CachedFileSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CachedFileSize").field(&self.0).finish()
    }
}

/// A value printed as it is written (an enum variant's name, a summary).
struct Raw(String);

impl fmt::Debug for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

struct DataFileView<'a>(&'a lancelet_table::pb::DataFile);

impl fmt::Debug for DataFileView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        f.debug_struct("DataFile")
            .field("path", &d.path)
            .field("fields", &d.fields)
            .field("column_indices", &d.column_indices)
            .field("file_major_version", &d.file_major_version)
            .field("file_minor_version", &d.file_minor_version)
            .field("file_size_bytes", &CachedFileSize(d.file_size_bytes))
            .field("base_id", &d.base_id)
            .finish()
    }
}

struct DeletionView<'a>(&'a lancelet_table::pb::DeletionFile);

impl fmt::Debug for DeletionView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        let kind = if d.file_type == 1 { "Bitmap" } else { "Array" };
        f.debug_struct("DeletionFile")
            .field("read_version", &d.read_version)
            .field("id", &d.id)
            .field("file_type", &Raw(kind.to_string()))
            .field("num_deleted_rows", &Some(d.num_deleted_rows))
            .field("base_id", &d.base_id)
            .finish()
    }
}

struct FragmentView<'a>(&'a lancelet_table::pb::DataFragment);

impl fmt::Debug for FragmentView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        let files: Vec<DataFileView<'_>> = x.files.iter().map(DataFileView).collect();
        let present = |b: bool| if b { Some(Raw("..".into())) } else { None };
        f.debug_struct("Fragment")
            .field("id", &x.id)
            .field("files", &files)
            .field("overlays", &Vec::<()>::new())
            .field("deletion_file", &x.deletion_file.as_ref().map(DeletionView))
            .field("row_id_meta", &present(x.row_id_sequence.is_some()))
            .field("physical_rows", &Some(x.physical_rows))
            .field(
                "last_updated_at_version_meta",
                &present(x.last_updated_at_version_sequence.is_some()),
            )
            .field(
                "created_at_version_meta",
                &present(x.created_at_version_sequence.is_some()),
            )
            .finish()
    }
}

/// One operation of a transaction, printed as its message (`Append { fragments: [...] }`).
struct OperationView<'a>(&'a lancelet_table::pb::transaction::Operation);

impl fmt::Debug for OperationView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use lancelet_table::pb::transaction::Operation as O;
        match self.0 {
            O::Append(x) => x.fmt(f),
            O::Delete(x) => x.fmt(f),
            O::Overwrite(x) => x.fmt(f),
            O::CreateIndex(x) => x.fmt(f),
            O::Rewrite(x) => x.fmt(f),
            O::Merge(x) => x.fmt(f),
            O::Restore(x) => x.fmt(f),
            O::ReserveFragments(x) => x.fmt(f),
            O::Update(x) => x.fmt(f),
            O::Project(x) => x.fmt(f),
            O::UpdateConfig(x) => x.fmt(f),
            O::DataReplacement(x) => x.fmt(f),
            O::UpdateMemWalState(x) => x.fmt(f),
            O::Clone(x) => x.fmt(f),
            O::UpdateBases(x) => x.fmt(f),
        }
    }
}

struct TransactionView<'a>(&'a lancelet_table::pb::Transaction);

impl fmt::Debug for TransactionView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        let props: Option<BTreeMap<&String, &String>> =
            (!t.transaction_properties.is_empty()).then(|| t.transaction_properties.iter().collect());
        let none = Raw("None".to_string());
        let op = t.operation.as_ref().map(OperationView);
        let operation: &dyn fmt::Debug = match &op {
            Some(view) => view,
            None => &none,
        };
        f.debug_struct("Transaction")
            .field("read_version", &t.read_version)
            .field("uuid", &t.uuid)
            .field("operation", operation)
            .field("tag", &(!t.tag.is_empty()).then_some(&t.tag))
            .field("transaction_properties", &props)
            .finish()
    }
}

/// What pylance's `format_fragment` prints: each data file with the schema of its fields.
struct PrintableFragment<'a> {
    fragment: &'a lancelet_table::pb::DataFragment,
    schema: &'a [pbfile::Field],
}

struct PrintableDataFile<'a> {
    file: &'a lancelet_table::pb::DataFile,
    schema: SchemaView<'a>,
}

impl fmt::Debug for PrintableDataFile<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PrettyPrintableDataFile")
            .field("path", &self.file.path)
            .field("fields", &self.file.fields)
            .field("column_indices", &self.file.column_indices)
            .field("schema", &self.schema)
            .field("major_version", &self.file.file_major_version)
            .field("minor_version", &self.file.file_minor_version)
            .finish()
    }
}

impl fmt::Debug for PrintableFragment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files: Vec<PrintableDataFile<'_>> = self
            .fragment
            .files
            .iter()
            .map(|file| {
                let mut next_pk = 0;
                // The file's fields and their parents (a file lists the leaves it holds).
                let mut kept: Vec<i32> = Vec::new();
                for id in &file.fields {
                    let mut at = Some(*id);
                    while let Some(i) = at.filter(|i| !kept.contains(i)) {
                        kept.push(i);
                        at = self
                            .schema
                            .iter()
                            .find(|x| x.id == i)
                            .map(|x| x.parent_id)
                            .filter(|p| *p >= 0);
                    }
                }
                let tops = build_fields(self.schema, -1, &mut next_pk, Some(&kept));
                PrintableDataFile {
                    file,
                    schema: SchemaView {
                        fields: tops,
                        metadata: BTreeMap::new(),
                    },
                }
            })
            .collect();
        f.debug_struct("PrettyPrintableFragment")
            .field("id", &self.fragment.id)
            .field("files", &files)
            .field("deletion_file", &self.fragment.deletion_file.as_ref().map(DeletionView))
            .field("physical_rows", &Some(self.fragment.physical_rows))
            .finish()
    }
}

/// The fields under `parent` (of those in `only`, when given), depth-first.
fn build_fields<'a>(
    all: &'a [pbfile::Field],
    parent: i32,
    next_pk: &mut u32,
    only: Option<&[i32]>,
) -> Vec<FieldView<'a>> {
    all.iter()
        .filter(|f| f.parent_id == parent && only.is_none_or(|o| o.contains(&f.id)))
        .map(|f| {
            let primary_key_position = f.unenforced_primary_key.then(|| {
                *next_pk += 1;
                *next_pk - 1
            });
            FieldView {
                field: f,
                children: build_fields(all, f.id, next_pk, only),
                primary_key_position,
            }
        })
        .collect()
}

fn render(v: &dyn fmt::Debug) -> String {
    format!("{v:#?}")
}

impl Dataset {
    /// This version's manifest as pylance's `lance.debug.format_manifest` prints one.
    pub fn manifest_debug(&self) -> String {
        let m = self.manifest();
        let writer = m.writer_version.as_ref().map(|w| {
            Raw(format!(
                "WriterVersion {{ library: {:?}, version: {:?}, prerelease: None, build_metadata: None }}",
                w.library, w.version
            ))
        });
        let fragments: Vec<FragmentView<'_>> = m.fragments.iter().map(FragmentView).collect();
        let view = ManifestView {
            schema: schema_view(self),
            version: m.version,
            branch: m.branch.clone(),
            writer,
            fragments,
            m,
        };
        render(&view)
    }

    /// Fragment `id` as pylance's `lance.debug.format_fragment` prints one (each data
    /// file with the schema of the fields it holds); `None` when there is no such fragment.
    pub fn fragment_debug(&self, id: u64) -> Option<String> {
        let fragment = self.manifest().fragments.iter().find(|f| f.id == id)?;
        Some(render(&PrintableFragment {
            fragment,
            schema: &self.manifest().fields,
        }))
    }

    /// The transactions of the last `max` versions, newest first, as pylance's
    /// `lance.debug.list_transactions` prints them (versions without a transaction file
    /// are skipped).
    pub async fn transactions_debug(&self, max: usize) -> crate::Result<Vec<String>> {
        let mut out = Vec::new();
        let mut v = self.version();
        while v >= 1 && out.len() < max {
            if let Some(t) = self.read_transaction(Some(v)).await? {
                out.push(render(&TransactionView(&t)));
            }
            v -= 1;
        }
        Ok(out)
    }
}

struct ManifestView<'a> {
    schema: SchemaView<'a>,
    version: u64,
    branch: Option<String>,
    writer: Option<Raw>,
    fragments: Vec<FragmentView<'a>>,
    m: &'a lancelet_table::pb::Manifest,
}

impl fmt::Debug for ManifestView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.m;
        let config: BTreeMap<&String, &String> = m.config.iter().collect();
        let table_metadata: BTreeMap<&String, &String> = m.table_metadata.iter().collect();
        f.debug_struct("Manifest")
            .field("schema", &self.schema)
            .field("version", &self.version)
            .field("branch", &self.branch)
            .field("writer_version", &self.writer)
            .field("fragments", &self.fragments)
            .field("version_aux_data", &m.version_aux_data)
            .field("index_section", &m.index_section)
            .field("tag", &(!m.tag.is_empty()).then_some(&m.tag))
            .field("reader_feature_flags", &m.reader_feature_flags)
            .field("writer_feature_flags", &m.writer_feature_flags)
            .field("max_fragment_id", &m.max_fragment_id)
            .field(
                "transaction_file",
                &(!m.transaction_file.is_empty()).then_some(&m.transaction_file),
            )
            .field("transaction_section", &m.transaction_section)
            .field("next_row_id", &m.next_row_id)
            .field("config", &config)
            .field("table_metadata", &table_metadata)
            .finish()
    }
}
