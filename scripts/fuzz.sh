#!/usr/bin/env bash
# Run every fuzz target of the module for a while each (issue 7).
#
#   scripts/fuzz.sh            # 30s per target
#   scripts/fuzz.sh 5m         # longer
#   FUZZ_MATCH=Stream scripts/fuzz.sh 2m   # only targets whose name matches
#
# `go test ./...` already runs every target's seed corpus (and any failing
# input saved under testdata/fuzz/) as a plain test; this script mutates
# inputs. A failure leaves the crashing input in the package's
# testdata/fuzz/FuzzName/ folder: commit it with the fix, and it stays a
# regression test. Exits non-zero if any target fails.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${1:-30s}"
match="${FUZZ_MATCH:-}"
failed=()
total=0

# Folders of the packages that hold fuzz targets.
dirs=$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)
for dir in $dirs; do
  pkg="./${dir#./}"
  for target in $(grep -h -o '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //' | sort -u); do
    if [ -n "$match" ] && [[ "$target" != *"$match"* ]]; then
      continue
    fi
    total=$((total + 1))
    printf '%-28s %-22s ' "$pkg" "$target"
    start=$(date +%s)
    if out=$(go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" 2>&1); then
      execs=$(printf '%s\n' "$out" | grep -o 'execs: [0-9]*' | tail -1 | cut -d' ' -f2)
      echo "ok   ${execs:-?} execs in $(( $(date +%s) - start ))s"
    else
      echo "FAIL"
      printf '%s\n' "$out" | tail -20 | sed 's/^/    /'
      failed+=("$pkg $target")
    fi
  done
done

echo "$total targets fuzzed for $fuzztime each; ${#failed[@]} failed"
if [ ${#failed[@]} -gt 0 ]; then
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
