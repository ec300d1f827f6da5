"""Checks that pylance queries the index files lancelet writes (the other direction of
make_golden.py). First export ours:
  LANCELET_INDEX_EXPORT=DIR cargo test --release -p lancelet-index --test indexes -- --ignored export_for_pylance
then run `python check_pylance_reads_ours.py DIR`: it rebuilds the golden dataset,
commits each exported index with a CreateIndex and compares indexed and unindexed scans.
"""
import sys, os, shutil, uuid, tempfile, lance
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
OURS = sys.argv[1]
import make_golden as mg
from lance.dataset import Index, IndexFile, LanceOperation
uri = os.path.join(tempfile.mkdtemp(), "ds")
shutil.rmtree(uri, ignore_errors=True)
ds = lance.write_dataset(mg.column_data(), uri, max_rows_per_file=30)
ds.delete("i = 0 OR s = 'elder elder'")
ds = lance.dataset(uri)
# kind -> (column, field id, type_url, index_version, details)
specs = {"btree": ("i", 0, "/lance.table.BTreeIndexDetails", 0, b""),
         "bitmap": ("s", 1, "/lance.table.BitmapIndexDetails", 0, b""),
         "label_list": ("l", 2, "/lance.table.LabelListIndexDetails", 1, b""),
         "zonemap": ("i", 0, "/lance.table.ZoneMapIndexDetails", 0, bytes([0x08, 8, 0x10, 0, 0x18, 1])),
         "ngram": ("s", 1, "/lance.table.NGramIndexDetails", 0, b""),
         "bloomfilter": ("i", 0, "/lance.index.pb.BloomFilterIndexDetails", 0, b"")}
order = {"btree": ["page_data.lance", "page_lookup.lance"]}
filters = {"btree": ["i = 3", "i > 4 AND i <= 12", "i IN (-5, 17)", "i IS NULL", "i < -2"],
           "bitmap": ["s = 'apple pie cherry-tart'", "s > 'c'", "s IS NULL", "s IN ('fig_jam 42 Dátil', 'x')"],
           "label_list": ["array_has_any(l, ['t1', 't4'])", "array_has_all(l, ['t0', 't3'])", "array_contains(l, 't2')"],
           "zonemap": ["i = 3", "i > 14", "i IS NULL", "i BETWEEN -1 AND 1"],
           "ngram": ["contains(s, 'apple')", "contains(s, 'rry-ta')", "contains(s, 'datil')", "contains(s, 'jam 42')"],
           "bloomfilter": ["i = 3", "i IN (16, -4)", "i IS NULL", "i = 100"]}
for kind, (col, fid, url, ver, details) in specs.items():
    u = str(uuid.uuid4())
    d = f"{uri}/_indices/{u}"
    os.makedirs(d)
    files = []
    for f in order.get(kind, os.listdir(f"{OURS}/{kind}")):
        shutil.copy(f"{OURS}/{kind}/{f}", f"{d}/{f}")
        files.append(IndexFile(f, os.path.getsize(f"{d}/{f}")))
    idx = Index(uuid=u, name=kind, fields=[fid], dataset_version=ds.version, fragment_ids={0, 1, 2},
                index_version=ver, files=files, index_details=(url, details))
    ds = lance.LanceDataset.commit(uri, LanceOperation.CreateIndex(new_indices=[idx], removed_indices=[]), read_version=ds.version)
for kind in specs:
    for flt in filters[kind]:
        want = sorted(ds.to_table(filter=flt, use_scalar_index=False, with_row_id=True)["_rowid"].to_pylist())
        try:
            got = sorted(ds.to_table(filter=flt, with_row_id=True)["_rowid"].to_pylist())
        except Exception as e:
            print(kind, repr(flt), "ERROR", str(e)[:200]); continue
        plan = ds.scanner(filter=flt).explain_plan()
        used = "ScalarIndexQuery" in plan or "MaterializeIndex" in plan
        print(kind, repr(flt), "OK" if want == got else f"MISMATCH {want} vs {got}", "index" if used else "NO-INDEX", len(want))
    print(kind, ds.stats.index_stats(kind)["indices"][0])
