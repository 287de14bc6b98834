#!/usr/bin/env python3
"""Plain-PyTorch full-batch trainer: the supergcn models on a supergcn .sgb
graph, timed with supergcn's epoch definition, for a reproducible comparison.

Models (as nn/ builds them, PyG's example architecture):
  x → dropout → for each hidden layer: conv → [LayerNorm or BatchNorm1d] → ReLU → dropout → conv → logits
  gcn:   conv(X) = Â·X·W + b,  Â = D^-½(A+I)D^-½, d = in-degree + 1
  sage:  conv(X) = mean(X)·W_l + X·W_r + b, mean = D^-1·A (d = in-degree)
  sage-max, sage-pool: conv(X) = max(X)·W_l + X·W_r + b, max the element-wise maximum over
         in-neighbours (0 without any); sage-pool takes max(ReLU(X·W_p + b_p)) (PyG SAGEConv
         aggr="max", project=True)
  gin:   conv(X) = ReLU(((1+ε)·X + A·X)·W₁ + b₁)·W₂ + b₂, A the plain sum, ε 0 (learned with --train-eps)
  sgc:   conv(X) = Â^K·X·W + b (K = --k, default 2; one layer by default)
  appnp: conv(X) = X·W + b, and in the last layer K steps Z ← (1-α)·Â·Z + α·H (--k 10, --alpha 0.1)
  gcnii: its own body (not the pipeline): x → dropout → Linear → ReLU = H⁰, then per layer l
         dropout, S = (1-α)·Â·H + α·H⁰, H = ReLU((1-β)·S + β·S·W), β = ln(θ/l + 1), then dropout
         → Linear (PyG's GCN2Conv example; the convolutions' weights decayed at --conv-decay,
         the linear layers' parameters at --weight-decay)
  gat:   multi-head graph attention (PyG GATConv: one self-loop per node, LeakyReLU 0.2,
         softmax over in-edges, attention dropout); hidden layers concatenate --heads heads of
         --hidden each (PyG GATConv's out_channels, as supergcn's --hidden), the output layer
         averages --out-heads heads
  gatv2: dynamic attention (PyG GATv2Conv): e = att·LeakyReLU(x_u·W_l + b_l + x_v·W_r + b_r), the
         aggregated rows x_u·W_l + b_l; --share-weights 1: W_r = W_l, b_r = b_l; heads as gat's
Each product aggregates the narrower side (Â·(X·W) when out ≤ in, else (Â·X)·W),
like supergcn. Initialisation as supergcn's: Glorot for gcn, torch.nn.Linear's
(uniform ±1/sqrt(fan-in), weights and biases) for the others. The graph operator is torch.sparse.mm on CSR tensors (int64
indices) with the transpose precomputed for the backward pass.
Loss: cross-entropy over the training nodes; Adam (lr 0.01, weight decay 5e-4
on the first layer's weights, as supergcn's default; --decay-all: on every
parameter).
Epoch = training step (forward, loss, backward, optimizer step) + evaluation
pass (forward without dropout, accuracy on train/valid/test), as supergcn's
epoch_s. Prints one line per epoch, then one JSON summary line with the
median epoch seconds of epochs 2..5 (or of all but the first) and the peak
RSS of the process (getrusage ru_maxrss, so it includes loading).
--task multilabel|regression --targets FILE.npy trains supergcn's other tasks
(task/): multilabel: binary cross-entropy with logits over the labelled (non-NaN)
entries, ROC-AUC averaged over the tasks with both classes in a split (OGB's
evaluator) and micro-F1; regression: mean squared error, RMSE (lowest picks the
best epoch), MAE, R². The split keeps the nodes with a target (multilabel: at
least one labelled entry). --task link --edge-split TRAIN,VALID,TEST[:SEED]: a
random split of the undirected edges (numpy's generator: not supergcn's split,
the same fractions), held-out edges removed from the graph, embeddings of
--hidden columns scored by dot product, BCE against one uniform negative per
training edge drawn every epoch, ROC-AUC (best: highest validation) and Hits@50
against one fixed negative per held-out edge. --edge-split-files DIR reads supergcn's
split files instead (the same edges and fixed negatives: bench/link_split.py writes
them; docs/TASKS.md), with OGB's Hits@K or, with per-source negatives, MRR;
--link-metric picks the best epoch as supergcn's; --decoder mlp scores a pair by
Linear(H,H)-ReLU-Linear(H,1) of the endpoints' Hadamard product.
--eval-every N evaluates only every N-th epoch (and the last), as supergcn's
flag; the best validation epoch is chosen among the evaluated ones.
--patience N and --lr-schedule step|cosine|plateau (--lr-step-size, --lr-gamma,
--lr-min, --lr-plateau-patience) are supergcn train's, with its meanings
(train/schedule.go): the epoch's learning rate is set before its step (step:
lr·gamma^⌊(epoch-1)/step⌋; cosine: from --lr to --lr-min over --epochs; plateau:
×gamma after more than --lr-plateau-patience evaluations without a validation
loss below the best by 1e-4 relative, not below --lr-min); early stopping and
the plateau watch the evaluations every --eval-every epochs, not the extra one
of the last epoch; training stops after --patience evaluations in a row without
a validation accuracy above the best. The epoch line prints lr (with a
schedule) and, when evaluated, the validation loss.
--save FILE [--save-every N] writes a checkpoint (model, Adam state, random
generator, epoch, best so far) after every N-th epoch and the last;
--resume FILE continues it up to --epochs with the same model flags, and the
continued run prints what the uninterrupted one would (one thread: the same
numbers).

--features X.npz takes sparse features as scipy.sparse.save_npz writes them (csr, csc
or coo; read with numpy, no pickle), and a .sgb holding sparse features keeps them
sparse: the first layer's X·W is torch sparse CSR · dense
and its weight gradient Xᵀ·G a product with the transpose built once, input dropout
drops non-zeros, as supergcn's sparse input (docs/DATA.md, "Sparse features").

  python3 bench/train_torch.py --data g.sgb --model sage --layers 3 --hidden 256 --norm layer --threads 16
  python3 bench/train_torch.py --data g.sgb --features x_csr.npz --model gcn
  python3 bench/train_torch.py --data g.sgb --epochs 250 --eval-every 10 --save ck.pt --save-every 25
  python3 bench/train_torch.py --data g.sgb --epochs 250 --eval-every 10 --save ck.pt --save-every 25 --resume ck.pt
"""
import argparse
import json
import math
import os
import resource
import statistics
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no bench/__pycache__ in the tree
sys.path.insert(0, __file__.rsplit("/", 1)[0])
import sgb  # noqa: E402


def roc_auc(score, label):
    """ROC-AUC of one task (Mann-Whitney, ties counting one half, as scikit-learn's); None without both classes."""
    pos = int(label.sum())
    neg = len(label) - pos
    if pos == 0 or neg == 0:
        return None
    uniq, inv, counts = np.unique(score, return_inverse=True, return_counts=True)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    ranks = (first + (counts + 1) / 2.0)[inv]  # 1-based average ranks
    return (ranks[label == 1].sum() - pos * (pos + 1) / 2.0) / (pos * neg)


def task_metrics(task, out, yt, v):
    """The task's metrics of rows v: (main metric, extra metrics by name)."""
    o, t = out[v].double().numpy(), yt[v].double().numpy()
    if task == "multilabel":
        aucs = []
        for j in range(t.shape[1]):
            m = ~np.isnan(t[:, j])
            a = roc_auc(o[m, j], t[m, j])
            if a is not None:
                aucs.append(a)
        m = ~np.isnan(t)
        p = o > 0
        tp, fp, fn = (p & (t == 1) & m).sum(), (p & (t == 0) & m).sum(), (~p & (t == 1) & m).sum()
        return (float(np.mean(aucs)) if aucs else 0.0), {"f1": 2 * tp / max(2 * tp + fp + fn, 1)}
    d = o - t
    mse = float((d * d).mean()) if len(d) else 0.0
    r2 = [1 - (d[:, j] ** 2).sum() / ((t[:, j] - t[:, j].mean()) ** 2).sum() for j in range(t.shape[1])
          if len(t) and ((t[:, j] - t[:, j].mean()) ** 2).sum() > 0]
    return math.sqrt(mse), {"mse": mse, "mae": float(np.abs(d).mean()) if len(d) else 0.0,
                            "r2": float(np.mean(r2)) if r2 else 0.0}


def split_edges(d, spec):
    """--edge-split: the edges (u < v) of the training, validation and test sets; removes the held-out ones from d."""
    fr, _, seed = spec.partition(":")
    f = [float(x) for x in fr.split(",")]
    n = d["nodes"]
    ptr = np.asarray(d["ptr"], dtype=np.int64)
    idx = np.asarray(d["idx"], dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
    pairs = np.stack([idx[idx < rows], rows[idx < rows]], 1)
    np.random.default_rng(int(seed or 0)).shuffle(pairs)
    nt, nv = int(f[0] * len(pairs)), int(f[1] * len(pairs))
    parts = pairs[:nt], pairs[nt:nt + nv], pairs[nt + nv:]
    held = set(map(tuple, np.concatenate(parts[1:]).tolist()))
    keep = np.array([(min(a, b), max(a, b)) not in held for a, b in zip(idx.tolist(), rows.tolist())])
    d["idx"] = idx[keep].astype(np.int32)
    d["ptr"] = np.concatenate(([0], np.cumsum(np.bincount(rows[keep], minlength=n)))).astype(np.int64)
    return [torch.from_numpy(p) for p in parts]


def read_pairs(path, n):
    """Pairs of a .npy (E, 2) or .csv[.gz] split file, node ids checked against n."""
    if path.endswith(".npy"):
        p = np.load(path, allow_pickle=False)
    else:
        p = np.loadtxt(path, delimiter=",", dtype=np.int64, ndmin=2)
    return check_ids(path, p, n, 2)


def check_ids(path, p, n, cols):
    if p.dtype.kind not in "iu" or p.ndim != 2 or (cols and p.shape[1] != cols):
        raise SystemExit(f"{path}: shape {p.shape} of {p.dtype}, want integer node ids ({'E, ' + str(cols) if cols else 'E, K'})")
    if p.size and (p.min() < 0 or p.max() >= n):
        raise SystemExit(f"{path}: node id outside [0,{n})")
    return p.astype(np.int64)


def read_split_part(d, k):
    """Part k of --edge-split-files (as supergcn reads it): (positives, shared negatives or None, per-source negative targets or None)."""
    n, names = d["nodes"], (("train",), ("valid", "val"), ("test",))[k]
    found = [os.path.join(d["edge_split_files"], b + e) for b in names for e in (".npz", ".npy", ".csv", ".csv.gz")
             if os.path.isfile(os.path.join(d["edge_split_files"], b + e))]
    if len(found) != 1:
        raise SystemExit(f"{d['edge_split_files']}: {len(found)} files for the {names[0]} part, want one")
    path = found[0]
    if path.endswith(".npz"):
        z = np.load(path, allow_pickle=False)
        if "edge" in z:
            pos = check_ids(path + ":edge", z["edge"], n, 2)
        else:
            pos = check_ids(path, np.stack([z["source_node"], z["target_node"]], 1), n, 2)
        neg = check_ids(path + ":edge_neg", z["edge_neg"], n, 2) if "edge_neg" in z else None
        tneg = check_ids(path + ":target_node_neg", z["target_node_neg"], n, 0) if "target_node_neg" in z else None
        return pos, neg, tneg
    stem = path[:-len(".csv.gz")] if path.endswith(".gz") else path.rsplit(".", 1)[0]
    negs = [stem + "_neg" + e for e in (".npy", ".csv", ".csv.gz") if os.path.isfile(stem + "_neg" + e)]
    return read_pairs(path, n), (read_pairs(negs[0], n) if negs else None), None


def split_edge_files(d):
    """--edge-split-files: the three parts; removes the held-out positives from d (both directions)."""
    parts = [read_split_part(d, k) for k in range(3)]
    n = d["nodes"]
    ptr = np.asarray(d["ptr"], dtype=np.int64)
    idx = np.asarray(d["idx"], dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
    held = np.concatenate([parts[1][0], parts[2][0]])
    held = np.unique(np.minimum(held[:, 0], held[:, 1]) * n + np.maximum(held[:, 0], held[:, 1]))
    keep = ~np.isin(np.minimum(idx, rows) * n + np.maximum(idx, rows), held)
    d["idx"] = idx[keep].astype(np.int32)
    d["ptr"] = np.concatenate(([0], np.cumsum(np.bincount(rows[keep], minlength=n)))).astype(np.int64)
    return parts


def link_metrics(score, pos, neg, tneg, metric):
    """ROC-AUC of the positives against all negatives, and OGB's ranking metrics: with per-source negatives
    (tneg, E×K targets) MRR and Hits@1/3/10 by rank among a positive's own negatives (ties: the mean of the
    optimistic and pessimistic ranks); otherwise Hits@20/50/100 against the K-th highest negative. Returns
    (the selecting metric, the others by name)."""
    sp = score(pos)
    if tneg is not None:
        k = tneg.shape[1]
        src = np.repeat(pos[:, 0], k)
        sn = score(np.stack([src, tneg.reshape(-1)], 1)).reshape(len(pos), k)
        rank = 0.5 * ((sn > sp[:, None]).sum(1) + (sn >= sp[:, None]).sum(1)) + 1
        extra = {"mrr": float((1 / rank).mean())}
        ks = [1, 3, 10]
        extra.update({f"hits{k}": float((rank <= k).mean()) for k in ks})
        sn = sn.reshape(-1)
    else:
        sn = score(neg)
        ks = [20, 50, 100]
        extra = {}
    sel = int(metric[4:]) if metric.startswith("hits") else 0
    if tneg is None:
        for k in ks + ([sel] if sel and sel not in ks else []):
            kth = np.sort(sn)[-k] if len(sn) >= k else -np.inf
            extra[f"hits{k}"] = float((sp > kth).mean())
    elif sel and sel not in ks:
        extra[f"hits{sel}"] = float((rank <= sel).mean())
    extra["rocauc"] = roc_auc(np.concatenate([sp, sn]), np.concatenate([np.ones(len(sp)), np.zeros(len(sn))])) or 0.0
    main = extra.pop(metric)
    return main, extra


def task_loss(task, out, yt, v):
    """The task's training loss over rows v (multilabel: the labelled entries only)."""
    o, t = out[v].float(), yt[v]
    if task == "multilabel":
        m = ~torch.isnan(t)
        return F.binary_cross_entropy_with_logits(o[m], t[m])
    return F.mse_loss(o, t)


class SpMM(torch.autograd.Function):
    """out = A·x with a constant CSR A; the backward multiplies by Aᵀ."""

    @staticmethod
    def forward(ctx, a, at, x):
        # float32 rows whatever the autocast dtype of x (--precision bf16
        # rounds the dense products' operands, not the aggregation).
        ctx.at, ctx.dtype = at, x.dtype
        with torch.autocast("cpu", enabled=False):
            return torch.sparse.mm(a, x.float())

    @staticmethod
    def backward(ctx, g):
        with torch.autocast("cpu", enabled=False):
            return None, None, torch.sparse.mm(ctx.at, g.float()).to(ctx.dtype)


def csr(ptr, idx, val, n):
    return torch.sparse_csr_tensor(torch.from_numpy(np.ascontiguousarray(ptr)), torch.from_numpy(idx), torch.from_numpy(val), (n, n))


class SparseX:
    """Sparse node features: x @ W is X·W with X a torch CSR tensor (SpMM: the backward
    multiplies by Xᵀ, built once); dropout drops non-zeros; row_normalize divides each
    row's values by its absolute sum."""

    def __init__(self, rows, cols, val, shape):
        self.shape = shape
        self.rows, self.cols, self.val = rows, cols, val
        self.ptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=shape[0]))]).astype(np.int64)
        self.tperm = np.lexsort((rows, cols))  # Xᵀ's entries: by column, then row
        self.tptr = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=shape[1]))]).astype(np.int64)
        self.set(torch.from_numpy(val))

    @classmethod
    def load(cls, path, nodes):
        """Reads a scipy.sparse.save_npz archive of nodes rows into canonical CSR order."""
        try:
            z = np.load(path, allow_pickle=False)
            fmt = z["format"].item()
            fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
            shape = tuple(int(v) for v in z["shape"])
            val = np.asarray(z["data"], dtype=np.float32)
            if fmt in ("csr", "csc"):
                major = np.repeat(np.arange(len(z["indptr"]) - 1, dtype=np.int64), np.diff(z["indptr"]))
                minor = np.asarray(z["indices"], dtype=np.int64)
                rows, cols = (major, minor) if fmt == "csr" else (minor, major)
            elif fmt == "coo":
                rows, cols = np.asarray(z["row"], dtype=np.int64), np.asarray(z["col"], dtype=np.int64)
            else:
                raise SystemExit(f"{path}: format {fmt!r}, want csr, csc or coo")
        except (OSError, KeyError, ValueError) as e:
            raise SystemExit(f"{path}: not a scipy sparse archive ({e})")
        if len(shape) != 2 or shape[0] != nodes:
            raise SystemExit(f"{path}: shape {shape}, want ({nodes}, F)")
        if len(rows) != len(val) or len(cols) != len(val) or (len(val) and (rows.min() < 0 or rows.max() >= shape[0]
                                                                          or cols.min() < 0 or cols.max() >= shape[1])):
            raise SystemExit(f"{path}: ids outside the shape or lengths differ")
        if not np.isfinite(val).all():
            raise SystemExit(f"{path}: non-finite values")
        order = np.lexsort((cols, rows))
        rows, cols, val = rows[order], cols[order], val[order]
        if len(rows) > 1 and ((rows[1:] == rows[:-1]) & (cols[1:] == cols[:-1])).any():
            raise SystemExit(f"{path}: duplicate entries (scipy: sum_duplicates())")
        return cls(rows, cols, val, shape)

    def set(self, val):
        """Uses val (one per entry, CSR order) as the values of X and Xᵀ."""
        n, f = self.shape
        self.x = torch.sparse_csr_tensor(torch.from_numpy(self.ptr), torch.from_numpy(self.cols), val, (n, f))
        tp = torch.from_numpy(self.tperm)
        self.xt = torch.sparse_csr_tensor(torch.from_numpy(self.tptr), torch.from_numpy(self.rows[self.tperm]), val[tp], (f, n))
        self.cur = val

    def row_normalize(self):
        s = np.zeros(self.shape[0])
        np.add.at(s, self.rows, np.abs(self.val.astype(np.float64)))
        d = s[self.rows].astype(np.float32)
        self.val = np.where(d > 0, self.val / np.where(d > 0, d, 1), self.val).astype(np.float32)
        self.set(torch.from_numpy(self.val))

    def dropout(self, p, training):
        """The features with input dropout on the non-zeros (a view sharing the structure)."""
        v = torch.from_numpy(self.val)
        out = SparseX.__new__(SparseX)
        out.__dict__.update(self.__dict__)
        out.set(F.dropout(v, p, training) if training and p > 0 else v)
        return out

    def __matmul__(self, w):
        return SpMM.apply(self.x, self.xt, w)


def operators(d, kind):
    """The layer operator ("gcn", "mean" or "sum") and its transpose as torch CSR tensors."""
    n = d["nodes"]
    ptr = np.asarray(d["ptr"], dtype=np.int64)
    idx = np.asarray(d["idx"], dtype=np.int64)
    deg = np.diff(ptr)
    if kind == "gcn":  # add a self-loop to every row, keeping the columns of a row sorted
        s = (1.0 / np.sqrt(deg + 1.0)).astype(np.float32)
        rows = np.repeat(np.arange(n, dtype=np.int64), deg)
        if np.any(idx == rows):
            raise SystemExit(f"graph has self-loops; supergcn adds one more per node, this script does not")
        after = idx > rows  # entries that move one place right for the loop
        before = np.bincount(rows, weights=~after, minlength=n).astype(np.int64)
        ptr2 = ptr + np.arange(n + 1, dtype=np.int64)
        idx2 = np.empty(len(idx) + n, dtype=np.int64)
        idx2[np.arange(len(idx), dtype=np.int64) + rows + after] = idx
        idx2[ptr2[:-1] + before] = np.arange(n, dtype=np.int64)
        del after, before
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr2))
        val = s[rows] * s[idx2]
        ptr, idx = ptr2, idx2
    elif kind == "mean":
        inv = np.where(deg > 0, 1.0 / np.maximum(deg, 1), 0.0).astype(np.float32)
        rows = np.repeat(np.arange(n, dtype=np.int64), deg)
        val = inv[rows]
    else:  # sum
        rows = np.repeat(np.arange(n, dtype=np.int64), deg)
        val = np.ones(len(idx), dtype=np.float32)
    # the transpose: sort entries by column (stable), rows become columns
    order = np.argsort(idx, kind="stable")
    tptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(idx, minlength=n), out=tptr[1:])
    tidx = rows[order]
    tval = val[order]
    del order, rows
    a = csr(ptr, idx, val.astype(np.float32), n)
    at = csr(tptr, tidx, tval.astype(np.float32), n)
    return a, at


def linear(fin, fout):
    """torch.nn.Linear's initialisation, stored fin×fout as supergcn does."""
    bound = 1 / math.sqrt(fin)
    return (torch.nn.Parameter(torch.empty(fin, fout).uniform_(-bound, bound)),
            torch.nn.Parameter(torch.empty(fout).uniform_(-bound, bound)))


def steps(a, at, x, k):
    for _ in range(k):
        x = SpMM.apply(a, at, x)
    return x


class Conv(torch.nn.Module):
    """gcn and sage layers; first: the parameters weight decay applies to by default."""

    def __init__(self, kind, fin, fout, hidden, last, o):
        super().__init__()
        self.kind, self.fin, self.fout = kind, fin, fout
        if kind == "gcn":
            self.w = torch.nn.Parameter(torch.empty(fin, fout))
            torch.nn.init.uniform_(self.w, -math.sqrt(6 / (fin + fout)), math.sqrt(6 / (fin + fout)))
            self.b = torch.nn.Parameter(torch.zeros(fout))
            self.first = [self.w]
        else:
            self.w, self.b = linear(fin, fout)
            bound = 1 / math.sqrt(fin)
            self.wr = torch.nn.Parameter(torch.empty(fin, fout).uniform_(-bound, bound))
            self.first = [self.w, self.wr]

    def forward(self, a, at, x):
        if self.fout <= self.fin:
            h = SpMM.apply(a, at, x @ self.w)
        else:
            h = SpMM.apply(a, at, x) @ self.w
        if self.kind == "sage":
            h = h + x @ self.wr
        return h + self.b


def edges(d):
    """GAT's edge lists (source, destination): in-edges with one self-loop per node."""
    n = d["nodes"]
    ptr = np.asarray(d["ptr"], dtype=np.int64)
    idx = np.asarray(d["idx"], dtype=np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
    keep = idx != rows
    loop = np.arange(n, dtype=np.int64)
    return torch.from_numpy(np.concatenate([idx[keep], loop])), torch.from_numpy(np.concatenate([rows[keep], loop])), n


def glorot(*shape):
    bound = math.sqrt(6 / (shape[-2] + shape[-1]))
    return torch.nn.Parameter(torch.empty(*shape).uniform_(-bound, bound))


class GATConv(torch.nn.Module):
    """PyG GATConv in plain torch ops: z = x·W, e = LeakyReLU(a_src·z_u + a_dst·z_v),
    α = softmax over v's in-edges (max-subtracted), dropout on α, out = Σ α z_u per head."""

    def __init__(self, fin, heads, width, concat, attn_dropout):
        super().__init__()
        self.h, self.f, self.concat, self.p = heads, width, concat, attn_dropout
        self.w = glorot(fin, heads * width)
        self.att_src, self.att_dst = glorot(heads, width), glorot(heads, width)
        self.b = torch.nn.Parameter(torch.zeros(heads * width if concat else width))

    def forward(self, g, _, x):
        src, dst, n = g
        z = (x @ self.w).view(n, self.h, self.f)
        e = F.leaky_relu((z * self.att_src).sum(-1)[src] + (z * self.att_dst).sum(-1)[dst], 0.2)
        with torch.no_grad():
            m = torch.full((n, self.h), -math.inf, device=e.device).scatter_reduce(0, dst[:, None].expand(-1, self.h), e, "amax")
        p = torch.exp(e - m[dst])
        alpha = p / torch.zeros(n, self.h, device=e.device).index_add(0, dst, p)[dst]
        alpha = F.dropout(alpha, self.p, self.training)
        out = torch.zeros(n, self.h, self.f, device=e.device).index_add(0, dst, alpha[:, :, None] * z[src])
        out = out.reshape(n, self.h * self.f) if self.concat else out.mean(1)
        return out + self.b


class GATv2Conv(torch.nn.Module):
    """PyG GATv2Conv in plain torch ops: zs = x·W_l + b_l, zt = x·W_r + b_r (zs when shared),
    e = Σ_j att_j·LeakyReLU(zs_u + zt_v)_j, α = softmax over v's in-edges (max-subtracted), dropout
    on α, out = Σ α zs_u per head."""

    def __init__(self, fin, heads, width, concat, attn_dropout, shared):
        super().__init__()
        self.h, self.f, self.concat, self.p = heads, width, concat, attn_dropout
        self.w, self.bl = glorot(fin, heads * width), torch.nn.Parameter(torch.zeros(heads * width))
        self.wr = None if shared else glorot(fin, heads * width)
        self.br = None if shared else torch.nn.Parameter(torch.zeros(heads * width))
        self.att = glorot(heads, width)
        self.b = torch.nn.Parameter(torch.zeros(heads * width if concat else width))

    def forward(self, g, _, x):
        src, dst, n = g
        zs = (x @ self.w + self.bl).view(n, self.h, self.f)
        zt = zs if self.wr is None else (x @ self.wr + self.br).view(n, self.h, self.f)
        e = (F.leaky_relu(zs[src] + zt[dst], 0.2) * self.att).sum(-1)
        with torch.no_grad():
            m = torch.full((n, self.h), -math.inf, device=e.device).scatter_reduce(0, dst[:, None].expand(-1, self.h), e, "amax")
        p = torch.exp(e - m[dst])
        alpha = p / torch.zeros(n, self.h, device=e.device).index_add(0, dst, p)[dst]
        alpha = F.dropout(alpha, self.p, self.training)
        out = torch.zeros(n, self.h, self.f, device=e.device).index_add(0, dst, alpha[:, :, None] * zs[src])
        out = out.reshape(n, self.h * self.f) if self.concat else out.mean(1)
        return out + self.b


class GAT(torch.nn.Module):
    """A GAT (or GATv2) layer in the model table's shape: hidden layers concatenate --heads heads
    of fout/heads columns, the output layer averages --out-heads heads of fout columns."""

    def __init__(self, kind, fin, fout, hidden, last, o):
        super().__init__()
        heads, width = (o.out_heads, fout) if last else (o.heads, fout // o.heads)
        if kind == "gatv2":
            self.conv = GATv2Conv(fin, heads, width, not last, o.attn_dropout, o.share_weights == 1)
        else:
            self.conv = GATConv(fin, heads, width, not last, o.attn_dropout)
        self.first = [w for w in (self.conv.w, getattr(self.conv, "wr", None)) if w is not None]

    def forward(self, g, at, x):
        return self.conv(g, at, x)


def in_edges(d):
    """The max operator's edge lists (source, destination): the in-edges as given."""
    ptr = np.asarray(d["ptr"], dtype=np.int64)
    rows = np.repeat(np.arange(d["nodes"], dtype=np.int64), np.diff(ptr))
    return torch.from_numpy(np.asarray(d["idx"], dtype=np.int64)), torch.from_numpy(rows)


class SAGEMax(torch.nn.Module):
    """sage-max: conv(X) = max(X)·W_l + X·W_r + b; sage-pool: max(ReLU(X·W_p + b_p)) in place of
    max(X) (PyG SAGEConv aggr="max", project=True), max the element-wise maximum over in-neighbours
    (torch scatter_reduce amax; 0 for a node without in-neighbours, as PyG)."""

    def __init__(self, kind, fin, fout, hidden, last, o):
        super().__init__()
        self.pool = kind == "sage-pool"
        if self.pool:
            self.wp, self.bp = linear(fin, fin)
        self.w, self.b = linear(fin, fout)
        bound = 1 / math.sqrt(fin)
        self.wr = torch.nn.Parameter(torch.empty(fin, fout).uniform_(-bound, bound))
        self.first = ([self.wp] if self.pool else []) + [self.w, self.wr]

    def forward(self, g, _, x):
        if isinstance(x, SparseX):
            raise SystemExit("sage-max and sage-pool take dense features")
        src, dst = g
        h = F.relu(x @ self.wp + self.bp) if self.pool else x
        agg = torch.zeros_like(h).scatter_reduce(0, dst[:, None].expand(-1, h.shape[1]), h[src], "amax", include_self=False)
        return agg @ self.w + x @ self.wr + self.b


class GIN(torch.nn.Module):
    def __init__(self, kind, fin, fout, hidden, last, o):
        super().__init__()
        self.fin, self.hidden = fin, hidden
        self.w1, self.b1 = linear(fin, hidden)
        self.w2, self.b2 = linear(hidden, fout)
        self.eps = torch.nn.Parameter(torch.zeros(1)) if o.train_eps else None
        self.first = [self.w1, self.w2]

    def forward(self, a, at, x):
        s = 1 + self.eps if self.eps is not None else 1
        if self.hidden <= self.fin:
            xw = x @ self.w1
            z = SpMM.apply(a, at, xw) + s * xw
        else:
            z = (SpMM.apply(a, at, x) + s * x) @ self.w1
        return F.relu(z + self.b1) @ self.w2 + self.b2


class SGC(torch.nn.Module):
    def __init__(self, kind, fin, fout, hidden, last, o):
        super().__init__()
        self.fin, self.fout, self.k = fin, fout, o.k
        self.w, self.b = linear(fin, fout)
        self.first = [self.w]

    def forward(self, a, at, x):
        if self.fout <= self.fin:
            return steps(a, at, x @ self.w, self.k) + self.b
        return steps(a, at, x, self.k) @ self.w + self.b


class APPNP(torch.nn.Module):
    def __init__(self, kind, fin, fout, hidden, last, o):
        super().__init__()
        self.k = o.k if last else 0
        self.alpha = o.alpha
        self.w, self.b = linear(fin, fout)
        self.first = [self.w]

    def forward(self, a, at, x):
        h = x @ self.w + self.b
        z = h
        for _ in range(self.k):
            z = (1 - self.alpha) * SpMM.apply(a, at, z) + self.alpha * h
        return z


class GCNII(torch.nn.Module):
    """The whole GCNII model (a body of its own in nn/gcnii.go)."""

    def __init__(self, layers, fin, hidden, fout, dropout, o):
        super().__init__()
        self.win, self.bin = linear(fin, hidden)
        self.ws = torch.nn.ParameterList(glorot(hidden, hidden) for _ in range(layers))
        self.wout, self.bout = linear(hidden, fout)
        self.alpha, self.theta, self.p = o.alpha, o.theta, dropout

    def groups(self, o):
        """Adam's parameter groups: every parameter decayed, the convolutions at --conv-decay."""
        return [{"params": list(self.ws), "weight_decay": o.conv_decay},
                {"params": [self.win, self.bin, self.wout, self.bout], "weight_decay": o.weight_decay}]

    def forward(self, a, at, x):
        x0 = h = F.relu(F.dropout(x, self.p, self.training) @ self.win + self.bin)
        for l, w in enumerate(self.ws):
            beta = math.log(self.theta / (l + 1) + 1)
            s = (1 - self.alpha) * SpMM.apply(a, at, F.dropout(h, self.p, self.training)) + self.alpha * x0
            h = F.relu((1 - beta) * s + beta * (s @ w))
        return F.dropout(h, self.p, self.training) @ self.wout + self.bout


# name → (graph operator, layer, default layers): supergcn's model table (nn/model.go); the
# choices of --model (cmd/supergcn's bench_py_test checks that the names are nn.Models()).
MODELS = {
    "gcn": ("gcn", Conv, 2),
    "sage": ("mean", Conv, 2),
    "sage-max": ("max", SAGEMax, 2),
    "sage-pool": ("max", SAGEMax, 2),
    "gin": ("sum", GIN, 2),
    "sgc": ("gcn", SGC, 1),
    "appnp": ("gcn", APPNP, 2),
    "gat": ("gat", GAT, 2),
    "gatv2": ("gat", GAT, 2),
    "gcnii": ("gcn", GCNII, 64),
}

# The hyperparameters the models of nn's table declare (their rows' hypers: model → name → default; an int
# default is a count, a bool a switch; cmd/supergcn's bench_py_test checks them against the declarations). Their
# flags derive from this table; a model's default fills a flag not given.
HYPERS = {"sgc": {"k": 2}, "appnp": {"k": 10, "alpha": 0.1}, "gin": {"train-eps": False}, "gatv2": {"share-weights": 0},
          "gcnii": {"alpha": 0.1, "theta": 0.5, "conv-decay": 0.01}}
HYPER_NAMES = list(dict.fromkeys(h for hs in HYPERS.values() for h in hs))


def hyper_flags(ap):
    """Adds a flag per declared hyperparameter (default None: the model's)."""
    for h in HYPER_NAMES:
        decl = [(m, hs[h]) for m, hs in HYPERS.items() if h in hs]
        models = ", ".join(m if isinstance(v, bool) else f"{m} {v:g}" for m, v in decl)
        if isinstance(decl[0][1], bool):
            ap.add_argument("--" + h, action="store_true", default=None, help=f"({models}; see supergcn train --help)")
        else:
            ap.add_argument("--" + h, type=int if isinstance(decl[0][1], int) else float, default=None,
                            help=f"(default {models}; see supergcn train --help)")


def hyper_defaults(a):
    """Fills the hyperparameters not given with the model's defaults (0 where the model takes none) and refuses
    one given to a model that does not take it, as supergcn train does."""
    own = HYPERS.get(a.model, {})
    for h in HYPER_NAMES:
        k = h.replace("-", "_")
        if getattr(a, k) is not None and h not in own:
            raise SystemExit(f"--{h}: {a.model} takes no {h}")
        if getattr(a, k) is None:
            setattr(a, k, own.get(h, 0))


class Model(torch.nn.Module):
    """The pipeline; with --jk (PyG's BasicGNN jk) every conv is hidden wide and followed by
    norm → ReLU → dropout, the outputs combined (cat, max, last) and mapped by a Linear. With
    --residual every hidden conv adds its input to its activation before the dropout (supergcn's
    nn/residual.go): the identity where the widths match, else a projection without bias (res{i})."""

    def __init__(self, kind, layers, fin, hidden, fout, dropout, norm, o):
        super().__init__()
        self.jk = o.jk if o.jk != "none" else None
        widths = [fin] + [hidden] * (layers - 1) + [hidden if self.jk else fout]
        layer = MODELS[kind][1]
        inner = hidden if layers > 1 or self.jk else fout
        self.convs = torch.nn.ModuleList(layer(kind, widths[i], widths[i + 1], inner, i == layers - 1, o) for i in range(layers))
        self.norms = torch.nn.ModuleList(
            torch.nn.LayerNorm(hidden) if norm == "layer" else torch.nn.BatchNorm1d(hidden) if norm == "batch"
            else torch.nn.Identity() for _ in range(layers if self.jk else layers - 1))
        if self.jk:
            self.lin_w, self.lin_b = linear(layers * hidden if self.jk == "cat" else hidden, fout)
        self.res = torch.nn.ParameterDict({str(i): linear(widths[i], hidden)[0] for i in range(len(self.norms))
                                           if o.residual and widths[i] != hidden})
        self.residual = o.residual
        # the parameters weight decay applies to by default: the first layer's weights and projection
        self.first = self.convs[0].first + [self.res[k] for k in ("0",) if k in self.res]
        self.p = dropout

    def forward(self, a, at, x):
        h = x.dropout(self.p, self.training) if isinstance(x, SparseX) else F.dropout(x, self.p, self.training)
        xs = []
        for i, c in enumerate(self.convs):
            hin, h = h, c(a, at, h)
            if i < len(self.convs) - 1 or self.jk:
                h = F.relu(self.norms[i](h))
                if self.residual:
                    if str(i) not in self.res and isinstance(hin, SparseX):
                        raise SystemExit("--residual with sparse features as wide as --hidden: give the features dense")
                    h = h + (hin @ self.res[str(i)] if str(i) in self.res else hin)
                h = F.dropout(h, self.p, self.training)
                xs.append(h)
        if not self.jk:
            return h
        z = torch.cat(xs, 1) if self.jk == "cat" else torch.stack(xs).max(0)[0] if self.jk == "max" else xs[-1]
        return z @ self.lin_w + self.lin_b


# The flags a checkpoint's training depends on; --resume refuses others.
CHECKED = ("task", "model", "layers", "decay_all", "feat_norm", "heads", "out_heads",
           "attn_dropout", "hidden", "norm", "jk", "residual", "dropout", "lr", "weight_decay", "seed", "precision",
           "eval_every", "lr_schedule", "lr_step_size", "lr_gamma", "lr_min", "lr_plateau_patience", "patience") + \
    tuple(h.replace("-", "_") for h in HYPER_NAMES)
# What files of older builds, which had no schedule, early stopping, tasks, jumping knowledge, residual or declared
# hyperparameters, ran with.
LOOP_DEFAULTS = {"lr_schedule": "none", "lr_step_size": 50, "lr_gamma": 0.1, "lr_min": 0.0, "lr_plateau_patience": 10,
                 "patience": 0, "task": "node", "jk": "none", "residual": False,
                 "train_eps": False}
# ReduceLROnPlateau's defaults, as supergcn's plateau schedule: relative threshold, smallest reduction.
PLATEAU_THRESHOLD, PLATEAU_EPS = 1e-4, 1e-8


class Loop:
    """supergcn's learning-rate schedule and early stopping (train/schedule.go)."""

    def __init__(self, a):
        self.a = a
        self.lr = a.lr  # the next epoch's (plateau: the current rate)
        self.plateau_best, self.plateau_seen, self.plateau_bad = 0.0, False, 0
        self.patience_bad, self.stopped_early = 0, 0
        self.best_acc = -math.inf  # best validation metric on the evaluation grid (regression: its negative)

    def lr_at(self, e):
        a = self.a
        if a.lr_schedule == "step":
            return a.lr * a.lr_gamma ** ((e - 1) // a.lr_step_size)
        if a.lr_schedule == "cosine":
            return a.lr_min + (a.lr - a.lr_min) * (1 + math.cos(math.pi * (e - 1) / max(a.epochs, 1))) / 2
        if a.lr_schedule == "plateau":
            return self.lr
        return a.lr

    def advance(self, epoch, evaluated, val_acc, val_loss):
        """Takes an epoch into early stopping and the plateau schedule (its
        evaluation when on the --eval-every grid), then sets the next epoch's rate."""
        a = self.a
        if evaluated and (a.eval_every <= 1 or epoch % a.eval_every == 0):
            if val_acc > self.best_acc:
                self.best_acc, self.patience_bad = val_acc, 0
            else:
                self.patience_bad += 1
            if a.patience > 0 and self.patience_bad >= a.patience:
                self.stopped_early = epoch
            if a.lr_schedule == "plateau":
                if not self.plateau_seen or val_loss < self.plateau_best * (1 - PLATEAU_THRESHOLD):
                    self.plateau_best, self.plateau_seen, self.plateau_bad = val_loss, True, 0
                else:
                    self.plateau_bad += 1
                if self.plateau_bad > a.lr_plateau_patience:
                    lr = max(self.lr * a.lr_gamma, a.lr_min)
                    if self.lr - lr > PLATEAU_EPS:
                        self.lr = lr
                    self.plateau_bad = 0
        self.lr = self.lr_at(epoch + 1)

    def state(self):
        return {k: getattr(self, k) for k in ("lr", "plateau_best", "plateau_seen", "plateau_bad", "patience_bad",
                                              "stopped_early", "best_acc")}


def check_loop(a):
    """supergcn's checks of the schedule and early-stopping flags (train.LoopSettings.check), in one line each."""
    uses = a.lr_schedule
    if a.patience < 0:
        raise SystemExit(f"--patience: {a.patience}, need ≥ 0 (0: no early stopping)")
    if a.lr_step_size < 0 or (uses == "step" and a.lr_step_size < 1):
        raise SystemExit(f"--lr-step-size: {a.lr_step_size}, need ≥ 1 epoch")
    if not 0 < a.lr_gamma <= 1 and (uses in ("step", "plateau") or a.lr_gamma != 0):
        raise SystemExit(f"--lr-gamma: {a.lr_gamma:g} is not in (0, 1]")
    if not (a.lr_min >= 0) or math.isinf(a.lr_min):
        raise SystemExit(f"--lr-min: {a.lr_min:g}, need a finite value ≥ 0")
    if uses in ("cosine", "plateau") and a.lr_min > a.lr:
        raise SystemExit(f"--lr-min: {a.lr_min:g} is above the initial learning rate --lr {a.lr:g}")
    if a.lr_plateau_patience < 0:
        raise SystemExit(f"--lr-plateau-patience: {a.lr_plateau_patience}, need ≥ 0")


def probe_paths(a):
    """Fails at once, in one line, on a --resume file that is missing or a --save path that cannot be written."""
    if a.resume and not os.path.isfile(a.resume):
        raise SystemExit(f"--resume {a.resume}: no such file")
    if a.save:
        try:
            with open(a.save + ".tmp", "wb"):
                pass
            os.remove(a.save + ".tmp")
        except OSError as e:
            raise SystemExit(f"--save {a.save}: {e.strerror or e}")


def save(a, model, opt, epoch, times, best, loop):
    """Writes the checkpoint atomically (a temporary file renamed over --save)."""
    tmp = a.save + ".tmp"
    torch.save({"epoch": epoch, "model": model.state_dict(), "opt": opt.state_dict(), "rng": torch.get_rng_state(),
                "times": times, "best": best, "flags": {k: getattr(a, k) for k in CHECKED},
                "gat_hidden_per_head": True, "loop": loop.state()}, tmp)
    os.replace(tmp, a.save)


def resume(a, model, opt, loop):
    """Loads --resume into model, opt and loop; returns the next epoch, the epoch times and the best so far."""
    try:
        ck = torch.load(a.resume, weights_only=False)
        flags, epoch = ck["flags"], ck["epoch"]
    except Exception as e:  # noqa: BLE001 - any unreadable file is one error line
        raise SystemExit(f"{a.resume}: not a train_torch.py checkpoint ({e})")
    if flags.get("model") in ("gat", "gatv2") and "gat_hidden_per_head" not in ck:  # older files: --hidden was all heads'
        flags["hidden"] = flags.get("hidden", 0) // max(flags.get("heads", 1), 1)
    own = {h.replace("-", "_"): v for h, v in HYPERS.get(flags.get("model"), {}).items()}
    for k in CHECKED:
        saved = flags.get(k, own.get(k, LOOP_DEFAULTS.get(k)))
        if k in ("k", "alpha") and saved == 0:  # older files: 0 was the model's default
            saved = own.get(k, 0)
        if saved != getattr(a, k):
            raise SystemExit(f"{a.resume}: saved with --{k.replace('_', '-')} {saved}, given {getattr(a, k)}")
    if epoch >= a.epochs:
        raise SystemExit(f"{a.resume}: already {epoch} epochs; --epochs {a.epochs} leaves nothing to train")
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    torch.set_rng_state(ck["rng"])
    for k, v in ck.get("loop", {}).items():
        setattr(loop, k, v)
    if "loop" not in ck:  # older files: no schedule, so the rate is --lr; the grid's best from the record
        loop.best_acc = ck["best"][0]
    print(f"resuming from {a.resume} after epoch {epoch} of {a.epochs}", flush=True)
    return epoch + 1, list(ck["times"]), tuple(ck["best"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="supergcn binary dataset (.sgb)")
    ap.add_argument("--features", default="", help="sparse features replacing the dataset's: a scipy.sparse.save_npz .npz")
    ap.add_argument("--model", choices=list(MODELS), default="gcn")
    ap.add_argument("--layers", type=int, default=0, help="default: the model's (1 for sgc, else 2)")
    ap.add_argument("--decay-all", action="store_true", help="weight decay on every parameter")
    ap.add_argument("--feat-norm", choices=["none", "row"], default="none",
                    help="row: divide each feature row by its L1 norm (supergcn's --feat-norm row)")
    ap.add_argument("--list-models", action="store_true", help="print the model names and exit")
    ap.add_argument("--edge-split", default="", help="--task link: TRAIN,VALID,TEST[:SEED] fractions of the undirected edges")
    ap.add_argument("--edge-split-files", default="", help="--task link: directory of fixed split files, as supergcn's flag "
                    "(train/valid/test .npz with OGB's keys, or .npy/.csv[.gz] pairs with NAME_neg negatives)")
    ap.add_argument("--decoder", choices=["dot", "mlp"], default="dot",
                    help="--task link: dot product, or Hadamard product through Linear(H,H), ReLU, Linear(H,1) (supergcn's --decoder)")
    ap.add_argument("--link-metric", default="auto", help="--task link: auto|rocauc|mrr|hitsK, the metric picking the best epoch")
    ap.add_argument("--task", choices=["node", "multilabel", "regression", "link"], default="node",
                    help="training objective, as supergcn's --task (docs/TASKS.md)")
    ap.add_argument("--targets", default="", help="multilabel/regression: the N×T (or N) target table, .npy or .npz (array y)")
    ap.add_argument("--list-hypers", action="store_true", help="print the declared hyperparameters (name=default) and exit")
    hyper_flags(ap)
    ap.add_argument("--heads", type=int, default=8, help="gat: heads of the hidden layers (concatenated)")
    ap.add_argument("--out-heads", type=int, default=1, help="gat: heads of the output layer (averaged)")
    ap.add_argument("--attn-dropout", type=float, default=0.6, help="gat: dropout on the attention coefficients")
    ap.add_argument("--hidden", type=int, default=128,
                    help="hidden width (gat: per head, PyG GATConv's out_channels; a layer is --hidden × --heads wide)")
    ap.add_argument("--norm", choices=["none", "layer", "batch"], default="none")
    ap.add_argument("--jk", choices=["none", "cat", "max", "last"], default="none", help="jumping knowledge (supergcn's --jk)")
    ap.add_argument("--residual", action="store_true", help="residual connections (supergcn's --residual)")
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=1, help="evaluate every N epochs and after the last")
    ap.add_argument("--patience", type=int, default=0,
                    help="early stopping: stop after N evaluated epochs without a better validation accuracy (0: none)")
    ap.add_argument("--lr-schedule", choices=["none", "step", "cosine", "plateau"], default="none",
                    help="learning rate per epoch, as supergcn train's: step (StepLR), cosine (CosineAnnealingLR, "
                         "T_max = --epochs), plateau (ReduceLROnPlateau on the validation loss)")
    ap.add_argument("--lr-step-size", type=int, default=50, help="step: epochs between reductions")
    ap.add_argument("--lr-gamma", type=float, default=0.1, help="step, plateau: the factor of each reduction, in (0, 1]")
    ap.add_argument("--lr-min", type=float, default=0.0, help="cosine: the rate it anneals to; plateau: the lowest rate")
    ap.add_argument("--lr-plateau-patience", type=int, default=10,
                    help="plateau: evaluations without a lower validation loss tolerated; one more reduces the rate")
    ap.add_argument("--save", default="", help="checkpoint FILE (written after every --save-every epochs and the last)")
    ap.add_argument("--save-every", type=int, default=0, help="checkpoint every N epochs (0: only after the last)")
    ap.add_argument("--resume", default="", help="continue the training saved in checkpoint FILE up to --epochs")
    ap.add_argument("--device", default="cpu",
                    help="cpu, or cuda[:N]: the node task with dense features on a GPU (the CPU-vs-GPU comparison)")
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="bf16: the model runs under torch.autocast(cpu, bfloat16) (PyTorch's mixed precision: "
                         "matrix products in bfloat16), the aggregation in float32")
    a = ap.parse_args()
    if a.list_models:
        print(" ".join(MODELS))
        return
    if a.list_hypers:
        print(" ".join(f"{m}.{h}={float(v):g}" for m in MODELS for h, v in HYPERS.get(m, {}).items()))
        return
    hyper_defaults(a)
    a.layers = a.layers or MODELS[a.model][2]
    if a.task == "link" and bool(a.edge_split) == bool(a.edge_split_files):
        raise SystemExit("--task link needs --edge-split TRAIN,VALID,TEST[:SEED] or --edge-split-files DIR")
    if a.task in ("multilabel", "regression") and not a.targets or a.task in ("node", "link") and a.targets:
        raise SystemExit("--targets FILE.npy|.npz goes with --task multilabel or regression (and only with them)")
    if a.epochs < 1 or a.eval_every < 1 or a.save_every < 0:
        raise SystemExit("--epochs and --eval-every must be ≥ 1, --save-every ≥ 0")
    check_loop(a)
    probe_paths(a)
    if a.device != "cpu" and (a.task != "node" or a.features or a.precision != "fp32"):
        raise SystemExit("--device cuda: the node task, dense features, fp32")
    if a.device != "cpu" and not torch.cuda.is_available():
        raise SystemExit(f"--device {a.device}: torch sees no GPU")
    warnings.filterwarnings("ignore", message=".*(non-writable|Sparse CSR tensor support is in beta).*")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    t0 = time.perf_counter()
    try:
        d = sgb.load(a.data)
    except OSError as e:
        raise SystemExit(f"{a.data}: {e.strerror or e}")
    if (d["x"] is None and d["x_sparse"] is None and not a.features) or d["labels"] is None:
        raise SystemExit(f"{a.data}: needs features and labels")
    if a.task == "link":
        if a.edge_split_files:
            d["edge_split_files"] = a.edge_split_files
            parts = split_edge_files(d)
        else:
            parts = [(p.numpy(), None, None) for p in split_edges(d, a.edge_split)]
        per_source = parts[1][2] is not None
        metric = a.link_metric if a.link_metric != "auto" else ("mrr" if per_source else "rocauc")
        gen = torch.Generator().manual_seed(a.seed + 1000)
        fixed = []
        for i, (pos, neg, tneg) in enumerate(parts):
            if i == 0 or (neg is None and tneg is None):  # one fixed negative (u, w) per positive (u, v)
                w = torch.randint(d["nodes"], (len(pos),), generator=gen).numpy()
                neg, tneg = (None, w.reshape(-1, 1)) if per_source else (np.stack([pos[:, 0], w], 1), None)
            fixed.append((neg, tneg))
        esplit = [torch.from_numpy(p[0]) for p in parts]
    op = MODELS[a.model][0]
    A, AT = (edges(d), None) if op == "gat" else (in_edges(d), None) if op == "max" else operators(d, op)
    if a.features or d["x_sparse"] is not None:
        if a.precision != "fp32":
            raise SystemExit("sparse features train in fp32 only")
        if a.features:
            x = SparseX.load(a.features, d["nodes"])
        else:
            ptr, idx, val = d["x_sparse"]
            rows = np.repeat(np.arange(d["nodes"], dtype=np.int64), np.diff(ptr))
            x = SparseX(rows, np.asarray(idx, dtype=np.int64), np.array(val, dtype=np.float32), (d["nodes"], d["featdim"]))
        d["featdim"] = x.shape[1]
        if x.shape[1] < a.hidden:
            raise SystemExit(f"--features: {x.shape[1]} columns, narrower than --hidden: give them dense")
        if a.feat_norm == "row":
            x.row_normalize()
    else:
        x = torch.from_numpy(np.array(d["x"], dtype=np.float32))
        if a.feat_norm == "row":
            s = x.abs().double().sum(1, keepdim=True)
            x = torch.where(s > 0, x / s.float().clamp_min(1e-38), x)
    y = torch.from_numpy(np.array(d["labels"], dtype=np.int64))
    split = {s: torch.from_numpy(np.array(d[s], dtype=np.int64)) for s in ("train", "valid", "test")}
    if a.task == "node":
        split = {s: v[y[v] >= 0] for s, v in split.items()}
        classes = max(int(d["classes"]), int(y.max()) + 1)
    elif a.task == "link":
        classes = a.hidden
    else:
        yt = np.load(a.targets, allow_pickle=False)
        if a.targets.endswith(".npz"):  # as supergcn: the array y, node_label, or the only one
            keys = [k for k in ("y", "node_label") if k in yt] or list(yt.keys())
            yt = yt[keys[0]]
        yt = torch.from_numpy(yt.astype(np.float32).reshape(d["nodes"], -1))
        has = ~torch.isnan(yt).all(1)
        split = {s: v[has[v]] for s, v in split.items()}
        classes = yt.shape[1]
    decoder = []
    if a.model == "gcnii":
        if a.task == "link" and a.decoder == "mlp":
            raise SystemExit("--decoder mlp: with the pipeline models (not gcnii)")
        model = GCNII(a.layers, d["featdim"], a.hidden, classes, a.dropout, a)
        opt = torch.optim.Adam(model.groups(a), lr=a.lr)
    else:
        width = a.hidden * a.heads if MODELS[a.model][0] == "gat" else a.hidden  # the hidden layers' width
        model = Model(a.model, a.layers, d["featdim"], width, classes, a.dropout, a.norm, a)
        first = list(model.parameters()) if a.decay_all else model.first
        rest = [p for p in model.parameters() if all(p is not f for f in first)]
        if a.task == "link" and a.decoder == "mlp":  # torch.nn.Linear's initialisation, as supergcn's
            dec = torch.nn.Sequential(torch.nn.Linear(a.hidden, a.hidden), torch.nn.ReLU(), torch.nn.Linear(a.hidden, 1))
            decoder = list(dec.parameters())
            (first if a.decay_all else rest).extend(decoder)
        opt = torch.optim.Adam([{"params": first, "weight_decay": a.weight_decay},
                                {"params": rest, "weight_decay": 0.0}], lr=a.lr)
    if a.device != "cpu":
        dev = torch.device(a.device)
        A = tuple(t.to(dev) if torch.is_tensor(t) else t for t in A) if isinstance(A, tuple) else A.to(dev)
        AT, x, y = AT.to(dev) if AT is not None else None, x.to(dev), y.to(dev)
        split = {s: v.to(dev) for s, v in split.items()}
        model.to(dev)  # the parameters keep their identity: the optimiser holds them
    entries = len(A[0]) if op in ("gat", "max") else A._nnz()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {d['nodes']} nodes, {entries} operator entries, "
          f"{a.model} {a.layers}×{a.hidden} norm {a.norm}; load+setup {time.perf_counter()-t0:.1f}s", flush=True)

    if len(split["valid"]) == 0 and (a.patience > 0 or a.lr_schedule == "plateau"):
        raise SystemExit(f"{a.data}: no labelled validation nodes for --patience or --lr-schedule plateau to watch")
    times, best, start = [], (-1.0 if a.task != "regression" else math.inf, 0.0, 0), 1
    better = (lambda u, b: u < b) if a.task == "regression" else (lambda u, b: u > b)
    loop = Loop(a)
    if a.resume:
        start, times, best = resume(a, model, opt, loop)
    for epoch in range(start, a.epochs + 1):
        t = time.perf_counter()
        for g in opt.param_groups:
            g["lr"] = loop.lr
        model.train()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            out = model(A, AT, x)
        if a.task == "node":
            loss = F.cross_entropy(out[split["train"]].float(), y[split["train"]])
        elif a.task == "link":
            p = esplit[0]
            neg = torch.stack([p[:, 0], torch.randint(d["nodes"], (len(p),))], 1)
            pairs = torch.cat([p, neg])
            prod = out[pairs[:, 0]] * out[pairs[:, 1]]
            score = (dec(prod).squeeze(1) if decoder else prod.sum(1)).float()
            loss = F.binary_cross_entropy_with_logits(score, torch.cat([torch.ones(len(p)), torch.zeros(len(neg))]))
        else:
            loss = task_loss(a.task, out, yt, split["train"])
        loss.backward()
        opt.step()
        del out
        line = f"epoch {epoch} loss {loss.item():.4f}"
        if a.lr_schedule != "none":
            line += f" lr {loop.lr!r}"
        evaluated = epoch % a.eval_every == 0 or epoch == a.epochs
        val_loss = 0.0
        if evaluated:
            model.eval()
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
                out = model(A, AT, x)
                if a.task == "node" and len(split["valid"]):
                    val_loss = F.cross_entropy(out.float()[split["valid"]], y[split["valid"]]).item()
            if a.task == "link":
                h = out.float()

                def score(p):
                    p = torch.from_numpy(p)
                    prod = h[p[:, 0]] * h[p[:, 1]]
                    return (dec(prod).squeeze(1) if decoder else prod.sum(1)).detach().double().numpy()
                scored = {s: link_metrics(score, parts[i][0], *fixed[i], metric) for i, s in enumerate(("train", "valid", "test"))}
                acc = {s: m for s, (m, _) in scored.items()}
                line += "".join(f" {s}_{k} {x:.4f}" for s, (_, e) in scored.items() for k, x in e.items())
            elif a.task == "node":
                pred = out.argmax(1)
                acc = {s: (pred[v] == y[v]).float().mean().item() if len(v) else 0.0 for s, v in split.items()}
            else:
                scored = {s: task_metrics(a.task, out.float(), yt, v) for s, v in split.items()}
                acc = {s: m for s, (m, _) in scored.items()}
                line += "".join(f" {s}_{k} {x:.4f}" for s, (_, e) in scored.items() for k, x in e.items())
            if better(acc["valid"], best[0]):
                best = (acc["valid"], acc["test"], epoch)
            line += f" train {acc['train']:.4f} valid {acc['valid']:.4f} test {acc['test']:.4f} val_loss {val_loss!r}"
        watched = (-acc["valid"] if a.task == "regression" else acc["valid"]) if evaluated else 0.0  # Loop keeps the highest
        loop.advance(epoch, evaluated, watched, val_loss)
        if a.device != "cpu":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t
        times.append(dt)
        print(f"{line} epoch_s {dt:.3f}", flush=True)
        last = epoch == a.epochs or loop.stopped_early == epoch
        if a.save and (last or (a.save_every and epoch % a.save_every == 0)):
            save(a, model, opt, epoch, times, best, loop)
        if loop.stopped_early == epoch:
            print(f"stopped early after epoch {epoch}: {a.patience} evaluations without a better validation accuracy",
                  flush=True)
            break
    sel = times[1:5] if len(times) >= 5 else times[1:] or times
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"impl": "pytorch", "task": a.task, "torch": torch.__version__, "precision": a.precision, "model": a.model, "layers": a.layers,
                      "hidden": a.hidden, "norm": a.norm, "threads": a.threads, "nodes": d["nodes"],
                      "params": sum(p.numel() for p in model.parameters()) + sum(p.numel() for p in decoder),
                      "epoch_s": times, "median_epoch_s": statistics.median(sel), "peak_rss_bytes": rss,
                      **({"device": a.device, "peak_gpu_bytes": torch.cuda.max_memory_allocated()} if a.device != "cpu" else {}),
                      "best_val": best[0], "test_at_best_val": best[1], "best_epoch": best[2], "last_test": acc["test"],
                      **({"stopped_early": loop.stopped_early, "patience": a.patience} if loop.stopped_early else {})}))


if __name__ == "__main__":
    try:
        main()
    except torch.cuda.OutOfMemoryError:  # the GPU row of a model that does not fit: a summary that says so
        ap = argparse.ArgumentParser(add_help=False)
        ap.add_argument("--model", default="gcn")
        ap.add_argument("--device", default="cpu")
        k, _ = ap.parse_known_args()
        print(json.dumps({"impl": "pytorch", "model": k.model, "device": k.device, "error": "out of memory"}), flush=True)
        sys.exit(3)
