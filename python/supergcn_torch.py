"""Run a model exported by `supergcn export` in plain PyTorch.

Needs numpy and torch only (no torch_geometric): the layers below compute
what supergcn's do, with the parameter names and layouts of the matching
PyG modules (docs/MODELS.md), so the same state dict also loads into
torch_geometric models built from the metadata.

    import supergcn_torch as sg
    model, meta = sg.load("model.safetensors")          # or .npz
    x = sg.normalize_features(x, meta["feat_norm"])      # as training did
    ei, ew = sg.clean_edge_index(edge_index, x.shape[0]) # supergcn's defaults
    logits = model(torch.from_numpy(x), torch.from_numpy(ei), ew)

Command line (writes the logits as .npy, N x classes float32):

    python3 supergcn_torch.py model.safetensors --ogb DATASET_DIR --out logits.npy
    python3 supergcn_torch.py model.npz --features x.npy --edges edge_index.npy --out logits.npy

Graph conventions (supergcn's): edge_index is 2 x E, row 0 the source u,
row 1 the destination v; a layer aggregates x_u into v (PyG's
flow="source_to_target"). supergcn cleans --data by default: duplicate
edges and self-loops dropped, every reverse edge added (weights merged by
maximum); clean_edge_index does the same (give undirected=False or
dedup=False for a model trained with --undirected=false or --dedup=false).
"""

import argparse
import json
import math
import struct
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["read_tensors", "load", "build_model", "clean_edge_index",
           "normalize_features", "SuperGCN", "Graph"]


# ---------------------------------------------------------------- files

_ST_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16}


def read_safetensors(path):
    """Tensors (name -> float32 numpy array) and metadata of a safetensors file."""
    with open(path, "rb") as f:
        b = f.read()
    (n,) = struct.unpack("<Q", b[:8])
    header = json.loads(b[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    data = b[8 + n:]
    out = {}
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        dt = _ST_DTYPES.get(e["dtype"])
        if dt is None:
            raise ValueError("%s: tensor %s: dtype %s is not supported" % (path, name, e["dtype"]))
        lo, hi = e["data_offsets"]
        a = np.frombuffer(data[lo:hi], dtype=np.dtype(dt).newbyteorder("<"))
        out[name] = a.reshape(e["shape"]).astype(np.float32)
    return out, meta


def read_npz(path):
    """Tensors and metadata of an npz written by supergcn export."""
    z = np.load(path, allow_pickle=False)
    meta = {}
    out = {}
    for name in z.files:
        if name == "__metadata__":
            meta = json.loads(str(z[name]))
        else:
            out[name] = np.asarray(z[name], dtype=np.float32)
    return out, meta


def read_tensors(path):
    """Tensors and metadata of a .safetensors or .npz file."""
    if path.endswith(".safetensors"):
        return read_safetensors(path)
    if path.endswith(".npz"):
        return read_npz(path)
    raise ValueError("%s: not a .safetensors or .npz file" % path)


# ---------------------------------------------------------------- input

def normalize_features(x, feat_norm):
    """supergcn's --feat-norm: "row" divides each row by its L1 norm (all-zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    if feat_norm in (None, "", "none"):
        return x
    if feat_norm != "row":
        raise ValueError("feat_norm %r is not none or row" % feat_norm)
    s = np.abs(x.astype(np.float64)).sum(axis=1).astype(np.float32)
    s[s == 0] = 1
    return x / s[:, None]


def _merge_max(src, dst, w, n):
    """Unique (src, dst) pairs, sorted by (dst, src); duplicate weights merge by maximum."""
    key = dst.astype(np.int64) * n + src.astype(np.int64)
    order = np.argsort(key, kind="stable")
    key = key[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    starts = np.nonzero(first)[0]
    uk = key[starts]
    nw = None
    if w is not None and len(starts) > 0:
        nw = np.maximum.reduceat(w[order], starts).astype(np.float32)
    elif w is not None:
        nw = np.zeros(0, dtype=np.float32)
    return uk % n, uk // n, nw


def clean_edge_index(edge_index, num_nodes, edge_weight=None, undirected=True, dedup=True):
    """The graph supergcn trains on by default: without self-loops and duplicate
    edges (dedup), with every reverse edge (undirected); weights merged by maximum.
    Returns (edge_index int64 2 x E numpy, edge_weight float32 numpy or None)."""
    ei = np.asarray(edge_index, dtype=np.int64)
    src, dst = ei[0], ei[1]
    w = None if edge_weight is None else np.asarray(edge_weight, dtype=np.float32)
    if dedup:
        keep = src != dst
        src, dst = src[keep], dst[keep]
        if w is not None:
            w = w[keep]
        src, dst, w = _merge_max(src, dst, w, num_nodes)
    if undirected:
        s2 = np.concatenate([src, dst])
        d2 = np.concatenate([dst, src])
        w2 = None if w is None else np.concatenate([w, w])
        src, dst, w = _merge_max(s2, d2, w2, num_nodes)
    return np.stack([src, dst]), w


# ---------------------------------------------------------------- graph operators

class Graph:
    """The graph operators of supergcn (nn.OpKind) over edge_index (2 x E, source
    row 0, destination row 1) and optional edge weights, for num_nodes nodes."""

    def __init__(self, edge_index, num_nodes, edge_weight=None):
        ei = torch.as_tensor(edge_index, dtype=torch.long)
        self.n = num_nodes
        self.src, self.dst = ei[0], ei[1]
        self.w = None if edge_weight is None else torch.as_tensor(edge_weight, dtype=torch.float32)
        ones = torch.ones(self.src.numel(), dtype=torch.float32)
        w = ones if self.w is None else self.w
        # GCN: D^-1/2 (A + I) D^-1/2, d(v) = sum of in-edge weights + 1 (a self-loop
        # of weight 1 on every node, besides any the graph has).
        deg = torch.zeros(num_nodes, dtype=torch.float64).index_add_(0, self.dst, w.double()) + 1
        dinv = deg.pow(-0.5).float()
        self.gcn_w = dinv[self.src] * w * dinv[self.dst]
        self.gcn_self = dinv * dinv
        # mean: 1 / in-edge count (0 without in-neighbours), weights inside the sum.
        cnt = torch.zeros(num_nodes, dtype=torch.float32).index_add_(0, self.dst, ones)
        self.mean_scale = torch.where(cnt > 0, 1 / cnt.clamp(min=1), torch.zeros_like(cnt))
        self.sum_w = self.w
        # attention: the in-edges plus exactly one self-loop per node (PyG's
        # add_remaining_self_loops); weights are not used.
        keep = self.src != self.dst
        loop = torch.arange(num_nodes)
        self.att_src = torch.cat([self.src[keep], loop])
        self.att_dst = torch.cat([self.dst[keep], loop])

    def _spmm(self, x, w):
        msg = x[self.src] if w is None else x[self.src] * w[:, None]
        return torch.zeros(self.n, x.shape[1], dtype=x.dtype).index_add_(0, self.dst, msg)

    def gcn(self, x):
        return self._spmm(x, self.gcn_w) + self.gcn_self[:, None] * x

    def mean(self, x):
        return self._spmm(x, self.w) * self.mean_scale[:, None]

    def sum(self, x):
        return self._spmm(x, self.sum_w)

    def max(self, x):
        """Element-wise maximum over the in-edges as given (0 without in-neighbours; weights
        are not used)."""
        with warnings.catch_warnings():  # scatter_reduce is "beta" in torch 1.13
            warnings.simplefilter("ignore", UserWarning)
            return torch.zeros_like(x).scatter_reduce(0, self.dst[:, None].expand(-1, x.shape[1]), x[self.src],
                                                      reduce="amax", include_self=False)


# ---------------------------------------------------------------- layers (PyG names)

class GCNConv(nn.Module):
    """PyG GCNConv: out = Â^K (x W^T) + bias (K = 1)."""

    def __init__(self, in_dim, out_dim, k=1):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.k = k

    def forward(self, x, g):
        h = self.lin(x)
        for _ in range(self.k):
            h = g.gcn(h)
        return h + self.bias


class SGConv(nn.Module):
    """PyG SGConv: out = lin(Â^K x)."""

    def __init__(self, in_dim, out_dim, k):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)
        self.k = k

    def forward(self, x, g):
        for _ in range(self.k):
            x = g.gcn(x)
        return self.lin(x)


class SAGEConv(nn.Module):
    """PyG SAGEConv (root_weight): lin_l(aggr_u x_u) + lin_r(x), aggr "mean" or "max"; with
    project (sage-pool) the max runs over relu(lin(x_u))."""

    def __init__(self, in_dim, out_dim, aggr="mean", project=False):
        super().__init__()
        if project:
            self.lin = nn.Linear(in_dim, in_dim)
        self.lin_l = nn.Linear(in_dim, out_dim)
        self.lin_r = nn.Linear(in_dim, out_dim, bias=False)
        self.aggr, self.project = aggr, project

    def forward(self, x, g):
        src = F.relu(self.lin(x)) if self.project else x
        agg = g.max(src) if self.aggr == "max" else g.mean(src)
        return self.lin_l(agg) + self.lin_r(x)


class GINConv(nn.Module):
    """PyG GINConv with nn = Sequential(Linear, ReLU, Linear): nn((1+eps) x + sum_u x_u)."""

    def __init__(self, in_dim, hidden, out_dim, train_eps):
        super().__init__()
        self.nn = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))
        if train_eps:
            self.eps = nn.Parameter(torch.zeros(1))
        else:
            self.register_buffer("eps", torch.zeros(1), persistent=False)

    def forward(self, x, g):
        return self.nn((1 + self.eps) * x + g.sum(x))


class APPNPLayer(nn.Module):
    """A linear layer named lin; in the model's last layer followed by K steps of
    personalised PageRank (PyG APPNP): z <- (1-alpha) Â z + alpha h."""

    def __init__(self, in_dim, out_dim, k, alpha):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)
        self.k, self.alpha = k, alpha

    def forward(self, x, g):
        h = self.lin(x)
        z = h
        for _ in range(self.k):
            z = (1 - self.alpha) * g.gcn(z) + self.alpha * h
        return z


class GATConv(nn.Module):
    """PyG GATConv (add_self_loops, negative_slope 0.2): heads of
    out_channels each, concatenated (hidden layers: heads * out_channels
    wide) or averaged (output layer: out_channels wide), plus bias."""

    def __init__(self, in_dim, out_channels, heads, concat, slope=0.2, attn_dropout=0.0):
        super().__init__()
        width = out_channels
        self.heads, self.width, self.concat = heads, width, concat
        self.lin = nn.Linear(in_dim, heads * width, bias=False)
        self.att_src = nn.Parameter(torch.zeros(1, heads, width))
        self.att_dst = nn.Parameter(torch.zeros(1, heads, width))
        self.bias = nn.Parameter(torch.zeros(heads * width if concat else width))
        self.slope, self.attn_dropout = slope, attn_dropout

    def forward(self, x, g):
        n, h, c = x.shape[0], self.heads, self.width
        z = self.lin(x).view(n, h, c)
        a_src = (z * self.att_src).sum(-1)  # n x h
        a_dst = (z * self.att_dst).sum(-1)
        s, d = g.att_src, g.att_dst
        e = F.leaky_relu(a_src[s] + a_dst[d], self.slope)  # E x h
        m = torch.full((n, h), -float("inf"), dtype=e.dtype)
        with warnings.catch_warnings():  # scatter_reduce is "beta" in torch 1.13
            warnings.simplefilter("ignore", UserWarning)
            m = m.scatter_reduce(0, d[:, None].expand(-1, h), e, reduce="amax", include_self=True)
        p = torch.exp(e - m[d])
        den = torch.zeros(n, h, dtype=e.dtype).index_add_(0, d, p)
        alpha = p / den[d]
        alpha = F.dropout(alpha, self.attn_dropout, self.training)
        out = torch.zeros(n, h, c, dtype=z.dtype).index_add_(0, d, z[s] * alpha[:, :, None])
        out = out.reshape(n, h * c) if self.concat else out.mean(dim=1)
        return out + self.bias


class GATv2Conv(nn.Module):
    """PyG GATv2Conv (add_self_loops, negative_slope 0.2, bias): the
    sources' projection lin_l, the targets' lin_r (lin_l itself with
    share_weights), score att . LeakyReLU(lin_l(x_u) + lin_r(x_v)), heads
    concatenated or averaged as GATConv's, plus bias."""

    def __init__(self, in_dim, out_channels, heads, concat, share_weights, slope=0.2, attn_dropout=0.0):
        super().__init__()
        width = out_channels
        self.heads, self.width, self.concat = heads, width, concat
        self.lin_l = nn.Linear(in_dim, heads * width)
        self.lin_r = None if share_weights else nn.Linear(in_dim, heads * width)
        self.att = nn.Parameter(torch.zeros(1, heads, width))
        self.bias = nn.Parameter(torch.zeros(heads * width if concat else width))
        self.slope, self.attn_dropout = slope, attn_dropout

    def forward(self, x, g):
        n, h, c = x.shape[0], self.heads, self.width
        zl = self.lin_l(x).view(n, h, c)
        zr = zl if self.lin_r is None else self.lin_r(x).view(n, h, c)
        s, d = g.att_src, g.att_dst
        e = (F.leaky_relu(zl[s] + zr[d], self.slope) * self.att).sum(-1)  # E x h
        m = torch.full((n, h), -float("inf"), dtype=e.dtype)
        with warnings.catch_warnings():  # scatter_reduce is "beta" in torch 1.13
            warnings.simplefilter("ignore", UserWarning)
            m = m.scatter_reduce(0, d[:, None].expand(-1, h), e, reduce="amax", include_self=True)
        p = torch.exp(e - m[d])
        den = torch.zeros(n, h, dtype=e.dtype).index_add_(0, d, p)
        alpha = F.dropout(p / den[d], self.attn_dropout, self.training)
        out = torch.zeros(n, h, c, dtype=zl.dtype).index_add_(0, d, zl[s] * alpha[:, :, None])
        out = out.reshape(n, h * c) if self.concat else out.mean(dim=1)
        return out + self.bias


# ---------------------------------------------------------------- model

class SuperGCN(nn.Module):
    """supergcn's model: x -> dropout -> for hidden layers: conv -> [LayerNorm or
    BatchNorm] -> ReLU [+ the residual: the input, or res{i} of it] -> dropout; ->
    last conv -> logits. With jk (cat, max, last) every conv is hidden and jk.lin
    maps their combination to the logits. Modules conv{i}, norm{i}, res{i}, jk.lin."""

    def __init__(self, meta):
        super().__init__()
        self.meta = dict(meta)
        kind = meta["model"]
        layers, in_dim = int(meta["layers"]), int(meta["in_dim"])
        hidden, classes = int(meta["hidden"]), int(meta["classes"])
        self.dropout = float(meta.get("dropout", 0))
        self.layers = layers
        self.kind = kind
        norm = meta.get("norm", "none")
        eps = float(meta.get("layer_norm_eps", 1e-5))
        self.jk_mode = meta.get("jk", "none")
        self.residual = meta.get("residual", "false") == "true"
        jk = self.jk_mode != "none"
        k = int(meta.get("k", 0))
        alpha = float(meta.get("alpha", 0))
        for i in range(layers):
            a = in_dim if i == 0 else hidden
            b = classes if i == layers - 1 and not jk else hidden
            last = i == layers - 1 and not jk
            if kind == "gcn":
                conv = GCNConv(a, b)
            elif kind == "sgc":
                conv = SGConv(a, b, k)
            elif kind == "sage":
                conv = SAGEConv(a, b)
            elif kind in ("sage-max", "sage-pool"):
                conv = SAGEConv(a, b, aggr="max", project=kind == "sage-pool")
            elif kind == "gin":
                inner = hidden if hidden > 0 else b
                conv = GINConv(a, inner, b, meta.get("train_eps", "false") == "true")
            elif kind == "appnp":
                conv = APPNPLayer(a, b, k if last else 0, alpha)
            elif kind in ("gat", "gatv2"):
                heads = int(meta["out_heads"] if last else meta["heads"])
                # hidden_per_head: --hidden (exports of older builds: hidden / heads)
                width = b if last else int(meta.get("hidden_per_head", b // heads))
                slope, drop = float(meta.get("negative_slope", 0.2)), float(meta.get("attn_dropout", 0))
                if kind == "gat":
                    conv = GATConv(a, width, heads, concat=not last, slope=slope, attn_dropout=drop)
                else:
                    conv = GATv2Conv(a, width, heads, not last, meta.get("share_weights", "false") == "true", slope, drop)
            else:
                raise ValueError("model %r is not one this module knows" % kind)
            self.add_module("conv%d" % i, conv)
            if not last and norm == "layer":
                self.add_module("norm%d" % i, nn.LayerNorm(b, eps=eps))
            if not last and norm == "batch":
                self.add_module("norm%d" % i, nn.BatchNorm1d(b, eps=eps, momentum=0.1))
            if not last and self.residual and a != b:
                self.add_module("res%d" % i, nn.Linear(a, b, bias=False))
        if jk:
            self.jk = nn.Module()
            self.jk.lin = nn.Linear(layers * hidden if self.jk_mode == "cat" else hidden, classes)

    def forward(self, x, edge_index, edge_weight=None, graph=None):
        """Logits (N x classes) for features x (N x in_dim, preprocessed as
        meta["feat_norm"] says) over edge_index (2 x E) [and edge_weight]."""
        g = graph if graph is not None else Graph(edge_index, x.shape[0], edge_weight)
        h = F.dropout(x, self.dropout, self.training)
        xs = []
        for i in range(self.layers):
            hin, h = h, getattr(self, "conv%d" % i)(h, g)
            if i == self.layers - 1 and self.jk_mode == "none":
                return h
            if hasattr(self, "norm%d" % i):
                h = getattr(self, "norm%d" % i)(h)
            h = F.relu(h)
            if self.residual:
                h = h + (getattr(self, "res%d" % i)(hin) if hasattr(self, "res%d" % i) else hin)
            h = F.dropout(h, self.dropout, self.training)
            xs.append(h)
        m = self.jk_mode
        z = torch.cat(xs, 1) if m == "cat" else torch.stack(xs).max(0)[0] if m == "max" else xs[-1]
        return self.jk.lin(z)


class GCN2Layer(nn.Module):
    """One GCNII convolution (PyG GCN2Conv): its weight (stored as torch.nn.Linear's,
    out x in), and the model's input layer lin_in in the first, output layer lin_out in the last."""

    def __init__(self, in_dim, hidden, classes, first, last):
        super().__init__()
        if first:
            self.lin_in = nn.Linear(in_dim, hidden)
        self.weight = nn.Parameter(torch.zeros(hidden, hidden))
        if last:
            self.lin_out = nn.Linear(hidden, classes)


class GCNII(nn.Module):
    """supergcn's gcnii (Chen et al.): x -> dropout -> lin_in -> ReLU = H0; per layer l = 1..L
    S = (1-alpha) A_hat dropout(H) + alpha H0, H = ReLU((1-beta_l) S + beta_l S W_l),
    beta_l = ln(theta/l + 1); -> dropout -> lin_out."""

    def __init__(self, meta):
        super().__init__()
        self.meta = dict(meta)
        self.layers, hidden = int(meta["layers"]), int(meta["hidden"])
        self.dropout, self.alpha, self.theta = float(meta.get("dropout", 0)), float(meta["alpha"]), float(meta["theta"])
        for i in range(self.layers):
            self.add_module("conv%d" % i, GCN2Layer(int(meta["in_dim"]), hidden, int(meta["classes"]),
                                                     i == 0, i == self.layers - 1))

    def forward(self, x, edge_index, edge_weight=None, graph=None):
        g = graph if graph is not None else Graph(edge_index, x.shape[0], edge_weight)
        x0 = F.relu(self.conv0.lin_in(F.dropout(x, self.dropout, self.training)))
        h = x0
        for i in range(self.layers):
            conv = getattr(self, "conv%d" % i)
            beta = math.log(self.theta / (i + 1) + 1)
            s = (1 - self.alpha) * g.gcn(F.dropout(h, self.dropout, self.training)) + self.alpha * x0
            h = F.relu((1 - beta) * s + beta * F.linear(s, conv.weight))
        return getattr(self, "conv%d" % (self.layers - 1)).lin_out(F.dropout(h, self.dropout, self.training))


def build_model(meta):
    """An untrained model of the hyperparameters in meta (export's metadata)."""
    if meta["model"] == "gcnii":
        return GCNII(meta)
    return SuperGCN(meta)


def load(path):
    """The model exported to path (.safetensors or .npz) with its weights, in
    eval mode, and its metadata."""
    tensors, meta = read_tensors(path)
    model = build_model(meta)
    state = {}
    for name, a in tensors.items():
        if name.endswith(".lin_src.weight"):  # PyG < 2.3's name
            name = name[: -len(".lin_src.weight")] + ".lin.weight"
        state[name] = torch.from_numpy(np.ascontiguousarray(a))
    for name, v in model.state_dict().items():  # BatchNorm1d's counter, which supergcn does not keep
        if name.endswith(".num_batches_tracked") and name not in state:
            state[name] = v
    model.load_state_dict(state, strict=True)
    model.eval()
    return model, meta


# ---------------------------------------------------------------- command line

def _read_ogb(d):
    x = np.loadtxt(d + "/raw/node-feat.csv.gz", delimiter=",", dtype=np.float32, ndmin=2)
    e = np.loadtxt(d + "/raw/edge.csv.gz", delimiter=",", dtype=np.int64, ndmin=2)
    return x, e.T


def main(argv=None):
    ap = argparse.ArgumentParser(description="logits of a model written by supergcn export")
    ap.add_argument("model", help="FILE.safetensors or FILE.npz")
    ap.add_argument("--ogb", help="OGB-layout dataset directory (raw/node-feat.csv.gz, raw/edge.csv.gz)")
    ap.add_argument("--features", help="features .npy (N x F)")
    ap.add_argument("--edges", help="edge_index .npy (2 x E, or E x 2)")
    ap.add_argument("--edge-weight", help="edge weights .npy (E)")
    ap.add_argument("--no-undirected", action="store_true", help="do not add reverse edges")
    ap.add_argument("--no-dedup", action="store_true", help="keep duplicate edges and self-loops")
    ap.add_argument("--out", required=True, help="logits .npy (N x classes, float32)")
    a = ap.parse_args(argv)
    if a.ogb:
        x, ei = _read_ogb(a.ogb)
    elif a.features and a.edges:
        x = np.load(a.features).astype(np.float32)
        ei = np.load(a.edges)
        if ei.shape[0] != 2:
            ei = ei.T
    else:
        ap.error("give --ogb DIR, or --features and --edges")
    ew = np.load(a.edge_weight).astype(np.float32) if a.edge_weight else None
    model, meta = load(a.model)
    x = normalize_features(x, meta.get("feat_norm", "none"))
    ei, ew = clean_edge_index(ei, x.shape[0], ew, undirected=not a.no_undirected, dedup=not a.no_dedup)
    with torch.no_grad():
        logits = model(torch.from_numpy(x), torch.from_numpy(ei), None if ew is None else torch.from_numpy(ew))
    np.save(a.out, logits.numpy().astype(np.float32))
    print("supergcn_torch: wrote %s (%d x %d)" % (a.out, logits.shape[0], logits.shape[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
