#!/usr/bin/env python3
"""Runs a command and prints its peak resident set size (getrusage of the
waited-for children, ru_maxrss) to stderr as `peak_rss_bytes N`, and its CPU
seconds (user + system) as `cpu_s S`; exits with the command's status.
Usage: peakrss.py OUTFILE CMD [ARGS...] (OUTFILE gets N, OUTFILE.cpu gets S:
on a machine shared with other work the CPU seconds of a whole run vary less
than its wall-clock epochs)."""
import resource
import subprocess
import sys

if len(sys.argv) < 3:
    raise SystemExit("usage: peakrss.py OUTFILE CMD [ARGS...]")
rc = subprocess.call(sys.argv[2:])
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
rss, cpu = ru.ru_maxrss * 1024, ru.ru_utime + ru.ru_stime
with open(sys.argv[1], "w") as f:
    f.write(f"{rss}\n")
with open(sys.argv[1] + ".cpu", "w") as f:
    f.write(f"{cpu:.2f}\n")
print(f"peak_rss_bytes {rss} cpu_s {cpu:.2f}", file=sys.stderr)
sys.exit(rc)
