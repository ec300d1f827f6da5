"""Readable dumps of a dataset's metadata, as pylance's ``lance.debug`` prints them (the
indented form of Rust's ``Debug``): for people reading what a version holds, and for
programs and tests that search the text.

>>> from lancelet.debug import format_manifest, format_schema  # doctest: +SKIP
>>> print(format_schema(ds))  # doctest: +SKIP
Schema {
    fields: [
        Field {
            name: "x",
            ...
"""

from __future__ import annotations

from typing import Any, List

from ._native import dataset as _native_dataset
from .errors import InvalidArgumentError

__all__ = ["format_fragment", "format_manifest", "format_schema", "list_transactions"]


def format_schema(dataset: Any) -> str:
    """The dataset's schema: every field with its id, parent, logical type, metadata,
    encoding and children."""
    return str(_native_dataset.schema_debug(dataset._native, True))


def format_manifest(dataset: Any) -> str:
    """The dataset's manifest: schema, version, writer, fragments and their files,
    feature flags, transaction file, config."""
    return str(_native_dataset.manifest_debug(dataset._native))


def format_fragment(fragment: Any, dataset: Any) -> str:
    """A fragment (its ``FragmentMetadata``, or its id) of ``dataset``: each data file with
    the schema of the fields it holds, the deletion file, the physical rows."""
    fid = fragment if isinstance(fragment, int) else getattr(fragment, "id", None)
    if not isinstance(fid, int):
        raise InvalidArgumentError(f"format_fragment takes a FragmentMetadata or a fragment id, got {fragment!r}")
    text = _native_dataset.fragment_debug(dataset._native, fid)
    if text is None:
        raise InvalidArgumentError(f"fragment {fid} is not in version {dataset.version} of the dataset")
    return str(text)


def list_transactions(dataset: Any, /, max_transactions: int = 10) -> List[str]:
    """The transactions of the last ``max_transactions`` versions, newest first."""
    if isinstance(max_transactions, bool) or not isinstance(max_transactions, int) or max_transactions < 0:
        raise InvalidArgumentError(f"max_transactions must be a non-negative int, got {max_transactions!r}")
    return list(_native_dataset.transactions_debug(dataset._native, max_transactions))
