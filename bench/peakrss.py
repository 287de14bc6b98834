#!/usr/bin/env python3
"""Runs a command and prints its peak resident set size (getrusage of the
waited-for children, ru_maxrss) to stderr as `peak_rss_bytes N`; exits with
the command's status. Usage: peakrss.py OUTFILE CMD [ARGS...] (OUTFILE gets N)."""
import resource
import subprocess
import sys

if len(sys.argv) < 3:
    raise SystemExit("usage: peakrss.py OUTFILE CMD [ARGS...]")
rc = subprocess.call(sys.argv[2:])
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
with open(sys.argv[1], "w") as f:
    f.write(f"{rss}\n")
print(f"peak_rss_bytes {rss}", file=sys.stderr)
sys.exit(rc)
