#!/usr/bin/env bash
# gpu-check.sh: a check of npcorch's GPU code on a real NVIDIA machine, in
# under 3 minutes. It builds npcorch (or uses $NPCORCH), runs
# `npcorch gpus --json`, then `npcorch monitor` for 30 s while a PyTorch
# matmul loop (launched the way npcorch launches engines, with
# NPCORCH_MODEL/NPCORCH_REPLICA set) loads GPU 0, scrapes the Prometheus
# endpoint once, and asserts nonzero utilization and energy, plausible power
# and energy that agrees with power. It prints the figures; paste them into
# docs/BENCHMARKS.md.
#
# Needs: bash, python3 with torch (CUDA), and go unless NPCORCH names a
# binary. Usage: scripts/gpu-check.sh [workdir]
set -euo pipefail

cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d -t npcorch-gpu-check.XXXXXX)}
mkdir -p "$work"
duration=${GPU_CHECK_SECONDS:-30}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

say() { printf '== %s\n' "$*"; }

if [[ -n "${NPCORCH:-}" ]]; then
  bin=$NPCORCH
else
  say "building npcorch (cgo on: NVML needs it)"
  # The build log is shown only on failure (go-nvml's C warnings are silenced: third_party/README.md).
  CGO_ENABLED=1 go build -o "$work/npcorch" ./cmd/npcorch 2> "$work/build.log" || { cat "$work/build.log"; exit 1; }
  bin=$work/npcorch
fi

say "npcorch gpus --json"
"$bin" gpus --json > "$work/gpus.json"
python3 - "$work/gpus.json" <<'PY'
import json, sys
inv = json.load(open(sys.argv[1]))
gpus = inv["gpus"]
if not gpus:
    sys.exit("FAIL: npcorch gpus found no GPU: %s" % inv.get("reason"))
print("driver %s, CUDA %s, %d GPU(s)" % (inv.get("driver_version"), inv.get("cuda_version"), len(gpus)))
for g in gpus:
    for k in ("uuid", "name", "memory_total_bytes", "pci_bus_id", "compute_capability"):
        if g.get(k) is None:
            sys.exit("FAIL: GPU %d has no %s" % (g["index"], k))
    print("  GPU %d %s %d MiB bus %s NUMA %s CC %s" % (g["index"], g["name"], g["memory_total_bytes"] >> 20,
          g["pci_bus_id"], g.get("numa_node"), g["compute_capability"]))
PY
"$bin" gpus | sed -n '/GPU0/,/^$/p' | head -12 || true

say "loading GPU 0 with a PyTorch matmul loop"
cat > "$work/load.py" <<'PY'
import sys, time, torch
dev = torch.device("cuda:0")
a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
torch.cuda.synchronize()
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
n = 0
while time.time() < end:
    for _ in range(20):
        a @ b
    torch.cuda.synchronize()
    n += 20
print("matmuls", n, flush=True)
PY
CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0 NPCORCH_MODEL=gpu-check NPCORCH_REPLICA=0 \
  python3 "$work/load.py" $((duration + 15)) > "$work/load.log" 2>&1 &
pids+=($!)
for _ in $(seq 60); do grep -q ready "$work/load.log" && break; sleep 1; done
grep -q ready "$work/load.log" || { cat "$work/load.log"; echo "FAIL: torch did not start"; exit 1; }

say "npcorch monitor --duration ${duration}s"
"$bin" monitor --duration "${duration}s" --out "$work/samples.jsonl" --listen 127.0.0.1:0 \
  > "$work/monitor.out" 2> "$work/monitor.err" &
mon=$!
pids+=($mon)
addr=
for _ in $(seq 20); do
  addr=$(sed -n 's|^serving GPU metrics at \(http://[^ ]*\)$|\1|p' "$work/monitor.err")
  [[ -n "$addr" ]] && break
  sleep 0.5
done
sleep 5
if [[ -n "$addr" ]]; then
  python3 - "$addr" <<'PY'
import sys, urllib.request
body = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
for name in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_FB_USED"):
    lines = [l for l in body.splitlines() if l.startswith(name + "{") and 'gpu="0"' in l]
    if not lines:
        sys.exit("FAIL: /metrics lacks %s for GPU 0" % name)
    print("  scrape:", lines[0])
PY
else
  echo "FAIL: monitor did not report its metrics address"; cat "$work/monitor.err"; exit 1
fi
wait "$mon"
cat "$work/monitor.out"

say "checking the samples"
python3 - "$work/samples.jsonl" "$duration" <<'PY'
import json, sys
samples = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
duration = float(sys.argv[2])
if len(samples) < duration * 0.8:
    sys.exit("FAIL: %d samples in %.0f s at 1 Hz" % (len(samples), duration))
g0 = [next(g for g in s["gpus"] if g["gpu"] == 0) for s in samples]
util = [g["gpu_util_pct"] for g in g0 if g["gpu_util_pct"] is not None]
sm = [g["sm_active_pct"] for g in g0 if g["sm_active_pct"] is not None]
power = [g["power_w"] for g in g0 if g["power_w"] is not None]
energy = [g["energy_j"] for g in g0 if g["energy_j"] is not None]
mem = [g["mem_used_bytes"] for g in g0 if g["mem_used_bytes"] is not None]
from datetime import datetime, timezone
def t(s):  # Go writes RFC 3339 with up to 9 fraction digits
    whole, _, frac = s["time"].rstrip("Z").partition(".")
    return datetime.fromisoformat(whole).replace(tzinfo=timezone.utc).timestamp() + float("0." + (frac or "0"))
span = t(samples[-1]) - t(samples[0])
fail = []
if not util or max(util) <= 0: fail.append("GPU 0 utilization never above 0")
if not energy or sum(energy) <= 0: fail.append("no energy used on GPU 0")
if not power or not (20 <= sum(power) / len(power) <= 1500): fail.append("implausible mean power %s" % (sum(power) / len(power) if power else None))
mean_p = sum(power) / len(power) if power else 0
e = sum(energy)
if power and energy and span > 0 and not (0.6 <= e / (mean_p * span) <= 1.5):
    fail.append("energy %.0f J disagrees with mean power %.1f W over %.1f s" % (e, mean_p, span))
procs = [p for s in g0 for p in s["processes"] if p.get("model") == "gpu-check"]
print("samples %d over %.1f s" % (len(samples), span))
print("GPU 0 utilization mean %.1f%% max %.0f%%" % (sum(util) / len(util), max(util)))
print("GPU 0 SM activity (GPM) %s" % ("mean %.1f%% max %.1f%%" % (sum(sm) / len(sm), max(sm)) if sm else "not reported"))
print("GPU 0 power mean %.1f W max %.1f W" % (mean_p, max(power)))
print("GPU 0 energy %.1f J (%.4f Wh); mean power x time %.1f J" % (e, e / 3600, mean_p * span))
print("GPU 0 memory used peak %d MiB" % (max(mem) >> 20 if mem else -1))
print("GPU 0 processes attributed to model gpu-check: %s" % ("yes, pid %d" % procs[0]["pid"] if procs else "no (pid namespace differs from NVML's?)"))
if fail:
    sys.exit("FAIL: " + "; ".join(fail))
print("PASS")
PY
