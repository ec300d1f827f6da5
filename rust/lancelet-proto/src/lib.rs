//! Prost bindings for lancelet's own `.proto` definitions of the Lance wire format.
//!
//! The package layout mirrors the protobuf packages (`lance.file`, `lance.file.v2`,
//! `lance.encodings`, `lance.encodings21`, `lance.table`) because `google.protobuf.Any`
//! type URLs embed the full message name and must match Lance's byte for byte.
#![allow(missing_docs, clippy::all)]

/// Generated code, one module per protobuf package.
pub mod lance {
    pub mod file {
        include!(concat!(env!("OUT_DIR"), "/lance.file.rs"));
        pub mod v2 {
            include!(concat!(env!("OUT_DIR"), "/lance.file.v2.rs"));
        }
    }
    pub mod encodings {
        include!(concat!(env!("OUT_DIR"), "/lance.encodings.rs"));
    }
    pub mod encodings21 {
        include!(concat!(env!("OUT_DIR"), "/lance.encodings21.rs"));
    }
    pub mod table {
        include!(concat!(env!("OUT_DIR"), "/lance.table.rs"));
    }
}

pub use lance::encodings as pb20;
pub use lance::encodings21 as pb21;
pub use lance::file as pbfile;
pub use lance::file::v2 as pbfile2;
pub use lance::table as pbtable;

/// Type URL prefix used by Lance when packing messages into `google.protobuf.Any`.
pub const TYPE_URL_PREFIX: &str = "/";
