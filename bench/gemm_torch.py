#!/usr/bin/env python3
"""torch.mm on the shapes of `supergcn bench gemm`, for comparison.

For a layer of IN inputs and OUT outputs over ROWS nodes:
  NN  X·W   (rows×in)·(in×out)      forward
  NT  G·Wᵀ  (rows×out)·(in×out)ᵀ    input gradient
  TN  Xᵀ·G  (rows×in)ᵀ·(rows×out)   weight gradient
GFLOP/s = 2·rows·in·out / median seconds (one warm-up, then --reps runs).
Prints the same CSV as `supergcn bench gemm --csv` (op,rows,in,out,threads,reps,median_ms,gflops).

  python3 bench/gemm_torch.py --rows 200000 --threads 2
"""
import argparse
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--in", dest="ins", default="100,128,256")
    ap.add_argument("--out", dest="outs", default="47,128,256")
    ap.add_argument("--ops", default="NN,NT,TN")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    ins = [int(s) for s in a.ins.split(",")]
    outs = [int(s) for s in a.outs.split(",")]
    g = torch.Generator().manual_seed(3)
    xbuf = torch.rand(a.rows, max(ins), generator=g) - 0.5
    gbuf = torch.rand(a.rows, max(outs), generator=g) - 0.5
    print("op,rows,in,out,threads,reps,median_ms,gflops")
    for op in [s.strip().upper() for s in a.ops.split(",")]:
        for i in ins:
            for o in outs:
                # contiguous operands of the exact shapes, as the layers hold them
                x = xbuf[:, :i].contiguous()
                gr = gbuf[:, :o].contiguous()
                w = torch.rand(i, o, generator=g) - 0.5
                if op == "NN":
                    fn = lambda: torch.mm(x, w)
                elif op == "NT":
                    fn = lambda: torch.mm(gr, w.t())
                elif op == "TN":
                    fn = lambda: torch.mm(x.t(), gr)
                else:
                    raise SystemExit(f"--ops: {op!r} is not NN, NT or TN")
                fn()
                ts = []
                for _ in range(a.reps):
                    t = time.perf_counter()
                    fn()
                    ts.append(time.perf_counter() - t)
                med = statistics.median(ts)
                print(f"{op},{a.rows},{i},{o},{a.threads},{a.reps},{med*1e3:.3f},{2*a.rows*i*o/med/1e9:.1f}", flush=True)


if __name__ == "__main__":
    main()
