#!/usr/bin/env python3
"""Samples engines' /metrics from outside npcorch and says how full they were.

An independent check of issue 25, item 15: it reads nothing of npcorch's,
neither its counters nor the simulated engine's own npcorch_sim:* series,
only the gauges every vLLM serves on /metrics (vllm:num_requests_running,
vllm:num_requests_waiting, vllm:kv_cache_usage_perc and the counter
vllm:num_preemptions_total; names as vLLM's docs/design/metrics.md lists
them at vllm-project/vllm@f7e3a0879e633f9924d477b85a3775cb1ae2a2e5), and
takes max_num_seqs from its own command line.

Every --interval (100 ms) it scrapes each engine and counts a sample as
serving when anything runs or waits, and as full when every slot runs
(running >= max_num_seqs) or requests wait. The engine-full share is full
samples over serving samples. Under-full stretches (serving, nothing
waiting, a slot free) are reported with their length, so that where the
time went can be read without the engine's own clock.

Engines are found by --url, or in a run folder's engine logs (--run RUN:
RUN/engines/*.log, the line "Starting vLLM API server 0 on http://...";
the folder may not exist yet). An address whose
vllm:generation_tokens_total goes down is another engine that took the
port after the run's stopped (the machine is shared): it is sampled no
more. It stops on SIGTERM or SIGINT, or when the process --pid ends, then
prints one line:

  fullshare: engines=1 samples=2043 serving=1984 full=1969 share=0.992 ...

and writes every sample to --out (seconds, engine, running, waiting, KV
usage, preemptions so far) when given.

Usage (scripts/bench/enginefull.sh runs it beside each run):
  python3 scripts/bench/fullshare.py --run RUN --max-num-seqs 32 [--out RUN.fullshare.tsv]
"""

import argparse
import glob
import os
import re
import signal
import sys
import time
import urllib.request

SERIES = {
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:kv_cache_usage_perc": "kv",
    "vllm:num_preemptions_total": "preemptions",
    "vllm:generation_tokens_total": "generated",
}
LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)")
ADDRESS = re.compile(r"Starting vLLM API server 0 on (http://[0-9.:]+)")


def parse(text):
    """Sums each series of SERIES over its label sets (one per engine core)."""
    got = {v: 0.0 for v in SERIES.values()}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = LINE.match(line)
        if m and m.group(1) in SERIES:
            try:
                got[SERIES[m.group(1)]] += float(m.group(3))
            except ValueError:
                pass
    return got


def scrape(url, timeout):
    try:
        with urllib.request.urlopen(url + "/metrics", timeout=timeout) as r:
            return parse(r.read().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None


class Logs:
    """Follows a run's engine logs for the engines' addresses."""

    def __init__(self, run):
        self.run, self.offsets, self.urls = run, {}, {}

    def addresses(self):
        for path in glob.glob(os.path.join(self.run, "engines", "*.log")):
            try:
                with open(path, "rb") as f:
                    f.seek(self.offsets.get(path, 0))
                    data = f.read()
            except OSError:
                continue
            end = data.rfind(b"\n") + 1  # a partial line is read again
            self.offsets[path] = self.offsets.get(path, 0) + end
            for m in ADDRESS.finditer(data[:end].decode("utf-8", "replace")):
                self.urls[path] = m.group(1)  # a restart names its new one
        return sorted(set(self.urls.values()))


def alive(pid):
    if not pid:
        return True
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def summarize(samples, seqs, interval):
    serving = [s for s in samples if s["running"] > 0 or s["waiting"] > 0]
    full = [s for s in serving if s["running"] >= seqs or s["waiting"] > 0]
    # Under-full stretches, per engine: consecutive serving samples that
    # are not full.
    stretches, run = [], {}
    for s in samples:
        e = s["engine"]
        busy = s["running"] > 0 or s["waiting"] > 0
        if busy and not (s["running"] >= seqs or s["waiting"] > 0):
            run.setdefault(e, [s["t"], s["t"]])[1] = s["t"]
        elif e in run:
            stretches.append(run.pop(e))
    stretches += run.values()
    longest = max((b - a + interval for a, b in stretches), default=0.0)
    first = {}
    for s in samples:
        first.setdefault(s["engine"], s["preemptions"])
    last = {s["engine"]: s["preemptions"] for s in samples}
    preempted = sum(last[e] - first[e] for e in last)
    share = len(full) / len(serving) if serving else 0.0
    return (f"fullshare: engines={len(last)} samples={len(samples)} serving={len(serving)} full={len(full)} "
            f"share={share:.3f} underfull_s={(len(serving) - len(full)) * interval:.1f} "
            f"longest_underfull_s={longest:.1f} max_kv={max((s['kv'] for s in samples), default=0):.3f} "
            f"preemptions={preempted:.0f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", help="run folder whose engines/*.log name the engines")
    ap.add_argument("--url", action="append", default=[], help="an engine's base URL (http://HOST:PORT)")
    ap.add_argument("--max-num-seqs", type=int, required=True, help="each engine's max_num_seqs")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between samples")
    ap.add_argument("--pid", type=int, default=0, help="stop when this process ends")
    ap.add_argument("--out", help="file for every sample (TSV)")
    a = ap.parse_args()
    if not a.run and not a.url:
        ap.error("give --run or --url")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    logs = Logs(a.run) if a.run else None
    samples, start = [], time.monotonic()
    generated, gone = {}, set()
    tick = start
    while not stop and alive(a.pid):
        urls = sorted(set(a.url) | set(logs.addresses() if logs else []))
        for url in urls:
            got = None if url in gone else scrape(url, timeout=max(a.interval, 1.0))
            if got is None:
                continue
            if got["generated"] < generated.get(url, 0):
                gone.add(url)  # another engine on the port: not the run's
                continue
            generated[url] = got["generated"]
            got.update(t=time.monotonic() - start, engine=url)
            samples.append(got)
        # The next sample 100 ms after this one was due; one that is late
        # (a loaded machine) is not followed by a burst to catch up.
        tick = max(tick + a.interval, time.monotonic())
        time.sleep(max(0.0, tick - time.monotonic()))
    if a.out:
        with open(a.out, "w") as f:
            for s in samples:
                f.write(f"{s['t']:.2f}\t{s['engine']}\t{s['running']:.0f}\t{s['waiting']:.0f}\t{s['kv']:.3f}\t{s['preemptions']:.0f}\n")
    print(summarize(samples, a.max_num_seqs, a.interval))
    return 0


if __name__ == "__main__":
    sys.exit(main())
