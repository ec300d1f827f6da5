"""The dataset API keeps pylance's names and defaults where pylance has the feature."""

from __future__ import annotations

import inspect

import lance
import pytest

import lancelet

CASES = [
    (lancelet.write_dataset, lance.write_dataset,
     ["schema", "mode", "max_rows_per_file", "max_rows_per_group", "max_bytes_per_file", "data_storage_version",
      "use_legacy_format", "enable_v2_manifest_paths", "storage_options", "commit_message", "progress"]),
    (lancelet.dataset, lance.dataset, ["version", "asof", "storage_options"]),
    (lancelet.LanceDataset.scanner, lance.LanceDataset.scanner,
     ["columns", "filter", "limit", "offset", "batch_size", "fragments", "with_row_id", "with_row_address",
      "scan_in_order"]),
    (lancelet.LanceDataset.take, lance.LanceDataset.take, ["indices", "columns"]),
    (lancelet.LanceDataset.to_table, lance.LanceDataset.to_table, ["columns", "filter"]),
    (lancelet.LanceDataset.count_rows, lance.LanceDataset.count_rows, ["filter"]),
    (lancelet.LanceDataset.delete, lance.LanceDataset.delete, ["predicate"]),
    (lancelet.LanceDataset.update_config, lance.LanceDataset.update_config, ["values", "replace"]),
    (lancelet.LanceDataset.checkout_version, lance.LanceDataset.checkout_version, ["version"]),
]


@pytest.mark.parametrize("ours, theirs, names", CASES, ids=lambda x: getattr(x, "__qualname__", None))
def test_parameters_match_pylance(ours, theirs, names):
    mine = inspect.signature(ours).parameters
    ref = inspect.signature(theirs).parameters
    for name in names:
        assert name in mine, f"{ours.__qualname__} lacks {name}"
        assert name in ref, f"pylance's {theirs.__qualname__} has no {name}"
        assert mine[name].kind == ref[name].kind, f"{name}: {mine[name].kind} vs {ref[name].kind}"
        if mine[name].kind == inspect.Parameter.POSITIONAL_OR_KEYWORD:
            assert list(mine).index(name) == list(ref).index(name), f"{name} is not at pylance's position"
        if ref[name].default is not inspect.Parameter.empty:
            assert mine[name].default == ref[name].default, f"{name}: {mine[name].default!r} vs {ref[name].default!r}"
        else:
            assert mine[name].default is inspect.Parameter.empty, name


def test_every_public_dataset_call_is_documented():
    for obj in (lancelet.write_dataset, lancelet.dataset, lancelet.LanceDataset, lancelet.LanceScanner,
                lancelet.LanceFragment):
        assert inspect.getdoc(obj), obj
    for cls in (lancelet.LanceDataset, lancelet.LanceScanner, lancelet.LanceFragment):
        for name, member in vars(cls).items():
            if name.startswith("_"):
                continue
            target = member.fget if isinstance(member, property) else member
            if callable(target):
                assert inspect.getdoc(target), f"{cls.__name__}.{name} has no docstring"
