#!/usr/bin/python3
"""Runs a command and prints the peak of the summed resident memory of the
command and all its descendants (sampled every 10 ms from /proc), in KB,
on stderr as "peakrss_kb N". /usr/bin/time reports only the largest single
process, which undercounts a multiprocessing pipeline.
"""
import os
import subprocess
import sys
import time


def tree_rss_kb(root):
    children = {}
    rss = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                parts = f.read().rsplit(")", 1)[1].split()
            ppid, pages = int(parts[1]), int(parts[21])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(pid))
        rss[int(pid)] = pages * os.sysconf("SC_PAGE_SIZE") // 1024
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo.extend(children.get(p, []))
    return total


def main():
    proc = subprocess.Popen(sys.argv[1:])
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss_kb(proc.pid))
        time.sleep(0.01)
    print("peakrss_kb %d" % peak, file=sys.stderr)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
