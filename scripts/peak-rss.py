#!/usr/bin/env python3
"""peak-rss.py OUT CMD...: run CMD and write its peak RSS and wall time to OUT
in /usr/bin/time -v's wording (for machines without GNU time); exit as CMD."""
import resource, subprocess, sys, time

out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.time()
rc = subprocess.call(cmd)
wall = time.time() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
kb = ru.ru_maxrss  # KiB on Linux
with open(out, "w") as f:
    f.write("\tUser time (seconds): %.2f\n" % ru.ru_utime)
    f.write("\tSystem time (seconds): %.2f\n" % ru.ru_stime)
    f.write("\tMaximum resident set size (kbytes): %d\n" % kb)
    f.write("\tElapsed (wall clock) time (h:mm:ss or m:ss): %d:%05.2f\n" % (wall // 60, wall % 60))
sys.exit(rc)
