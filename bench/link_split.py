#!/usr/bin/env python3
"""Writes a fixed link-prediction split of a supergcn .sgb graph as edge split
files (supergcn train --edge-split-files DIR, bench/train_torch.py
--edge-split-files DIR): DIR/train.npz, valid.npz and test.npz with OGB's
get_edge_split() keys, so both trainers are compared on the same edges.

The undirected edges (u < v, each once) are shuffled by numpy's generator
from SEED and cut by the fractions TRAIN,VALID,TEST; train.npz holds `edge`.
Validation and test get fixed negatives, pairs (u, w) with u ≠ w that are no
edge of the whole graph (PyG's negative sampling):
  default:            `edge` and `edge_neg` (one negative per positive, shared by
                      all positives, as ogbl-collab's layout; Hits@K ranks against them)
  --per-source K:     `source_node`, `target_node` and `target_node_neg` (E, K),
                      K negative targets per positive's source (ogbl-citation2's
                      layout; MRR ranks each positive among its own K)

  python3 bench/link_split.py --data cora.sgb --split 0.85,0.05,0.1:1 --out cora-split
"""
import argparse
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import sgb  # noqa: E402


def negatives(rng, n, u, known):
    """A negative target w for each source of u (uniform sources when u is a count): u ≠ w, and (u, w) no edge
    of known (codes min·n + max); refused draws are drawn again."""
    u = rng.integers(0, n, u) if np.isscalar(u) else u
    w = rng.integers(0, n, len(u))
    bad = np.ones(len(u), dtype=bool)
    while bad.any():
        w[bad] = rng.integers(0, n, int(bad.sum()))
        bad = (u == w) | np.isin(np.minimum(u, w) * n + np.maximum(u, w), known)
    return np.stack([u, w], 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="supergcn binary dataset (.sgb), symmetric")
    ap.add_argument("--split", default="0.85,0.05,0.1:1", help="TRAIN,VALID,TEST[:SEED] fractions of the undirected edges")
    ap.add_argument("--per-source", type=int, default=0, help="K negative targets per held-out positive (citation2 layout)")
    ap.add_argument("--out", required=True, help="directory to write train.npz, valid.npz, test.npz to")
    a = ap.parse_args()
    fr, _, seed = a.split.partition(":")
    f = [float(x) for x in fr.split(",")]
    if len(f) != 3 or min(f) < 0 or sum(f) > 1 + 1e-9:
        raise SystemExit(f"--split {a.split!r}: want TRAIN,VALID,TEST[:SEED], fractions summing to at most 1")
    d = sgb.load(a.data)
    n = d["nodes"]
    ptr = np.asarray(d["ptr"], dtype=np.int64)
    idx = np.asarray(d["idx"], dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
    pairs = np.stack([idx[idx < rows], rows[idx < rows]], 1)
    rng = np.random.default_rng(int(seed or 0))
    rng.shuffle(pairs)
    nt, nv, nx = (int(x * len(pairs)) for x in f)
    parts = pairs[:nt], pairs[nt:nt + nv], pairs[nt + nv:nt + nv + nx]
    known = np.unique(pairs[:, 0] * n + pairs[:, 1])
    os.makedirs(a.out, exist_ok=True)
    np.savez(os.path.join(a.out, "train.npz"), edge=parts[0])
    for name, p in (("valid", parts[1]), ("test", parts[2])):
        if a.per_source:
            src = np.repeat(p[:, 0], a.per_source)
            neg = negatives(rng, n, src, known)[:, 1].reshape(len(p), a.per_source)
            np.savez(os.path.join(a.out, name + ".npz"), source_node=p[:, 0], target_node=p[:, 1], target_node_neg=neg)
        else:
            np.savez(os.path.join(a.out, name + ".npz"), edge=p, edge_neg=negatives(rng, n, len(p), known))
    print(f"{a.out}: {len(parts[0])}/{len(parts[1])}/{len(parts[2])} edges, "
          + (f"{a.per_source} negatives per source" if a.per_source else "one shared negative per held-out edge"))


if __name__ == "__main__":
    main()
