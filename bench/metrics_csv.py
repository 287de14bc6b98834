#!/usr/bin/env python3
"""Per-epoch CSV of supergcn training metrics (train --metrics JSON lines), one
line per epoch record (a resumed run's repeated epochs keep the later record):
config,ranks,threads,epoch,loss,train_acc,val_acc,test_acc,epoch_s,comm_bytes
(accuracies empty on the epochs that were not evaluated).
Usage: metrics_csv.py CONFIG=FILE.jsonl [CONFIG=FILE.jsonl ...] > out.csv"""
import csv
import json
import sys

KEYS = ["loss", "train_acc", "val_acc", "test_acc", "epoch_s", "comm_bytes"]


def records(path):
    """(threads, {epoch: record}) of one metrics file."""
    threads, epochs = "", {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"metrics_csv: {path}:{n}: not JSON: {e}")
            if r.get("header"):
                threads = r.get("threads", threads)
            elif "epoch" in r:
                epochs[r["epoch"]] = r
    return threads, epochs


def main(args):
    if not args or any("=" not in a for a in args):
        sys.exit(__doc__.strip().splitlines()[-1])
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["config", "ranks", "threads", "epoch"] + KEYS)
    for a in args:
        config, path = a.split("=", 1)
        threads, epochs = records(path)
        for e in sorted(epochs):
            r = epochs[e]
            w.writerow([config, r.get("ranks", ""), threads, e] + [r.get(k, "") for k in KEYS])


main(sys.argv[1:])
