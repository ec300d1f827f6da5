"""The Python package's module layout: the dataset API is split over several modules
(dataset, scanner, fragment, optimize, argument checks) without import cycles, and the
names pylance users import from ``lance.dataset`` / ``lance.fragment`` / ``lance.optimize``
import from the same lancelet modules."""

from __future__ import annotations

import ast
import importlib
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Set

import pyarrow as pa
import pytest

import lancelet

PACKAGE = Path(lancelet.__file__).parent

#: Names importable from ``lance.dataset`` that lancelet offers from ``lancelet.dataset``.
DATASET_NAMES = [
    "LanceDataset", "LanceScanner", "LanceFragment", "LanceOperation", "LanceStats", "ScanStatistics",
    "CleanupStats", "CompactionMetrics", "DatasetOptimizer", "DatasetDelta", "Tags", "Branches",
    "ColumnOrdering", "DataFile", "FragmentMetadata", "MergeInsertBuilder", "DatasetBasePath",
    "BatchUDF", "batch_udf", "write_dataset",
]
FRAGMENT_NAMES = ["LanceFragment", "FragmentMetadata", "DataFile", "DeletionFile", "write_fragments"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports() -> Dict[str, Set[str]]:
    """Each lancelet module's imports of other lancelet modules that run when it is
    imported (function bodies and ``if TYPE_CHECKING:`` blocks left out; the package
    itself left out, as a submodule's parent is always imported first)."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: Dict[str, Set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps: Set[str] = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    deps.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in paths else target)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in paths and d not in (name, "lancelet")}
    return graph


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    found: List[List[str]] = []
    state: Dict[str, int] = {}

    def visit(node: str, stack: List[str]) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                found.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_no_module_level_import_cycles():
    graph = _top_level_imports()
    assert {"lancelet.dataset", "lancelet.scanner", "lancelet.fragment", "lancelet.optimize"} <= set(graph)
    assert _cycles(graph) == []
    # The lower layers do not import the dataset module when they are imported.
    for low in ("lancelet._argcheck", "lancelet._inputs", "lancelet.fragment", "lancelet.scanner", "lancelet.optimize"):
        assert "lancelet.dataset" not in graph[low], low


@pytest.mark.parametrize("module", ["scanner", "fragment", "optimize", "_argcheck", "_inputs", "_delta"])
def test_each_module_imports_first_in_a_fresh_interpreter(module):
    # Importing a submodule first runs the package's __init__ (which imports dataset), then
    # the submodule: no partially initialised module may be seen on the way.
    subprocess.run([sys.executable, "-c", f"import lancelet.{module}"], check=True)


def test_dataset_module_offers_what_lance_dataset_offers():
    import lance  # noqa: F401  (the oracle: pylance's lance.dataset has each name)

    ours, theirs = sys.modules["lancelet.dataset"], sys.modules["lance.dataset"]
    for name in DATASET_NAMES:
        assert hasattr(theirs, name), f"pylance's lance.dataset has no {name}"
        assert hasattr(ours, name), f"lancelet.dataset lacks {name}"
    for name in FRAGMENT_NAMES:
        assert hasattr(sys.modules["lance.fragment"], name), name
        assert hasattr(lancelet.fragment, name), name
    for module in ("lance.optimize", "lancelet.optimize"):
        assert hasattr(importlib.import_module(module), "CompactionMetrics"), module


def test_classes_live_in_their_modules_and_stay_importable_from_dataset():
    ds_mod = sys.modules["lancelet.dataset"]
    assert ds_mod.LanceScanner.__module__ == "lancelet.scanner"
    assert ds_mod.LanceFragment.__module__ == "lancelet.fragment"
    assert ds_mod.DatasetOptimizer.__module__ == "lancelet.optimize"
    assert lancelet.LanceFragment is lancelet.fragment.LanceFragment is ds_mod.LanceFragment
    assert lancelet.LanceScanner is ds_mod.LanceScanner


def test_pickles_of_datasets_fragments_and_scanners_round_trip():
    uri = str(Path(tempfile.mkdtemp()) / "p.lance")
    ds = lancelet.write_dataset(pa.table({"a": list(range(10))}), uri, max_rows_per_file=4)
    frag = ds.get_fragments()[1]
    scanner = ds.scanner(filter="a > 3", columns=["a"])
    assert pickle.loads(pickle.dumps(ds)).to_table().equals(ds.to_table())
    assert pickle.loads(pickle.dumps(frag)).to_table().column("a").to_pylist() == [4, 5, 6, 7]
    assert pickle.loads(pickle.dumps(scanner)).to_table().column("a").to_pylist() == [4, 5, 6, 7, 8, 9]
