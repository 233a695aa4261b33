#!/bin/sh
# Measures how full `npcorch run` keeps its engines (issue 17), before and
# after, side by side in one run: one model (Qwen3-VL-8B-Instruct) on
# npcorch's simulated engine as real processes, paced at 20,000 prefill
# and 25 decode tokens per second per sequence, the demo's dataset (12
# patients, 323 requests of every level) sent 4 times (1,292 requests;
# 828 before L1, L2, L4, L5 and O1 joined the demo), each engine's
# /metrics sampled every 100 ms by scripts/bench/enginefull.
# Configurations: max_num_seqs × replicas, 8×1, 32×1, 256×1 and 8×2, and
# 256×1 again with the dataset sent 16 times (5,168 requests, about the
# 5,091 the paper asks of one multimodal model): 1,292 requests are 5 per
# slot at 256, too few for the longest request (5.3 s) to end inside a
# full engine's time. The KV cache is made large
# (--sim-kv-tokens) so that slots, not cache, bound the engine.
#
# "before" is the npcorch of BENCH_BEFORE (default main) built with this
# tree's simulated engine (the same engine, with its occupancy series, on
# both sides: only the client differs); "after" is this tree.
#
# Usage: scripts/bench/enginefull.sh [WORKDIR]   (from the repository root)
# Knobs: BENCH_BEFORE (git ref), BENCH_CONFIGS ("8x1 32x1 256x1 256x1:16
# 8x2": SEQSxREPLICAS, and :REPEAT for another --repeat than
# BENCH_REPEAT), BENCH_SIDES ("before after"), BENCH_REPEAT (4),
# BENCH_PREFILL_TPS (20000), BENCH_DECODE_TPS (25).
set -eu
work=${1:-$(mktemp -d /tmp/npcorch-enginefull.XXXXXX)}
before=${BENCH_BEFORE:-main}
configs=${BENCH_CONFIGS:-8x1 32x1 256x1 256x1:16 8x2}
sides=${BENCH_SIDES:-before after}
repeat=${BENCH_REPEAT:-4}
prefill=${BENCH_PREFILL_TPS:-20000}
decode=${BENCH_DECODE_TPS:-25}
mkdir -p "$work"
work=$(cd "$work" && pwd)
echo "machine: $(nproc) CPUs, $(uname -sr), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load before: $(uptime)"

go build -o "$work/npcorch-after" ./cmd/npcorch
go build -o "$work/enginefull" ./scripts/bench/enginefull
case " $sides " in *" before "*)
	rm -rf "$work/before-src"
	git worktree add --quiet --detach "$work/before-src" "$before"
	rm -rf "$work/before-src/launcher/simengine"
	cp -r launcher/simengine "$work/before-src/launcher/simengine"
	(cd "$work/before-src" && go build -o "$work/npcorch-before" ./cmd/npcorch)
	git worktree remove --force "$work/before-src"
	echo "before: $(git rev-parse --short "$before") ($before) with this tree's launcher/simengine"
	;;
esac
echo "after: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + uncommitted changes')"

[ -f "$work/data/dataset.json" ] || "$work/npcorch-after" synth --out "$work/data" --seed 1 >/dev/null
[ -f "$work/prep/manifest.json" ] || "$work/npcorch-after" prep --data "$work/data" --out "$work/prep" >/dev/null 2>&1

echo
echo "| configuration | requests answered | engines | slots | engine-full share (samples) | engine-full share (engine's clock) | mean occupancy | wall s | work / slots s | wall / (work / slots) | max(work / slots, longest request) s | wall / that | exit |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for c in $configs; do
	shape=${c%%:*}
	rep=$repeat
	case $c in *:*) rep=${c#*:} ;; esac
	seqs=${shape%x*}
	reps=${shape#*x}
	for side in $sides; do
		dir="$work/$side-$shape-r$rep"
		rm -rf "$dir" "$dir.log"
		mkdir -p "$dir"
		cat >"$dir/campaign.yaml" <<YAML
name: enginefull
node: fake:a800-sxm-8
output: run
seed: 1
dataset: {raw: $work/data, prepared: $work/prep}
media: auto
client: {connect_timeout: 2s, first_token_timeout: 10m, chunk_timeout: 1m, total_timeout: 20m, retries: 4, backoff: 100ms}
models:
  - name: Qwen3-VL-8B-Instruct
    engine:
      kind: sim
      replicas: $reps
      max_num_seqs: $seqs
      sim: [--sim-policy, "right=0.85", --sim-prefill-tps, "$prefill", --sim-decode-tps, "$decode", --sim-kv-tokens, "67108864"]
YAML
		"$work/enginefull" -npcorch "$work/npcorch-$side" -campaign "$dir/campaign.yaml" -out "$dir/run" \
			-label "$seqs × $reps $side, ×$rep" -repeat "$rep" -prefill-tps "$prefill" -decode-tps "$decode"
	done
done
echo
echo "load after: $(uptime)"
