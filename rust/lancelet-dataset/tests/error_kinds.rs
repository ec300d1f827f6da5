//! Every error variant of the core reports the kind that names its Python exception class
//! (the glue maps kinds to classes in `lancelet-python/src/errors.rs`; `tests/test_error_kinds.py`
//! provokes each variant through Python). The `Arrow` variants cannot be provoked from Python,
//! since pyarrow validates arrays before they cross, so they are pinned here with the others.
#![allow(clippy::unwrap_used, reason = "test code: a failed unwrap or panic is a failed test")]

use lancelet_dataset::table::{ConflictKind, Error as T};
use lancelet_dataset::Error as D;
use lancelet_file::Error as F;
use lancelet_io::ErrorKind as K;

fn arrow_error() -> arrow_schema::ArrowError {
    arrow_schema::ArrowError::CastError("x".into())
}

#[test]
fn every_file_error_has_a_kind() {
    let cases = [
        (F::corrupt("f", "bad"), K::Corrupt),
        (lancelet_io::Error::NotFound { path: "f".into() }.into(), K::NotFound),
        (
            lancelet_io::Error::Io {
                path: "f".into(),
                source: std::io::Error::other("disk"),
            }
            .into(),
            K::Io,
        ),
        (F::SchemaMismatch("x".into()), K::SchemaMismatch),
        (F::Unsupported("x".into()), K::Unsupported),
        (F::InvalidArgument("x".into()), K::InvalidArgument),
        (F::Arrow(arrow_error()), K::InvalidArgument),
        (F::Internal("x".into()), K::Internal),
    ];
    for (e, kind) in cases {
        assert_eq!(e.kind(), kind, "{e}");
        assert_eq!(D::File(e).kind(), kind);
    }
}

#[test]
fn every_table_error_has_a_kind() {
    let cases = [
        (
            T::Corrupt {
                path: "m".into(),
                message: "bad".into(),
            },
            K::Corrupt,
        ),
        (
            T::Storage(lancelet_io::Error::Io {
                path: "m".into(),
                source: std::io::Error::other("disk"),
            }),
            K::Io,
        ),
        (T::not_found("m"), K::NotFound),
        (
            T::VersionNotFound {
                path: "d".into(),
                version: 99,
            },
            K::NotFound,
        ),
        (
            T::CommitConflict {
                path: "d".into(),
                message: "x".into(),
                kind: ConflictKind::Retryable,
            },
            K::CommitConflict,
        ),
        (T::AlreadyExists("tag".into()), K::InvalidArgument),
        (T::InvalidArgument("x".into()), K::InvalidArgument),
        (T::Unsupported("x".into()), K::Unsupported),
    ];
    for (e, kind) in cases {
        assert_eq!(e.kind(), kind, "{e}");
        assert_eq!(D::Table(e).kind(), kind);
    }
}

#[test]
fn every_dataset_error_has_a_kind() {
    let cases = [
        (D::SchemaMismatch("x".into()), K::SchemaMismatch),
        (D::InvalidArgument("x".into()), K::InvalidArgument),
        (D::OutOfRange("x".into()), K::OutOfRange),
        (D::Unsupported("x".into()), K::Unsupported),
        (D::AlreadyExists("x".into()), K::AlreadyExists),
        (D::NotFound("x".into()), K::NotFound),
        (D::Internal("x".into()), K::Internal),
        (D::CommitLock("refused".into()), K::CommitConflict),
        (D::NotFound("x".into()).context("reading y"), K::NotFound),
        (D::Arrow(arrow_error()), K::InvalidArgument),
    ];
    for (e, kind) in cases {
        assert_eq!(e.kind(), kind, "{e}");
    }
}

#[test]
fn a_panicked_column_read_is_an_internal_error() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let spawn = lancelet_dataset::tokio_spawner(rt.handle().clone());
    let got = rt.block_on(spawn(Box::pin(async {
        if std::hint::black_box(true) {
            panic!("decoder bug");
        }
        Ok(arrow_array::new_empty_array(&arrow_schema::DataType::Int32))
    })));
    let e = got.unwrap_err();
    assert!(matches!(e, F::Internal(_)), "{e:?}");
    assert_eq!(e.kind(), K::Internal);
}
