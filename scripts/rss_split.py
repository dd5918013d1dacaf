#!/usr/bin/env python3
"""Runs a command and prints the peak anonymous and file-backed resident memory it reached.

`/usr/bin/time -v` reports one peak (VmHWM) that includes the pages of the executable itself,
which for a debug build is ~28 MB of unoptimised code; this samples /proc/PID/status every 2 ms
and prints the peaks of RssAnon (heap, stacks: what the program allocates) and RssFile apart.
Usage: scripts/rss_split.py COMMAND [ARGS...]   (stdout and stderr of the command are discarded)
"""
import subprocess
import sys
import time

proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = {"RssAnon": 0, "RssFile": 0, "VmHWM": 0}
while proc.poll() is None:
    try:
        with open(f"/proc/{proc.pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in peak:
                    peak[key] = max(peak[key], int(value.split()[0]))
    except (FileNotFoundError, ProcessLookupError, ValueError):
        break
    time.sleep(0.002)
print(", ".join(f"peak {k} {v / 1024:.1f} MB" for k, v in peak.items()))
sys.exit(proc.returncode or 0)
