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
# The KV-bound mixed shape (issue 25, item 15), a configuration written
# kv:SEQSxREPLICAS[:REPEAT] (kv:32x1:1 in the default list): a campaign
# the demo's dataset never shows, 32 L3 patients and 16 CarePath
# episodes with every level (`npcorch synth --patients 32 --carepath 16`,
# 944 requests a repeat), on engines with the simulated engine's own KV
# cache (4 × --max-model-len, 131,072 tokens), so that the large
# multimodal requests, which go first, fill the cache before the slots.
#
# Beside every run, scripts/bench/fullshare.py samples the engines'
# /metrics every 100 ms from outside npcorch (vLLM's gauges only, with
# max_num_seqs from this script) and its engine-full share is printed in
# a second table, with the under-full time, the longest under-full
# stretch, the highest KV usage and the preemptions it saw.
#
# Usage: scripts/bench/enginefull.sh [WORKDIR]   (from the repository root)
# Knobs: BENCH_BEFORE (git ref), BENCH_CONFIGS ("8x1 32x1 256x1 256x1:16
# 8x2 kv:32x1:1": SEQSxREPLICAS, and :REPEAT for another --repeat than
# BENCH_REPEAT), BENCH_SIDES ("before after"), BENCH_PAIRS (1: how many
# times each configuration runs every side, alternating), BENCH_REPEAT
# (4), BENCH_PREFILL_TPS (20000), BENCH_DECODE_TPS (25).
set -eu
work=${1:-$(mktemp -d /tmp/npcorch-enginefull.XXXXXX)}
before=${BENCH_BEFORE:-main}
configs=${BENCH_CONFIGS:-8x1 32x1 256x1 256x1:16 8x2 kv:32x1:1}
pairs=${BENCH_PAIRS:-1}
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
case " $configs " in *" kv:"*)
	[ -f "$work/data-kv/dataset.json" ] || "$work/npcorch-after" synth --out "$work/data-kv" --seed 1 --patients 32 --carepath 16 >/dev/null
	[ -f "$work/prep-kv/manifest.json" ] || "$work/npcorch-after" prep --data "$work/data-kv" --out "$work/prep-kv" >/dev/null 2>&1
	;;
esac
outside="$work/outside.md"
: >"$outside"

echo
echo "| configuration | requests answered | engines | slots | engine-full share (samples) | engine-full share (engine's clock) | mean occupancy | wall s | work / slots s | wall / (work / slots) | max(work / slots, longest request) s | wall / that | exit |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for c in $configs; do
	data=data prep=prep kvflags=', --sim-kv-tokens, "67108864"' tag=""
	case $c in kv:*)
		c=${c#kv:} data=data-kv prep=prep-kv kvflags="" tag="kv-"
		;;
	esac
	shape=${c%%:*}
	rep=$repeat
	case $c in *:*) rep=${c#*:} ;; esac
	seqs=${shape%x*}
	reps=${shape#*x}
	for pair in $(seq "$pairs"); do
		for side in $sides; do
			dir="$work/$side-$tag$shape-r$rep-p$pair"
			rm -rf "$dir" "$dir.log"
			mkdir -p "$dir"
			cat >"$dir/campaign.yaml" <<YAML
name: enginefull
node: fake:a800-sxm-8
output: run
seed: 1
dataset: {raw: $work/$data, prepared: $work/$prep}
media: auto
client: {connect_timeout: 2s, first_token_timeout: 10m, chunk_timeout: 1m, total_timeout: 20m, retries: 4, backoff: 100ms}
models:
  - name: Qwen3-VL-8B-Instruct
    engine:
      kind: sim
      replicas: $reps
      max_num_seqs: $seqs
      sim: [--sim-policy, "right=0.85", --sim-prefill-tps, "$prefill", --sim-decode-tps, "$decode"$kvflags]
YAML
			label="${tag:+KV-bound mixed, }$seqs × $reps $side, ×$rep"
			python3 scripts/bench/fullshare.py --run "$dir/run" --max-num-seqs "$seqs" --out "$dir/run.fullshare.tsv" >"$dir/fullshare.txt" &
			sampler=$!
			"$work/enginefull" -npcorch "$work/npcorch-$side" -campaign "$dir/campaign.yaml" -out "$dir/run" \
				-label "$label" -repeat "$rep" -prefill-tps "$prefill" -decode-tps "$decode" || true
			kill -TERM "$sampler"
			wait "$sampler" || true
			echo "| $label | $(sed 's/^fullshare: //' "$dir/fullshare.txt") |" >>"$outside"
		done
	done
done
echo
echo "Sampled from outside npcorch (scripts/bench/fullshare.py, vLLM's gauges only):"
echo
echo "| configuration | outside sampler |"
echo "|---|---|"
cat "$outside"
echo
echo "load after: $(uptime)"
