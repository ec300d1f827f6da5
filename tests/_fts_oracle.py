"""Test helpers for the full-text suites: a reader of INVERTED index files (either
library's), an exhaustive BM25 in Python, and a comparison of ranked results.

The reader decodes what an index holds, independently of both libraries' search code:
``part_<p>_tokens.lance`` (an ``fst`` crate map token -> id, walked here node by node),
``part_<p>_docs.lance`` (doc id -> row id and token count) and ``part_<p>_invert.lance``
(per token: posting blocks of 128 bit-packed doc deltas and frequencies, or a shorter
tail, and the positions). Files are read with pylance's ``lance.file`` reader, so the
oracle shares no code with lancelet. ``docs/fts.md`` describes the layout ("The files").
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections import Counter
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import pyarrow as pa

# --------------------------------------------------------------------------------------
# Integers: LEB128 varints and BitPacker4x blocks (128 u32 in 4 interleaved lanes)
# --------------------------------------------------------------------------------------


def _varint(buf: bytes, off: int) -> Tuple[int, int]:
    val = shift = 0
    while True:
        b = buf[off]
        off += 1
        val |= (b & 0x7F) << shift
        if b < 0x80:
            return val, off
        shift += 7


def _unpack128(buf: bytes, off: int, nbits: int) -> Tuple[List[int], int]:
    """128 values of ``nbits`` bits: value i is slot i // 4 of lane i % 4; lane l's k-th
    u32 word is at byte ``off + (4k + l) * 4``, its values packed LSB first."""
    if nbits == 0:
        return [0] * 128, off
    words = struct.unpack_from("<%dI" % (4 * nbits), buf, off)
    mask = (1 << nbits) - 1
    out = [0] * 128
    for lane in range(4):
        acc = 0
        for k, w in enumerate(words[lane::4]):
            acc |= w << (32 * k)
        for j in range(32):
            out[4 * j + lane] = (acc >> (j * nbits)) & mask
    return out, off + 16 * nbits


# --------------------------------------------------------------------------------------
# The token dictionary: an fst crate (v3) Map, keys = token bytes, values = token ids
# --------------------------------------------------------------------------------------

# The fst crate's table of common input bytes (index 1.. in a node's low 6 bits).
_COMMON = (
    b"te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHGWUV,YKJZXQ;)(~[]$!'*@"
    + bytes(range(0, 0x20))
    + b' "#<>\\^`{|}'
    + bytes(range(0x7F, 0x100))
)
assert len(_COMMON) == 256


def _uint(buf: bytes, at: int, n: int) -> int:
    return int.from_bytes(buf[at : at + n], "little") if n else 0


def _fst_node(buf: bytes, version: int, addr: int):
    """``(is_final, final_output, [(input byte, output, target address), ...])``."""
    if addr == 0:  # the shared empty final node
        return True, 0, []
    v = buf[addr]
    kind = v >> 6
    common = v & 0x3F
    if kind in (0b10, 0b11):  # a single transition
        ilen = 0 if common else 1
        inp = _COMMON[common - 1] if common else buf[addr - 1]
        if kind == 0b11:  # to the node just before, no output
            return False, 0, [(inp, 0, addr - ilen - 1)]
        sizes = buf[addr - ilen - 1]
        tsize, osize = sizes >> 4, sizes & 0x0F
        tpos = addr - ilen - 1 - tsize
        end = tpos - osize
        delta = _uint(buf, tpos, tsize)
        return False, 0, [(inp, _uint(buf, end, osize), 0 if delta == 0 else end - delta)]
    is_final = bool(v & 0x40)
    n, nlen = v & 0x3F, 0
    if n == 0:
        n, nlen = buf[addr - 1], 1
        if n == 1:
            n = 256
    sizes = buf[addr - nlen - 1]
    tsize, osize = sizes >> 4, sizes & 0x0F
    index_size = 256 if (version >= 2 and n > 32) else 0
    base = addr - nlen - 1 - index_size
    inputs_start = base - n
    trans_start = inputs_start - n * tsize
    outs_start = trans_start - n * osize
    end = outs_start - (osize if is_final else 0)
    trans = []
    for i in range(n):
        delta = _uint(buf, inputs_start - i * tsize - tsize, tsize)
        out = _uint(buf, trans_start - i * osize - osize, osize) if osize else 0
        trans.append((buf[base - i - 1], out, 0 if delta == 0 else end - delta))
    return is_final, (_uint(buf, end, osize) if is_final and osize else 0), trans


def fst_map(buf: bytes) -> Dict[bytes, int]:
    """Every key -> value of an fst crate Map (format version 1-3)."""
    buf = bytes(buf)
    version, _ = struct.unpack_from("<QQ", buf, 0)
    assert 1 <= version <= 3, version
    end = len(buf) - (4 if version >= 3 else 0)
    nkeys, root = struct.unpack_from("<QQ", buf, end - 16)
    out: Dict[bytes, int] = {}
    stack = [(root, b"", 0)]
    while stack:
        addr, prefix, acc = stack.pop()
        is_final, fout, trans = _fst_node(buf, version, addr)
        if is_final:
            out[prefix] = acc + fout
        for inp, o, target in trans:
            stack.append((target, prefix + bytes([inp]), acc + o))
    assert len(out) == nkeys, (len(out), nkeys)
    return out


# --------------------------------------------------------------------------------------
# Posting lists and positions
# --------------------------------------------------------------------------------------


def _postings(blocks: Sequence[bytes], length: int, tail_codec: str) -> Tuple[List[int], List[int]]:
    """Doc ids and frequencies of one token (block size 128: each block opens with its
    f32 block-max score; full blocks bit-pack doc deltas and frequencies, the tail is
    fixed u32s (format 1) or varints (formats 2, 3))."""
    docs: List[int] = []
    freqs: List[int] = []
    full, rem = divmod(length, 128)
    assert len(blocks) == full + (1 if rem else 0), (len(blocks), length)
    for bi, blk in enumerate(blocks):
        off = 4  # block max score
        if bi < full:
            prev = struct.unpack_from("<I", blk, off)[0]
            deltas, off = _unpack128(blk, off + 5, blk[off + 4])
            for d in deltas:
                prev += d
                docs.append(prev)
            f, off = _unpack128(blk, off + 1, blk[off])
            freqs += f
        elif tail_codec == "fixed32_v1":
            docs += struct.unpack_from("<%dI" % rem, blk, off)
            freqs += struct.unpack_from("<%dI" % rem, blk, off + 4 * rem)
            off += 8 * rem
        else:
            prev = 0
            for i in range(rem):
                v, off = _varint(blk, off)
                prev = v if i == 0 else prev + v
                docs.append(prev)
            for _ in range(rem):
                v, off = _varint(blk, off)
                freqs.append(v)
        assert off == len(blk), ("trailing bytes in a posting block", off, len(blk))
    return docs, freqs


def _v1_positions(cell: Sequence[bytes]) -> List[int]:
    """Format 1: ``[u32 count, full 128-chunks (u32 first, u8 bits, packed deltas), raw u32 tail]``."""
    n = struct.unpack("<I", cell[0])[0]
    out: List[int] = []
    for i in range(n // 128):
        b = cell[1 + i]
        prev = struct.unpack_from("<I", b, 0)[0]
        deltas, _ = _unpack128(b, 5, b[4])
        for d in deltas:
            prev += d
            out.append(prev)
    if n % 128:
        out += struct.unpack_from("<%dI" % (n % 128), cell[1 + n // 128], 0)
    return out


def _v2_positions(buf: bytes, freqs: Sequence[int]) -> List[List[int]]:
    """Formats 2, 3: one posting block's positions, per doc deltas (first absolute), cut
    into 128-delta chunks (u8 bits + packed), the remainder as varints."""
    total = sum(freqs)
    deltas: List[int] = []
    off = 0
    for _ in range(total // 128):
        vals, off = _unpack128(buf, off + 1, buf[off])
        deltas += vals
    for _ in range(total % 128):
        v, off = _varint(buf, off)
        deltas.append(v)
    assert off == len(buf), ("trailing bytes in a position block", off, len(buf))
    out, k = [], 0
    for f in freqs:
        pos, prev = [], 0
        for i in range(f):
            prev = deltas[k] if i == 0 else prev + deltas[k]
            k += 1
            pos.append(prev)
        out.append(pos)
    return out


# --------------------------------------------------------------------------------------
# Whole indexes
# --------------------------------------------------------------------------------------


def _read(path: str) -> Tuple[pa.Table, Dict[str, str]]:
    from lance.file import LanceFileReader

    t = LanceFileReader(path).read_all().to_table()
    return t, {k.decode(): v.decode() for k, v in (t.schema.metadata or {}).items()}


class IndexContent:
    """What the segments of one INVERTED index hold, per row id:
    ``docs[row] = {token: [positions] or freq}`` (positions when the index keeps them),
    ``num_tokens[row]`` (the docs file's count), and the statistics."""

    def __init__(self) -> None:
        self.docs: Dict[int, Dict[str, object]] = {}
        self.num_tokens: Dict[int, int] = {}
        self.tokens: set = set()
        self.format_versions: set = set()
        self.num_partitions = 0
        self.params: Dict[str, object] = {}

    def counts(self, row: int) -> Counter:
        """The token multiset of a row."""
        return Counter({t: (len(v) if isinstance(v, list) else v) for t, v in self.docs.get(row, {}).items()})


def read_index(uri: str, name: str) -> IndexContent:
    """Decodes every segment of index ``name`` of the dataset at ``uri`` (pylance locates
    the segments; the files are decoded here)."""
    import lance

    out = IndexContent()
    segs = [s for s in lance.dataset(uri).list_indices() if s["name"] == name]
    assert segs, f"no index {name!r}"
    for seg in segs:
        d = os.path.join(uri, "_indices", seg["uuid"])
        _, meta = _read(os.path.join(d, "metadata.lance"))
        out.params = json.loads(meta["params"])
        out.format_versions.add(int(meta["format_version"]))
        for pid in json.loads(meta["partitions"]):
            out.num_partitions += 1
            tt, _ = _read(os.path.join(d, f"part_{pid}_tokens.lance"))
            ids = {v: k.decode("utf-8") for k, v in fst_map(tt["_token_fst_bytes"][0].as_py()).items()}
            dt, _ = _read(os.path.join(d, f"part_{pid}_docs.lance"))
            rows = dt["_rowid"].to_pylist()
            for r, n in zip(rows, dt["_num_tokens"].to_pylist()):
                assert r not in out.num_tokens, f"row {r} in two partitions"
                out.num_tokens[r] = n
                out.docs[r] = {}
            it, imeta = _read(os.path.join(d, f"part_{pid}_invert.lance"))
            assert imeta.get("posting_block_size", "128") == "128"
            codec = imeta.get("posting_tail_codec", "fixed32_v1")
            cols = set(it.column_names)
            for tid, rec in enumerate(it.to_pylist()):
                token = ids[tid]
                out.tokens.add(token)
                docs, freqs = _postings(rec["_posting"], rec["_length"], codec)
                if "_position" in cols:
                    pos = [_v1_positions(c) for c in rec["_position"]]
                elif "_compressed_position" in cols:
                    buf, bounds = rec["_compressed_position"], list(rec["_position_block_offset"])
                    bounds.append(len(buf))
                    pos = []
                    for bi in range(len(rec["_posting"])):
                        pos += _v2_positions(buf[bounds[bi] : bounds[bi + 1]], freqs[bi * 128 : (bi + 1) * 128])
                else:
                    pos = None
                for j, (doc, f) in enumerate(zip(docs, freqs)):
                    row = rows[doc]
                    assert token not in out.docs[row]
                    if pos is None:
                        out.docs[row][token] = f
                    else:
                        assert len(pos[j]) == f
                        out.docs[row][token] = pos[j]
    return out


# --------------------------------------------------------------------------------------
# Exhaustive BM25 (pylance's scoring)
# --------------------------------------------------------------------------------------


class Bm25:
    """BM25 over a column, as pylance 14 scores it (k1 1.2, b 0.75,
    ``idf = ln(1 + (N - n + 0.5) / (n + 0.5))``, each term weighted ``idf * (k1 + 1)``,
    repeated query terms counted each time):

    * indexed rows are scored against the index's statistics alone: every document the
      index holds (rows deleted since count, rows with no token do not);
    * unindexed rows (fragments appended after the build) against the index's statistics
      plus those of the live unindexed rows (only those the filter keeps, with a prefilter).

    ``indexed`` and ``unindexed`` map row key -> token list (already analyzed)."""

    K1, B = 1.2, 0.75

    def __init__(self, indexed: Dict[int, List[str]], unindexed: Dict[int, List[str]]):
        self.indexed = {k: v for k, v in indexed.items() if v}
        self.unindexed = {k: v for k, v in unindexed.items() if v}

    @staticmethod
    def _stats(docs: Iterable[List[str]]) -> Tuple[int, int, Counter]:
        n = total = 0
        df: Counter = Counter()
        for toks in docs:
            n += 1
            total += len(toks)
            df.update(set(toks))
        return n, total, df

    def _score(self, q: List[str], toks: List[str], stats) -> float:
        n_docs, total, df = stats
        avgdl = total / n_docs
        tf = Counter(toks)
        s = 0.0
        for term in q:
            f = tf.get(term, 0)
            if f:
                n = df[term]
                idf = math.log(1 + (n_docs - n + 0.5) / (n + 0.5))
                s += idf * (self.K1 + 1) * f / (f + self.K1 * (1 - self.B + self.B * len(toks) / avgdl))
        return s

    def scores(
        self,
        q: List[str],
        live: Callable[[int], bool] = lambda k: True,
        keep: Callable[[int], bool] = lambda k: True,
        prefilter: bool = False,
        operator_and: bool = False,
    ) -> Dict[int, float]:
        """Row key -> score of the live rows ``keep`` keeps that hold a term of ``q``
        (every term with ``operator_and``)."""
        s_idx = self._stats(self.indexed.values())
        flat = {k: v for k, v in self.unindexed.items() if live(k) and (keep(k) or not prefilter)}
        n2, t2, df2 = self._stats(flat.values())
        s_all = (s_idx[0] + n2, s_idx[1] + t2, s_idx[2] + df2)
        out = {}
        for docs, stats in ((self.indexed, s_idx), (flat, s_all)):
            for k, toks in docs.items():
                if not (live(k) and keep(k)):
                    continue
                present = set(toks)
                if operator_and and not all(t in present for t in q):
                    continue
                if any(t in present for t in q):
                    out[k] = self._score(q, toks, stats)
        return out


# --------------------------------------------------------------------------------------
# Comparing ranked results
# --------------------------------------------------------------------------------------


def hits(t: pa.Table, key: str = "id") -> List[Tuple[object, float]]:
    """``[(key, _score), ...]`` in the table's order."""
    return list(zip(t[key].to_pylist(), t["_score"].to_pylist()))


def close(a: float, b: float, rel: float) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-30)


def assert_same_scores(got: Dict, want: Dict, rel: float = 1e-3, what: str = "") -> None:
    """The same keys, each with a score within ``rel`` (relative)."""
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    assert not missing and not extra, f"{what}: missing {missing[:10]} extra {extra[:10]} ({len(got)} vs {len(want)})"
    bad = [(k, got[k], want[k]) for k in want if not close(got[k], want[k], rel)]
    assert not bad, f"{what}: {len(bad)} scores differ, e.g. {bad[:5]}"


def assert_same_ranking(
    got: Sequence[Tuple[object, float]],
    want: Sequence[Tuple[object, float]],
    limit: Optional[int],
    rel: float = 1e-3,
    tie: float = 1e-6,
    what: str = "",
) -> None:
    """Two ranked lists agree: the same length, the same scores position by position, and
    the same ids in order, except that within a run of equal scores (within ``tie``) the
    order is free, and the run cut by ``limit`` may hold different (equally scored) ids."""
    assert len(got) == len(want), f"{what}: {len(got)} rows vs {len(want)}"
    for i, ((gk, gs), (wk, ws)) in enumerate(zip(got, want)):
        assert close(gs, ws, rel), f"{what}: rank {i}: score {gs} ({gk}) vs {ws} ({wk})"
    i = 0
    while i < len(want):
        j = i + 1
        while j < len(want) and close(want[j][1], want[i][1], tie):
            j += 1
        truncated = limit is not None and len(want) == limit and j == len(want)
        gk = {k for k, _ in got[i:j]}
        wk = {k for k, _ in want[i:j]}
        if not truncated:
            assert gk == wk, f"{what}: ranks {i}..{j - 1}: ids {sorted(gk)[:8]} vs {sorted(wk)[:8]}"
        i = j
