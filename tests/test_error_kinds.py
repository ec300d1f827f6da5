"""Every error variant of the Rust core reaches Python as its own exception class.

`rust/lancelet-python/src/errors.rs` maps each variant of the file, table and dataset
error enums with an explicit arm (the enums are not `#[non_exhaustive]`, so a new variant
does not compile until it has one). Each case here provokes one variant through the public
API and checks the exact class. The two `Arrow` variants (arrow-rs refusing a batch) cannot
be provoked from Python, since pyarrow validates arrays before they cross; the Rust unit
tests in errors.rs pin their class (InvalidArgumentError) with every other variant's.
"""

from __future__ import annotations

import glob
import os
from typing import Any, Callable, NamedTuple

import pyarrow as pa
import pytest

import lancelet
from lancelet.file import LanceFileReader, LanceFileWriter

pytestmark = pytest.mark.lancelet_only


class Case(NamedTuple):
    variant: str  # "<layer>::<Variant>" of the Rust error
    call: Callable[[str], Any]  # takes a fresh directory
    error: type
    words: str  # a part of the message


def _dataset(root: str, name: str = "ds.lance", **kw) -> lancelet.LanceDataset:
    return lancelet.write_dataset(pa.table({"a": pa.array([1, 2, 3], pa.int64())}), os.path.join(root, name), **kw)


def _manifest(ds: lancelet.LanceDataset) -> str:
    (path,) = glob.glob(os.path.join(ds.uri, "_versions", "*.manifest"))
    return path


def _file_io(root: str) -> None:
    LanceFileWriter(root, pa.schema([("a", pa.int32())])).close()  # a directory, not a file


def _file_corrupt(root: str) -> None:
    path = os.path.join(root, "garbage.lance")
    with open(path, "wb") as f:
        f.write(b"x" * 100)
    LanceFileReader(path)


def _file_schema_mismatch(root: str) -> None:
    with LanceFileWriter(os.path.join(root, "w.lance"), pa.schema([("a", pa.int32())])) as w:
        w.write_batch(pa.record_batch({"b": pa.array([1], pa.int64())}))


def _file_unsupported(root: str) -> None:
    union = pa.dense_union([pa.field("x", pa.int32())])
    with LanceFileWriter(os.path.join(root, "u.lance"), pa.schema([("u", union)])):
        pass


def _table_corrupt(root: str) -> None:
    ds = _dataset(root)
    path = _manifest(ds)
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])
    lancelet.dataset(ds.uri)


def _table_io(root: str) -> None:
    ds = _dataset(root)
    path = _manifest(ds)
    os.remove(path)
    os.mkdir(path)  # the manifest is a directory: reading it fails with EISDIR
    lancelet.dataset(ds.uri)


def _table_commit_conflict(root: str) -> None:
    ds = _dataset(root)
    stale = lancelet.dataset(ds.uri)
    lancelet.write_dataset(pa.table({"a": pa.array([7], pa.int64())}), ds.uri, mode="overwrite")
    stale.delete("a = 1")  # never re-run on a table that was replaced


def _table_already_exists(root: str) -> None:
    ds = _dataset(root)
    ds.tags.create("t", 1)
    ds.tags.create("t", 1)


def _dataset_unsupported(root: str) -> None:
    t = pa.table({"l": pa.array([[{"x": 1, "y": 2}]], pa.list_(pa.struct([("x", pa.int32()), ("y", pa.int32())])))})
    lancelet.write_dataset(t, os.path.join(root, "l.lance")).drop_columns(["l.item.x"])


CASES = [
    # ---- file layer (lancelet_file::Error) ----
    Case("file::Corrupt", _file_corrupt, lancelet.CorruptFileError, "not a Lance file"),
    Case("file::NotFound", lambda root: LanceFileReader(os.path.join(root, "nope.lance")), lancelet.LanceNotFoundError,
         "nope.lance"),
    Case("file::Io", _file_io, lancelet.LanceIOError, "directory"),
    Case("file::SchemaMismatch", _file_schema_mismatch, lancelet.SchemaMismatchError, '"a"'),
    Case("file::Unsupported", _file_unsupported, lancelet.UnsupportedFeatureError, "Union"),
    Case("file::InvalidArgument",
         lambda root: LanceFileWriter(os.path.join(root, "v.lance"), pa.schema([("a", pa.int32())]), version="9.9"),
         lancelet.InvalidArgumentError, "9.9"),
    # ---- table layer (lancelet_table::Error) ----
    Case("table::Corrupt", _table_corrupt, lancelet.CorruptFileError, "manifest"),
    Case("table::Io", _table_io, lancelet.LanceIOError, "manifest"),
    Case("table::NotFound", lambda root: lancelet.dataset(os.path.join(root, "missing.lance")),
         lancelet.LanceNotFoundError, "missing.lance"),
    Case("table::VersionNotFound", lambda root: lancelet.dataset(_dataset(root).uri, version=99),
         lancelet.LanceNotFoundError, "99"),
    Case("table::CommitConflict", _table_commit_conflict, lancelet.CommitConflictError, "Overwrite"),
    Case("table::AlreadyExists", _table_already_exists, lancelet.InvalidArgumentError, "already exists"),
    Case("table::InvalidArgument", lambda root: _dataset(root).tags.create("bad name/..", 1),
         lancelet.InvalidArgumentError, "tag name"),
    Case("table::Unsupported", lambda root: lancelet.dataset("foo://bucket/x.lance"), lancelet.UnsupportedFeatureError,
         "foo://"),
    # ---- dataset layer (lancelet_dataset::Error) ----
    Case("dataset::Expr", lambda root: _dataset(root).to_table(filter="zz > 1"), lancelet.InvalidArgumentError, "zz"),
    Case("dataset::SchemaMismatch",
         lambda root: lancelet.write_dataset(pa.table({"b": ["x"]}), _dataset(root).uri, mode="append"),
         lancelet.SchemaMismatchError, '"b"'),
    Case("dataset::InvalidArgument", lambda root: _dataset(root).update({"a": "'xyz'"}), lancelet.InvalidArgumentError,
         "a"),
    Case("dataset::OutOfRange", lambda root: _dataset(root).take([99]), lancelet.RowIndexError, "99"),
    Case("dataset::Unsupported", _dataset_unsupported, lancelet.UnsupportedFeatureError, "l.item.x"),
    Case("dataset::AlreadyExists", lambda root: _dataset(root, name="d.lance") and _dataset(root, name="d.lance"),
         lancelet.DatasetAlreadyExistsError, "d.lance"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.variant for c in CASES])
def test_each_error_variant_raises_its_class(case: Case, tmp_path):
    with pytest.raises(lancelet.LanceError) as info:
        case.call(str(tmp_path))
    assert type(info.value) is case.error, f"{case.variant}: {type(info.value).__name__}: {info.value}"
    assert case.words in str(info.value), str(info.value)


def test_classes_are_also_the_builtins_pylance_users_catch():
    # A missing dataset or version is a ValueError in pylance (and OSError from
    # checkout_version): LanceNotFoundError is both.
    assert issubclass(lancelet.LanceNotFoundError, ValueError)
    assert issubclass(lancelet.LanceNotFoundError, OSError)
    assert issubclass(lancelet.InvalidArgumentError, ValueError)
    assert issubclass(lancelet.RowIndexError, IndexError)
    assert issubclass(lancelet.CorruptFileError, OSError)
    assert issubclass(lancelet.LanceIOError, OSError)
    assert issubclass(lancelet.UnsupportedFeatureError, NotImplementedError)
    assert issubclass(lancelet.DatasetAlreadyExistsError, FileExistsError)
