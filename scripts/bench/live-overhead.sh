#!/bin/bash
# Measures what serving the live page costs a campaign (issue 15): the same
# simulated campaign run without --listen and with --listen and 10 open
# event streams (what 10 open pages cost the server: each page holds one
# /events stream), alternating, BENCH_REPS pairs. For each run: wall time,
# npcorch's own CPU time (user + system of the npcorch process alone, read
# from /proc every 0.1 s until it exits: GNU time's figure would include the
# engines it waited for) and the number of events
# each stream received. The server's share of a core is (CPU with - CPU
# without) / wall time.
#
# Usage: scripts/bench/live-overhead.sh [WORKDIR]   (from the repository
# root; the dataset in WORKDIR is reused)
# Needs: go, curl, GNU time.
set -eu
work=${1:-$(mktemp -d /tmp/npcorch-live-bench.XXXXXX)}
reps=${BENCH_REPS:-3}
pages=${BENCH_PAGES:-10}
patients=${BENCH_PATIENTS:-12}
mkdir -p "$work"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
go build -o "$work/npcorch" ./cmd/npcorch
np="$work/npcorch"
if [ ! -d "$work/prep" ]; then
	"$np" synth --out "$work/data" --patients "$patients" --seed 1 >/dev/null
	"$np" prep --data "$work/data" --out "$work/prep" >/dev/null
fi
cat >"$work/campaign.yaml" <<EOF
name: live-bench
node: fake:a800-sxm-8
output: run
seed: 1
dataset: {raw: $work/data, prepared: $work/prep}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 2, sim: [--sim-policy, "right=0.7", --sim-decode-tps, "400"]}
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, "right=0.6", --sim-decode-tps, "400"]}
  - name: Hulu-Med-4B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, "right=0.5", --sim-decode-tps, "400"]}
EOF

# run MODE N: one campaign; MODE is plain or listen.
run() {
	mode=$1 n=$2 out="$work/run-$1-$2"
	rm -rf "$out"
	args=(run -c "$work/campaign.yaml" --out "$out")
	port=$((19400 + n))
	[ "$mode" = listen ] && args+=(--listen "127.0.0.1:$port")
	/usr/bin/time -f "%e %U %S" -o "$work/time" "$np" "${args[@]}" >"$work/log-$mode-$n" 2>&1 &
	pid=$!
	np_pid=
	while [ -z "$np_pid" ]; do np_pid=$(pgrep -P "$pid" -x npcorch || true); done
	if [ "$mode" = listen ]; then
		for _ in $(seq 100); do
			curl -fs -o /dev/null "http://127.0.0.1:$port/api/status" && break
			sleep 0.1
		done
		for p in $(seq "$pages"); do
			curl -sN --max-time 600 "http://127.0.0.1:$port/events" | grep -c '^data: ' >"$work/events-$n-$p" &
		done
	fi
	ticks=0
	while t=$(awk '{print $14 + $15}' "/proc/$np_pid/stat" 2>/dev/null); do
		ticks=$t
		sleep 0.1
	done
	wait "$pid"
	wait # the streams end with the run
	read -r wall user sys <"$work/time"
	events=-
	[ "$mode" = listen ] && events=$(cat "$work"/events-"$n"-* | sort -n | head -1)
	answered=$(grep -c '"status":"answered"' "$out"/journal/*/*.jsonl | awk -F: '{s+=$2} END {print s}')
	printf "%-7s %d  wall %6.2f s  npcorch CPU %6.2f s  answered %d  events per stream (min) %s\n" "$mode" "$n" "$wall" "$(echo "scale=2; $ticks / $(getconf CLK_TCK)" | bc)" "$answered" "$events"
}

for i in $(seq "$reps"); do
	run plain "$i"
	run listen "$i"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
