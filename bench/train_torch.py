#!/usr/bin/env python3
"""Plain-PyTorch full-batch trainer: the supergcn models on a supergcn .sgb
graph, timed with supergcn's epoch definition, for a reproducible comparison.

Models (as nn/ builds them, PyG's example architecture):
  x → dropout → for each hidden layer: conv → [LayerNorm or BatchNorm1d] → ReLU → dropout → conv → logits
  gcn:   conv(X) = Â·X·W + b,  Â = D^-½(A+I)D^-½, d = in-degree + 1
  sage:  conv(X) = mean(X)·W_l + X·W_r + b, mean = D^-1·A (d = in-degree)
  gin:   conv(X) = ReLU(((1+ε)·X + A·X)·W₁ + b₁)·W₂ + b₂, A the plain sum, ε 0 (learned with --train-eps)
  sgc:   conv(X) = Â^K·X·W + b (K = --k, default 2; one layer by default)
  appnp: conv(X) = X·W + b, and in the last layer K steps Z ← (1-α)·Â·Z + α·H (--k 10, --alpha 0.1)
  gcnii: its own body (not the pipeline): x → dropout → Linear → ReLU = H⁰, then per layer l
         dropout, S = (1-α)·Â·H + α·H⁰, H = ReLU((1-β)·S + β·S·W), β = ln(θ/l + 1), then dropout
         → Linear (PyG's GCN2Conv example; the convolutions' weights decayed at --conv-decay,
         the linear layers' parameters at --weight-decay)
  gat:   multi-head graph attention (PyG GATConv: one self-loop per node, LeakyReLU 0.2,
         softmax over in-edges, attention dropout); hidden layers concatenate --heads heads of
         hidden/heads each, the output layer averages --out-heads heads
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
--eval-every N evaluates only every N-th epoch (and the last), as supergcn's
flag; the best validation epoch is chosen among the evaluated ones.
--save FILE [--save-every N] writes a checkpoint (model, Adam state, random
generator, epoch, best so far) after every N-th epoch and the last;
--resume FILE continues it up to --epochs with the same model flags, and the
continued run prints what the uninterrupted one would (one thread: the same
numbers).

  python3 bench/train_torch.py --data g.sgb --model sage --layers 3 --hidden 256 --norm layer --threads 16
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
            m = torch.full((n, self.h), -math.inf).scatter_reduce(0, dst[:, None].expand(-1, self.h), e, "amax")
        p = torch.exp(e - m[dst])
        alpha = p / torch.zeros(n, self.h).index_add(0, dst, p)[dst]
        alpha = F.dropout(alpha, self.p, self.training)
        out = torch.zeros(n, self.h, self.f).index_add(0, dst, alpha[:, :, None] * z[src])
        out = out.reshape(n, self.h * self.f) if self.concat else out.mean(1)
        return out + self.b


class GAT(torch.nn.Module):
    """A GAT layer in the model table's shape: hidden layers concatenate --heads heads of
    fout/heads columns, the output layer averages --out-heads heads of fout columns."""

    def __init__(self, kind, fin, fout, hidden, last, o):
        super().__init__()
        if last:
            self.conv = GATConv(fin, o.out_heads, fout, False, o.attn_dropout)
        else:
            self.conv = GATConv(fin, o.heads, fout // o.heads, True, o.attn_dropout)
        self.first = [self.conv.w]

    def forward(self, g, at, x):
        return self.conv(g, at, x)


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
        self.fin, self.fout, self.k = fin, fout, o.k or 2
        self.w, self.b = linear(fin, fout)
        self.first = [self.w]

    def forward(self, a, at, x):
        if self.fout <= self.fin:
            return steps(a, at, x @ self.w, self.k) + self.b
        return steps(a, at, x, self.k) @ self.w + self.b


class APPNP(torch.nn.Module):
    def __init__(self, kind, fin, fout, hidden, last, o):
        super().__init__()
        self.k = (o.k or 10) if last else 0
        self.alpha = o.alpha or 0.1
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
        self.alpha, self.theta, self.p = o.alpha or 0.1, o.theta, dropout

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
    "gin": ("sum", GIN, 2),
    "sgc": ("gcn", SGC, 1),
    "appnp": ("gcn", APPNP, 2),
    "gat": ("gat", GAT, 2),
    "gcnii": ("gcn", GCNII, 64),
}

# The hyperparameters the models of nn's table declare beyond the shared flags (nn.Hypers():
# name → default; cmd/supergcn's bench_py_test checks them against the declarations).
HYPERS = {"theta": 0.5, "conv-decay": 0.01}


class Model(torch.nn.Module):
    """The pipeline; with --jk (PyG's BasicGNN jk) every conv is hidden wide and followed by
    norm → ReLU → dropout, the outputs combined (cat, max, last) and mapped by a Linear."""

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
        self.p = dropout

    def forward(self, a, at, x):
        h = F.dropout(x, self.p, self.training)
        xs = []
        for i, c in enumerate(self.convs):
            h = c(a, at, h)
            if i < len(self.convs) - 1 or self.jk:
                h = F.dropout(F.relu(self.norms[i](h)), self.p, self.training)
                xs.append(h)
        if not self.jk:
            return h
        z = torch.cat(xs, 1) if self.jk == "cat" else torch.stack(xs).max(0)[0] if self.jk == "max" else xs[-1]
        return z @ self.lin_w + self.lin_b


# The flags a checkpoint's training depends on; --resume refuses others.
CHECKED = ("model", "layers", "k", "alpha", "train_eps", "decay_all", "feat_norm", "heads", "out_heads",
           "attn_dropout", "hidden", "norm", "jk", "dropout", "lr", "weight_decay", "seed", "precision", "eval_every") + \
    tuple(h.replace("-", "_") for h in HYPERS)


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


def save(a, model, opt, epoch, times, best):
    """Writes the checkpoint atomically (a temporary file renamed over --save)."""
    tmp = a.save + ".tmp"
    torch.save({"epoch": epoch, "model": model.state_dict(), "opt": opt.state_dict(), "rng": torch.get_rng_state(),
                "times": times, "best": best, "flags": {k: getattr(a, k) for k in CHECKED}}, tmp)
    os.replace(tmp, a.save)


def resume(a, model, opt):
    """Loads --resume into model and opt; returns the next epoch, the epoch times and the best so far."""
    try:
        ck = torch.load(a.resume, weights_only=False)
        flags, epoch = ck["flags"], ck["epoch"]
    except Exception as e:  # noqa: BLE001 - any unreadable file is one error line
        raise SystemExit(f"{a.resume}: not a train_torch.py checkpoint ({e})")
    for k in CHECKED:
        if flags.get(k) != getattr(a, k):
            raise SystemExit(f"{a.resume}: saved with --{k.replace('_', '-')} {flags.get(k)}, given {getattr(a, k)}")
    if epoch >= a.epochs:
        raise SystemExit(f"{a.resume}: already {epoch} epochs; --epochs {a.epochs} leaves nothing to train")
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    torch.set_rng_state(ck["rng"])
    print(f"resuming from {a.resume} after epoch {epoch} of {a.epochs}", flush=True)
    return epoch + 1, list(ck["times"]), tuple(ck["best"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="supergcn binary dataset (.sgb)")
    ap.add_argument("--model", choices=list(MODELS), default="gcn")
    ap.add_argument("--layers", type=int, default=0, help="default: the model's (1 for sgc, else 2)")
    ap.add_argument("--k", type=int, default=0, help="propagation steps (sgc: 2, appnp: 10)")
    ap.add_argument("--alpha", type=float, default=0, help="appnp's teleport probability (default 0.1)")
    ap.add_argument("--train-eps", action="store_true", help="gin: learn ε")
    ap.add_argument("--decay-all", action="store_true", help="weight decay on every parameter")
    ap.add_argument("--feat-norm", choices=["none", "row"], default="none",
                    help="row: divide each feature row by its L1 norm (supergcn's --feat-norm row)")
    ap.add_argument("--list-models", action="store_true", help="print the model names and exit")
    ap.add_argument("--list-hypers", action="store_true", help="print the declared hyperparameters (name=default) and exit")
    for h, v in HYPERS.items():
        ap.add_argument("--" + h, type=float, default=v, help=f"(default {v}; see supergcn train --help)")
    ap.add_argument("--heads", type=int, default=8, help="gat: heads of the hidden layers (concatenated)")
    ap.add_argument("--out-heads", type=int, default=1, help="gat: heads of the output layer (averaged)")
    ap.add_argument("--attn-dropout", type=float, default=0.6, help="gat: dropout on the attention coefficients")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--norm", choices=["none", "layer", "batch"], default="none")
    ap.add_argument("--jk", choices=["none", "cat", "max", "last"], default="none", help="jumping knowledge (supergcn's --jk)")
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=int, default=1, help="evaluate every N epochs and after the last")
    ap.add_argument("--save", default="", help="checkpoint FILE (written after every --save-every epochs and the last)")
    ap.add_argument("--save-every", type=int, default=0, help="checkpoint every N epochs (0: only after the last)")
    ap.add_argument("--resume", default="", help="continue the training saved in checkpoint FILE up to --epochs")
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                    help="bf16: the model runs under torch.autocast(cpu, bfloat16) (PyTorch's mixed precision: "
                         "matrix products in bfloat16), the aggregation in float32")
    a = ap.parse_args()
    if a.list_models:
        print(" ".join(MODELS))
        return
    if a.list_hypers:
        print(" ".join(f"{h}={v:g}" for h, v in HYPERS.items()))
        return
    a.layers = a.layers or MODELS[a.model][2]
    if a.epochs < 1 or a.eval_every < 1 or a.save_every < 0:
        raise SystemExit("--epochs and --eval-every must be ≥ 1, --save-every ≥ 0")
    probe_paths(a)
    warnings.filterwarnings("ignore", message=".*(non-writable|Sparse CSR tensor support is in beta).*")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    t0 = time.perf_counter()
    try:
        d = sgb.load(a.data)
    except OSError as e:
        raise SystemExit(f"{a.data}: {e.strerror or e}")
    if d["x"] is None or d["labels"] is None:
        raise SystemExit(f"{a.data}: needs features and labels")
    A, AT = (edges(d), None) if MODELS[a.model][0] == "gat" else operators(d, MODELS[a.model][0])
    x = torch.from_numpy(np.array(d["x"], dtype=np.float32))
    if a.feat_norm == "row":
        s = x.abs().double().sum(1, keepdim=True)
        x = torch.where(s > 0, x / s.float().clamp_min(1e-38), x)
    y = torch.from_numpy(np.array(d["labels"], dtype=np.int64))
    split = {s: torch.from_numpy(np.array(d[s], dtype=np.int64)) for s in ("train", "valid", "test")}
    split = {s: v[y[v] >= 0] for s, v in split.items()}
    classes = max(int(d["classes"]), int(y.max()) + 1)
    if a.model == "gcnii":
        model = GCNII(a.layers, d["featdim"], a.hidden, classes, a.dropout, a)
        opt = torch.optim.Adam(model.groups(a), lr=a.lr)
    else:
        model = Model(a.model, a.layers, d["featdim"], a.hidden, classes, a.dropout, a.norm, a)
        first = list(model.parameters()) if a.decay_all else model.convs[0].first
        rest = [p for p in model.parameters() if all(p is not f for f in first)]
        opt = torch.optim.Adam([{"params": first, "weight_decay": a.weight_decay},
                                {"params": rest, "weight_decay": 0.0}], lr=a.lr)
    entries = len(A[0]) if a.model == "gat" else A._nnz()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {d['nodes']} nodes, {entries} operator entries, "
          f"{a.model} {a.layers}×{a.hidden} norm {a.norm}; load+setup {time.perf_counter()-t0:.1f}s", flush=True)

    times, best, start = [], (-1.0, 0.0, 0), 1
    if a.resume:
        start, times, best = resume(a, model, opt)
    for epoch in range(start, a.epochs + 1):
        t = time.perf_counter()
        model.train()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            out = model(A, AT, x)
        loss = F.cross_entropy(out[split["train"]].float(), y[split["train"]])
        loss.backward()
        opt.step()
        del out
        line = f"epoch {epoch} loss {loss.item():.4f}"
        if epoch % a.eval_every == 0 or epoch == a.epochs:
            model.eval()
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
                pred = model(A, AT, x).argmax(1)
                acc = {s: (pred[v] == y[v]).float().mean().item() if len(v) else 0.0 for s, v in split.items()}
            if acc["valid"] > best[0]:
                best = (acc["valid"], acc["test"], epoch)
            line += f" train {acc['train']:.4f} valid {acc['valid']:.4f} test {acc['test']:.4f}"
        dt = time.perf_counter() - t
        times.append(dt)
        print(f"{line} epoch_s {dt:.3f}", flush=True)
        if a.save and (epoch == a.epochs or (a.save_every and epoch % a.save_every == 0)):
            save(a, model, opt, epoch, times, best)
    sel = times[1:5] if len(times) >= 5 else times[1:] or times
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"impl": "pytorch", "torch": torch.__version__, "precision": a.precision, "model": a.model, "layers": a.layers,
                      "hidden": a.hidden, "norm": a.norm, "threads": a.threads, "nodes": d["nodes"],
                      "epoch_s": times, "median_epoch_s": statistics.median(sel), "peak_rss_bytes": rss,
                      "best_val": best[0], "test_at_best_val": best[1], "best_epoch": best[2], "last_test": acc["test"]}))


if __name__ == "__main__":
    main()
