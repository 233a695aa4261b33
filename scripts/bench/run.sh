#!/bin/sh
# Benchmarks `npcorch prep` against scripts/bench/prep_python.py (Pillow,
# numpy) on the same generated inputs, two cores, side by side:
# plane groups/s, cards/s, overviews/s and peak memory (/usr/bin/time -v),
# and checks that both produce the same pixels.
#
# Usage: scripts/bench/run.sh [WORKDIR]   (from the repository root)
# Needs: go, /usr/bin/python3 with python3-pil and python3-numpy, GNU time.
set -eu
work=${1:-$(mktemp -d /tmp/npcorch-bench.XXXXXX)}
cpus=${BENCH_CPUS:-0,1}
reps=${BENCH_REPS:-3}
mkdir -p "$work"
go build -o "$work/npcorch" ./cmd/npcorch
go run ./scripts/bench/gendata -font "$work/font.png"
go run ./scripts/bench/gendata -out "$work/in_groups" -kind groups -patients "${BENCH_GROUP_PATIENTS:-6}"
go run ./scripts/bench/gendata -out "$work/in_cards" -kind cards -patients "${BENCH_CARD_PATIENTS:-12}"
go run ./scripts/bench/gendata -out "$work/in_overviews" -kind overviews -patients "${BENCH_SLIDES:-6}" -slide 4000

# seconds NAME CMD...: wall seconds of CMD on the benchmark CPUs.
seconds() {
	name=$1
	shift
	/usr/bin/time -f %e -o "$work/$name.time" taskset -c "$cpus" "$@" >/dev/null 2>&1
	cat "$work/$name.time"
}

# peak NAME CMD...: peak resident memory in KB, "tree" (the command and all
# its processes summed, scripts/bench/peakrss.py) then "largest" (the
# largest single process, /usr/bin/time -v).
peak() {
	name=$1
	shift
	/usr/bin/time -v -o "$work/$name.timev" /usr/bin/python3 scripts/bench/peakrss.py taskset -c "$cpus" "$@" >/dev/null 2>"$work/$name.peak"
	tree=$(awk '/^peakrss_kb/ {print $2}' "$work/$name.peak")
	largest=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/$name.timev")
	echo "$tree $largest"
}

echo "| output | images | Go s | Python s | Go img/s | Python img/s | speed-up | Go peak MB | Python peak MB, all processes | Python largest process MB | same pixels |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for kind in groups cards overviews; do
	bestg=; bestp=
	i=0
	while [ $i -lt "$reps" ]; do
		rm -rf "$work/go_$kind" "$work/py_$kind"
		t=$(seconds "go_$kind" "$work/npcorch" prep --data "$work/in_$kind" --out "$work/go_$kind" --workers 2)
		if [ -z "$bestg" ] || [ "$(echo "$t < $bestg" | bc)" = 1 ]; then bestg=$t; fi
		t=$(seconds "py_$kind" /usr/bin/python3 scripts/bench/prep_python.py --data "$work/in_$kind" --out "$work/py_$kind" --font "$work/font.png" --workers 2)
		if [ -z "$bestp" ] || [ "$(echo "$t < $bestp" | bc)" = 1 ]; then bestp=$t; fi
		i=$((i + 1))
	done
	rm -rf "$work/go_$kind" "$work/py_$kind"
	set -- $(peak "go_$kind" "$work/npcorch" prep --data "$work/in_$kind" --out "$work/go_$kind" --workers 2)
	memg=$1
	set -- $(peak "py_$kind" /usr/bin/python3 scripts/bench/prep_python.py --data "$work/in_$kind" --out "$work/py_$kind" --font "$work/font.png" --workers 2)
	memp=$1 memp1=$2
	n=$(find "$work/py_$kind" -name '*.png' | wc -l)
	if /usr/bin/python3 scripts/bench/compare.py "$work/go_$kind" "$work/py_$kind" >"$work/compare_$kind.txt"; then eq=yes; else eq=NO; fi
	echo "$kind $n $bestg $bestp $memg $memp $memp1 $eq" | awk '{printf "| %s | %d | %.2f | %.2f | %.1f | %.1f | %.2fx | %.0f | %.0f | %.0f | %s |\n", $1, $2, $3, $4, $2/$3, $2/$4, $4/$3, $5/1024, $6/1024, $7/1024, $8}'
done
echo
echo "Best wall time of $reps runs each, CPUs $cpus; peak memory from one more run each. Inputs and outputs in $work."
