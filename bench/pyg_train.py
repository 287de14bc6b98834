#!/usr/bin/env python3
"""PyG's own layers on a supergcn .sgb graph: the single-node table's PyG rows.

The models of the single-node table, built from torch_geometric's layers as PyG's examples build them:
  gcn   GCNConv × --layers (cached=True: the normalised adjacency computed once, as PyG's example), ReLU and
        dropout between layers
  sage  SAGEConv (mean) × --layers, LayerNorm + ReLU + dropout between layers with --norm layer
  gat   GATConv: hidden layers --heads heads of --hidden concatenated (ELU), the output layer one head
        (the gat of `supergcn train --model gat`: attention dropout --attn-dropout)
An epoch is supergcn's: one full-batch training step (Adam) and one evaluation forward, timed with the
device synchronised. GCN and SAGE take the adjacency as a torch CSR tensor (adj_t, PyG's sparse path), GAT
the edge list (its only path without torch_sparse) plus one self-loop per node (GATConv's default).
Prints a line an epoch and a JSON summary (median of epochs 2–5, as train_torch.py; peak GPU memory);
a run that does not fit prints {"error": "out of memory", ...} and exits 3.

  python3 bench/pyg_train.py --data g.sgb --model gat --hidden 8 --heads 8 --device cuda
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import sgb


def build(a, fin, classes):
    import torch_geometric.nn as pyg
    convs, norms = torch.nn.ModuleList(), torch.nn.ModuleList()
    for i in range(a.layers):
        last = i == a.layers - 1
        fout = classes if last else a.hidden
        if a.model == "gcn":
            convs.append(pyg.GCNConv(fin, fout, cached=True))
        elif a.model == "sage":
            convs.append(pyg.SAGEConv(fin, fout, aggr="mean"))
        else:
            heads = 1 if last else a.heads
            convs.append(pyg.GATConv(fin, fout, heads=heads, concat=not last, dropout=a.attn_dropout))
            fout = fout * heads if not last else fout
        if not last and a.norm == "layer":
            norms.append(torch.nn.LayerNorm(fout))
        fin = fout
    return convs, norms


class Model(torch.nn.Module):
    def __init__(self, a, fin, classes):
        super().__init__()
        self.a = a
        self.convs, self.norms = build(a, fin, classes)

    def forward(self, x, g):
        act = F.elu if self.a.model == "gat" else F.relu
        for i, conv in enumerate(self.convs):
            x = F.dropout(x, self.a.dropout, self.training)
            x = conv(x, g)
            if i < len(self.convs) - 1:
                if len(self.norms) > i:
                    x = self.norms[i](x)
                x = act(x)
        return x


def graph(d, model, dev):
    ptr = torch.from_numpy(np.ascontiguousarray(d["ptr"]))
    idx = torch.from_numpy(np.ascontiguousarray(d["idx"])).long()
    n = d["nodes"]
    if model == "gat":  # edge list u→v (row v lists its in-neighbours u), without self-loops: GATConv adds one
        rows = torch.repeat_interleave(torch.arange(n), ptr[1:] - ptr[:-1])
        keep = idx != rows
        return torch.stack([idx[keep], rows[keep]]).to(dev)
    val = torch.ones(len(idx))
    return torch.sparse_csr_tensor(ptr, idx, val, (n, n)).to(dev)  # adj_t: row v sums its in-neighbours


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", choices=["gcn", "sage", "gat"], default="gcn")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--attn-dropout", type=float, default=0.6)
    ap.add_argument("--norm", choices=["none", "layer"], default="none")
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.epochs < 2 or a.layers < 1 or a.hidden < 1 or a.heads < 1:
        raise SystemExit("--epochs ≥ 2, --layers, --hidden, --heads ≥ 1")
    try:
        import torch_geometric
    except ImportError as e:
        raise SystemExit(f"bench/pyg_train.py needs torch_geometric (PyG): {e}")
    torch.manual_seed(a.seed)
    dev = torch.device(a.device)
    t0 = time.perf_counter()
    try:
        d = sgb.load(a.data)
    except OSError as e:
        raise SystemExit(f"{a.data}: {e.strerror or e}")
    if d["x"] is None:
        raise SystemExit(f"{a.data}: dense features needed")
    x = torch.from_numpy(np.array(d["x"])).to(dev)  # a writable copy
    y = torch.from_numpy(np.ascontiguousarray(d["labels"])).long().to(dev)
    tr = torch.from_numpy(np.ascontiguousarray(d["train"])).long().to(dev)
    g = graph(d, a.model, dev)
    model = Model(a, d["featdim"], d["classes"]).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    print(f"torch {torch.__version__}, torch_geometric {torch_geometric.__version__}, {dev}; "
          f"{d['nodes']} nodes, {d['nnz']} entries, {a.model} {a.layers}×{a.hidden}; load {time.perf_counter()-t0:.1f}s",
          flush=True)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    times = []
    try:
        for ep in range(1, a.epochs + 1):
            sync()
            t = time.perf_counter()
            model.train()
            opt.zero_grad()
            loss = F.cross_entropy(model(x, g)[tr], y[tr])
            loss.backward()
            opt.step()
            model.eval()
            with torch.no_grad():
                acc = (model(x, g).argmax(1) == y).float().mean().item()
            sync()
            times.append(time.perf_counter() - t)
            print(f"epoch {ep} loss {loss.item():.4f} acc(all) {acc:.4f} epoch_s {times[-1]:.3f}", flush=True)
    except torch.cuda.OutOfMemoryError:
        print(json.dumps({"impl": "pyg", "model": a.model, "device": a.device, "error": "out of memory"}), flush=True)
        sys.exit(3)
    print(json.dumps({"impl": "pyg", "device": a.device, "model": a.model, "layers": a.layers, "hidden": a.hidden,
                      "heads": a.heads if a.model == "gat" else None, "nodes": d["nodes"], "epoch_s": times,
                      "median_epoch_s": statistics.median(times[1:5] if len(times) >= 5 else times[1:]),
                      **({"peak_gpu_bytes": torch.cuda.max_memory_allocated(dev)} if dev.type == "cuda" else {})}))


if __name__ == "__main__":
    main()
