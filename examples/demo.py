"""End-to-end demo: a Lance file, then a versioned dataset, written and read with lancelet.

Run with ``bash scripts/demo.sh`` (builds the extension first) or, inside the venv,
``python examples/demo.py [--rows N] [--path PATH]``.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

import pyarrow as pa

import lancelet
from lancelet.file import LanceFileReader, LanceFileWriter


def make_batch(start: int, n: int, rng: random.Random) -> pa.RecordBatch:
    colors = ["red", "green", "blue", "yellow"]
    return pa.record_batch(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "price": pa.array([None if i % 17 == 0 else round(rng.random() * 100, 2) for i in range(n)], pa.float64()),
            "color": pa.array([colors[i % len(colors)] for i in range(n)], pa.string()),
            "caption": pa.array([f"item {start + i}: {'x' * (i % 13)}" for i in range(n)], pa.large_string()),
            "embedding": pa.FixedSizeListArray.from_arrays(
                pa.array([rng.random() for _ in range(n * 8)], pa.float32()), 8
            ),
            "tags": pa.array([[f"t{j}" for j in range(i % 4)] if i % 9 else None for i in range(n)],
                             pa.list_(pa.string())),
            "point": pa.StructArray.from_arrays(
                [pa.array([float(i) for i in range(n)]), pa.array([float(-i) for i in range(n)])], ["x", "y"]
            ),
            "ts": pa.array([1_700_000_000_000_000 + i for i in range(n)], pa.timestamp("us", tz="UTC")),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--path", default=None)
    ap.add_argument("--no-spark", action="store_true", help="skip the PySpark step")
    args = ap.parse_args()
    path = args.path or os.path.join(tempfile.mkdtemp(prefix="lancelet-demo-"), "items.lance")
    rng = random.Random(42)
    print(f"lancelet {lancelet.__version__}: writing {args.rows:,} rows to {path}")

    t0 = time.perf_counter()
    batches = []
    with LanceFileWriter(path) as writer:  # file format 2.2, pylance 14's default
        for start in range(0, args.rows, 50_000):
            b = make_batch(start, min(50_000, args.rows - start), rng)
            batches.append(b)
            writer.write_batch(b)
    expected = pa.Table.from_batches(batches)
    print(f"  wrote {writer.size_bytes:,} bytes in {time.perf_counter() - t0:.2f}s")

    reader = LanceFileReader(path)
    meta = reader.metadata()
    print(f"  file format {meta.version} (footer {meta.major_version}.{meta.minor_version}), "
          f"{meta.num_rows:,} rows, {len(meta.columns)} columns")
    for field, col in zip(_leaf_names(reader.schema), meta.columns):
        print(f"    column {field:<22} {len(col.pages):>3} page(s)  first page: {_kind(col.pages[0].encoding) if col.pages else '-'}")

    t0 = time.perf_counter()
    table = reader.read_all(batch_size=8192).to_table()
    print(f"  read_all: {table.num_rows:,} rows in {time.perf_counter() - t0:.3f}s; equal to input: {table.equals(expected)}")

    t0 = time.perf_counter()
    proj = LanceFileReader(path, columns=["id", "point.x"]).read_all().to_table()
    print(f"  projected read of ['id', 'point.x']: columns {proj.column_names} in {time.perf_counter() - t0:.3f}s")

    idx = sorted(rng.sample(range(args.rows), 5)) + [0]
    before = reader.io_stats()["bytes_read"]
    taken = reader.take_rows(idx).to_table()
    read = reader.io_stats()["bytes_read"] - before
    ok = taken.equals(expected.take(idx))
    print(f"  take_rows({idx}): {taken.num_rows} rows, {read:,} bytes read "
          f"({read / os.path.getsize(path):.2%} of the file); equal: {ok}")
    print(f"  ids taken: {taken.column('id').to_pylist()}")
    if not (table.equals(expected) and ok):
        raise SystemExit("demo failed: data read back differs from data written")
    ds_uri = os.path.join(os.path.dirname(path), "items_dataset.lance")
    dataset_demo(ds_uri, args.rows, rng)
    search_demo(os.path.join(os.path.dirname(path), "passages.lance"), rng)
    loader_demo(os.path.join(os.path.dirname(path), "passages.lance"))
    if not args.no_spark:
        spark_demo(ds_uri, os.path.join(os.path.dirname(path), "cheap_items.lance"))
    print("demo ok")


def search_demo(uri: str, rng: random.Random) -> None:
    """Full-text search (an INVERTED index, BM25) and hybrid search (vector + text, fused)."""
    from lancelet.query import MatchQuery, PhraseQuery

    topics = {
        "rivers": "river water flows bank delta fish boat bridge flood",
        "space": "rocket orbit moon launch planet star telescope astronaut",
        "cooking": "recipe oven bread flour butter sugar bake kitchen",
        "music": "guitar song melody rhythm concert drum piano chord",
    }
    names = sorted(topics)
    rows, texts, labels = 20_000, [], []
    for i in range(rows):
        topic = names[i % len(names)]
        words = topics[topic].split() + "the a of and with for from".split()
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(6, 30))))
        labels.append(topic)
    # A toy embedding: the topic's direction plus noise (stands in for a sentence model).
    vecs = [[(1.0 if j == names.index(t) else 0.0) + rng.random() * 0.3 for j in range(8)] for t in labels]
    table = pa.table({
        "id": range(rows), "topic": labels, "passage": texts,
        "embedding": pa.FixedSizeListArray.from_arrays(pa.array([x for v in vecs for x in v], pa.float32()), 8),
    })
    ds = lancelet.write_dataset(table, uri, max_rows_per_file=5_000)
    print(f"passages at {uri}: {rows:,} rows")
    t0 = time.perf_counter()
    ds.create_scalar_index("passage", "INVERTED", with_position=True)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    hits = ds.to_table(full_text_query="telescope orbit", columns=["topic"], limit=10)
    searched = time.perf_counter() - t0
    check = [set(hits["topic"].to_pylist()) == {"space"}]
    both = ds.to_table(full_text_query=MatchQuery("oven bread", "passage", operator="AND"), columns=["passage"])
    check.append(all("oven" in p and "bread" in p for p in both["passage"].to_pylist()))
    phrase = ds.to_table(full_text_query=PhraseQuery("drum piano", "passage"), columns=["passage"], limit=3)
    check.append(all("drum piano" in p for p in phrase["passage"].to_pylist()))
    print(f"  INVERTED index built in {built:.2f}s; 'telescope orbit' top 10 all 'space' in {searched * 1000:.1f} ms; "
          f"{both.num_rows:,} passages with oven AND bread; {phrase.num_rows} best with the phrase 'drum piano'")
    ds.create_index("embedding", "IVF_FLAT", num_partitions=4)
    q = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]   # the 'space' direction
    fused = ds.to_table(nearest={"column": "embedding", "q": q, "k": 20}, full_text_query="rocket launch",
                        columns=["id", "topic"], limit=5)
    check.append(set(fused["topic"].to_pylist()) == {"space"})
    print(f"  hybrid (vector k=20 + text, reciprocal-rank fusion): top 5 ids {fused['id'].to_pylist()}, "
          f"_relevance_score {[round(x, 4) for x in fused['_relevance_score'].to_pylist()]}")
    if not all(check):
        raise SystemExit("demo failed: search results are wrong")


def loader_demo(uri: str) -> None:
    """A training loader: shuffled batches, two ranks reading every row once, resumed mid-epoch."""
    from lancelet.loader import Loader

    ds = lancelet.dataset(uri)
    kw = dict(batch_size=512, columns=["id", "embedding"], shuffle="clump", clump_size=256, seed=7,
              filter="topic != 'music'", output="numpy", world_size=2)
    t0 = time.perf_counter()
    ranks = [Loader(ds, rank=r, **kw) for r in range(2)]
    seen = [i for loader in ranks for batch in loader for i in batch["id"].tolist()]
    took = time.perf_counter() - t0
    expected = ds.count_rows("topic != 'music'")
    ranks[0].set_epoch(1)
    epoch1 = iter(ranks[0])
    first = [next(epoch1)["id"][:3].tolist() for _ in range(2)]
    state = ranks[0].state_dict()                      # checkpoint after two batches
    resumed = Loader(ds, rank=0, **kw)
    resumed.load_state_dict(state)
    rest = [b["id"].tolist() for b in resumed]
    ranks[0].set_epoch(1)
    again = [b["id"].tolist() for b in ranks[0]]
    ok = sorted(seen) == sorted(set(seen)) and len(seen) == expected and again[2:] == rest
    print(f"  loader: 2 ranks x {len(ranks[0])} batches of 512 (clump shuffle, numpy) covered all {expected:,} "
          f"filtered rows once in {took * 1000:.0f} ms; epoch 1 starts {first}; resumed from batch "
          f"{state['next_batch']} with the same {len(rest)} remaining batches: {again[2:] == rest}")
    if not ok:
        raise SystemExit("demo failed: the loader's epochs are wrong")


def spark_demo(uri: str, out_uri: str) -> None:
    """PySpark reads the dataset (a filter evaluated in lancelet's scan), writes a subset back."""
    import sys

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import lancelet.spark

    t0 = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").appName("lancelet-demo")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    lancelet.spark.register(spark)
    print(f"spark {spark.version} (local[2], started in {time.perf_counter() - t0:.1f}s)")
    try:
        df = spark.read.format("lancelet").load(uri)
        print(f"  spark.read.format('lancelet'): {df.rdd.getNumPartitions()} partitions, {df.count():,} rows")
        cheap = spark.read.format("lancelet").option("filter", "price < 5").load(uri)
        by_color = {r["color"]: r["n"] for r in cheap.groupBy("color").count()
                    .withColumnRenamed("count", "n").collect()}
        print(f"  price < 5 by color (option 'filter', evaluated in the scan): {dict(sorted(by_color.items()))}")
        if df.where("price < 5").count() != sum(by_color.values()):
            raise SystemExit("demo failed: the scan's filter and Spark's where() disagree")
        t0 = time.perf_counter()
        cheap.select("id", "price", "color", "embedding").write.format("lancelet") \
            .mode("overwrite").save(out_uri)
        out = lancelet.dataset(out_uri)
        print(f"  wrote {out.count_rows():,} rows to {out_uri} in one commit (version {out.version}, "
              f"embedding stays {out.schema.field('embedding').type}) in {time.perf_counter() - t0:.2f}s")
        if out.count_rows() != sum(by_color.values()):
            raise SystemExit("demo failed: Spark wrote a different number of rows than it counted")
    finally:
        spark.stop()


def dataset_demo(uri: str, rows: int, rng: random.Random) -> None:
    """Versions, appends, filters, take, deletes, tags, time travel, indexes and vector search."""
    print(f"dataset at {uri}")
    half = rows // 2

    def batches(start: int, stop: int):
        for s in range(start, stop, 50_000):
            yield make_batch(s, min(50_000, stop - s), rng)

    t0 = time.perf_counter()
    ds = lancelet.write_dataset(batches(0, half), uri, max_rows_per_file=max(1, rows // 4))
    ds = lancelet.write_dataset(batches(half, rows), uri, mode="append")
    print(f"  version {ds.version}: {ds.count_rows():,} rows in {len(ds.get_fragments())} fragments "
          f"({time.perf_counter() - t0:.2f}s for two commits)")
    check = []

    t0 = time.perf_counter()
    cheap = ds.to_table(columns=["id", "price", "color"], filter="price < 5 AND color IN ('red', 'blue')")
    check.append(all(p < 5 for p in cheap.column("price").to_pylist()))
    print(f"  filter price < 5 AND color IN ('red', 'blue'): {cheap.num_rows:,} rows in {time.perf_counter() - t0:.3f}s")

    idx = [rows - 1, 0, rows // 3]
    taken = ds.take(idx, columns=["id"]).column("id").to_pylist()
    check.append(taken == idx)
    print(f"  take({idx}) -> ids {taken}")

    ds.tags.create("before-delete", ds.version)
    deleted = ds.delete("id % 10 = 0")["num_deleted_rows"]
    check.append(ds.count_rows() == rows - deleted)
    print(f"  delete id % 10 = 0: {deleted:,} rows gone, version {ds.version}, {ds.count_rows():,} rows left")
    old = lancelet.dataset(uri, version="before-delete")
    check.append(old.count_rows() == rows)
    print(f"  time travel to tag 'before-delete' (version {old.version}): {old.count_rows():,} rows")

    t0 = time.perf_counter()
    ds.create_scalar_index("id", "BTREE")
    ds.create_scalar_index("color", "BITMAP")
    ds.create_scalar_index("tags", "LABEL_LIST")
    built = time.perf_counter() - t0
    key = rows // 2 + 1
    plan = ds.scanner(filter=f"id = {key}").explain_plan()
    check.append("id_idx(BTree)" in plan)
    t0 = time.perf_counter()
    hit = ds.to_table(columns=["id"], filter=f"id = {key}")["id"].to_pylist()
    lookup = time.perf_counter() - t0
    check.append(hit == [key])
    tagged = ds.count_rows("array_has_any(tags, ['t2'])")
    check.append(tagged == ds.count_rows("array_has_any(tags, ['t2'])", use_scalar_index=False))
    print(f"  indexes {[i['name'] + ':' + i['type'] for i in ds.list_indices()]} built in {built:.2f}s; "
          f"id = {key} through the BTREE in {lookup * 1000:.1f} ms; {tagged:,} rows tagged t2 (LABEL_LIST)")

    q = ds.to_table(filter="id = 7", columns=["embedding"])["embedding"][0].as_py()
    exact = ds.to_table(nearest={"column": "embedding", "q": q, "k": 5}, columns=["id"])
    check.append(exact["id"][0].as_py() == 7 and exact["_distance"][0].as_py() == 0.0)
    t0 = time.perf_counter()
    ds.create_index("embedding", "IVF_PQ", num_partitions=16, num_sub_vectors=4)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    ann = ds.to_table(nearest={"column": "embedding", "q": q, "k": 5, "nprobes": 8, "refine_factor": 4},
                      columns=["id"])
    searched = time.perf_counter() - t0
    overlap = len(set(ann["id"].to_pylist()) & set(exact["id"].to_pylist()))
    check.append(overlap >= 3)
    print(f"  nearest to row 7: exact {exact['id'].to_pylist()}; IVF_PQ (built in {built:.2f}s) "
          f"{ann['id'].to_pylist()} in {searched * 1000:.1f} ms ({overlap}/5 shared)")

    t0 = time.perf_counter()
    ds.add_columns({"price_x2": "price * 2"})
    ds.update({"color": "'crimson'"}, where="color = 'red'")
    after = ds.to_table(columns=["price", "price_x2", "color"])
    check.append(after["price_x2"].to_pylist() == [None if p is None else p * 2 for p in after["price"].to_pylist()])
    check.append("red" not in after["color"].to_pylist())
    print(f"  add_columns price_x2 = price * 2 and update red -> crimson: version {ds.version} "
          f"({time.perf_counter() - t0:.2f}s)")
    frags = len(ds.get_fragments())
    metrics = ds.optimize.compact_files(target_rows_per_fragment=rows)
    check.append(ds.count_rows() == rows - deleted)
    print(f"  compact_files: {frags} fragments -> {len(ds.get_fragments())} ({metrics.fragments_removed} rewritten)")
    stats = ds.cleanup_old_versions(retain_versions=1, error_if_tagged_old_versions=False)
    check.append(ds.count_rows() == rows - deleted)
    print(f"  cleanup_old_versions(retain_versions=1): {stats.old_versions} versions and "
          f"{stats.data_files_removed} data files removed ({stats.bytes_removed:,} bytes); the tag keeps its version")
    print("  versions: " + ", ".join(f"v{v['version']}={v['metadata']['total_rows']} rows" for v in ds.versions()))
    t0 = time.perf_counter()
    report = ds.validate(deep=True)  # raises CorruptFileError if anything is damaged
    check.append(report.ok)
    print(f"  validate(deep=True): {report.versions} versions, {report.data_files} data and {report.index_files} index "
          f"files, {report.bytes_verified:,} bytes checked against their CRC32C checksums in "
          f"{(time.perf_counter() - t0) * 1000:.0f} ms: no problems")
    if not all(check):
        raise SystemExit("demo failed: dataset results are wrong")


def _leaf_names(schema: pa.Schema) -> list:
    """Column names of a 2.1+ file: only leaves have columns (structs and lists live in
    their leaves' repetition and definition levels)."""
    out = []

    def walk(name: str, t: pa.DataType) -> None:
        if not (pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_large_list(t)):
            out.append(name)
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(f"{name}.{t.field(i).name}", t.field(i).type)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(f"{name}.item", t.value_type)

    for f in schema:
        walk(f.name, f.type)
    return out


def _kind(debug: str) -> str:
    """A short name for a 2.1+ page: its layout and main value encoding."""
    layout = next((n for n in ("MiniBlockLayout", "FullZipLayout", "ConstantLayout") if n in debug), "")
    layout = {"MiniBlockLayout": "mini-block", "FullZipLayout": "full-zip", "ConstantLayout": "constant"}.get(layout, "?")
    for name in ("Dictionary", "Fsst", "InlineBitpacking", "Rle", "General", "FixedSizeList", "Variable", "Flat"):
        if name in debug:
            return f"{layout}, {name}"
    return layout


if __name__ == "__main__":
    main()
