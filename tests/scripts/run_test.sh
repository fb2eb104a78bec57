#!/usr/bin/env bash
# One run of make test: prints its name, runs COMMAND, prints how it ended and its
# seconds, and records "<passed|failed|skipped> <seconds>" in RESULTS/<name, / as _> for
# the closing count (tests/scripts/count_runs.sh). Exits with COMMAND's status; 77 (a
# tool the run needs is not installed, as automake's tests say it) is a skip and exits 0.
# Usage: tests/scripts/run_test.sh RESULTS NAME COMMAND...
set -uo pipefail
results=$1 name=$2
shift 2
echo "== $name"
start=$EPOCHREALTIME
"$@"
status=$?
seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
result=passed
[ "$status" -eq 0 ] || result=failed
if [ "$status" -eq 77 ]; then result=skipped status=0; fi
mkdir -p "$results"
echo "$result $seconds" > "$results/${name//\//_}"
echo "== $name: $result ($seconds s)"
exit "$status"
