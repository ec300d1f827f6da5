"""The Python package's module layout: the modules stand on floors (listed in ``FLOORS``
below and drawn in docs/architecture.md), each importing only from its own floor or the
floors below, without cycles and only at module level; no module assigns another
object's private state; and the names pylance users import from ``lance.dataset`` /
``lance.fragment`` / ``lance.optimize`` import from the same lancelet modules.

The checks are functions of a package directory, so that they can be run on another
checkout of the package: ``git worktree add ../old <rev>``, then
``floor_problems(Path("../old/python/lancelet"))``."""

from __future__ import annotations

import ast
import importlib
import multiprocessing
import pickle
import subprocess
import sys
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

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


#: The floors, bottom up. A module imports only from its own floor and the floors below
#: (same-floor imports must not form a cycle); every module stands on exactly one floor.
FLOORS: List[List[str]] = [
    # The compiled extension (the shared names, and one submodule per concern) and the
    # exception classes.
    [
        "lancelet._native",
        "lancelet._native.file",
        "lancelet._native.dataset",
        "lancelet._native.index",
        "lancelet._native.loader",
        "lancelet._native.storage",
        "lancelet.errors",
    ],
    # Helpers and value types that know no dataset.
    [
        "lancelet._handle",
        "lancelet.commit",
        "lancelet.log",
        "lancelet.debug",
        "lancelet.util",
        "lancelet._paths",
        "lancelet._expressions",
        "lancelet._counters",
        "lancelet._views",
        "lancelet._arrow_dataset",
        "lancelet._namespace_io",
        "lancelet.progress",
        "lancelet.schema",
        "lancelet.vector",
        "lancelet.arrow",
        "lancelet.query",
        "lancelet._ranked",
    ],
    # Single files and blobs.
    ["lancelet.file", "lancelet.blob", "lancelet._rowoffset"],
    # Arguments and inputs as the calls take them.
    ["lancelet._argcheck", "lancelet._inputs"],
    # The parts of the dataset API: each works on the LanceDataset it is given.
    [
        "lancelet.evolve",
        "lancelet._dropin",
        "lancelet._branches",
        "lancelet._delta",
        "lancelet.optimize",
        "lancelet.merge",
        "lancelet._nearest",
        "lancelet._fulltext",
        "lancelet._fragment_ops",
        "lancelet.fragment",
        "lancelet._operations",
        "lancelet.scanner",
        "lancelet.indices",
    ],
    # The dataset.
    ["lancelet.dataset"],
    # Namespaces (catalogs of tables).
    [
        "lancelet.namespace",
        "lancelet.namespace._routes",
        "lancelet.namespace._schema",
        "lancelet.namespace._storage",
        "lancelet.namespace._catalog",
        "lancelet.namespace._access",
        "lancelet.namespace._data",
        "lancelet.namespace._rest",
        "lancelet.namespace._versions",
        "lancelet.namespace._directory",
        "lancelet.namespace._connect",
        "lancelet.namespace._server",
    ],
    # Applications: the Spark source, training loaders and the command line.
    [
        "lancelet.spark",
        "lancelet.loader",
        "lancelet.sampler",
        "lancelet._spark_namespace",
        "lancelet._cli_common",
        "lancelet._cli_inspect",
        "lancelet._cli_namespace",
        "lancelet.cli",
    ],
    # The package.
    ["lancelet", "lancelet.__main__"],
]

#: The facade modules that import each part of the compiled extension: a module imports
#: the native submodule of its concern (``from ._native import dataset as _native_dataset``),
#: and the package itself (the shared names: version, runtime, ``BatchStream``) only where
#: those are needed.
NATIVE_USERS: Dict[str, Set[str]] = {
    "lancelet._native": {"lancelet", "lancelet.file"},
    "lancelet._native.file": {"lancelet.file"},
    "lancelet._native.dataset": {
        "lancelet.dataset",
        "lancelet.scanner",
        "lancelet.fragment",
        "lancelet._fragment_ops",
        "lancelet._operations",
        "lancelet._branches",
        "lancelet.merge",
        "lancelet.evolve",
        "lancelet.blob",
        "lancelet.spark",
        "lancelet._cli_inspect",
        "lancelet.debug",
    },
    "lancelet._native.index": {
        "lancelet.util",
        "lancelet.indices",
        "lancelet._nearest",
        "lancelet._fulltext",
        "lancelet.optimize",
        "lancelet.query",
        "lancelet.spark",
    },
    "lancelet._native.loader": {"lancelet.loader", "lancelet.sampler"},
    "lancelet._native.storage": {
        "lancelet._paths",
        "lancelet.namespace._storage",
        "lancelet.namespace._catalog",
        "lancelet.namespace._versions",
        "lancelet._cli_inspect",
    },
}

#: Modules that may be imported inside a function: importing them needs an optional
#: package (lancelet.namespace needs lance-namespace), so the cli and the Spark source
#: import them only when a namespace is used. Their imports still obey the floors.
OPTIONAL_MODULES = {"lancelet.namespace"}


@dataclass(frozen=True)
class Import:
    """One import of a package module by another."""

    module: str
    target: str
    line: int
    in_function: bool


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: Path) -> Dict[str, Path]:
    """Every module of the package by name: its ``.py`` files, and its compiled modules
    (``_native``) by their ``.pyi`` stubs."""
    out = {_module_name(p, package): p for p in package.rglob("*.py")}
    for stub in package.rglob("*.pyi"):
        out.setdefault(_module_name(stub, package), stub)
    return out


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def _walk(tree: ast.AST) -> Iterator[Tuple[ast.AST, bool]]:
    """Every node with whether it is inside a function, leaving out ``if TYPE_CHECKING:``
    blocks (their ``else`` is kept)."""
    stack: List[Tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        yield node, in_function
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        children = node.orelse if _is_type_checking(node) else list(ast.iter_child_nodes(node))
        stack.extend((child, inner) for child in children)


def imports(package: Path) -> List[Import]:
    """Every import of a package module, anywhere in a module's code (function bodies
    included, ``if TYPE_CHECKING:`` blocks left out)."""
    mods = modules(package)
    out = []
    for name, path in mods.items():
        parent = name if path.stem == "__init__" else name.rpartition(".")[0]
        for node, in_function in _walk(ast.parse(path.read_text())):
            targets: List[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = parent.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.append(sub if sub in mods else source)
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            out.extend(Import(name, t, node.lineno, in_function) for t in targets if t in mods and t != name)
    return out


def import_graph(package: Path, top_level_only: bool = False) -> Dict[str, Set[str]]:
    """Module -> the package modules it imports (with ``top_level_only``, only the imports
    that run when it is imported)."""
    graph: Dict[str, Set[str]] = {name: set() for name in modules(package)}
    for i in imports(package):
        if not (top_level_only and i.in_function):
            graph[i.module].add(i.target)
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    found: List[List[str]] = []
    state: Dict[str, int] = {}

    def visit(node: str, stack: List[str]) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                found.append(stack[stack.index(dep) :] + [dep])
            elif dep not in state:
                visit(dep, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def floor_problems(package: Path, floors: List[List[str]] = FLOORS) -> List[str]:
    """Modules on no floor or on two, floors naming no module, and imports of a module on
    a higher floor."""
    floor: Dict[str, int] = {}
    problems = []
    for level, names in enumerate(floors):
        for name in names:
            if name in floor:
                problems.append(f"{name} is on floors {floor[name]} and {level}")
            floor[name] = level
    mods = modules(package)
    problems += [f"{name} is on no floor: add it to FLOORS" for name in sorted(set(mods) - set(floor))]
    problems += [f"FLOORS names {name}, which is not a module" for name in sorted(set(floor) - set(mods))]
    for i in imports(package):
        if i.module in floor and i.target in floor and floor[i.target] > floor[i.module]:
            problems.append(
                f"{i.module} (floor {floor[i.module]}) imports {i.target} (floor {floor[i.target]}), line {i.line}"
            )
    return problems


def lazy_imports(package: Path) -> List[str]:
    """Imports of package modules made inside functions (but for ``OPTIONAL_MODULES``)."""
    return [
        f"{i.module}, line {i.line}: imports {i.target} inside a function"
        for i in imports(package)
        if i.in_function and i.target not in OPTIONAL_MODULES
    ]


def _assigned(node: ast.AST) -> List[Tuple[ast.AST, str]]:
    """``(object, attribute)`` of each attribute that ``node`` assigns (``x.a = ...``,
    ``x.a, n = ...``, ``x.a += ...``, ``setattr(x, "a", ...)``)."""
    targets: List[ast.AST] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "setattr"
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return [(node.args[0], node.args[1].value)]
    out = []
    while targets:
        t = targets.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            targets.extend(t.elts)
        elif isinstance(t, ast.Starred):
            targets.append(t.value)
        elif isinstance(t, ast.Attribute):
            out.append((t.value, t.attr))
    return out


def _is_self(obj: ast.AST) -> bool:
    return isinstance(obj, ast.Name) and obj.id in ("self", "cls")


def native_assignments(package: Path) -> List[str]:
    """Assignments of ``_native`` on an object other than ``self``/``cls``: a dataset (or
    blob file...) moves to another native handle through a method of its own."""
    out = []
    for name, path in modules(package).items():
        for node, _ in _walk(ast.parse(path.read_text())):
            for obj, attr in _assigned(node):
                if attr == "_native" and not _is_self(obj):
                    out.append(f"{name}, line {node.lineno}: {ast.unparse(obj)}._native assigned")
    return out


def private_assignments(package: Path) -> List[str]:
    """Assignments of a private attribute (``x._a = ...``) on an object other than
    ``self``/``cls``, in a module that does not define that attribute itself (by
    assigning ``self._a`` or naming ``_a`` in a class body): state set from outside the
    module that owns it."""
    out = []
    for name, path in modules(package).items():
        nodes = list(_walk(ast.parse(path.read_text())))
        own = {attr for node, _ in nodes for obj, attr in _assigned(node) if _is_self(obj)}
        for node, _ in nodes:
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                        own.add(stmt.target.id)
                    elif isinstance(stmt, ast.Assign):
                        own.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        for node, _ in nodes:
            for obj, attr in _assigned(node):
                private = attr.startswith("_") and not attr.startswith("__")
                if private and not _is_self(obj) and attr not in own:
                    out.append(f"{name}, line {node.lineno}: {ast.unparse(obj)}.{attr} assigned")
    return out


def test_the_import_graph_sees_every_import():
    graph = import_graph(PACKAGE)
    # A module-level import, one inside a function (the optional namespace package), the
    # compiled extension, and an import from inside a subpackage.
    assert "lancelet.scanner" in graph["lancelet.dataset"]
    assert "lancelet.namespace" in graph["lancelet._cli_namespace"]
    assert "lancelet.namespace" not in import_graph(PACKAGE, top_level_only=True)["lancelet._cli_namespace"]
    assert "lancelet._native.dataset" in graph["lancelet.dataset"]
    assert "lancelet._native.index" in graph["lancelet.spark"]
    assert "lancelet._native" in graph["lancelet._native.index"]
    assert "lancelet.dataset" in graph["lancelet.namespace._catalog"]
    # if TYPE_CHECKING: imports are not edges.
    assert "lancelet.dataset" not in graph["lancelet.scanner"]


def native_import_problems(package: Path, users: Dict[str, Set[str]] = NATIVE_USERS) -> List[str]:
    """Imports of a part of the compiled extension by a facade module that ``users`` does
    not list for it, listed modules that do not import it, and parts ``users`` misses."""
    graph = import_graph(package)
    natives = {name for name in graph if name == "lancelet._native" or name.startswith("lancelet._native.")}
    problems = [f"NATIVE_USERS misses {name}" for name in sorted(natives - set(users))]
    for native, allowed in sorted(users.items()):
        actual = {m for m, targets in graph.items() if native in targets and m not in natives}
        problems += [f"{m} imports {native}: not its concern (see NATIVE_USERS)" for m in sorted(actual - allowed)]
        problems += [f"NATIVE_USERS lists {m} for {native}, which it does not import" for m in sorted(allowed - actual)]
    return problems


def test_no_import_cycles():
    assert cycles(import_graph(PACKAGE)) == []


def test_every_module_stands_on_a_floor_and_imports_only_from_its_floor_or_below():
    assert floor_problems(PACKAGE) == []


def test_each_module_imports_only_the_native_parts_of_its_concern():
    assert native_import_problems(PACKAGE) == []


def test_no_module_imports_a_lancelet_module_inside_a_function():
    assert lazy_imports(PACKAGE) == []


def test_no_module_assigns_another_objects_native_handle():
    assert native_assignments(PACKAGE) == []


def test_no_module_assigns_private_state_it_does_not_own():
    assert private_assignments(PACKAGE) == []


def test_no_module_level_import_cycles():
    graph = import_graph(PACKAGE, top_level_only=True)
    assert {"lancelet.dataset", "lancelet.scanner", "lancelet.fragment", "lancelet.optimize"} <= set(graph)
    assert cycles(graph) == []
    # The lower layers do not import the dataset module when they are imported.
    for low in ("lancelet._argcheck", "lancelet._inputs", "lancelet.fragment", "lancelet.scanner", "lancelet.optimize"):
        assert "lancelet.dataset" not in graph[low], low


@pytest.mark.parametrize(
    "module", ["scanner", "fragment", "optimize", "_argcheck", "_inputs", "_delta", "_handle", "indices", "_cli_common"]
)
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


NATIVE_SUBMODULES = ["file", "dataset", "index", "loader", "storage"]


def test_every_native_submodule_has_a_stub():
    # stubtest (scripts/test.sh) checks the submodules it finds stubs of.
    import lancelet._native as native

    submodules = {k for k, v in vars(native).items() if isinstance(v, types.ModuleType)}
    stubs = {p.stem for p in (PACKAGE / "_native").glob("*.pyi")} - {"__init__"}
    assert submodules == stubs == set(NATIVE_SUBMODULES)


@pytest.mark.parametrize("name", NATIVE_SUBMODULES)
def test_native_submodules_import_by_their_dotted_names(name):
    import lancelet._native as native

    module = importlib.import_module(f"lancelet._native.{name}")
    assert module is getattr(native, name) is sys.modules[f"lancelet._native.{name}"]
    assert module.__name__ == f"lancelet._native.{name}"
    # Every function and class the submodule registers names it as its module.
    own = [v for k, v in vars(module).items() if not k.startswith("__") and callable(v)]
    assert own and all(v.__module__ == module.__name__ for v in own), name
    # The submodules are no names of the package's own: they stay out of its __all__.
    assert name not in native.__all__


def test_native_submodules_import_first_in_a_fresh_interpreter():
    code = (
        "import lancelet._native.file, sys\n"
        "from lancelet._native import dataset, index, loader, storage\n"
        "assert sys.modules['lancelet._native.dataset'] is dataset\n"
        "assert lancelet._native.file.FileReader.__module__ == 'lancelet._native.file'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_native_classes_and_functions_pickle_by_their_submodules():
    from lancelet._native import dataset as native_dataset
    from lancelet._native import storage as native_storage

    for obj in (native_dataset.Dataset, native_dataset.ScanStats, native_storage.manifest_name):
        assert pickle.loads(pickle.dumps(obj)) is obj
    assert repr(native_dataset.Dataset) == "<class 'lancelet._native.dataset.Dataset'>"
    # A spawned child unpickles a native function by importing its submodule.
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        assert pool.apply(native_storage.manifest_version, ("3.manifest",)) == 3
