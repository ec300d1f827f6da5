"""Writes the legacy (file format 0.1) golden files next to this script.

Each case is written by pylance as a one-fragment dataset with small batches
(`max_rows_per_group`), and its data file is copied here as `NAME.lance` with
`NAME.arrow` (Arrow IPC) holding what pylance reads back from it.
Run with the project's venv: `.venv/bin/python tests/data/file/legacy/generate.py`.
"""

import datetime
import decimal
import glob
import os
import shutil
import tempfile

import lance
import pyarrow as pa

N = 23
HERE = os.path.dirname(os.path.abspath(__file__))


def nulls(values, every=4):
    return [None if i % every == 1 else v for i, v in enumerate(values)]


def cases():
    ints = list(range(N))
    yield "ints", pa.table({
        "i8": pa.array(nulls([i - 10 for i in ints]), pa.int8()),
        "u8": pa.array(nulls(ints), pa.uint8()),
        "i16": pa.array(nulls([i * -300 for i in ints]), pa.int16()),
        "u16": pa.array(ints, pa.uint16()),
        "i32": pa.array(nulls([i * 70000 for i in ints]), pa.int32()),
        "u32": pa.array(ints, pa.uint32()),
        "i64": pa.array(nulls([i * 2**40 for i in ints]), pa.int64()),
        "u64": pa.array([i * 2**50 for i in ints], pa.uint64()),
    })
    yield "floats", pa.table({
        "f32": pa.array(nulls([i / 3 for i in ints]), pa.float32()),
        "f64": pa.array(nulls([i / 7 for i in ints]), pa.float64()),
    })
    yield "bools", pa.table({"b": pa.array(nulls([i % 3 == 0 for i in ints]), pa.bool_())})
    yield "strings", pa.table({
        "s": pa.array(nulls([f"s{i}" * (i % 4) for i in ints])),
        "ls": pa.array(nulls([f"large{i}" for i in ints]), pa.large_string()),
        "bin": pa.array(nulls([bytes([i]) * i for i in ints]), pa.binary()),
        "lbin": pa.array([bytes([i, i]) for i in ints], pa.large_binary()),
    })
    base = datetime.datetime(2024, 1, 2, 3, 4, 5)
    yield "temporal", pa.table({
        "ts_us": pa.array(nulls([base + datetime.timedelta(hours=i) for i in ints]), pa.timestamp("us")),
        "ts_tz": pa.array([base + datetime.timedelta(days=i) for i in ints], pa.timestamp("ms", tz="UTC")),
        "d32": pa.array(nulls([datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in ints]), pa.date32()),
        "d64": pa.array([datetime.date(2021, 1, 1) + datetime.timedelta(days=i) for i in ints], pa.date64()),
        "t64": pa.array([datetime.time(i % 24, 1, 2) for i in ints], pa.time64("us")),
        "dur": pa.array([datetime.timedelta(seconds=i) for i in ints], pa.duration("ns")),
    })
    yield "decimal", pa.table({
        "dec": pa.array(nulls([decimal.Decimal(i) / 100 for i in ints]), pa.decimal128(10, 2)),
    })
    yield "fixed", pa.table({
        "emb": pa.array(nulls([[i + 0.5 * k for k in range(4)] for i in ints]), pa.list_(pa.float32(), 4)),
        "fsb": pa.array([bytes([i, i + 1, i + 2]) for i in ints], pa.binary(3)),
        "fsl_bool": pa.array([[i % 2 == 0, i % 3 == 0, True] for i in ints], pa.list_(pa.bool_(), 3)),
    })
    yield "lists", pa.table({
        "l_i64": pa.array(nulls([list(range(i % 5)) for i in ints]), pa.list_(pa.int64())),
        "l_str": pa.array([[f"x{k}" for k in range(i % 3)] for i in ints], pa.list_(pa.string())),
        "ll_i32": pa.array([list(range(i % 4)) for i in ints], pa.large_list(pa.int32())),
        "l_l": pa.array([[[i], [i, i]] if i % 2 else [] for i in ints], pa.list_(pa.list_(pa.int16()))),
    })
    yield "structs", pa.table({
        "st": pa.array(nulls([{"a": i, "b": f"b{i}", "c": [i] * (i % 3)} for i in ints])),
        "nested": pa.array([{"inner": {"x": float(i), "y": i % 2 == 0}} for i in ints]),
        "l_st": pa.array([[{"p": i, "q": "q"}] * (i % 3) for i in ints]),
    })
    yield "dictionary", pa.table({
        "d": pa.array(nulls([["red", "green", "blue"][i % 3] for i in ints])).dictionary_encode(),
        "d8": pa.DictionaryArray.from_arrays(
            pa.array([i % 2 for i in ints], pa.int8()), pa.array(["no", "yes"])),
    })
    yield "nulltype", pa.table({"n": pa.nulls(N), "i": pa.array(ints, pa.int32())})


def main():
    for name, table in cases():
        with tempfile.TemporaryDirectory() as tmp:
            ds = lance.write_dataset(table, tmp, data_storage_version="legacy", max_rows_per_group=5)
            (path,) = glob.glob(os.path.join(tmp, "data", "*.lance"))
            shutil.copy(path, os.path.join(HERE, f"{name}.lance"))
            got = ds.to_table()
            with pa.OSFile(os.path.join(HERE, f"{name}.arrow"), "wb") as f:
                with pa.ipc.new_file(f, got.schema) as w:
                    w.write_table(got)
            print(name, got.num_rows, os.path.getsize(path))


if __name__ == "__main__":
    main()
