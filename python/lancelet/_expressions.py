"""pyarrow compute Expressions as lancelet SQL.

pylance takes ``filter=pc.field("a") > 5`` wherever it takes a SQL filter; lancelet's native
layer takes SQL, so :func:`to_sql` translates the expression.

pyarrow has no public API to walk an Expression, but it pickles one through Arrow's own
expression serialization: an Arrow IPC file whose schema metadata lists the expression in
prefix order (``call``/``field_ref``/``nested_field_ref``/``literal``/``options``/``end``
entries, repeated keys allowed) and whose columns hold the literals and the function
options as length-1 arrays. That is a documented-by-code, versioned format, so the
literals keep their exact Arrow types (a ``date32`` becomes ``DATE '...'``, a timestamp
``TIMESTAMP '...'``). The metadata is read through the Arrow C data interface, which keeps
repeated keys (``Schema.metadata`` folds them into a dict).

An expression with no exact SQL form raises :class:`UntranslatableExpressionError`;
``scanner()`` then evaluates it with pyarrow itself (see ``scanner.PostFilteredScanner``), which is what
DuckDB relies on: it pushes filters into a ``pyarrow.dataset.Dataset`` scan and does not
apply them again.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import decimal
import math
from typing import Any, List, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from .errors import InvalidArgumentError

__all__ = [
    "UntranslatableExpressionError",
    "UntranslatableLiteralError",
    "is_expression",
    "referenced_columns",
    "sql_if_expression",
    "to_sql",
]


class UntranslatableExpressionError(InvalidArgumentError):
    """A pyarrow expression (a function, a cast, a field reference) with no lancelet SQL
    form. ``scanner()`` evaluates such a filter with pyarrow instead."""


class UntranslatableLiteralError(UntranslatableExpressionError, TypeError):
    """A pyarrow expression holding a literal (or a cast target) of a type lancelet's SQL
    has no literal for; also a ``TypeError``, as it was before this class existed."""


def is_expression(value: Any) -> bool:
    """Whether ``value`` is a ``pyarrow.compute.Expression``."""
    return isinstance(value, pc.Expression)


class _ArrowSchema(ctypes.Structure):
    _fields_ = [
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_void_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _metadata_pairs(schema: pa.Schema) -> List[Tuple[str, str]]:
    """The schema's key/value metadata in order, repeated keys included."""
    c = _ArrowSchema()
    schema._export_to_c(ctypes.addressof(c))
    try:
        p = c.metadata
        if not p:
            return []
        out = []
        n = ctypes.c_int32.from_address(p).value
        off = 4
        for _ in range(n):
            item = []
            for _ in range(2):
                length = ctypes.c_int32.from_address(p + off).value
                off += 4
                item.append(ctypes.string_at(p + off, length).decode("utf-8"))
                off += length
            out.append((item[0], item[1]))
        return out
    finally:
        if c.release:
            _RELEASE(c.release)(ctypes.addressof(c))


# -- the expression tree ---------------------------------------------------------------


class _Field:
    def __init__(self, path: List[str]):
        self.path = path


class _Literal:
    def __init__(self, scalar: pa.Scalar):
        self.scalar = scalar


class _Call:
    def __init__(self, name: str, args: list, options: Optional[pa.StructScalar]):
        self.name = name
        self.args = args
        self.options = options


def _decode(expr: Any) -> Any:
    try:
        _, (buf,) = expr.__reduce__()
        reader = pa.ipc.open_file(buf)
        table = reader.read_all()
        tokens = _metadata_pairs(reader.schema)
    except Exception as e:  # the expression cannot be serialized (e.g. a field by index)
        raise UntranslatableExpressionError(
            f"cannot translate the pyarrow expression {expr} into a filter: {e}"
        ) from None
    columns = [table.column(i) for i in range(table.num_columns)]
    pos = 0

    def field_ref() -> List[str]:
        nonlocal pos
        key, value = tokens[pos]
        pos += 1
        if key == "field_ref":
            return [value]
        if key == "nested_field_ref":
            path: List[str] = []
            for _ in range(int(value)):
                path.extend(field_ref())
            return path
        raise UntranslatableExpressionError(f"unexpected {key!r} in a field reference")

    def node() -> Any:
        nonlocal pos
        key, value = tokens[pos]
        if key in ("field_ref", "nested_field_ref"):
            return _Field(field_ref())
        pos += 1
        if key == "literal":
            return _Literal(columns[int(value)][0])
        if key != "call":
            raise UntranslatableExpressionError(f"unexpected {key!r} in the serialized expression")
        args: List[Any] = []
        options = None
        while True:
            k, v = tokens[pos]
            if k == "end":
                pos += 1
                return _Call(value, args, options)
            if k == "options":
                options = columns[int(v)][0]
                pos += 1
                continue
            args.append(node())

    root = node()
    if pos != len(tokens):
        raise UntranslatableExpressionError("trailing entries in the serialized expression")
    return root


# -- SQL --------------------------------------------------------------------------------


def _ident(name: str) -> str:
    if "`" in name:
        raise UntranslatableExpressionError(
            f"cannot use the column name {name!r} (it contains a backquote) in a filter"
        )
    return f"`{name}`"


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


_INT_SQL = {
    pa.int8(): "tinyint",
    pa.int16(): "smallint",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.uint8(): "tinyint unsigned",
    pa.uint16(): "smallint unsigned",
    pa.uint32(): "int unsigned",
    pa.uint64(): "bigint unsigned",
}


def _type_sql(t: pa.DataType) -> str:
    if t in _INT_SQL:
        return _INT_SQL[t]
    simple = {
        pa.float16(): "half",
        pa.float32(): "float",
        pa.float64(): "double",
        pa.string(): "string",
        pa.large_string(): "large_string",
        pa.binary(): "binary",
        pa.large_binary(): "large_binary",
        pa.bool_(): "boolean",
        pa.date32(): "date",
        pa.date64(): "date64",
    }
    if t in simple:
        return simple[t]
    if pa.types.is_timestamp(t):
        digits = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        zone = f" WITH TIME ZONE {_quote(t.tz)}" if t.tz else ""
        return f"timestamp({digits}){zone}"
    if pa.types.is_decimal128(t):
        return f"decimal({t.precision}, {t.scale})"
    if pa.types.is_decimal256(t):
        return f"decimal256({t.precision}, {t.scale})"
    if pa.types.is_fixed_size_binary(t):
        return f"fixed_size_binary({t.byte_width})"
    raise UntranslatableLiteralError(f"cannot cast to {t} in a lancelet filter")


def _timestamp_text(scalar: pa.TimestampScalar) -> str:
    t = scalar.type
    value = scalar.cast(pa.int64()).as_py() if not isinstance(scalar, pa.Int64Scalar) else scalar.as_py()
    per_sec = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[t.unit]
    secs, frac = divmod(value, per_sec)
    base = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=secs)
    text = base.strftime("%Y-%m-%d %H:%M:%S")
    if frac:
        digits = {"ms": 3, "us": 6, "ns": 9}[t.unit]
        text += "." + str(frac).rjust(digits, "0").rstrip("0")
    return text


def _literal(scalar: pa.Scalar) -> str:
    t = scalar.type
    if not scalar.is_valid:
        return "NULL"
    if pa.types.is_dictionary(t):
        return _literal(scalar.value)
    if pa.types.is_boolean(t):
        return "TRUE" if scalar.as_py() else "FALSE"
    if pa.types.is_integer(t):
        return str(scalar.as_py())
    if pa.types.is_floating(t):
        v = float(scalar.as_py())
        if math.isnan(v):
            return "CAST('NaN' AS double)"
        if math.isinf(v):
            return f"CAST('{'-' if v < 0 else ''}inf' AS double)"
        text = repr(v)
        return text if t == pa.float64() else f"CAST({text} AS {_type_sql(t)})"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return _quote(scalar.as_py())
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or pa.types.is_binary_view(t)
    ):
        return "X'" + scalar.as_py().hex() + "'"
    if pa.types.is_date(t):
        return f"DATE '{scalar.as_py().isoformat()}'"
    if pa.types.is_timestamp(t):
        text = f"TIMESTAMP '{_timestamp_text(scalar)}'"
        if t.tz:
            # The value is a UTC instant: a UTC wall-clock literal cast to the zoned type.
            return f"CAST({text} AS {_type_sql(pa.timestamp(t.unit, 'UTC'))})"
        return text
    if pa.types.is_decimal(t):
        d: decimal.Decimal = scalar.as_py()
        return f"CAST({_quote(str(d))} AS {_type_sql(t)})"
    raise UntranslatableLiteralError(f"cannot use a {t} literal ({scalar}) in a lancelet filter")


_BINARY = {
    "equal": "=",
    "not_equal": "<>",
    "less": "<",
    "less_equal": "<=",
    "greater": ">",
    "greater_equal": ">=",
    "and": "AND",
    "and_kleene": "AND",
    "or": "OR",
    "or_kleene": "OR",
    "add": "+",
    "add_checked": "+",
    "subtract": "-",
    "subtract_checked": "-",
    "multiply": "*",
    "multiply_checked": "*",
    "divide": "/",
    "divide_checked": "/",
}
_FUNCTIONS = {
    "utf8_lower": "lower",
    "utf8_upper": "upper",
    "utf8_length": "length",
    "abs": "abs",
    "abs_checked": "abs",
    "coalesce": "coalesce",
    "is_nan": "isnan",
}


def _option(call: _Call, name: str) -> Any:
    if call.options is None:
        raise UntranslatableExpressionError(f"{call.name} needs options")
    return call.options[name]


def _is_null_literal(n: Any) -> bool:
    return isinstance(n, _Literal) and not n.scalar.is_valid


def _in_with_null_semantics(n: _Call) -> Optional[str]:
    """``if_else(is_valid(x), is_in(x, set), null)`` (how DuckDB pushes ``x IN (...)``) as
    SQL with exactly its meaning: NULL for a NULL ``x``, otherwise whether ``x`` is in the
    set (a NULL in the set only matters with ``null_matching_behavior=INCONCLUSIVE``, which
    makes a miss NULL, as SQL's IN does)."""
    cond, then, other = n.args
    if not (
        isinstance(cond, _Call)
        and cond.name == "is_valid"
        and isinstance(then, _Call)
        and then.name == "is_in"
        and _is_null_literal(other)
        and isinstance(cond.args[0], _Field)
        and isinstance(then.args[0], _Field)
        and cond.args[0].path == then.args[0].path
    ):
        return None
    column = _sql(cond.args[0])
    values = _option(then, "value_set").values
    try:  # Arrow's SetLookupOptions::NullMatchingBehavior: MATCH, SKIP, EMIT_NULL, INCONCLUSIVE
        keep_nulls = _option(then, "null_matching_behavior").as_py() == 3
    except KeyError:  # an Arrow without the option (only skip_nulls): never INCONCLUSIVE
        keep_nulls = False
    items = [_literal(values[i]) for i in range(len(values)) if keep_nulls or values[i].is_valid]
    if not items:
        # NULL for a NULL x, FALSE otherwise.
        return f"({column} IS NULL AND NULL)"
    return f"({column} IN ({', '.join(items)}))"


# Functions whose result is boolean (so an if_else over them is a boolean if_else).
_BOOLEAN_RESULT = {
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "and",
    "and_kleene",
    "or",
    "or_kleene",
    "and_not",
    "and_not_kleene",
    "xor",
    "invert",
    "is_null",
    "is_valid",
    "is_in",
    "is_nan",
    "starts_with",
    "ends_with",
    "match_substring",
    "match_substring_regex",
    "match_like",
}


def _is_boolean(n: Any) -> bool:
    if isinstance(n, _Literal):
        return pa.types.is_boolean(n.scalar.type)
    if isinstance(n, _Call):
        name = n.name.rstrip("_")
        if name == "if_else":
            return _is_boolean(n.args[1]) and _is_boolean(n.args[2])
        return name in _BOOLEAN_RESULT
    return False  # a field reference: its type is not known here


def _if_else(n: _Call) -> str:
    if len(n.args) != 3:
        raise UntranslatableExpressionError(f"if_else takes 3 arguments, got {len(n.args)}")
    pattern = _in_with_null_semantics(n)
    if pattern is not None:
        return pattern
    cond, then, other = n.args
    if not (_is_boolean(then) and _is_boolean(other)):
        raise UntranslatableExpressionError(
            "the pyarrow compute function 'if_else' has no lancelet SQL equivalent unless both "
            "branches are boolean (write the filter as a SQL string)"
        )
    # Boolean if_else(c, t, o): t where c is TRUE, o where c is FALSE, NULL where c is NULL
    # (the last term is NULL when c is NULL and FALSE otherwise; the first two are then
    # at most NULL).
    c, t, o = _sql(cond), _sql(then), _sql(other)
    return f"(({c} AND {t}) OR (NOT {c} AND {o}) OR ({c} IS NULL AND NULL))"


def _sql(n: Any) -> str:
    if isinstance(n, _Field):
        return ".".join(_ident(p) for p in n.path)
    if isinstance(n, _Literal):
        return _literal(n.scalar)
    # pc.and_/pc.or_ called on expressions name the function with the Python spelling.
    name, args = n.name.rstrip("_"), n.args
    a = [_sql(x) for x in args]
    if name in _BINARY and len(a) == 2:
        return f"({a[0]} {_BINARY[name]} {a[1]})"
    if name in ("and_not", "and_not_kleene"):
        return f"({a[0]} AND NOT {a[1]})"
    if name == "xor":
        return f"(({a[0]} OR {a[1]}) AND NOT ({a[0]} AND {a[1]}))"
    if name == "invert":
        return f"(NOT {a[0]})"
    if name in ("negate", "negate_checked"):
        return f"(-{a[0]})"
    if name == "is_null":
        nan = n.options is not None and n.options["nan_is_null"].as_py()
        return f"({a[0]} IS NULL OR isnan({a[0]}))" if nan else f"({a[0]} IS NULL)"
    if name == "is_valid":
        return f"({a[0]} IS NOT NULL)"
    if name == "is_in":
        # pylance hands is_in to DataFusion as SQL IN: a NULL in the set matches nothing
        # (whatever null_matching_behavior says), and a NULL operand is not in the set.
        values = _option(n, "value_set").values
        items = [_literal(values[i]) for i in range(len(values))]
        return f"({a[0]} IN ({', '.join(items)}))" if items else "FALSE"
    if name == "if_else":
        return _if_else(n)
    if name in ("starts_with", "ends_with", "match_substring", "match_substring_regex", "match_like"):
        pattern = _option(n, "pattern").as_py()
        ignore_case = _option(n, "ignore_case").as_py()
        if name == "match_like":
            return f"({a[0]} {'ILIKE' if ignore_case else 'LIKE'} {_quote(pattern)})"
        if name == "match_substring_regex":
            flags = ", 'i'" if ignore_case else ""
            return f"regexp_like({a[0]}, {_quote(pattern)}{flags})"
        fn = {"starts_with": "starts_with", "ends_with": "ends_with", "match_substring": "contains"}[name]
        if ignore_case:
            return f"{fn}(lower({a[0]}), {_quote(pattern.lower())})"
        return f"{fn}({a[0]}, {_quote(pattern)})"
    if name == "cast":
        to = n.options.type.field("to_type").type
        return f"CAST({a[0]} AS {_type_sql(to)})"
    if name in _FUNCTIONS:
        return f"{_FUNCTIONS[name]}({', '.join(a)})"
    raise UntranslatableExpressionError(
        f"the pyarrow compute function {name!r} has no lancelet SQL equivalent (write the filter as a SQL string)"
    )


def referenced_columns(expr: Any) -> Optional[List[str]]:
    """The top-level column names ``expr`` reads, in first-use order (``None`` when the
    expression cannot be decoded, e.g. it refers to a field by position)."""
    try:
        root = _decode(expr)
    except UntranslatableExpressionError:
        return None
    names: List[str] = []

    def walk(n: Any) -> None:
        if isinstance(n, _Field):
            if n.path and n.path[0] not in names:
                names.append(n.path[0])
        elif isinstance(n, _Call):
            for x in n.args:
                walk(x)

    walk(root)
    return names


def sql_if_expression(value: Any) -> Any:
    """``value`` as SQL when it is a pyarrow expression; otherwise ``value`` itself."""
    return to_sql(value) if is_expression(value) else value


def to_sql(expr: Any) -> str:
    """The lancelet SQL text of pyarrow compute expression ``expr``.

    >>> import pyarrow.compute as pc
    >>> to_sql((pc.field("a") > 5) & pc.field("s").isin(["x", "y"]))
    "((`a` > 5) AND (`s` IN ('x', 'y')))"
    """
    if not is_expression(expr):
        raise TypeError(f"expected a pyarrow.compute.Expression, got {type(expr).__name__}")
    return _sql(_decode(expr))
