#!/bin/sh
# Benchmarks `npcorch prep` against scripts/bench/prep_python.py (Pillow,
# numpy, pydicom) on the same generated inputs, two cores, side by side:
# plane groups from PNG and from DICOM series, cards and overviews: wall
# time, CPU time (user + system) and peak memory (/usr/bin/time -v), and
# checks that both produce the same pixels. Then the DICOM header scan:
# scripts/bench/dicomscan (Go) against scripts/bench/dicomscan.py
# (pydicom.dcmread(stop_before_pixels=True)), one thread each, CPU time;
# and a whole `npcorch import` of the same tree (scan, classification,
# slots, links, dataset.json and review.csv written) against one pass of
# dicomscan.py, CPU and wall time. Last, pathology overviews from
# pyramidal TIFF slides (made by vips, read through OpenSlide by an
# npcorch built with -tags openslide) against `vips thumbnail` at the same
# size, one slide after another.
#
# Usage: scripts/bench/run.sh [WORKDIR]   (from the repository root; inputs
# already in WORKDIR are reused: remove it to generate them again;
# BENCH_TAGS=libdeflate builds npcorch with libdeflate's inflate)
# Needs: go, /usr/bin/python3 with python3-pil, python3-numpy and
# python3-pydicom, GNU time, taskset, bc; vips (libvips-tools) and
# libopenslide-dev for the pyramid rows (BENCH_PYRAMIDS=0 leaves them out).
set -eu
work=${1:-$(mktemp -d /tmp/npcorch-bench.XXXXXX)}
cpus=${BENCH_CPUS:-0,1}
reps=${BENCH_REPS:-3}
kinds=${BENCH_KINDS:-groups dicom cards overviews}
scans=${BENCH_SCAN_REPEAT:-5}
mkdir -p "$work"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
go build ${BENCH_TAGS:+-tags "$BENCH_TAGS"} -o "$work/npcorch" ./cmd/npcorch
go build -o "$work/dicomscan" ./scripts/bench/dicomscan
go run ./scripts/bench/gendata -font "$work/font.png"
for kind in $kinds; do
	[ -d "$work/in_$kind" ] && continue
	case $kind in
	groups) go run ./scripts/bench/gendata -out "$work/in_groups" -kind groups -patients "${BENCH_GROUP_PATIENTS:-6}" ;;
	dicom) go run ./scripts/bench/gendata -out "$work/in_dicom" -kind dicom -patients "${BENCH_DICOM_PATIENTS:-9}" -size "${BENCH_DICOM_SIZE:-512}" ;;
	cards) go run ./scripts/bench/gendata -out "$work/in_cards" -kind cards -patients "${BENCH_CARD_PATIENTS:-12}" ;;
	overviews) go run ./scripts/bench/gendata -out "$work/in_overviews" -kind overviews -patients "${BENCH_SLIDES:-6}" -slide 4000 ;;
	esac
done

# measure NAME CMD...: "wall cpu" seconds of CMD on the benchmark CPUs
# (cpu = user + system).
measure() {
	name=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$work/$name.time" taskset -c "$cpus" "$@" >/dev/null 2>&1
	awk '{printf "%.2f %.2f\n", $1, $2 + $3}' "$work/$name.time"
}

# lower A B: the smaller of two numbers.
lower() {
	if [ -z "$1" ] || [ "$(echo "$2 < $1" | bc)" = 1 ]; then echo "$2"; else echo "$1"; fi
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

echo "| output | images | Go s | Python s | Go img/s | Python img/s | speed-up | Go CPU s | Python CPU s | Go CPU / Python CPU | Go peak MB | Python peak MB, all processes | Python largest process MB | same pixels |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for kind in $kinds; do
	bestg= bestp= cpug= cpup=
	i=0
	while [ $i -lt "$reps" ]; do
		rm -rf "$work/go_$kind" "$work/py_$kind"
		set -- $(measure "go_$kind" "$work/npcorch" prep --data "$work/in_$kind" --out "$work/go_$kind" --workers 2)
		bestg=$(lower "$bestg" "$1") cpug=$(lower "$cpug" "$2")
		set -- $(measure "py_$kind" /usr/bin/python3 scripts/bench/prep_python.py --data "$work/in_$kind" --out "$work/py_$kind" --font "$work/font.png" --workers 2)
		bestp=$(lower "$bestp" "$1") cpup=$(lower "$cpup" "$2")
		i=$((i + 1))
	done
	rm -rf "$work/go_$kind" "$work/py_$kind"
	set -- $(peak "go_$kind" "$work/npcorch" prep --data "$work/in_$kind" --out "$work/go_$kind" --workers 2)
	memg=$1
	set -- $(peak "py_$kind" /usr/bin/python3 scripts/bench/prep_python.py --data "$work/in_$kind" --out "$work/py_$kind" --font "$work/font.png" --workers 2)
	memp=$1 memp1=$2
	n=$(find "$work/py_$kind" -name '*.png' | wc -l)
	if /usr/bin/python3 scripts/bench/compare.py "$work/go_$kind" "$work/py_$kind" >"$work/compare_$kind.txt"; then eq=yes; else eq=NO; fi
	echo "$kind $n $bestg $bestp $cpug $cpup $memg $memp $memp1 $eq" | awk '{printf "| %s | %d | %.2f | %.2f | %.1f | %.1f | %.2fx | %.2f | %.2f | %.2f | %.0f | %.0f | %.0f | %s |\n", $1, $2, $3, $4, $2/$3, $2/$4, $4/$3, $5, $6, $5/$6, $7/1024, $8/1024, $9/1024, $10}'
done
echo
echo "Best wall time and least CPU time of $reps runs each, CPUs $cpus; peak memory from one more run each. Inputs and outputs in $work."

if [ -d "$work/in_dicom" ]; then
	files=$(find "$work/in_dicom" -name 'IM*' | wc -l)
	cpug= cpup= cpui=
	i=0
	while [ $i -lt "$reps" ]; do
		set -- $(measure go_scan "$work/dicomscan" -repeat "$scans" "$work/in_dicom")
		cpug=$(lower "$cpug" "$2")
		set -- $(measure py_scan /usr/bin/python3 scripts/bench/dicomscan.py --repeat "$scans" "$work/in_dicom")
		cpup=$(lower "$cpup" "$2")
		set -- $(measure py_import /usr/bin/python3 -c "import pydicom, pydicom.errors")
		cpui=$(lower "$cpui" "$2")
		i=$((i + 1))
	done
	echo
	echo "| header scan, one thread | headers | Go CPU s | pydicom CPU s | pydicom CPU s less start-up and import | Go µs / header | pydicom µs / header (less start-up) | speed-up (less start-up) |"
	echo "|---|---|---|---|---|---|---|---|"
	echo "$files $scans $cpug $cpup $cpui" | awk '{n = $1 * $2; printf "| %d files × %d | %d | %.2f | %.2f | %.2f | %.0f | %.0f | %.1fx |\n", $1, $2, n, $3, $4, $4 - $5, 1e6 * $3 / n, 1e6 * ($4 - $5) / n, ($4 - $5) / $3}'
fi
if [ -d "$work/in_dicom" ]; then
	labels=$work/import_labels.csv
	{
		echo patient_id
		for d in "$work"/in_dicom/P*; do basename "$d"; done
	} >"$labels"
	# One import first, to show it resolves everything (exit 0).
	rm -rf "$work/import_out"
	"$work/npcorch" import --dicom "$work/in_dicom" --labels "$labels" --out "$work/import_out" 2>"$work/import.log" | head -1
	files=$(find "$work/in_dicom" -name 'IM*' | wc -l)
	cpu1= wall1= wall2= cpup= wallp= cpui=
	i=0
	while [ $i -lt "$reps" ]; do
		rm -rf "$work/import_out"
		set -- $(measure go_import1 "$work/npcorch" import --dicom "$work/in_dicom" --labels "$labels" --out "$work/import_out" --workers 1)
		wall1=$(lower "$wall1" "$1") cpu1=$(lower "$cpu1" "$2")
		rm -rf "$work/import_out"
		set -- $(measure go_import2 "$work/npcorch" import --dicom "$work/in_dicom" --labels "$labels" --out "$work/import_out" --workers 2)
		wall2=$(lower "$wall2" "$1")
		set -- $(measure py_scan1 /usr/bin/python3 scripts/bench/dicomscan.py "$work/in_dicom")
		wallp=$(lower "$wallp" "$1") cpup=$(lower "$cpup" "$2")
		set -- $(measure py_import /usr/bin/python3 -c "import pydicom, pydicom.errors")
		cpui=$(lower "$cpui" "$2")
		i=$((i + 1))
	done
	echo
	echo "| whole import vs pydicom scan | files | Go import CPU s (1 worker) | pydicom scan CPU s (less start-up and import) | CPU speed-up (less start-up) | Go import wall s, 1 / 2 workers | pydicom scan wall s | wall speed-up (2 workers) |"
	echo "|---|---|---|---|---|---|---|---|"
	echo "$files $cpu1 $cpup $cpui $wall1 $wall2 $wallp" | awk '{printf "| %d files | %d | %.2f | %.2f (%.2f) | %.1fx (%.1fx) | %.2f / %.2f | %.2f | %.1fx |\n", $1, $1, $2, $3, $3 - $4, $3 / $2, ($3 - $4) / $2, $5, $6, $7, $7 / $6}'
fi
pyramids=${BENCH_PYRAMIDS:-3}
if [ "$pyramids" -gt 0 ] && ! { command -v vips >/dev/null && pkg-config --exists openslide; }; then
	echo "pyramids left out: they need vips (libvips-tools) and OpenSlide (libopenslide-dev)"
	pyramids=0
fi
if [ "$pyramids" -gt 0 ]; then
	pyr=$work/in_pyramids
	size=${BENCH_PYRAMID_SIZE:-12000x9000}
	if [ ! -f "$pyr/dataset.json" ]; then
		mkdir -p "$pyr"
		{
			echo '{"format": "npcorch-dataset/1", "name": "pyramids", "patients": ['
			i=1
			while [ $i -le "$pyramids" ]; do
				vips gaussnoise "$pyr/noise.v" "${size%x*}" "${size#*x}" --mean 170 --sigma 40 --seed $i
				vips cast "$pyr/noise.v" "$pyr/gray.v" uchar
				vips bandjoin "$pyr/gray.v $pyr/gray.v $pyr/gray.v" "$pyr/rgb.v"
				vips copy "$pyr/rgb.v" "$pyr/srgb.v" --interpretation srgb
				vips tiffsave "$pyr/srgb.v" "$pyr/slide$i.tif" --tile --tile-width 256 --tile-height 256 --pyramid --compression jpeg --Q 85
				[ $i -gt 1 ] && echo ','
				echo "{\"id\": \"S$i\", \"cohorts\": [\"pathology\"], \"pathology\": {\"file\": \"slide$i.tif\", \"label\": 1}, \"coverage\": {\"t\": {\"from\": 0, \"to\": 0}, \"n\": {\"from\": 0, \"to\": 0}}}"
				i=$((i + 1))
			done
			echo ']}'
		} >"$pyr/dataset.json"
		rm -f "$pyr"/*.v
	fi
	go build -tags "openslide${BENCH_TAGS:+,$BENCH_TAGS}" -o "$work/npcorch-openslide" ./cmd/npcorch
	cpug= cpuv= wallg= wallv=
	i=0
	while [ $i -lt "$reps" ]; do
		rm -rf "$work/go_pyr" "$work/vips_pyr"
		set -- $(measure go_pyr "$work/npcorch-openslide" prep --data "$pyr" --out "$work/go_pyr" --workers 2)
		wallg=$(lower "$wallg" "$1") cpug=$(lower "$cpug" "$2")
		mkdir -p "$work/vips_pyr"
		set -- $(measure vips_pyr sh -c "for f in $pyr/*.tif; do vips thumbnail \$f $work/vips_pyr/\$(basename \$f .tif).png 1024; done")
		wallv=$(lower "$wallv" "$1") cpuv=$(lower "$cpuv" "$2")
		i=$((i + 1))
	done
	echo
	echo "| pyramidal slide overviews (1024 px) | slides | npcorch prep wall s | vips thumbnail wall s | npcorch / vips wall | npcorch CPU s | vips CPU s |"
	echo "|---|---|---|---|---|---|---|"
	echo "$size $pyramids $wallg $wallv $cpug $cpuv" | awk '{printf "| %s JPEG tiles | %d | %.2f | %.2f | %.2f | %.2f | %.2f |\n", $1, $2, $3, $4, $3 / $4, $5, $6}'
	ls "$work/go_pyr"/S1/*.png "$work/vips_pyr"/slide1.png >/dev/null
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
