//! The files of an index directory, in pylance 14's layout.
//!
//! - `metadata.lance`: one row (`deleted_fragments`, an empty portable Roaring bitmap) and,
//!   in its schema metadata, the tokenizer `params` (JSON), the partition ids and the codecs.
//! - per partition `p`: `part_p_tokens.lance` (one row: the `fst` token map, the number of
//!   tokens, their total bytes), `part_p_docs.lance` (`_rowid`, `_num_tokens`; the row index
//!   is the doc id) and `part_p_invert.lance` (one row per token id: the coded blocks, the
//!   best block score, the document frequency, and positions when kept).

use std::sync::Arc;

use arrow_array::builder::{LargeBinaryBuilder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, BinaryArray, Float32Array, LargeBinaryArray, ListArray, RecordBatch, UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, Field, Schema};
use lancelet_file::FileVersion;
use lancelet_index::scalar::files::{self, write_lance};
use lancelet_index::scalar::{IndexFile, IndexStore};

use crate::analyzer::TokenizerConfig;
use crate::builder::SealedPartition;
use crate::codec::{Tail, BLOCK};
use crate::error::{Error, Result};
use crate::positions;

/// The metadata file.
pub const METADATA: &str = "metadata.lance";
/// An empty portable Roaring32 bitmap (no deleted fragments).
const EMPTY_ROARING: [u8; 8] = [0x3a, 0x30, 0, 0, 0, 0, 0, 0];

/// The tokens file of partition `p`.
pub fn tokens_file(p: u64) -> String {
    format!("part_{p}_tokens.lance")
}
/// The docs file of partition `p`.
pub fn docs_file(p: u64) -> String {
    format!("part_{p}_docs.lance")
}
/// The postings file of partition `p`.
pub fn invert_file(p: u64) -> String {
    format!("part_{p}_invert.lance")
}

/// Format-wide settings of an index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexFormat {
    /// 1, 2 or 3.
    pub version: u32,
    /// Postings per block (128).
    pub block_size: u32,
}

impl Default for IndexFormat {
    fn default() -> Self {
        Self {
            version: 2,
            block_size: BLOCK as u32,
        }
    }
}

impl IndexFormat {
    /// The tail coding.
    pub fn tail(&self) -> Tail {
        Tail::of_version(self.version)
    }

    fn invert_metadata(&self) -> Vec<(&'static str, String)> {
        vec![
            ("format_version", self.version.to_string()),
            ("posting_block_size", self.block_size.to_string()),
            ("posting_tail_codec", self.tail().name().to_string()),
        ]
    }

    fn position_metadata(&self) -> Vec<(&'static str, String)> {
        if self.version >= 2 {
            vec![
                ("positions_codec", positions::CODEC.to_string()),
                ("positions_layout", positions::LAYOUT.to_string()),
            ]
        } else {
            Vec::new()
        }
    }
}

/// Writes the three files of partition `p`.
pub fn partition_files(
    p: u64,
    part: &SealedPartition,
    with_position: bool,
    format: &IndexFormat,
    version: FileVersion,
) -> Result<Vec<IndexFile>> {
    let tokens_schema = Arc::new(Schema::new(vec![
        Field::new("_token_fst_bytes", DataType::LargeBinary, false),
        Field::new("_token_next_id", DataType::UInt32, false),
        Field::new("_token_total_length", DataType::UInt64, false),
    ]));
    let tokens = RecordBatch::try_new(
        tokens_schema.clone(),
        vec![
            Arc::new(LargeBinaryArray::from_vec(vec![part.fst.as_slice()])),
            Arc::new(UInt32Array::from(vec![part.num_terms])),
            Arc::new(UInt64Array::from(vec![part.token_bytes])),
        ],
    )?;
    let docs_schema = Arc::new(Schema::new(vec![
        Field::new("_rowid", DataType::UInt64, false),
        Field::new("_num_tokens", DataType::UInt32, false),
    ]));
    let docs = RecordBatch::try_new(
        docs_schema.clone(),
        vec![
            Arc::new(UInt64Array::from(part.row_ids.clone())),
            Arc::new(UInt32Array::from(part.num_tokens.clone())),
        ],
    )?;
    let mut posting = ListBuilder::new(LargeBinaryBuilder::new());
    let mut impacts = ListBuilder::new(LargeBinaryBuilder::new());
    let mut max_score = Vec::with_capacity(part.postings.len());
    let mut length = Vec::with_capacity(part.postings.len());
    for t in &part.postings {
        for b in &t.blocks {
            posting.values().append_value(b);
        }
        posting.append(true);
        for i in &t.impacts {
            impacts.values().append_value(i);
        }
        impacts.append(true);
        max_score.push(t.max_score);
        length.push(t.length);
    }
    let mut fields = vec![
        Field::new("_posting", list_of(DataType::LargeBinary), false),
        Field::new("_max_score", DataType::Float32, false),
        Field::new("_length", DataType::UInt32, false),
        Field::new("_impacts", list_of(DataType::LargeBinary), false),
    ];
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(posting.finish()),
        Arc::new(Float32Array::from(max_score)),
        Arc::new(UInt32Array::from(length)),
        Arc::new(impacts.finish()),
    ];
    let mut invert_md = format.invert_metadata();
    if with_position {
        invert_md.extend(format.position_metadata());
        let (pf, pc) = positions::encode_column(&part.postings, format.version)?;
        fields.extend(pf);
        cols.extend(pc);
    }
    let invert = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols)?;
    Ok(vec![
        write_lance(&tokens_file(p), tokens_schema, tokens, &[], &[], version)?,
        write_lance(
            &docs_file(p),
            docs_schema,
            docs,
            &[("total_tokens", part.total_tokens.to_string())],
            &[],
            version,
        )?,
        write_lance(&invert_file(p), invert.schema(), invert, &invert_md, &[], version)?,
    ])
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

/// The metadata file naming `partitions`.
pub fn metadata_file(
    params: &TokenizerConfig,
    partitions: &[u64],
    format: &IndexFormat,
    version: FileVersion,
) -> Result<IndexFile> {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "deleted_fragments",
        DataType::Binary,
        false,
    )]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(BinaryArray::from_vec(vec![&EMPTY_ROARING[..]]))],
    )?;
    let mut md = vec![
        ("params", params.to_json().to_string()),
        (
            "partitions",
            serde_json::to_string(partitions).unwrap_or_else(|_| "[]".into()),
        ),
        ("token_set_format", "fst".to_string()),
    ];
    md.extend(format.invert_metadata());
    if params.with_position {
        md.extend(format.position_metadata());
    }
    write_lance(METADATA, schema, batch, &md, &[], version)
}

/// What `metadata.lance` says.
#[derive(Debug, Clone)]
pub struct IndexMeta {
    /// Tokenizer parameters.
    pub params: TokenizerConfig,
    /// Partition ids.
    pub partitions: Vec<u64>,
    /// Format settings.
    pub format: IndexFormat,
}

/// Reads `metadata.lance`.
pub async fn read_metadata(store: &dyn IndexStore) -> Result<IndexMeta> {
    read_metadata_named(store, METADATA).await
}

/// Reads a metadata file by name (`metadata.lance`, or a staged part's
/// `part_{p}_metadata.lance`, which has the same form).
pub async fn read_metadata_named(store: &dyn IndexStore, name: &str) -> Result<IndexMeta> {
    let reader = files::open_file(store, name).await?;
    let md = |k: &str| files::metadata(&reader, k).cloned();
    let corrupt = |m: String| Error::corrupt(name, m);
    let params_json: serde_json::Value = match md("params") {
        Some(s) => serde_json::from_str(&s).map_err(|e| corrupt(format!("params are not JSON: {e}")))?,
        None => serde_json::json!({}),
    };
    let params = TokenizerConfig::from_json(&params_json)?;
    let partitions: Vec<u64> = match md("partitions") {
        Some(s) => serde_json::from_str(&s).map_err(|e| corrupt(format!("partitions are not a JSON list: {e}")))?,
        None => Vec::new(),
    };
    if let Some(f) = md("token_set_format") {
        if f != "fst" {
            return Err(Error::Unsupported(format!(
                "full-text index with token set format {f:?} (only \"fst\" is read)"
            )));
        }
    } else {
        return Err(Error::Unsupported(
            "full-text index of a pre-14 layout (no token_set_format)".into(),
        ));
    }
    let version = match md("format_version") {
        Some(v) => v.parse().map_err(|_| corrupt(format!("format_version {v:?}")))?,
        None => 1,
    };
    if !(1..=3).contains(&version) {
        return Err(Error::Unsupported(format!("full-text index format version {version}")));
    }
    let block_size = match md("posting_block_size") {
        Some(v) => v.parse().map_err(|_| corrupt(format!("posting_block_size {v:?}")))?,
        None => BLOCK as u32,
    };
    if block_size as usize != BLOCK {
        return Err(Error::Unsupported(format!(
            "full-text index with {block_size}-posting blocks (only {BLOCK} is read)"
        )));
    }
    Ok(IndexMeta {
        params,
        partitions,
        format: IndexFormat { version, block_size },
    })
}

/// One partition, read into memory.
#[derive(Debug)]
pub struct Partition {
    /// Token -> token id.
    pub tokens: fst::Map<Vec<u8>>,
    /// Row id by doc id.
    pub row_ids: Vec<u64>,
    /// Tokens by doc id.
    pub num_tokens: Vec<u32>,
    /// Sum of `num_tokens`.
    pub total_tokens: u64,
    /// Coded blocks by token id.
    pub postings: ListArray,
    /// Documents by token id.
    pub lengths: Vec<u32>,
    /// Impact entries by token id (one per block first), when the file has them.
    pub impacts: Option<ListArray>,
    /// Positions, when kept.
    pub positions: Option<positions::PositionColumn>,
    /// The tail coding.
    pub tail: Tail,
}

/// Reads partition `p`.
pub async fn read_partition(store: &dyn IndexStore, p: u64, format: &IndexFormat) -> Result<Partition> {
    let tf = tokens_file(p);
    let reader = files::open_file(store, &tf).await?;
    let b = files::read_columns(&reader, &["_token_fst_bytes"]).await?;
    let fst_col = files::column(&b, "_token_fst_bytes", &tf)?;
    let fst_bytes = match fst_col.data_type() {
        DataType::LargeBinary => fst_col.as_binary::<i64>().iter().next().flatten().map(<[u8]>::to_vec),
        DataType::Binary => fst_col.as_binary::<i32>().iter().next().flatten().map(<[u8]>::to_vec),
        _ => None,
    }
    .ok_or_else(|| Error::corrupt(&tf, "no token dictionary"))?;
    let tokens = fst::Map::new(fst_bytes).map_err(|e| Error::corrupt(&tf, format!("token dictionary: {e}")))?;
    // The dictionary's checksum (the `fst` crate's format 3, what pylance writes): the
    // crate trusts its input when walking it, so damage must be caught before.
    tokens
        .as_fst()
        .verify()
        .map_err(|e| Error::corrupt(&tf, format!("token dictionary: {e}")))?;

    let df = docs_file(p);
    let reader = files::open_file(store, &df).await?;
    let b = files::read_columns(&reader, &["_rowid", "_num_tokens"]).await?;
    let row_ids = files::u64s(&b, "_rowid", &df)?;
    let num_tokens = files::u32s(&b, "_num_tokens", &df)?;
    let total_tokens = num_tokens.iter().map(|n| u64::from(*n)).sum();

    let inf = invert_file(p);
    let reader = files::open_file(store, &inf).await?;
    let names: Vec<String> = reader
        .metadata()
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    // `_max_score` is not read: bounds come from the impacts, against the query's statistics.
    let mut wanted = vec!["_posting", "_length"];
    if names.iter().any(|n| n == "_impacts") {
        wanted.push("_impacts");
    }
    let pos_cols = positions::columns_present(&names);
    wanted.extend(pos_cols.iter().copied());
    let b = files::read_columns(&reader, &wanted).await?;
    let postings = files::column(&b, "_posting", &inf)?
        .as_list_opt::<i32>()
        .filter(|l| l.values().data_type() == &DataType::LargeBinary)
        .ok_or_else(|| Error::corrupt(&inf, "_posting is not a list of large binary"))?
        .clone();
    let lengths = files::u32s(&b, "_length", &inf)?;
    let n_terms = tokens.len();
    if postings.len() != n_terms || lengths.len() != n_terms {
        return Err(Error::corrupt(
            &inf,
            format!(
                "{} posting lists and {} lengths for {n_terms} tokens",
                postings.len(),
                lengths.len()
            ),
        ));
    }
    for (t, len) in lengths.iter().enumerate() {
        let blocks = postings.value_length(t) as usize;
        if blocks != (*len as usize).div_ceil(BLOCK) {
            return Err(Error::corrupt(
                &inf,
                format!("token {t} has {len} documents in {blocks} blocks"),
            ));
        }
    }
    let impacts = match b.column_by_name("_impacts") {
        None => None,
        Some(c) => {
            let l = c
                .as_list_opt::<i32>()
                .filter(|l| l.values().data_type() == &DataType::LargeBinary && l.len() == n_terms)
                .ok_or_else(|| Error::corrupt(&inf, "_impacts is not a list of large binary per token"))?;
            Some(l.clone())
        }
    };
    let positions = if pos_cols.is_empty() {
        None
    } else {
        Some(positions::PositionColumn::read(&b, &inf)?)
    };
    Ok(Partition {
        tokens,
        row_ids,
        num_tokens,
        total_tokens,
        postings,
        lengths,
        impacts,
        positions,
        tail: format.tail(),
    })
}

impl Partition {
    /// Documents in the partition.
    pub fn num_docs(&self) -> usize {
        self.row_ids.len()
    }

    /// The token id of `token`.
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.tokens.get(token).and_then(|id| u32::try_from(id).ok())
    }

    /// The decoded postings of token `id`: doc ids and frequencies.
    pub fn postings_of(&self, id: u32) -> Result<(Vec<u32>, Vec<u32>)> {
        let (mut docs, mut freqs) = (Vec::new(), Vec::new());
        self.postings_into(id, &mut docs, &mut freqs)?;
        Ok((docs, freqs))
    }

    /// For each block of token `id`, the largest `tf / (tf + k1 ((1 - b) + b dl / avgdl))` any
    /// of its documents can have, from the block's impacts (competitive frequency and
    /// length-code pairs; a length code stands for the shortest length it covers, so the
    /// bound holds). `None` without impacts, or when they do not fit the postings.
    pub fn block_bounds(&self, id: u32, avgdl: f32) -> Option<Vec<f32>> {
        let impacts = self.impacts.as_ref()?;
        let i = id as usize;
        let blocks = (*self.lengths.get(i)? as usize).div_ceil(crate::codec::BLOCK);
        let entries = impacts.value(i);
        let entries = entries.as_binary_opt::<i64>()?;
        if entries.len() < blocks {
            return None;
        }
        let mut out = Vec::with_capacity(blocks);
        for b in 0..blocks {
            let pairs = crate::codec::decode_impact(entries.value(b))?;
            let best = pairs
                .iter()
                .map(|(f, code)| {
                    let tf = *f as f32;
                    let dl = crate::codec::length_of_code(*code) as f32;
                    tf / (tf + crate::score::K1 * ((1.0 - crate::score::B) + crate::score::B * dl / avgdl))
                })
                .fold(0f32, f32::max);
            out.push(best);
        }
        Some(out)
    }

    /// Decodes the postings of token `id` into `docs` and `freqs` (cleared first).
    pub fn postings_into(&self, id: u32, docs: &mut Vec<u32>, freqs: &mut Vec<u32>) -> Result<()> {
        let i = id as usize;
        if i >= self.postings.len() {
            return Err(Error::corrupt("posting list", format!("token id {id} out of range")));
        }
        let len = self.lengths[i] as usize;
        let blocks = self.postings.value(i);
        let blocks = blocks.as_binary::<i64>();
        docs.clear();
        freqs.clear();
        docs.reserve(len);
        freqs.reserve(len);
        for (b, block) in blocks.iter().enumerate() {
            let n = len.saturating_sub(b * BLOCK).min(BLOCK);
            let bytes = block.ok_or_else(|| Error::corrupt("posting list", "a null block"))?;
            let before = docs.len();
            crate::codec::decode_block(bytes, n, self.tail, docs, freqs)?;
            // Each block ascends (the codec checks); so must the blocks.
            if before > 0 && docs[before] <= docs[before - 1] {
                return Err(Error::corrupt("posting list", "blocks out of order"));
            }
        }
        // Doc ids ascend, so the last is the largest.
        if docs.last().is_some_and(|d| *d as usize >= self.row_ids.len()) {
            return Err(Error::corrupt("posting list", "a doc id past the docs file"));
        }
        Ok(())
    }
}
