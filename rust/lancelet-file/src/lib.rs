//! The Lance v2 file container.
//!
//! A Lance file is a sequence of data buffers (grouped into pages, one column per
//! page), followed by the file descriptor (global buffer 0: schema and row count),
//! one `ColumnMetadata` protobuf per column, the column-metadata and global-buffer
//! offset tables, and a 40-byte footer ending in `LANC`. [`writer::FileWriter`]
//! streams batches into that layout; [`reader::FileReader`] opens it through the
//! [`lancelet_io::ReadAt`] trait (from `lancelet_io`, so any local, memory or S3 object) and reads
//! projections, row ranges and arbitrary rows. Legacy (0.1) files are read too, through
//! [`legacy`], behind the same reader. The reader and writer are split by format version
//! (`reader/v2_0.rs`, `reader/v2_1.rs`, `writer/v2_0.rs`, `writer/v2_1.rs`), as the
//! encoding crate is.

pub mod blob;
pub mod checksum;
pub mod error;
pub mod footer;
pub mod json;
pub mod legacy;
pub mod plan;
pub mod reader;
pub mod schema;
pub mod stats;
pub mod uri_writer;
pub mod writer;

pub use error::{Error, Result};
pub use footer::FileVersion;
pub use reader::{FileReader, PageCache, Projection, Spawner};
pub use writer::{FileWriter, PageRules, WriterOptions};
