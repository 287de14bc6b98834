#!/usr/bin/env python3
"""Builds the CSV and markdown of scripts/bench-single-node.sh from its raw
outputs in DIR: supergcn metrics (metrics_<model>.jsonl), PyTorch trainer
summaries (torch_<model>.json), PyG's (pyg_<model>.json; on a GPU the impl is
pytorch-cuda or pyg-cuda, peak RSS the host's; a run that did not fit is a row
with its note), GNU time -v reports (time_<impl>_<model>: peak
RSS, CPU seconds) and the GEMM CSVs (gemm_supergcn.csv, gemm_torch.csv).
Usage: report.py DIR (several runs' files may be copied into one DIR)."""
import csv
import json
import os
import statistics
import sys

d = sys.argv[1]


def timev(impl, model):
    """(peak RSS bytes, user+system CPU seconds) from a time -v report, or (None, None)."""
    t = read(f"time_{impl}_{model}") or ""
    rss = cpu = None
    for line in t.splitlines():
        k, _, v = line.strip().partition(": ")
        if k == "Maximum resident set size (kbytes)":
            rss = int(v) * 1024
        elif k in ("User time (seconds)", "System time (seconds)"):
            cpu = (cpu or 0.0) + float(v)
    return rss, cpu


def median_2_5(times):
    sel = times[1:5] if len(times) >= 5 else (times[1:] or times)
    return statistics.median(sel) if sel else float("nan")


def read(path):
    try:
        with open(os.path.join(d, path)) as f:
            return f.read()
    except OSError:
        return None


rows = []
for model in ("gcn", "sage", "gat"):
    m = read(f"metrics_{model}.jsonl")
    if m:
        ep = [json.loads(l) for l in m.splitlines() if l.strip()]
        ep = [e for e in ep if "epoch" in e and "final" not in e and "header" not in e]
        times = [e["epoch_s"] for e in ep]
        rss, cpu = timev("supergcn", model)
        rows.append({"impl": "supergcn", "model": model, "epochs": len(times), "median_epoch_s": median_2_5(times),
                     "aggr_s": median_2_5([e.get("aggr_s", 0) for e in ep]),
                     "dense_s": median_2_5([e.get("dense_s", 0) for e in ep]),
                     "eval_s": median_2_5([e.get("eval_s", 0) for e in ep]),
                     "peak_rss_gb": rss / 1e9 if rss else float("nan"),
                     "run_cpu_s": cpu if cpu is not None else "",
                     "epoch_s": " ".join(f"{t:.2f}" for t in times)})
    for impl, name in (("torch", "pytorch"), ("pyg", "pyg")):
        t = [l for l in (read(f"{impl}_{model}.json") or "").splitlines() if l.startswith('{"impl"')]
        if t:
            s = json.loads(t[-1])
            dev = s.get("device", "cpu").split(":")[0]
            tag = name if dev == "cpu" else f"{name}-{dev}"
            if "error" in s:  # a run that did not fit: a row with the reason, no times
                rows.append({"impl": tag, "model": model, "epochs": 0, "note": s["error"]})
                continue
            rss, cpu = timev(impl, model)
            peak = rss or s.get("peak_rss_bytes")  # the host's (a GPU's peak is in the JSON: peak_gpu_bytes)
            rows.append({"impl": tag, "model": model, "epochs": len(s["epoch_s"]), "median_epoch_s": s["median_epoch_s"],
                         "aggr_s": "", "dense_s": "", "eval_s": "", "peak_rss_gb": peak / 1e9 if peak else "",
                         "run_cpu_s": cpu if cpu is not None else "",
                         "epoch_s": " ".join(f"{t:.2f}" for t in s["epoch_s"])})
fields = ["impl", "model", "epochs", "median_epoch_s", "aggr_s", "dense_s", "eval_s", "peak_rss_gb", "run_cpu_s", "epoch_s",
          "note"]
with open(os.path.join(d, "epochs.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerows(rows)

md = ["# single node: supergcn vs plain PyTorch", ""]
info = read("info.txt")
if info:
    md += ["```", info.strip(), "```", ""]
md += ["| model | impl | median epoch s (2–5) | aggr s | dense s | eval s | peak RSS GB | CPU s of the run | epochs s |",
       "|---|---|---|---|---|---|---|---|---|"]


def fmt(v):
    return f"{v:.2f}" if isinstance(v, float) else str(v)


for r in rows:
    g = {k: fmt(r.get(k, "")) for k in fields}
    md.append(f"| {g['model']} | {g['impl']} | {g['median_epoch_s'] or g['note']} | {g['aggr_s']} | {g['dense_s']} | "
              f"{g['eval_s']} | {g['peak_rss_gb']} | {g['run_cpu_s']} | {g['epoch_s']} |")
by = {(r["impl"], r["model"]): r for r in rows}
for model in ("gcn", "sage", "gat"):
    s, p = by.get(("supergcn", model)), by.get(("pytorch", model))
    if s and p and p.get("median_epoch_s"):
        md.append("")
        md.append(f"{model}: supergcn {p['median_epoch_s'] / s['median_epoch_s']:.1f}× faster than PyTorch; "
                  f"peak RSS {s['peak_rss_gb'] / p['peak_rss_gb']:.2f}× PyTorch's")

g, t = read("gemm_supergcn.csv"), read("gemm_torch.csv")
if g:
    gr = list(csv.DictReader(g.splitlines()))
    tr = {(r["op"], r["in"], r["out"]): r for r in csv.DictReader(t.splitlines())} if t else {}
    md += ["", "| op | in | out | supergcn GFLOP/s | torch.mm GFLOP/s | ratio |", "|---|---|---|---|---|---|"]
    out = []
    for r in gr:
        tt = tr.get((r["op"], r["in"], r["out"]))
        ratio = float(r["gflops"]) / float(tt["gflops"]) if tt else float("nan")
        out.append({**r, "torch_gflops": tt["gflops"] if tt else "", "ratio": f"{ratio:.2f}"})
        md.append(f"| {r['op']} | {r['in']} | {r['out']} | {r['gflops']} | {tt['gflops'] if tt else '-'} | {ratio:.2f} |")
    with open(os.path.join(d, "gemm.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out[0].keys()))
        w.writeheader()
        w.writerows(out)
with open(os.path.join(d, "summary.md"), "w") as f:
    f.write("\n".join(md) + "\n")
print("\n".join(md))
